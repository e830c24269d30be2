/* SPDX-License-Identifier: MIT */
/*
 * emul_client - drives the emulated /dev/crypto and AF_ALG (run under libcryptrace.so with an
 * aesni route) through the semantics the examples do not reach: errno for refused sessions, keys
 * and lengths, cryptodev's IV chaining and COP_FLAG_WRITE_IV, GCM through CIOCAUTHCRYPT, AF_ALG
 * MSG_MORE and partial reads, recvmsg, the AIO path with its eventfd, poll/dup/close on the fds.
 * Every result is compared with OpenSSL EVP. Exit 0 when all checks pass, 1 otherwise; 77 when
 * the interfaces are not emulated (no route in the environment).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/if_alg.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "close_range.h"
#include "cryptodev_abi.h"
#include "fixed_data.h"

static int failures;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (cond) {                                                                                  \
			printf("ok: ");                                                                      \
		} else {                                                                                     \
			printf("FAIL: ");                                                                    \
			failures++;                                                                          \
		}                                                                                            \
		printf(__VA_ARGS__);                                                                         \
		printf("\n");                                                                                \
	} while (0)

/* OpenSSL's answer for one whole message. */
static void ref(const char *name, bool enc, const uint8_t *key, const uint8_t *iv, const uint8_t *in,
		uint8_t *out, int len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	EVP_CIPHER *ci = EVP_CIPHER_fetch(NULL, name, NULL);
	int n = 0;

	EVP_CipherInit_ex(c, ci, NULL, key, iv, enc);
	EVP_CIPHER_CTX_set_padding(c, 0);
	EVP_CipherUpdate(c, out, &n, in, len);
	EVP_CIPHER_free(ci);
	EVP_CIPHER_CTX_free(c);
}

static void ref_gcm(const uint8_t *key, const uint8_t *iv, const uint8_t *aad, int aadlen, const uint8_t *in,
		    uint8_t *out, int len, uint8_t tag[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0;

	EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv);
	EVP_EncryptUpdate(c, NULL, &n, aad, aadlen);
	EVP_EncryptUpdate(c, out, &n, in, len);
	EVP_EncryptFinal_ex(c, out + n, &n);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(c);
}

static uint8_t key[64], iv[16], data[4096], out[4096], want[4096];

static int new_session(int fd, uint32_t cipher, uint32_t keylen, uint32_t *ses)
{
	struct ct_cdev_session_op s = { .cipher = cipher, .keylen = keylen, .key = key };
	int r = ioctl(fd, CT_CIOCGSESSION, &s);
	*ses = s.ses;
	return r;
}

static int cdev_crypt(int fd, uint32_t ses, int op, uint16_t flags, const uint8_t *in, uint8_t *o,
		      uint32_t len, uint8_t *ivp)
{
	struct ct_cdev_crypt_op c = { .ses = ses,
				      .op = (uint16_t)op,
				      .flags = flags,
				      .len = len,
				      .src = (uint8_t *)in,
				      .dst = o,
				      .iv = ivp };
	return ioctl(fd, CT_CIOCCRYPT, &c);
}

static void test_cryptodev(void)
{
	int fd = open("/dev/crypto", O_RDWR | O_CLOEXEC);
	uint32_t ses;
	struct stat sb;

	CHECK(fd >= 0, "open(/dev/crypto) gives a descriptor (%s)", fd < 0 ? strerror(errno) : "fd");
	if (fd < 0)
		return;
	CHECK(fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode), "the descriptor is a real character device");
	CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "O_CLOEXEC kept");
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	CHECK(poll(&p, 1, 0) == 1, "poll on it returns at once");

	errno = 0;
	CHECK(new_session(fd, CT_CRYPTO_3DES_CBC, 24, &ses) < 0 && errno == EINVAL,
	      "CIOCGSESSION 3DES: EINVAL (%s)", strerror(errno));
	errno = 0;
	CHECK(new_session(fd, CT_CRYPTO_AES_CBC, 17, &ses) < 0 && errno == EINVAL,
	      "CIOCGSESSION AES-CBC with a 17-byte key: EINVAL");
	CHECK(new_session(fd, CT_CRYPTO_AES_CBC, 16, &ses) == 0, "CIOCGSESSION AES-128-CBC");
	struct ct_cdev_session_info_op si = { .ses = ses };
	CHECK(ioctl(fd, CT_CIOCGSESSINFO, &si) == 0 &&
		      !strcmp(si.cipher_info.cra_driver_name, "cryptrace-aesni") &&
		      !strcmp(si.cipher_info.cra_name, "cbc(aes)") &&
		      !(si.flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY),
	      "CIOCGSESSINFO: cbc(aes) by cryptrace-aesni, not kernel-driver-only");
	errno = 0;
	CHECK(cdev_crypt(fd, ses, CT_COP_ENCRYPT, 0, data, out, 100, iv) < 0 && errno == EINVAL,
	      "CIOCCRYPT CBC of 100 bytes: EINVAL");
	errno = 0;
	CHECK(cdev_crypt(fd, ses + 77, CT_COP_ENCRYPT, 0, data, out, 32, iv) < 0 && errno == EINVAL,
	      "CIOCCRYPT on an unknown session: EINVAL");

	/* The session IV chains: 32 + 32 bytes equal one 64-byte CBC; WRITE_IV gives it back. */
	uint8_t ivw[16];
	memcpy(ivw, iv, 16);
	ref("AES-128-CBC", true, key, iv, data, want, 64);
	int r1 = cdev_crypt(fd, ses, CT_COP_ENCRYPT, 0, data, out, 32, ivw);
	int r2 = cdev_crypt(fd, ses, CT_COP_ENCRYPT, CT_COP_FLAG_WRITE_IV, data + 32, out + 32, 32, NULL);
	CHECK(r1 == 0 && r2 == 0 && !memcmp(out, want, 64), "CBC chains across CIOCCRYPT like one message");
	memset(ivw, 0, 16);
	CHECK(cdev_crypt(fd, ses, CT_COP_ENCRYPT, CT_COP_FLAG_WRITE_IV, data, out, 32, ivw) == 0 &&
		      !memcmp(ivw, out + 16, 16),
	      "COP_FLAG_WRITE_IV writes the last ciphertext block back");
	ref("AES-128-CBC", false, key, iv, want, out + 64, 64);
	CHECK(cdev_crypt(fd, ses, CT_COP_DECRYPT, 0, want, out, 64, iv) == 0 && !memcmp(out, data, 64),
	      "CBC decrypt");
	/* dup shares the file and its sessions; the original can go. */
	int fd2 = dup(fd);
	close(fd);
	CHECK(fd2 >= 0 && cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 64, iv) == 0 &&
		      !memcmp(out, want, 64),
	      "a dup'd descriptor keeps the session after close of the first");
	CHECK(ioctl(fd2, CT_CIOCFSESSION, &ses) == 0, "CIOCFSESSION");
	errno = 0;
	CHECK(ioctl(fd2, CT_CIOCFSESSION, &ses) < 0 && errno == EINVAL, "a second CIOCFSESSION: EINVAL");
	errno = 0;
	CHECK(cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 32, iv) < 0 && errno == EINVAL,
	      "CIOCCRYPT after CIOCFSESSION: EINVAL");

	/* CTR: every request starts on a block; the counter stands ceil(len/16) blocks on. */
	CHECK(new_session(fd2, CT_CRYPTO_AES_CTR, 32, &ses) == 0, "CIOCGSESSION AES-256-CTR");
	uint8_t iv2[16];
	memcpy(iv2, iv, 16);
	iv2[15] += 2;
	ref("AES-256-CTR", true, key, iv, data, want, 20);
	ref("AES-256-CTR", true, key, iv2, data + 20, want + 20, 20);
	memcpy(ivw, iv, 16);
	r1 = cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 20, ivw);
	r2 = cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data + 20, out + 20, 20, NULL);
	CHECK(r1 == 0 && r2 == 0 && !memcmp(out, want, 40), "CTR chains by whole blocks, as the kernel");

	CHECK(new_session(fd2, CT_CRYPTO_AES_XTS, 32, &ses) == 0, "CIOCGSESSION AES-128-XTS");
	errno = 0;
	CHECK(cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 15, iv) < 0 && errno == EINVAL,
	      "XTS of 15 bytes: EINVAL");
	ref("AES-128-XTS", true, key, iv, data, want, 4096);
	CHECK(cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 4096, iv) == 0 && !memcmp(out, want, 4096),
	      "XTS 4096 bytes");

	/* GCM through CIOCAUTHCRYPT: dst = ciphertext || tag; decrypt takes them back. */
	CHECK(new_session(fd2, CT_CRYPTO_AES_GCM, 16, &ses) == 0, "CIOCGSESSION AES-128-GCM");
	errno = 0;
	CHECK(cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 32, iv) < 0 && errno == EINVAL,
	      "CIOCCRYPT on a GCM session: EINVAL");
	uint8_t tag[16], ct[128], back[128];
	ref_gcm(key, iv, data + 200, 13, data, want, 100, tag);
	struct ct_cdev_crypt_auth_op a = { .ses = ses,
					   .op = CT_COP_ENCRYPT,
					   .len = 100,
					   .auth_len = 13,
					   .auth_src = data + 200,
					   .src = data,
					   .dst = ct,
					   .iv = iv,
					   .iv_len = 12,
					   .tag_len = 16 };
	CHECK(ioctl(fd2, CT_CIOCAUTHCRYPT, &a) == 0 && !memcmp(ct, want, 100) && !memcmp(ct + 100, tag, 16),
	      "CIOCAUTHCRYPT GCM encrypt = OpenSSL (ciphertext and tag)");
	a.op = CT_COP_DECRYPT;
	a.len = 116;
	a.src = ct;
	a.dst = back;
	CHECK(ioctl(fd2, CT_CIOCAUTHCRYPT, &a) == 0 && !memcmp(back, data, 100), "CIOCAUTHCRYPT GCM decrypt");
	ct[100] ^= 1;
	errno = 0;
	CHECK(ioctl(fd2, CT_CIOCAUTHCRYPT, &a) < 0 && errno == EBADMSG, "a tampered tag: EBADMSG");
	close(fd2);
	errno = 0;
	CHECK(cdev_crypt(fd2, ses, CT_COP_ENCRYPT, 0, data, out, 32, iv) < 0 && errno == EBADF,
	      "after close the descriptor is gone (EBADF)");
}

static int alg_tfm(const char *type, const char *name)
{
	int s = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_alg sa = { .salg_family = AF_ALG };

	if (s < 0)
		return -1;
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", name);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

static ssize_t alg_send(int op, int enc, const uint8_t *ivp, const uint8_t *in, size_t len, int flags)
{
	char cbuf[CMSG_SPACE(4) + CMSG_SPACE(4 + 16)] = { 0 };
	struct iovec v = { .iov_base = (void *)in, .iov_len = len };
	struct msghdr m = {
		.msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	c = CMSG_NXTHDR(&m, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(4 + 16);
	struct af_alg_iv *ai = (void *)CMSG_DATA(c);
	ai->ivlen = 16;
	memcpy(ai->iv, ivp, 16);
	return sendmsg(op, &m, flags);
}

static void test_afalg(void)
{
	errno = 0;
	CHECK(alg_tfm("skcipher", "cbc(twofish)") < 0 && errno == ENOENT,
	      "bind to an algorithm the route leaves to the (missing) kernel: ENOENT (%s)", strerror(errno));
	errno = 0;
	CHECK(alg_tfm("skcipher", "nonsense(aes)") < 0 && errno == ENOENT, "bind to an unknown name: ENOENT");
	int tfm = alg_tfm("skcipher", "cbc(aes)");
	CHECK(tfm >= 0, "socket + bind cbc(aes)");
	if (tfm < 0)
		return;
	errno = 0;
	CHECK(setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, 17) < 0 && errno == EINVAL, "a 17-byte key: EINVAL");
	/* OpenSSL's engine accepts first and sets the key after. */
	int op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);
	CHECK(op >= 0, "accept4 before the key");
	errno = 0;
	CHECK(alg_send(op, 1, iv, data, 16, 0) < 0 && errno == ENOKEY, "a send without a key: ENOKEY");
	CHECK(setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, 16) == 0, "ALG_SET_KEY after accept");
	int sotype = 0;
	socklen_t sl = sizeof(sotype);
	CHECK(getsockopt(op, SOL_SOCKET, SO_TYPE, &sotype, &sl) == 0 && sotype == SOCK_SEQPACKET,
	      "the op descriptor is a real SOCK_SEQPACKET socket");
	struct pollfd p = { .fd = op, .events = POLLOUT };
	CHECK(poll(&p, 1, 0) == 1 && (p.revents & POLLOUT), "poll says writable at once");

	/* MSG_MORE: 10 + 22 + 32 bytes, read back in 32 + 32 (recv, then recvmsg on a dup). */
	ref("AES-128-CBC", true, key, iv, data, want, 64);
	ssize_t s1 = alg_send(op, 1, iv, data, 10, MSG_MORE);
	ssize_t s2 = send(op, data + 10, 22, MSG_MORE);
	ssize_t s3 = write(op, data + 32, 32);
	CHECK(s1 == 10 && s2 == 22 && s3 == 32, "sendmsg/send/write queue 10 + 22 + 32 bytes");
	ssize_t g1 = recv(op, out, 32, 0);
	int op2 = dup(op);
	struct iovec v[2] = { { out + 32, 20 }, { out + 52, 12 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
	ssize_t g2 = recvmsg(op2, &m, 0);
	CHECK(g1 == 32 && g2 == 32 && !memcmp(out, want, 64),
	      "two reads of 32 (recv, recvmsg into two iovecs on a dup) = one 64-byte CBC");
	close(op2);
	errno = 0;
	CHECK(read(op, out, 16) < 0 && errno == EINVAL, "a read with nothing queued fails at once (EINVAL)");

	/* The afalg engine's AIO: io_submit(IOCB_CMD_PREAD) + eventfd + io_getevents. */
	aio_context_t ctx = 0;
	int efd = eventfd(0, EFD_CLOEXEC);
	CHECK(syscall(SYS_io_setup, 16, &ctx) == 0 && efd >= 0, "io_setup and eventfd");
	ref("AES-128-CBC", false, key, iv, want, out + 1024, 64);
	CHECK(alg_send(op, 0, iv, want, 64, 0) == 64, "sendmsg 64 bytes to decrypt");
	struct iocb cb = { .aio_fildes = (uint32_t)op,
			   .aio_lio_opcode = IOCB_CMD_PREAD,
			   .aio_buf = (uint64_t)(uintptr_t)out,
			   .aio_nbytes = 64,
			   .aio_data = 42,
			   .aio_flags = IOCB_FLAG_RESFD,
			   .aio_resfd = (uint32_t)efd };
	struct iocb *cbs[1] = { &cb };
	memset(out, 0, 64);
	CHECK(syscall(SYS_io_submit, ctx, 1, cbs) == 1, "io_submit of one PREAD");
	uint64_t ev = 0;
	CHECK(read(efd, &ev, 8) == 8 && ev == 1, "the eventfd counts one completion");
	struct io_event e[4] = { 0 };
	struct timespec ts = { .tv_sec = 1 };
	long got = syscall(SYS_io_getevents, ctx, 1, 4, e, &ts);
	CHECK(got == 1 && e[0].res == 64 && e[0].data == 42 && e[0].obj == (uint64_t)(uintptr_t)&cb &&
		      !memcmp(out, data, 64),
	      "io_getevents returns it (res 64, data, obj) and the plaintext");
	syscall(SYS_io_destroy, ctx);
	close(efd);
	close(op);
	close(tfm);

	/* AEAD with a short tag. */
	tfm = alg_tfm("aead", "gcm(aes)");
	CHECK(tfm >= 0 && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, 16) == 0, "gcm(aes) keyed");
	errno = 0;
	CHECK(setsockopt(tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, 5) < 0 && errno == EINVAL,
	      "a 5-byte tag: EINVAL");
	errno = 0;
	CHECK(alg_tfm("skcipher", "gcm(aes)") < 0 && errno == ENOENT, "gcm(aes) as skcipher: ENOENT");
	close(tfm);

	/* A program that closes every fd above its socket (the emulation's hidden socketpair peer
	 * among them) and opens a file on the freed number: closing the socket must not close it. */
	tfm = alg_tfm("skcipher", "ctr(aes)");
	CHECK(tfm >= 0 && close_range((unsigned)tfm + 1, ~0u, 0) == 0, "close_range above the socket");
	int file = open("/dev/null", O_RDONLY);
	close(tfm);
	CHECK(file > tfm && fcntl(file, F_GETFD) >= 0,
	      "closing the socket leaves the program's file on the peer's old number open");
	close(file);
}

int main(void)
{
	if (!getenv("CRYPTRACE_ROUTE")) {
		printf("SKIP: run under libcryptrace.so with CRYPTRACE_ROUTE=aes-*=aesni\n");
		return 77;
	}
	fixed_data_fill(key, sizeof(key), iv, sizeof(iv), data, sizeof(data));
	test_cryptodev();
	test_afalg();
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
