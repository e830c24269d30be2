/* SPDX-License-Identifier: MIT */
/*
 * afalg_calls - makes every AF_ALG call the preload hooks, the ones that work and the ones the
 * kernel refuses, and prints each one's return value and errno and every byte read back. Its
 * output must be byte-identical with and without cryptrace (transparency): the vm suite diffs
 * it in the guest (aesni-intel and generic drivers), the kernel suite on the host (where AF_ALG
 * is missing and only the setsockopt pass-through and the socket failure are reached).
 *
 * Descriptors print as "fd", not as numbers: the preload's trace file takes one. The refusals
 * are also what the vm suite looks for in the trace: a key of 17 bytes (setsockopt EINVAL), a
 * bind to cbc(no-such-cipher) (ENOENT) and a tampered GCM tag (EBADMSG on read and recvmsg).
 * Exit 0 when AF_ALG exists, 2 when socket(AF_ALG) fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/if_alg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fixed_data.h"
#include "kernel_decode.h" /* AF_ALG, SOL_ALG where the libc headers lack them */

enum ret_kind { RET_SIZE, RET_FD };

/* One call's outcome; errno is read before anything else can change it. */
static long show(const char *what, enum ret_kind kind, long r)
{
	int e = errno;

	if (r < 0)
		printf("%-52s r=%ld errno=%s\n", what, r, ct_strerrorname(e));
	else if (kind == RET_FD)
		printf("%-52s r=fd\n", what);
	else
		printf("%-52s r=%ld\n", what, r);
	fflush(stdout);
	errno = e;
	return r;
}

#define CALL(what, kind, expr) (errno = 0, show((what), (kind), (long)(expr)))

static void dump(const char *what, const uint8_t *p, long n)
{
	printf("  %s:", what);
	for (long i = 0; i < n; i++)
		printf("%s%02x", i % 32 ? "" : "\n    ", p[i]);
	printf("\n");
}

static uint8_t key[32], iv[16], data[256], out[512], out2[512];

static int tfm_bind(const char *type, const char *name, socklen_t addrlen)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	char what[96];

	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", name);
	int s = (int)CALL("socket(AF_ALG, SOCK_SEQPACKET)", RET_FD,
			  socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	if (s < 0)
		return -1;
	snprintf(what, sizeof(what), "bind %s %s addrlen=%u", type, name, (unsigned)addrlen);
	if (CALL(what, RET_SIZE, bind(s, (struct sockaddr *)&sa, addrlen)) < 0) {
		CALL("close(tfm)", RET_SIZE, close(s));
		return -1;
	}
	return s;
}

/* The control messages of one request: op, IV (ivlen bytes), AEAD assoclen (when >= 0). */
struct req {
	union {
		char buf[CMSG_SPACE(4) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16) + CMSG_SPACE(4)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg;
	struct iovec iov;
};

static struct msghdr *req(struct req *r, int enc, unsigned ivlen, int assoclen, const void *in, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->iov = (struct iovec){ .iov_base = (void *)in, .iov_len = len };
	r->msg = (struct msghdr){ .msg_iov = len ? &r->iov : NULL,
				  .msg_iovlen = len ? 1 : 0,
				  .msg_control = r->ctl.buf };
	struct cmsghdr *c = (struct cmsghdr *)r->ctl.buf;
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	size_t used = CMSG_SPACE(4);
	c = (struct cmsghdr *)(r->ctl.buf + used);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
	struct af_alg_iv *ai = (void *)CMSG_DATA(c);
	ai->ivlen = ivlen;
	memcpy(ai->iv, iv, ivlen > 16 ? 16 : ivlen);
	used += CMSG_SPACE(sizeof(struct af_alg_iv) + ivlen);
	if (assoclen >= 0) {
		c = (struct cmsghdr *)(r->ctl.buf + used);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
		c->cmsg_len = CMSG_LEN(4);
		*(uint32_t *)CMSG_DATA(c) = (uint32_t)assoclen;
		used += CMSG_SPACE(4);
	}
	r->msg.msg_controllen = used;
	return &r->msg;
}

/* setsockopt on descriptors that are not AF_ALG sockets: the hook must pass every errno. */
static void setsockopt_passthrough(void)
{
	int v = 1 << 16;

	CALL("setsockopt(-1, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
	     setsockopt(-1, SOL_ALG, ALG_SET_KEY, key, 16));
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CALL("setsockopt(/dev/null, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
	     setsockopt(nul, SOL_ALG, ALG_SET_KEY, key, 16));
	close(nul);
	CALL("setsockopt(closed fd, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
	     setsockopt(nul, SOL_ALG, ALG_SET_KEY, key, 16));
	int u = (int)CALL("socket(AF_INET, SOCK_DGRAM)", RET_FD,
			  socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (u < 0)
		return;
	CALL("setsockopt(udp, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
	     setsockopt(u, SOL_ALG, ALG_SET_KEY, key, 16));
	CALL("setsockopt(udp, SOL_SOCKET, 9999, 4)", RET_SIZE, setsockopt(u, SOL_SOCKET, 9999, &v, 4));
	CALL("setsockopt(udp, SOL_SOCKET, SO_RCVBUF, optlen 2)", RET_SIZE,
	     setsockopt(u, SOL_SOCKET, SO_RCVBUF, &v, 2));
	CALL("setsockopt(udp, SOL_SOCKET, SO_RCVBUF, NULL, 4)", RET_SIZE,
	     setsockopt(u, SOL_SOCKET, SO_RCVBUF, NULL, 4));
	CALL("setsockopt(udp, SOL_SOCKET, SO_RCVBUF, 4)", RET_SIZE,
	     setsockopt(u, SOL_SOCKET, SO_RCVBUF, &v, 4));
	CALL("close(udp)", RET_SIZE, close(u));
}

/* Set-up: the refusals (bad names, short address, bad options) and a working cbc(aes). */
static int skcipher_setup(int *op_out)
{
	static const struct {
		const char *type, *name;
		socklen_t addrlen;
	} refused[] = {
		{ "skcipher", "cbc(no-such-cipher)", sizeof(struct sockaddr_alg) },
		{ "no-such-type", "cbc(aes)", sizeof(struct sockaddr_alg) },
		{ "skcipher", "cbc(aes)", 2 },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int s = tfm_bind(refused[i].type, refused[i].name, refused[i].addrlen);
		if (s >= 0)
			CALL("close(tfm)", RET_SIZE, close(s));
	}
	int unbound = (int)CALL("socket(AF_ALG) unbound", RET_FD, socket(AF_ALG, SOCK_SEQPACKET, 0));
	if (unbound >= 0) {
		CALL("accept4(unbound tfm)", RET_FD, accept4(unbound, NULL, NULL, SOCK_CLOEXEC));
		CALL("setsockopt(unbound, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
		     setsockopt(unbound, SOL_ALG, ALG_SET_KEY, key, 16));
		CALL("close(unbound)", RET_SIZE, close(unbound));
	}

	int t = tfm_bind("skcipher", "cbc(aes)", sizeof(struct sockaddr_alg));
	if (t < 0)
		return -1;
	int v = 1;
	CALL("setsockopt(tfm, SOL_ALG, 99, 4)", RET_SIZE, setsockopt(t, SOL_ALG, 99, &v, 4));
	CALL("setsockopt(tfm, SOL_SOCKET, SO_RCVBUF, 4)", RET_SIZE,
	     setsockopt(t, SOL_SOCKET, SO_RCVBUF, &v, 4));
	CALL("setsockopt(tfm, ALG_SET_KEY, 17 bytes)", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_KEY, key, 17));
	CALL("setsockopt(tfm, ALG_SET_KEY, 0 bytes)", RET_SIZE, setsockopt(t, SOL_ALG, ALG_SET_KEY, key, 0));
	CALL("setsockopt(tfm, ALG_SET_KEY, NULL, 16)", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_KEY, NULL, 16));
	CALL("setsockopt(tfm, ALG_SET_AEAD_AUTHSIZE) on skcipher", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, 16));
	CALL("setsockopt(tfm, ALG_SET_KEY, 16 bytes)", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_KEY, key, 16));
	int op = (int)CALL("accept4(tfm)", RET_FD, accept4(t, NULL, NULL, SOCK_CLOEXEC));
	if (op >= 0)
		CALL("setsockopt(op, SOL_ALG, ALG_SET_KEY, 16)", RET_SIZE,
		     setsockopt(op, SOL_ALG, ALG_SET_KEY, key, 16));
	*op_out = op;
	return t;
}

/* Copies: sendmsg + read, MSG_MORE pieces read back in parts, readv, recvmsg, dup. */
static void skcipher_copy(int op)
{
	struct req r;

	CALL("sendmsg(encrypt, ivlen 8)", RET_SIZE, sendmsg(op, req(&r, 1, 8, -1, data, 64), 0));
	CALL("sendmsg(encrypt, 64)", RET_SIZE, sendmsg(op, req(&r, 1, 16, -1, data, 64), 0));
	long n = CALL("read(op, 64)", RET_SIZE, read(op, out, 64));
	dump("read", out, n);

	CALL("sendmsg(encrypt, 10, MSG_MORE)", RET_SIZE, sendmsg(op, req(&r, 1, 16, -1, data, 10), MSG_MORE));
	CALL("send(22, MSG_MORE)", RET_SIZE, send(op, data + 10, 22, MSG_MORE));
	CALL("write(32)", RET_SIZE, write(op, data + 32, 32));
	n = CALL("recv(op, 32)", RET_SIZE, recv(op, out, 32, 0));
	dump("recv", out, n);
	int d = (int)CALL("dup(op)", RET_FD, dup(op));
	struct iovec v[2] = { { out, 20 }, { out + 20, 12 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
	n = CALL("recvmsg(dup, 20 + 12)", RET_SIZE, recvmsg(d, &m, 0));
	dump("recvmsg", out, n);
	CALL("recv(op, MSG_DONTWAIT) with nothing queued", RET_SIZE, recv(op, out, 16, MSG_DONTWAIT));

	CALL("sendmsg(decrypt, 48) on the dup", RET_SIZE, sendmsg(d, req(&r, 0, 16, -1, data, 48), 0));
	struct iovec w[3] = { { out, 16 }, { out + 16, 16 }, { out + 32, 16 } };
	n = CALL("readv(op, 3 x 16)", RET_SIZE, readv(op, w, 3));
	dump("readv", out, n);
	CALL("close(dup)", RET_SIZE, close(d));
}

/* The zero-copy way: control messages by sendmsg(MSG_MORE), data by vmsplice + splice. */
static void skcipher_splice(int op)
{
	int p[2];
	struct req r;

	if (CALL("pipe2", RET_SIZE, pipe2(p, O_CLOEXEC)) < 0)
		return;
	CALL("sendmsg(encrypt, cmsgs only, MSG_MORE)", RET_SIZE,
	     sendmsg(op, req(&r, 1, 16, -1, NULL, 0), MSG_MORE));
	struct iovec v = { .iov_base = data, .iov_len = 128 };
	CALL("vmsplice(pipe, 128)", RET_SIZE, vmsplice(p[1], &v, 1, 0));
	CALL("splice(pipe -> op, 128)", RET_SIZE, splice(p[0], NULL, op, NULL, 128, 0));
	long n = CALL("read(op, 128)", RET_SIZE, read(op, out, 128));
	dump("read", out, n);
	CALL("splice(pipe -> op) with an empty pipe, NONBLOCK", RET_SIZE,
	     splice(p[0], NULL, op, NULL, 16, SPLICE_F_NONBLOCK));
	close(p[0]);
	close(p[1]);
}

/* The afalg engine's AIO: io_submit(PREAD) with an eventfd, io_getevents, through syscall(). */
static void skcipher_aio(int op)
{
	aio_context_t ctx = 0;
	struct req r;

	if (CALL("io_setup(4)", RET_SIZE, syscall(SYS_io_setup, 4, &ctx)) < 0)
		return;
	int efd = eventfd(0, EFD_CLOEXEC);
	CALL("sendmsg(encrypt, 64) for AIO", RET_SIZE, sendmsg(op, req(&r, 1, 16, -1, data, 64), 0));
	struct iocb cb = { .aio_fildes = (uint32_t)op,
			   .aio_lio_opcode = IOCB_CMD_PREAD,
			   .aio_buf = (uint64_t)(uintptr_t)out2,
			   .aio_nbytes = 64,
			   .aio_data = 42,
			   .aio_flags = IOCB_FLAG_RESFD,
			   .aio_resfd = (uint32_t)efd };
	struct iocb *cbs[1] = { &cb };
	memset(out2, 0, 64);
	CALL("io_submit(1 PREAD)", RET_SIZE, syscall(SYS_io_submit, ctx, 1, cbs));
	uint64_t ev = 0;
	CALL("read(eventfd)", RET_SIZE, read(efd, &ev, 8));
	printf("  eventfd count %llu\n", (unsigned long long)ev);
	struct io_event e[2] = { 0 };
	struct timespec ts = { .tv_sec = 5 };
	long got = CALL("io_getevents(1..2)", RET_SIZE, syscall(SYS_io_getevents, ctx, 1, 2, e, &ts));
	if (got == 1)
		printf("  event res=%lld data=%llu obj=%s\n", (long long)e[0].res,
		       (unsigned long long)e[0].data, e[0].obj == (uint64_t)(uintptr_t)&cb ? "cb" : "?");
	dump("aio read", out2, 64);
	struct iocb bad = cb;
	bad.aio_fildes = (uint32_t)-1;
	cbs[0] = &bad;
	CALL("io_submit(PREAD on fd -1)", RET_SIZE, syscall(SYS_io_submit, ctx, 1, cbs));
	CALL("io_submit(bad context)", RET_SIZE, syscall(SYS_io_submit, (aio_context_t)1, 1, cbs));
	CALL("io_destroy", RET_SIZE, syscall(SYS_io_destroy, ctx));
	close(efd);
}

/* gcm(aes): tag size refusals, encrypt, decrypt, and a tampered tag on read and on recvmsg. */
static void aead(void)
{
	enum { AAD = 20, PT = 100, TAG = 16 };
	struct req r;
	uint8_t ct[AAD + PT + TAG];

	int t = tfm_bind("aead", "gcm(aes)", sizeof(struct sockaddr_alg));
	if (t < 0)
		return;
	CALL("setsockopt(gcm, ALG_SET_KEY, 16)", RET_SIZE, setsockopt(t, SOL_ALG, ALG_SET_KEY, key, 16));
	CALL("setsockopt(gcm, ALG_SET_AEAD_AUTHSIZE, 5)", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, 5));
	CALL("setsockopt(gcm, ALG_SET_AEAD_AUTHSIZE, 16)", RET_SIZE,
	     setsockopt(t, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, TAG));
	int op = (int)CALL("accept(gcm)", RET_FD, accept(t, NULL, NULL));
	if (op < 0) {
		close(t);
		return;
	}
	CALL("sendmsg(gcm encrypt, aad 20 + 100)", RET_SIZE,
	     sendmsg(op, req(&r, 1, 12, AAD, data, AAD + PT), 0));
	long n = CALL("read(gcm, aad + ct + tag)", RET_SIZE, read(op, ct, sizeof(ct)));
	dump("aad+ct+tag", ct, n);
	CALL("sendmsg(gcm decrypt, 136)", RET_SIZE, sendmsg(op, req(&r, 0, 12, AAD, ct, sizeof(ct)), 0));
	n = CALL("read(gcm decrypt)", RET_SIZE, read(op, out, AAD + PT));
	dump("aad+pt", out, n);
	ct[AAD + PT] ^= 1;
	CALL("sendmsg(gcm decrypt, tampered tag)", RET_SIZE,
	     sendmsg(op, req(&r, 0, 12, AAD, ct, sizeof(ct)), 0));
	CALL("read(gcm decrypt, tampered tag)", RET_SIZE, read(op, out, AAD + PT));
	CALL("sendmsg(gcm decrypt, tampered tag again)", RET_SIZE,
	     sendmsg(op, req(&r, 0, 12, AAD, ct, sizeof(ct)), 0));
	struct iovec v = { out, AAD + PT };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
	CALL("recvmsg(gcm decrypt, tampered tag)", RET_SIZE, recvmsg(op, &m, 0));
	CALL("close(gcm op)", RET_SIZE, close(op));
	CALL("close(gcm tfm)", RET_SIZE, close(t));
}

int main(void)
{
	fixed_data_fill(key, sizeof(key), iv, sizeof(iv), data, sizeof(data));

	setsockopt_passthrough();
	int probe = (int)CALL("socket(AF_ALG)", RET_FD, socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	if (probe < 0)
		return 2;
	CALL("socket(AF_ALG, SOCK_STREAM)", RET_FD, socket(AF_ALG, SOCK_STREAM, 0));
	CALL("close(probe)", RET_SIZE, close(probe));

	int op = -1;
	int t = skcipher_setup(&op);
	if (t >= 0 && op >= 0) {
		skcipher_copy(op);
		skcipher_splice(op);
		skcipher_aio(op);
		int d2 = (int)CALL("dup2(op, 100)", RET_FD, dup2(op, 100));
		CALL("close(op)", RET_SIZE, close(op));
		CALL("sendmsg(encrypt, 16) on the dup2 copy", RET_SIZE,
		     sendmsg(d2, req(&(struct req){ 0 }, 1, 16, -1, data, 16), 0));
		long n = CALL("read(dup2 copy, 16)", RET_SIZE, read(d2, out, 16));
		dump("read", out, n);
		CALL("close(dup2 copy)", RET_SIZE, close(d2));
		CALL("read(closed op)", RET_SIZE, read(op, out, 16));
		CALL("close(closed op)", RET_SIZE, close(op));
		CALL("accept4(tfm) again", RET_FD, op = accept4(t, NULL, NULL, 0));
		CALL("close(second op)", RET_SIZE, close(op));
		CALL("close(tfm)", RET_SIZE, close(t));
	}
	aead();
	return 0;
}
