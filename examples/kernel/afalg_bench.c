/* SPDX-License-Identifier: MIT */
/*
 * afalg_bench - an AF_ALG skcipher client (default cbc(aes)) at chunk sizes from 16 B to 64 KiB,
 * in the two ways story 3 (docs/stories.md) compared: --mode sendmsg (sendmsg with the data, then read) and
 * --mode splice (sendmsg with only the control messages, vmsplice + splice of the data, read).
 * Session setup (socket + bind + setkey + accept), the operation and teardown (close) are
 * timed separately; results are checked against OpenSSL EVP. Without AF_ALG it prints the errno
 * and exits 2.
 */
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kex_common.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

enum mode { MODE_SENDMSG, MODE_SPLICE };

struct opts {
	const char *alg; /* kernel name: "cbc(aes)" */
	unsigned bits, nsizes, sizes[KEX_MAX_SIZES];
	double seconds;
	unsigned long count;
	enum mode mode;
	bool decrypt;
};

struct session {
	int tfm, op, pipe[2];
};

/* Where a failure happened, for the message the user sees. */
static const char *fail_call;

static int session_open(struct session *s, const struct opts *o, const uint8_t *key, unsigned keylen)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };

	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", o->alg);
	s->tfm = s->op = -1;
	fail_call = "socket(AF_ALG)";
	s->tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->tfm < 0)
		return -1;
	fail_call = "bind(AF_ALG)";
	if (bind(s->tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	fail_call = "setsockopt(ALG_SET_KEY)";
	if (setsockopt(s->tfm, SOL_ALG, ALG_SET_KEY, key, keylen) < 0)
		goto fail;
	fail_call = "accept(AF_ALG)";
	s->op = accept4(s->tfm, NULL, NULL, SOCK_CLOEXEC);
	if (s->op < 0)
		goto fail;
	return 0;
fail:;
	int e = errno;
	close(s->tfm);
	errno = e;
	return -1;
}

static void session_close(struct session *s)
{
	close(s->op);
	close(s->tfm);
}

/* One message: op and IV as control messages, then the data by copy or by splice. */
static int crypt_one(struct session *s, const struct opts *o, const uint8_t *iv, unsigned ivlen,
		     const uint8_t *in, uint8_t *out, unsigned len)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)in, .iov_len = len };
	struct msghdr msg = { .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };

	memset(&ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	*(uint32_t *)CMSG_DATA(c) = o->decrypt ? ALG_OP_DECRYPT : ALG_OP_ENCRYPT;
	if (ivlen) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
		struct af_alg_iv *aiv = (void *)CMSG_DATA(c);
		aiv->ivlen = ivlen;
		memcpy(aiv->iv, iv, ivlen);
	} else {
		msg.msg_controllen = CMSG_SPACE(sizeof(uint32_t));
	}
	if (o->mode == MODE_SENDMSG) {
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		fail_call = "sendmsg";
		if (sendmsg(s->op, &msg, 0) != (ssize_t)len)
			return -1;
	} else {
		fail_call = "sendmsg(MSG_MORE)";
		if (sendmsg(s->op, &msg, MSG_MORE) < 0)
			return -1;
		fail_call = "vmsplice";
		if (vmsplice(s->pipe[1], &iov, 1, SPLICE_F_GIFT) != (ssize_t)len)
			return -1;
		fail_call = "splice";
		if (splice(s->pipe[0], NULL, s->op, NULL, len, 0) != (ssize_t)len)
			return -1;
	}
	fail_call = "read";
	ssize_t got = read(s->op, out, len);
	if (got != (ssize_t)len) {
		if (got >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

static uint8_t in_buf[KEX_MAX_CHUNK] __attribute__((aligned(4096)));
static uint8_t out_buf[KEX_MAX_CHUNK] __attribute__((aligned(4096)));
static uint8_t ref_buf[KEX_MAX_CHUNK];

static bool budget_left(const struct opts *o, uint64_t t0, unsigned long done)
{
	if (o->count)
		return done < o->count;
	return kex_now_ns() - t0 < (uint64_t)(o->seconds * 1e9) || done == 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: afalg_bench [--mode sendmsg|splice] [--alg cbc(aes)|ctr(aes)|ecb(aes)|xts(aes)]\n"
		"         [--bits 128|192|256] [--sizes 16,64,...] [--seconds S | --count N] [--decrypt]\n"
		"AF_ALG skcipher; init/encrypt/deinit timed separately, results checked against\n"
		"OpenSSL. Exit 2 when AF_ALG or the algorithm is unavailable.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "alg", required_argument, NULL, 'a' },
		{ "bits", required_argument, NULL, 'b' },
		{ "sizes", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "decrypt", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .alg = "cbc(aes)", .bits = 128, .seconds = 0.2, .mode = MODE_SENDMSG };
	int ch;

	o.nsizes = kex_default_sizes(o.sizes);
	while ((ch = getopt_long(argc, argv, "m:a:b:s:t:n:dh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (!strcmp(optarg, "sendmsg"))
				o.mode = MODE_SENDMSG;
			else if (!strcmp(optarg, "splice"))
				o.mode = MODE_SPLICE;
			else {
				usage(stderr);
				return 64;
			}
			break;
		case 'a':
			o.alg = optarg;
			break;
		case 'b':
			o.bits = (unsigned)atoi(optarg);
			break;
		case 's':
			o.nsizes = kex_parse_sizes(optarg, o.sizes);
			break;
		case 't':
			o.seconds = atof(optarg);
			break;
		case 'n':
			o.count = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			o.decrypt = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	/* The OpenSSL name of the kernel algorithm, for the reference result. */
	static const struct {
		const char *kname, *mode;
		unsigned ivlen, key_mult;
		bool any_length;
	} algs[] = {
		{ "cbc(aes)", "cbc", 16, 1, false },
		{ "ctr(aes)", "ctr", 16, 1, true },
		{ "ecb(aes)", "ecb", 0, 1, false },
		{ "xts(aes)", "xts", 16, 2, false },
	};
	int ai = -1;
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (!strcmp(algs[i].kname, o.alg))
			ai = (int)i;
	if (ai < 0 || (o.bits != 128 && o.bits != 192 && o.bits != 256) || !o.nsizes ||
	    (algs[ai].key_mult == 2 && o.bits == 192)) {
		usage(stderr);
		return 64;
	}
	char ossl[32];
	snprintf(ossl, sizeof(ossl), "aes-%u-%s", o.bits, algs[ai].mode);
	unsigned keylen = o.bits / 8 * algs[ai].key_mult, ivlen = algs[ai].ivlen;
	uint8_t key[64], iv[16];
	kex_fill(key, sizeof(key), 1);
	kex_fill(iv, sizeof(iv), 2);
	kex_fill(in_buf, sizeof(in_buf), 3);

	/* Probe once, so a missing interface fails before the table starts. */
	struct session s;
	if (session_open(&s, &o, key, keylen) < 0) {
		int e = errno;
		fprintf(stderr, "%s: %s\n", fail_call, strerror(e));
		return 2;
	}
	session_close(&s);

	int status = 0;
	printf("%s (%s) %s via AF_ALG, mode %s\n", o.alg, ossl, o.decrypt ? "decrypt" : "encrypt",
	       o.mode == MODE_SPLICE ? "vmsplice+splice" : "sendmsg+read");
	kex_table_head(o.decrypt ? "decrypt_MB/s" : "encrypt_MB/s");
	for (unsigned i = 0; i < o.nsizes; i++) {
		unsigned len = o.sizes[i];
		if (!algs[ai].any_length && len % 16) {
			printf("%-8u (skipped: not a multiple of the block size)\n", len);
			continue;
		}
		uint64_t init_ns = 0, deinit_ns = 0, full_ns = 0, t0 = kex_now_ns();
		unsigned long cycles = 0, ops = 0;
		s.pipe[0] = s.pipe[1] = -1;
		if (o.mode == MODE_SPLICE && pipe2(s.pipe, O_CLOEXEC) < 0) {
			perror("pipe2");
			return 2;
		}
		while (budget_left(&o, t0, cycles)) {
			uint64_t a = kex_now_ns();
			if (session_open(&s, &o, key, keylen) < 0)
				goto fail;
			uint64_t b = kex_now_ns();
			if (crypt_one(&s, &o, iv, ivlen, in_buf, out_buf, len) < 0)
				goto fail;
			uint64_t c = kex_now_ns();
			session_close(&s);
			uint64_t d = kex_now_ns();
			init_ns += b - a;
			deinit_ns += d - c;
			full_ns += d - a;
			cycles++;
		}
		if (session_open(&s, &o, key, keylen) < 0)
			goto fail;
		t0 = kex_now_ns();
		while (budget_left(&o, t0, ops)) {
			if (crypt_one(&s, &o, iv, ivlen, in_buf, out_buf, len) < 0)
				goto fail;
			ops++;
		}
		uint64_t op_ns = kex_now_ns() - t0;
		session_close(&s);
		if (s.pipe[0] >= 0) {
			close(s.pipe[0]);
			close(s.pipe[1]);
		}
		if (!kex_evp_crypt(ossl, key, iv, in_buf, ref_buf, (int)len, !o.decrypt) ||
		    memcmp(ref_buf, out_buf, len)) {
			printf("%-8u MISMATCH against OpenSSL %s\n", len, ossl);
			status = 1;
			continue;
		}
		kex_table_row(len, ops, init_ns / 1e3 / cycles, (double)len * ops / (op_ns / 1e9) / 1e6,
			      deinit_ns / 1e3 / cycles, (double)len * cycles / (full_ns / 1e9) / 1e6);
	}
	return status;
fail:;
	int e = errno;
	fprintf(stderr, "%s: %s\n", fail_call, strerror(e));
	return 2;
}
