/* SPDX-License-Identifier: MIT */
/*
 * cryptodev_bench - AES through /dev/crypto (cryptodev-linux) at chunk sizes from 16 B to 64 KiB,
 * timing session setup (CIOCGSESSION), the operation (CIOCCRYPT) and teardown (CIOCFSESSION)
 * separately, like the cryptodev/AF_ALG comparison of story 3 (docs/stories.md). Every result is checked against
 * OpenSSL EVP. Without /dev/crypto it fails with the errno and exit status 2, or with --fallback
 * runs the same table on OpenSSL in software and says so (a visible "silent fallback").
 */
#include <fcntl.h>
#include <getopt.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cryptodev_abi.h"
#include "kex_common.h"

struct mode {
	const char *name; /* "cbc" */
	uint32_t alg;
	unsigned iv_len;
	bool any_length; /* ctr: no block multiple needed */
};

static const struct mode modes[] = {
	{ "cbc", CT_CRYPTO_AES_CBC, 16, false },
	{ "ctr", CT_CRYPTO_AES_CTR, 16, true },
	{ "ecb", CT_CRYPTO_AES_ECB, 0, false },
	{ "xts", CT_CRYPTO_AES_XTS, 16, false },
};

struct opts {
	const char *cipher;
	unsigned bits, nsizes, sizes[KEX_MAX_SIZES];
	double seconds;
	unsigned long count;
	bool fallback, decrypt, no_verify;
};

/* One backend per interface: the program's own cryptodev client, or OpenSSL in software. */
struct backend {
	const char *label;
	int (*init)(void *self, const struct mode *m, const uint8_t *key, unsigned keylen);
	int (*crypt)(void *self, const uint8_t *iv, const uint8_t *in, uint8_t *out, unsigned len);
	void (*deinit)(void *self);
};

struct cdev {
	int fd;
	uint32_t ses;
	int enc;
	const struct mode *m;
};

static int cdev_init(void *self, const struct mode *m, const uint8_t *key, unsigned keylen)
{
	struct cdev *c = self;
	struct ct_cdev_session_op s = { .cipher = m->alg, .keylen = keylen, .key = (uint8_t *)key };

	if (ioctl(c->fd, CT_CIOCGSESSION, &s) < 0)
		return -1;
	c->ses = s.ses;
	c->m = m;
	return 0;
}

static int cdev_crypt(void *self, const uint8_t *iv, const uint8_t *in, uint8_t *out, unsigned len)
{
	struct cdev *c = self;
	struct ct_cdev_crypt_op op = {
		.ses = c->ses,
		.op = c->enc ? CT_COP_ENCRYPT : CT_COP_DECRYPT,
		.len = len,
		.src = (uint8_t *)in,
		.dst = out,
		.iv = c->m->iv_len ? (uint8_t *)iv : NULL,
	};
	return ioctl(c->fd, CT_CIOCCRYPT, &op);
}

static void cdev_deinit(void *self)
{
	struct cdev *c = self;

	ioctl(c->fd, CT_CIOCFSESSION, &c->ses);
}

struct soft {
	EVP_CIPHER_CTX *ctx;
	const EVP_CIPHER *cipher;
	const uint8_t *key;
	int enc;
};

static int soft_init(void *self, const struct mode *m, const uint8_t *key, unsigned keylen)
{
	struct soft *s = self;
	char name[32];

	snprintf(name, sizeof(name), "aes-%u-%s", keylen * 8 / (m->alg == CT_CRYPTO_AES_XTS ? 2 : 1),
		 m->name);
	s->cipher = EVP_get_cipherbyname(name);
	s->ctx = EVP_CIPHER_CTX_new();
	s->key = key;
	if (!s->cipher || !s->ctx || EVP_CipherInit_ex(s->ctx, s->cipher, NULL, key, NULL, s->enc) != 1)
		return -1;
	EVP_CIPHER_CTX_set_padding(s->ctx, 0);
	return 0;
}

static int soft_crypt(void *self, const uint8_t *iv, const uint8_t *in, uint8_t *out, unsigned len)
{
	struct soft *s = self;
	int n = 0;

	/* Each chunk is its own message with its own IV, as with CIOCCRYPT. */
	if (EVP_CipherInit_ex(s->ctx, NULL, NULL, NULL, iv, -1) != 1 ||
	    EVP_CipherUpdate(s->ctx, out, &n, in, (int)len) != 1)
		return -1;
	return 0;
}

static void soft_deinit(void *self)
{
	struct soft *s = self;

	EVP_CIPHER_CTX_free(s->ctx);
	s->ctx = NULL;
}

static const struct backend cdev_backend = { "/dev/crypto", cdev_init, cdev_crypt, cdev_deinit };
static const struct backend soft_backend = { "OpenSSL EVP (software fallback)", soft_init, soft_crypt,
					     soft_deinit };

static uint8_t in_buf[KEX_MAX_CHUNK] __attribute__((aligned(4096)));
static uint8_t out_buf[KEX_MAX_CHUNK] __attribute__((aligned(4096)));
static uint8_t ref_buf[KEX_MAX_CHUNK];

static bool budget_left(const struct opts *o, uint64_t t0, unsigned long done)
{
	if (o->count)
		return done < o->count;
	return kex_now_ns() - t0 < (uint64_t)(o->seconds * 1e9) || done == 0;
}

/* Returns 0, 1 on a result mismatch, -1 when the backend refused (errno set). */
static int bench_mode(const struct backend *be, void *self, const struct mode *m, const struct opts *o)
{
	unsigned keylen = o->bits / 8 * (m->alg == CT_CRYPTO_AES_XTS ? 2 : 1);
	uint8_t key[64], iv[16];
	char name[32];
	int rc = 0;

	kex_fill(key, sizeof(key), 1);
	kex_fill(iv, sizeof(iv), 2);
	kex_fill(in_buf, sizeof(in_buf), 3);
	snprintf(name, sizeof(name), "aes-%u-%s", o->bits, m->name);
	printf("\n%s %s (%s)\n", name, o->decrypt ? "decrypt" : "encrypt", be->label);
	kex_table_head(o->decrypt ? "decrypt_MB/s" : "encrypt_MB/s");
	for (unsigned i = 0; i < o->nsizes; i++) {
		unsigned len = o->sizes[i];
		if (!m->any_length && len % 16) {
			printf("%-8u (skipped: not a multiple of the block size)\n", len);
			continue;
		}
		/* The full cycle: set up, one chunk, tear down. */
		uint64_t init_ns = 0, deinit_ns = 0, full_ns = 0, t0 = kex_now_ns();
		unsigned long cycles = 0;
		while (budget_left(o, t0, cycles)) {
			uint64_t a = kex_now_ns();
			if (be->init(self, m, key, keylen) < 0)
				return -1;
			uint64_t b = kex_now_ns();
			if (be->crypt(self, iv, in_buf, out_buf, len) < 0) {
				int e = errno;
				be->deinit(self);
				errno = e;
				return -1;
			}
			uint64_t c = kex_now_ns();
			be->deinit(self);
			uint64_t d = kex_now_ns();
			init_ns += b - a;
			deinit_ns += d - c;
			full_ns += d - a;
			cycles++;
		}
		/* The operation alone, in one session; check its result against OpenSSL. */
		if (be->init(self, m, key, keylen) < 0)
			return -1;
		unsigned long ops = 0;
		t0 = kex_now_ns();
		while (budget_left(o, t0, ops)) {
			if (be->crypt(self, iv, in_buf, out_buf, len) < 0) {
				int e = errno;
				be->deinit(self);
				errno = e;
				return -1;
			}
			ops++;
		}
		uint64_t op_ns = kex_now_ns() - t0;
		be->deinit(self);
		if (!o->no_verify && (!kex_evp_crypt(name, key, iv, in_buf, ref_buf, (int)len, !o->decrypt) ||
				      memcmp(ref_buf, out_buf, len))) {
			printf("%-8u MISMATCH against OpenSSL %s\n", len, name);
			rc = 1;
			continue;
		}
		kex_table_row(len, ops, init_ns / 1e3 / cycles, (double)len * ops / (op_ns / 1e9) / 1e6,
			      deinit_ns / 1e3 / cycles, (double)len * cycles / (full_ns / 1e9) / 1e6);
	}
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cryptodev_bench [--cipher cbc|ctr|ecb|xts|all] [--bits 128|192|256]\n"
		"         [--sizes 16,64,...] [--seconds S | --count N] [--decrypt] [--fallback]\n"
		"         [--no-verify]  (skip the OpenSSL check: for stand-in devices in tests)\n"
		"AES through /dev/crypto; init/encrypt/deinit timed separately, results checked\n"
		"against OpenSSL. Exit 2 when /dev/crypto or a session is unavailable (unless\n"
		"--fallback: then OpenSSL in software, announced on stdout).\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "cipher", required_argument, NULL, 'c' }, { "bits", required_argument, NULL, 'b' },
		{ "sizes", required_argument, NULL, 's' },  { "seconds", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },  { "fallback", no_argument, NULL, 'f' },
		{ "decrypt", no_argument, NULL, 'd' },      { "help", no_argument, NULL, 'h' },
		{ "no-verify", no_argument, NULL, 'V' },    { 0 },
	};
	struct opts o = { .cipher = "all", .bits = 128, .seconds = 0.2 };
	int ch;

	o.nsizes = kex_default_sizes(o.sizes);
	while ((ch = getopt_long(argc, argv, "c:b:s:t:n:fdhV", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o.cipher = optarg;
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
		case 'f':
			o.fallback = true;
			break;
		case 'd':
			o.decrypt = true;
			break;
		case 'V':
			o.no_verify = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if ((o.bits != 128 && o.bits != 192 && o.bits != 256) || !o.nsizes || o.seconds < 0) {
		usage(stderr);
		return 64;
	}

	struct cdev cd = { .fd = -1, .enc = !o.decrypt };
	struct soft sw = { .enc = !o.decrypt };
	const struct backend *be = &cdev_backend;
	void *self = &cd;

	cd.fd = open(CT_CDEV_PATH, O_RDWR | O_CLOEXEC);
	if (cd.fd < 0) {
		int e = errno;
		fprintf(stderr, "open(%s): %s\n", CT_CDEV_PATH, strerror(e));
		if (!o.fallback)
			return 2;
		printf("cryptodev unavailable (open %s: %s): falling back to OpenSSL EVP in software\n",
		       CT_CDEV_PATH, strerror(e));
		be = &soft_backend;
		self = &sw;
	} else {
		/* Say which driver the kernel picked, as a user would ask it. */
		struct ct_cdev_session_op s = { .cipher = CT_CRYPTO_AES_CBC,
						.keylen = 16,
						.key = (uint8_t *)"0123456789abcdef" };
		if (ioctl(cd.fd, CT_CIOCGSESSION, &s) == 0) {
			struct ct_cdev_session_info_op si = { .ses = s.ses };
			if (ioctl(cd.fd, CT_CIOCGSESSINFO, &si) == 0)
				printf("cbc(aes) driver: %.64s (kernel_driver_only=%u)\n",
				       si.cipher_info.cra_driver_name,
				       si.flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY);
			ioctl(cd.fd, CT_CIOCFSESSION, &s.ses);
		}
	}

	int status = 0;
	bool any = false;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct mode *m = &modes[i];
		if (strcmp(o.cipher, "all") && strcmp(o.cipher, m->name))
			continue;
		if (m->alg == CT_CRYPTO_AES_XTS && o.bits == 192)
			continue;
		any = true;
		int r = bench_mode(be, self, m, &o);
		if (r < 0 && be == &cdev_backend) {
			int e = errno;
			fprintf(stderr, "ioctl(%s) for aes-%u-%s: %s\n", "CIOCGSESSION/CIOCCRYPT", o.bits,
				m->name, strerror(e));
			if (!o.fallback)
				return 2;
			printf("cryptodev refused aes-%u-%s (%s): falling back to OpenSSL EVP in software\n",
			       o.bits, m->name, strerror(e));
			r = bench_mode(&soft_backend, &sw, m, &o);
		}
		if (r < 0) {
			fprintf(stderr, "aes-%u-%s: %s\n", o.bits, m->name, strerror(errno));
			return 2;
		}
		if (r > 0)
			status = 1;
	}
	if (!any) {
		fprintf(stderr, "unknown cipher %s\n", o.cipher);
		return 64;
	}
	if (cd.fd >= 0)
		close(cd.fd);
	return status;
}
