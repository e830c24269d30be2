/* SPDX-License-Identifier: MIT */
/*
 * cdev_server.c - a real /dev/crypto for machines without the cryptodev module: a CUSE character
 * device speaking the cryptodev ioctl ABI (common/kernel/cryptodev_abi.h), doing the crypto through
 * AF_ALG in the running kernel, so CIOCGSESSINFO names the kernel's real driver. A start-up profile
 * makes it behave like limited hardware (see cdev_profile.h).
 *
 * The ioctls are "unrestricted": the kernel cannot know which user memory a cryptodev struct points
 * to, so each ioctl arrives in up to three passes. Pass 1 carries nothing; the server answers
 * FUSE_IOCTL_RETRY asking for the struct. Pass 2 carries the struct; the server asks again for the
 * struct plus the buffers it points to, and names the buffers it will write (always starting with
 * the struct itself, so the third pass is the one with a non-empty output side). Pass 3 does the
 * work. The struct is decoded again in pass 3 and a layout that no longer matches (the program
 * changed it in between) is simply asked for again. 32-bit programs (FUSE_IOCTL_COMPAT) have
 * 4-byte pointers; their structs are converted, matching on the ioctl's type and number only.
 */
#define FUSE_USE_VERSION 31

#include <cuse_lowlevel.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cdev_afalg.h"
#include "cdev_clone.h"
#include "cdev_profile.h"
#include "cdev_wire.h"
#include "cryptodev_abi.h"

/* CUSE moves at most 32 pages per ioctl direction (the kernel's default max_pages). */
#define CDEV_MAX_TRANSFER (32u * 4096u)
#define CDEV_MAX_AUTH 4096u /* cryptodev-linux: AAD is copied into one page */

#define UIOV(addr, len) ((struct iovec){ .iov_base = (void *)(uintptr_t)(addr), .iov_len = (len) })

struct cdev_session {
	uint32_t id;
	const struct cdev_cipher *cipher;
	uint32_t keylen;
	struct cdev_tfm tfm;
	char driver[CT_CDEV_MAX_ALG_NAME];
	bool driver_only;
	struct cdev_session *next;
};

/* One open of the device (fi->fh): its sessions, as cryptodev keeps them per file. */
struct cdev_file {
	pthread_mutex_t lock; /* sessions, and every request on them */
	struct cdev_session *sessions;
};

static struct cdev_profile profile;
static const char *devname = "crypto";
static bool verbose;
static atomic_uint next_session_id = 1;
static atomic_ulong n_sessions, n_refused, n_crypt, n_auth, n_errors, n_delayed;

#define logv(...)                                                                                            \
	do {                                                                                                 \
		if (verbose)                                                                                 \
			fprintf(stderr, "cdev-cuse: " __VA_ARGS__);                                          \
	} while (0)

/* ---- sessions ---------------------------------------------------------------------------- */

static struct cdev_session *session_find(struct cdev_file *f, uint32_t id)
{
	for (struct cdev_session *s = f->sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void session_free(struct cdev_session *s)
{
	cdev_tfm_close(&s->tfm);
	free(s);
}

/* The driver behind a session's transform. Reading and parsing /proc/crypto costs more than the
 * rest of session setup together, so the answer is kept per algorithm name: the kernel's choice
 * changes only when crypto modules come or go, which a test bed does before starting the server. */
static void driver_of(struct cdev_session *s)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		const struct cdev_cipher *cipher;
		char driver[CT_CDEV_MAX_ALG_NAME];
		bool driver_only, from_kernel;
	} known[8];
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < sizeof(known) / sizeof(known[0]) && known[i].cipher; i++)
		if (known[i].cipher == s->cipher)
			break;
	if (i < sizeof(known) / sizeof(known[0]) && !known[i].cipher &&
	    cdev_driver_info(s->cipher->kname, s->cipher->aead, known[i].driver, sizeof(known[i].driver),
			     &known[i].driver_only, &known[i].from_kernel)) {
		known[i].cipher = s->cipher;
		logv("%s is served by %s: kernel driver only %s (%s)\n", s->cipher->kname, known[i].driver,
		     known[i].driver_only ? "yes" : "no",
		     known[i].from_kernel ? "the kernel's flag, crypto_user"
					  : "guessed from the driver's name: no crypto_user");
	}
	if (i < sizeof(known) / sizeof(known[0]) && known[i].cipher == s->cipher) {
		memcpy(s->driver, known[i].driver, sizeof(s->driver));
		s->driver_only = known[i].driver_only;
	}
	pthread_mutex_unlock(&lock);
}

/* What a real offload engine adds to every request; the CPU stays idle meanwhile. */
static void engine_latency(void)
{
	if (!profile.latency_us)
		return;
	atomic_fetch_add(&n_delayed, 1);
	struct timespec ts = { .tv_sec = profile.latency_us / 1000000,
			       .tv_nsec = (long)(profile.latency_us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void reply_errno(fuse_req_t req, int negerr)
{
	atomic_fetch_add(&n_errors, 1);
	fuse_reply_err(req, -negerr);
}

/* ---- the ioctls ---------------------------------------------------------------------------- */

struct ioctl_call {
	fuse_req_t req;
	struct cdev_file *file;
	bool compat;
	uint64_t arg;
	const uint8_t *in;
	size_t in_size, out_size;
};

static void ask_struct(const struct ioctl_call *c, size_t size)
{
	struct iovec in = UIOV(c->arg, size);
	fuse_reply_ioctl_retry(c->req, &in, 1, NULL, 0);
}

static void gsession(const struct ioctl_call *c)
{
	size_t size = CDEV_ABI_SIZE(c->compat, session_op);
	struct session_req r;

	if (c->in_size < size)
		return ask_struct(c, size);
	cdev_decode_session(c->in, c->compat, &r);
	if (r.keylen > 64 || r.mackeylen > 64) {
		atomic_fetch_add(&n_refused, 1);
		return reply_errno(c->req, -EINVAL);
	}
	if (c->out_size == 0 || c->in_size != size + r.keylen + r.mackeylen) {
		struct iovec in[3] = { UIOV(c->arg, size) }, out = UIOV(c->arg, size);
		size_t n = 1;
		if (r.keylen)
			in[n++] = UIOV(r.key, r.keylen);
		if (r.mackeylen)
			in[n++] = UIOV(r.mackey, r.mackeylen);
		fuse_reply_ioctl_retry(c->req, in, n, &out, 1);
		return;
	}

	int err = cdev_profile_allows(&profile, r.cipher, r.keylen, r.mac);
	if (err) {
		logv("CIOCGSESSION cipher %u keylen %u mac %u refused by profile %s\n", r.cipher, r.keylen,
		     r.mac, profile.name);
		atomic_fetch_add(&n_refused, 1);
		return reply_errno(c->req, err);
	}
	struct cdev_session *s = calloc(1, sizeof(*s));
	if (!s)
		return reply_errno(c->req, -ENOMEM);
	s->cipher = cdev_cipher_find(r.cipher);
	s->keylen = r.keylen;
	err = cdev_tfm_open(&s->tfm, s->cipher->kname, s->cipher->aead, c->in + size, r.keylen);
	if (err) {
		/* cryptodev-linux answers EINVAL whether the kernel lacks the mode (ENOENT) or
		 * refuses the key length; the real reason goes to the log. */
		logv("CIOCGSESSION %s keylen %u: AF_ALG says %s\n", s->cipher->kname, r.keylen,
		     strerror(-err));
		free(s);
		atomic_fetch_add(&n_refused, 1);
		return reply_errno(c->req, err == -ENOMEM ? err : -EINVAL);
	}
	driver_of(s);
	s->id = atomic_fetch_add(&next_session_id, 1);

	pthread_mutex_lock(&c->file->lock);
	s->next = c->file->sessions;
	c->file->sessions = s;
	pthread_mutex_unlock(&c->file->lock);
	atomic_fetch_add(&n_sessions, 1);
	logv("session %u: %s keylen %u -> driver %s%s\n", s->id, s->cipher->kname, r.keylen, s->driver,
	     s->driver_only ? " (kernel driver only)" : "");

	uint8_t raw[sizeof(struct ct_cdev_session_op)];
	memcpy(raw, c->in, size);
	memcpy(raw + CDEV_ABI_OFFSET(c->compat, session_op, ses), &s->id, sizeof(s->id));
	fuse_reply_ioctl(c->req, 0, raw, size);
}

static void fsession(const struct ioctl_call *c)
{
	uint32_t id;
	struct cdev_session **pp, *s = NULL;

	if (c->in_size < sizeof(id))
		return ask_struct(c, sizeof(id));
	memcpy(&id, c->in, sizeof(id));
	pthread_mutex_lock(&c->file->lock);
	for (pp = &c->file->sessions; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			s = *pp;
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->file->lock);
	if (!s)
		return reply_errno(c->req, -ENOENT); /* what cryptodev-linux means to answer */
	session_free(s);
	fuse_reply_ioctl(c->req, 0, NULL, 0);
}

static void crypt_op(const struct ioctl_call *c)
{
	size_t size = CDEV_ABI_SIZE(c->compat, crypt_op);
	struct crypt_req r;
	struct cdev_session *s;
	int err = 0;

	if (c->in_size < size)
		return ask_struct(c, size);
	cdev_decode_crypt(c->in, c->compat, &r);

	pthread_mutex_lock(&c->file->lock);
	s = session_find(c->file, r.ses);
	if (!s || s->cipher->aead || (r.op != CT_COP_ENCRYPT && r.op != CT_COP_DECRYPT) ||
	    r.len % s->cipher->blocksize)
		err = -EINVAL;
	else if (size + r.len + 16 > CDEV_MAX_TRANSFER)
		err = -E2BIG; /* more than CUSE can move in one ioctl */
	if (err) {
		pthread_mutex_unlock(&c->file->lock);
		return reply_errno(c->req, err);
	}
	unsigned ivlen = r.iv ? s->cipher->ivlen : 0;
	bool write_iv = ivlen && (r.flags & CT_COP_FLAG_WRITE_IV);

	if (c->out_size == 0 || c->in_size != size + r.len + ivlen ||
	    c->out_size != size + r.len + (write_iv ? ivlen : 0)) {
		pthread_mutex_unlock(&c->file->lock);
		struct iovec in[3] = { UIOV(c->arg, size), UIOV(r.src, r.len), UIOV(r.iv, ivlen) };
		struct iovec out[3] = { UIOV(c->arg, size), UIOV(r.dst, r.len), UIOV(r.iv, ivlen) };
		fuse_reply_ioctl_retry(c->req, in, ivlen ? 3 : 2, out, write_iv ? 3 : 2);
		return;
	}

	const uint8_t *src = c->in + size;
	uint8_t iv[16] = { 0 };
	uint8_t *dst = malloc(r.len ? r.len : 1);
	bool encrypt = r.op == CT_COP_ENCRYPT;

	if (ivlen)
		memcpy(iv, src + r.len, ivlen);
	if (!dst)
		err = -ENOMEM;
	else
		err = cdev_tfm_skcipher(&s->tfm, encrypt, iv, s->cipher->ivlen, src, dst, r.len);
	if (!err) {
		engine_latency();
		cdev_next_iv(s->cipher, encrypt, src, dst, r.len, iv);
	}
	pthread_mutex_unlock(&c->file->lock);
	if (err) {
		free(dst);
		return reply_errno(c->req, err);
	}
	atomic_fetch_add(&n_crypt, 1);
	struct iovec out[3] = { { (void *)c->in, size }, { dst, r.len }, { iv, ivlen } };
	fuse_reply_ioctl_iov(c->req, 0, out, write_iv ? 3 : 2);
	free(dst);
}

static void authcrypt(const struct ioctl_call *c)
{
	size_t size = CDEV_ABI_SIZE(c->compat, crypt_auth_op);
	struct auth_req r;
	struct cdev_session *s;
	int err = 0;

	if (c->in_size < size)
		return ask_struct(c, size);
	cdev_decode_auth(c->in, c->compat, &r);

	pthread_mutex_lock(&c->file->lock);
	s = session_find(c->file, r.ses);
	unsigned tag_len = r.tag_len ? r.tag_len : 16;
	bool encrypt = r.op == CT_COP_ENCRYPT;
	/* Only plain AEAD: the TLS and SRTP composite modes need hash sessions this server lacks. */
	if (!s || !s->cipher->aead || (r.op != CT_COP_ENCRYPT && r.op != CT_COP_DECRYPT) ||
	    (r.flags & (CT_COP_FLAG_AEAD_TLS_TYPE | CT_COP_FLAG_AEAD_SRTP_TYPE)) || tag_len > 16 ||
	    r.auth_len > CDEV_MAX_AUTH || (!encrypt && r.len < tag_len))
		err = -EINVAL;
	else if (size + r.auth_len + r.len + tag_len + 16 > CDEV_MAX_TRANSFER)
		err = -E2BIG;
	if (err) {
		pthread_mutex_unlock(&c->file->lock);
		return reply_errno(c->req, err);
	}
	unsigned ivlen = r.iv ? (r.iv_len < s->cipher->ivlen ? r.iv_len : s->cipher->ivlen) : 0;
	unsigned dst_len = encrypt ? r.len + tag_len : r.len - tag_len;

	if (c->out_size == 0 || c->in_size != size + r.auth_len + r.len + ivlen ||
	    c->out_size != size + dst_len) {
		pthread_mutex_unlock(&c->file->lock);
		struct iovec in[4] = { UIOV(c->arg, size), UIOV(r.auth_src, r.auth_len), UIOV(r.src, r.len),
				       UIOV(r.iv, ivlen) };
		struct iovec out[2] = { UIOV(c->arg, size), UIOV(r.dst, dst_len) };
		fuse_reply_ioctl_retry(c->req, in, 4, out, 2);
		return;
	}

	const uint8_t *aad = c->in + size, *src = aad + r.auth_len;
	uint8_t iv[16] = { 0 };
	uint8_t *dst = malloc(dst_len ? dst_len : 1);

	memcpy(iv, src + r.len, ivlen);
	if (!dst)
		err = -ENOMEM;
	else
		err = cdev_tfm_aead(&s->tfm, encrypt, iv, s->cipher->ivlen, aad, r.auth_len, src, r.len,
				    tag_len, dst);
	if (!err)
		engine_latency();
	pthread_mutex_unlock(&c->file->lock);
	if (err) {
		free(dst);
		return reply_errno(c->req, err);
	}
	atomic_fetch_add(&n_auth, 1);
	/* As cryptodev-linux: tag points at the tag inside dst, tag_len says its length. */
	uint8_t raw[sizeof(struct ct_cdev_crypt_auth_op)];
	memcpy(raw, c->in, size);
	cdev_put_uptr(raw, CDEV_ABI_OFFSET(c->compat, crypt_auth_op, tag), c->compat,
		      r.dst + (encrypt ? r.len : r.len - tag_len));
	memcpy(raw + CDEV_ABI_OFFSET(c->compat, crypt_auth_op, tag_len), &tag_len, sizeof(uint32_t));
	struct iovec out[2] = { { raw, size }, { dst, dst_len } };
	fuse_reply_ioctl_iov(c->req, 0, out, 2);
	free(dst);
}

static void gsessinfo(const struct ioctl_call *c)
{
	struct ct_cdev_session_info_op si; /* the same layout in both ABIs: no pointers */
	struct cdev_session *s;

	if (c->in_size < sizeof(si) || c->out_size < sizeof(si)) {
		struct iovec io = UIOV(c->arg, sizeof(si));
		fuse_reply_ioctl_retry(c->req, &io, 1, &io, 1);
		return;
	}
	memcpy(&si, c->in, sizeof(si));
	pthread_mutex_lock(&c->file->lock);
	s = session_find(c->file, si.ses);
	if (s) {
		memset(&si.cipher_info, 0, sizeof(si.cipher_info));
		memset(&si.hash_info, 0, sizeof(si.hash_info));
		snprintf(si.cipher_info.cra_name, sizeof(si.cipher_info.cra_name), "%s", s->cipher->kname);
		snprintf(si.cipher_info.cra_driver_name, sizeof(si.cipher_info.cra_driver_name), "%s",
			 s->driver);
		si.alignmask = 0;
		si.flags = s->driver_only ? CT_SIOP_FLAG_KERNEL_DRIVER_ONLY : 0;
	}
	pthread_mutex_unlock(&c->file->lock);
	if (!s)
		return reply_errno(c->req, -EINVAL);
	fuse_reply_ioctl(c->req, 0, &si, sizeof(si));
}

/* CRIOGET clones the descriptor in cryptodev-linux. CUSE cannot install a descriptor in another
 * process, so this answers with the program's own descriptor of the same open file: sessions are
 * shared as with a clone, but closing either closes both (cryptodev-linux sets CRIOGET_NOT_NEEDED,
 * so Linux clients rarely call it). */
static void crioget(const struct ioctl_call *c, uint64_t fh)
{
	if (c->out_size < sizeof(uint32_t)) {
		struct iovec out = UIOV(c->arg, sizeof(uint32_t));
		fuse_reply_ioctl_retry(c->req, NULL, 0, &out, 1);
		return;
	}
	int fd = cdev_caller_fd_of(fuse_req_ctx(c->req)->pid, fh, devname);
	if (fd < 0) {
		logv("CRIOGET: could not find the caller's descriptor\n");
		return reply_errno(c->req, -EOPNOTSUPP);
	}
	uint32_t v = (uint32_t)fd;
	fuse_reply_ioctl(c->req, 0, &v, sizeof(v));
}

static void ident(const struct ioctl_call *c, uint64_t fh)
{
	if (c->out_size < sizeof(fh)) {
		struct iovec out = UIOV(c->arg, sizeof(fh));
		fuse_reply_ioctl_retry(c->req, NULL, 0, &out, 1);
		return;
	}
	fuse_reply_ioctl(c->req, 0, &fh, sizeof(fh));
}

static void cdev_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	unsigned long request = (unsigned int)cmd;
	struct ioctl_call c = {
		.req = req,
		.file = (struct cdev_file *)(uintptr_t)fi->fh,
		.compat = flags & FUSE_IOCTL_COMPAT,
		.arg = (uintptr_t)arg,
		.in = in_buf,
		.in_size = in_bufsz,
		.out_size = out_bufsz,
	};

	if (_IOC_TYPE(request) != CT_CDEV_IOC_TYPE)
		return reply_errno(req, -ENOTTY);
	switch (_IOC_NR(request)) {
	case CT_NR_CRIOGET:
		return crioget(&c, fi->fh);
	case CT_NR_CIOCGSESSION:
		return gsession(&c);
	case CT_NR_CIOCFSESSION:
		return fsession(&c);
	case CT_NR_CIOCCRYPT:
		return crypt_op(&c);
	case CT_NR_CIOCGSESSINFO:
		return gsessinfo(&c);
	case CT_NR_CIOCAUTHCRYPT:
		return authcrypt(&c);
	case CDEV_NR_IDENT:
		return ident(&c, fi->fh);
	default:
		/* CIOCKEY/CIOCASYMFEAT/async: not offered, as on a kernel built without them. */
		return reply_errno(req, -ENOTTY);
	}
}

static void cdev_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cdev_file *f = calloc(1, sizeof(*f));

	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&f->lock, NULL);
	fi->fh = (uintptr_t)f;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void cdev_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cdev_file *f = (struct cdev_file *)(uintptr_t)fi->fh;

	while (f->sessions) {
		struct cdev_session *s = f->sessions;
		f->sessions = s->next;
		session_free(s);
	}
	pthread_mutex_destroy(&f->lock);
	free(f);
	fuse_reply_err(req, 0);
}

static void cdev_init_done(void *userdata)
{
	(void)userdata;
	fprintf(stderr, "cdev-cuse: /dev/%s ready (profile %s, latency %u us)\n", devname, profile.name,
		profile.latency_us);
}

static const struct cuse_lowlevel_ops cdev_ops = {
	.init_done = cdev_init_done,
	.open = cdev_open,
	.release = cdev_release,
	.ioctl = cdev_ioctl,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cdev-cuse [--profile full|glxsb|eip93-like|slow] [--latency-us N]\n"
		"                 [--devname NAME] [--verbose] [-- FUSE options (-d, -s)]\n"
		"Serves /dev/NAME (default /dev/crypto) with the cryptodev ioctl ABI through CUSE,\n"
		"doing the crypto with AF_ALG. Needs root and the cuse module. Runs in the foreground\n"
		"until SIGTERM/SIGINT, then prints what it served on stderr.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "profile", required_argument, NULL, 'p' }, { "latency-us", required_argument, NULL, 'l' },
		{ "devname", required_argument, NULL, 'n' }, { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },          { 0 },
	};
	long latency = -1;
	int ch;

	cdev_profile_parse("full", &profile);
	while ((ch = getopt_long(argc, argv, "+p:l:n:vh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (!cdev_profile_parse(optarg, &profile)) {
				fprintf(stderr, "cdev-cuse: unknown profile %s\n", optarg);
				return 64;
			}
			break;
		case 'l':
			latency = strtol(optarg, NULL, 0);
			break;
		case 'n':
			devname = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (latency > 10 * 1000 * 1000) {
		fprintf(stderr, "cdev-cuse: --latency-us %ld is more than 10 s\n", latency);
		return 64;
	}
	if (latency >= 0)
		profile.latency_us = (unsigned)latency;

	/* Two sockets per session: let sessions be limited by memory, as in the kernel module,
	 * rather than by the soft descriptor limit. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}

	char devinfo[128];
	const char *dev_info_argv[] = { devinfo };
	snprintf(devinfo, sizeof(devinfo), "DEVNAME=%s", devname);
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info_argv,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	/* Always foreground: whoever starts it decides about the background. The rest goes to
	 * libfuse (-d for protocol debugging, -s for one thread: CRIOGET then cannot work). */
	char *fargv[64] = { argv[0], "-f" };
	int fargc = 2;
	for (int i = optind; i < argc && fargc < 63; i++)
		fargv[fargc++] = argv[i];

	int rc = cuse_lowlevel_main(fargc, fargv, &ci, &cdev_ops, NULL);
	fprintf(stderr,
		"cdev-cuse: served profile %s: sessions %lu, refused %lu, crypt %lu, authcrypt %lu, "
		"errors %lu, delayed %lu by %u us\n",
		profile.name, atomic_load(&n_sessions), atomic_load(&n_refused), atomic_load(&n_crypt),
		atomic_load(&n_auth), atomic_load(&n_errors), atomic_load(&n_delayed), profile.latency_us);
	return rc;
}
