/* SPDX-License-Identifier: MIT */
/*
 * cryptodev_hooks.c - /dev/crypto: the open family (a failure is recorded with its errno and
 * call site, a success enters the fd table) and ioctl on tracked fds. CIOCGSESSION is session
 * setup (timed, recorded with its decoded parameters and the caller; on success the driver is
 * asked with CIOCGSESSINFO when the program did not); CIOCCRYPT / CIOCAUTHCRYPT /
 * CIOCASYNCCRYPT are operations on a path per direction; CIOCFSESSION is teardown. CIOCKEY and
 * CIOCASYMFEAT are recorded decoded whether they succeed or fail.
 *
 * Structures are read only after the real call, and only when the kernel read them first
 * (success, or an error cryptodev returns after copying them in; see arg_was_read): a bogus
 * pointer from the program cannot crash it through us.
 */
/* We define both open and open64 (fcntl and fcntl64): the 64-bit-offset redirection meson turns
 * on would alias them. */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cdev_sessions.h"
#include "ct_config.h"
#include "core.h"
#include "emul.h"
#include "kdriver.h"
#include "kernel/kernel_decode.h"
#include "khooks.h"

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

#define DETAIL_MAX 256

static bool is_cdev_path(const char *path)
{
	return path && path[0] == '/' && !strcmp(path, CT_CDEV_PATH);
}

static const char *open_flags_name(int flags, char *buf, size_t cap)
{
	const char *acc = (flags & O_ACCMODE) == O_RDONLY   ? "O_RDONLY"
			  : (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY"
							    : "O_RDWR";
	snprintf(buf, cap, "%s%s%s", acc, flags & O_CLOEXEC ? "|O_CLOEXEC" : "",
		 flags & O_NONBLOCK ? "|O_NONBLOCK" : "");
	return buf;
}

/* After the real open of /dev/crypto returned fd (errno e when < 0). With an aesni route the
 * device is emulated: a missing one (ENOENT, ENODEV, ENXIO) becomes /dev/null, a present one
 * keeps its fd and serves only the routed sessions in-process. Returns the program's fd. */
static int cdev_opened(const char *call, int fd, int e, int flags)
{
	struct ct_thread *t = ct_thread_get();
	bool emul = ct_emul_enabled();
	bool missing = fd < 0 && (e == ENOENT || e == ENODEV || e == ENXIO);

	if (emul && missing) {
		int nfd = ct_emul_cdev_open(flags);
		struct ct_kfd_state *st = nfd >= 0 ? ct_kfd_new(nfd, CT_KFD_CDEV) : NULL;
		if (st && ct_emul_cdev_attach(st, true)) {
			if (t && ct_enter(t, CT_FAM_KERNEL)) {
				char en[16];
				ct_event(CT_EV_ROUTE, call, 0, nfd, CT_NO_PATH, true,
					 "path=%s route=" CT_AESNI_TARGET
					 " kernel=%s: emulated in-process (fd on /dev/null)",
					 CT_CDEV_PATH, ct_errno_name(e, en, sizeof(en)));
				ct_leave(t, CT_FAM_KERNEL);
			}
			return nfd;
		}
		if (st)
			ct_kfd_free(ct_kfd_forget(nfd));
		if (nfd >= 0)
			CT_REAL(close)(nfd);
	}
	if (fd >= 0) {
		struct ct_kfd_state *st = ct_kfd_new(fd, CT_KFD_CDEV);
		if (st && emul)
			ct_emul_cdev_attach(st, false);
	}
	if (fd < 0 && t && ct_enter(t, CT_FAM_KERNEL)) {
		char fl[48];
		ct_event(CT_EV_CALL_FAILED, call, e, fd, CT_NO_PATH, true, "path=%s flags=%s", CT_CDEV_PATH,
			 open_flags_name(flags, fl, sizeof(fl)));
		ct_leave(t, CT_FAM_KERNEL);
	}
	return fd;
}

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                                                                               \
	do {                                                                                                 \
		if ((flags) & (O_CREAT | O_TMPFILE)) {                                                       \
			va_list ap;                                                                          \
			va_start(ap, flags);                                                                 \
			mode = va_arg(ap, unsigned);                                                         \
			va_end(ap);                                                                          \
		}                                                                                            \
	} while (0)

#define OPEN_HOOK(fn, call, ...)                                                                             \
	({                                                                                                   \
		if (!CT_REAL(fn)) {                                                                          \
			errno = ENOSYS;                                                                      \
			return -1;                                                                           \
		}                                                                                            \
		int fd_ = CT_REAL(fn)(__VA_ARGS__);                                                          \
		if (CT_UNLIKELY(cdev)) {                                                                     \
			int e_ = ct_errno_save();                                                            \
			int nfd_ = cdev_opened(call, fd_, e_, flags);                                        \
			ct_errno_restore(nfd_ != fd_ ? 0 : e_);                                              \
			fd_ = nfd_;                                                                          \
		}                                                                                            \
		fd_;                                                                                         \
	})

CT_EXPORT int open(const char *path, int flags, ...)
{
	unsigned mode = 0;
	bool cdev = is_cdev_path(path);
	OPEN_MODE(flags, mode);
	return OPEN_HOOK(open, "open", path, flags, mode);
}

/* musl defines the *64 names as macros for the plain ones (its off_t is 64-bit everywhere): a
 * program's open64 call is an open call, which the hook above sees. */
#if !defined(open64)
CT_EXPORT int open64(const char *path, int flags, ...)
{
	unsigned mode = 0;
	bool cdev = is_cdev_path(path);
	OPEN_MODE(flags, mode);
	return OPEN_HOOK(open64, "open", path, flags, mode);
}
#endif

CT_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	unsigned mode = 0;
	bool cdev = is_cdev_path(path);
	OPEN_MODE(flags, mode);
	return OPEN_HOOK(openat, "openat", dirfd, path, flags, mode);
}

#if !defined(openat64) /* musl: a macro for openat, as open64 is for open */
CT_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	unsigned mode = 0;
	bool cdev = is_cdev_path(path);
	OPEN_MODE(flags, mode);
	return OPEN_HOOK(openat64, "openat", dirfd, path, flags, mode);
}
#endif

/* _FORTIFY_SOURCE builds call these when the flags are not a compile-time constant. */
CT_EXPORT int __open_2(const char *path, int flags)
{
	bool cdev = is_cdev_path(path);
	return OPEN_HOOK(__open_2, "open", path, flags);
}

CT_EXPORT int __open64_2(const char *path, int flags)
{
	bool cdev = is_cdev_path(path);
	return OPEN_HOOK(__open64_2, "open", path, flags);
}

CT_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	bool cdev = is_cdev_path(path);
	return OPEN_HOOK(__openat_2, "openat", dirfd, path, flags);
}

CT_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	bool cdev = is_cdev_path(path);
	return OPEN_HOOK(__openat64_2, "openat", dirfd, path, flags);
}

/* ---- sessions and paths -------------------------------------------------------------------- */

static uint8_t cdev_dir(uint32_t op)
{
	return op == CT_COP_ENCRYPT ? CT_DIR_ENCRYPT : op == CT_COP_DECRYPT ? CT_DIR_DECRYPT : CT_DIR_UNKNOWN;
}

/* Fills the session's driver facts, from the program's CIOCGSESSINFO reply or our own query. */
static void session_set_driver(struct ct_cdev_session *s, const struct ct_cdev_session_info_op *si)
{
	const struct ct_cdev_alg_info *ai = s->cipher ? &si->cipher_info : &si->hash_info;
	char driver[CT_CDEV_MAX_ALG_NAME + 1];

	snprintf(driver, sizeof(driver), "%.*s", (int)strnlen(ai->cra_driver_name, CT_CDEV_MAX_ALG_NAME),
		 ai->cra_driver_name);
	snprintf(s->impl, sizeof(s->impl), "kernel:%s", driver[0] ? driver : "unknown");
	/* The kernel knows best that a driver is an offload engine; for the rest, the name tells
	 * CPU instructions from generic C. */
	if (si->flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY)
		s->drv_flags = CT_PATH_HW_DRIVER;
	else if (driver[0]) {
		enum ct_kdrv_class cls = ct_kdrv_classify(driver, NULL);
		s->drv_flags = ct_kdriver_path_flag(cls == CT_KDRV_HW ? CT_KDRV_SW : cls);
	}
}

static uint32_t session_path(struct ct_thread *t, struct ct_cdev_session *s, uint8_t dir)
{
	uint32_t p = atomic_load_explicit(&s->paths[dir], memory_order_acquire);

	if (CT_LIKELY(p))
		return p - 1;
	struct ct_path_key key = {
		.api = CT_API_CRYPTODEV,
		.dir = dir,
		.entry = CT_ENTRY_CRYPTODEV_IOCTL,
		.route = s->route,
		.key_bits = (uint16_t)(s->keylen * 8 / (s->cipher == CT_CRYPTO_AES_XTS ? 2 : 1)),
		.flags = s->drv_flags,
		.impl = s->impl[0] ? s->impl : "kernel:unknown",
		.cipher = s->cipher_name,
		.requested = NULL,
	};
	uint32_t id = ct_kernel_path_intern(t, &key);
	if (id == CT_NO_PATH)
		return id;
	atomic_store_explicit(&s->paths[dir], id + 1, memory_order_release);
	if (s->setup_ns) {
		ct_phase_setup(t, id, s->setup_ns);
		s->setup_ns = 0;
	}
	return id;
}

/* A path for operations on a session we never saw set up (created before we were loaded). */
static uint32_t unknown_session_path(uint8_t dir)
{
	static _Atomic uint32_t cached[3];
	uint32_t p = atomic_load(&cached[dir]);

	if (p)
		return p - 1;
	struct ct_path_key key = { .api = CT_API_CRYPTODEV,
				   .dir = dir,
				   .entry = CT_ENTRY_CRYPTODEV_IOCTL,
				   .impl = "kernel:unknown",
				   .cipher = "unknown" };
	uint32_t id = ct_path_intern(&key);
	if (id != CT_NO_PATH)
		atomic_store(&cached[dir], id + 1);
	return id;
}

/* ---- ioctl --------------------------------------------------------------------------------- */

/* The device's answer: the emulation's when it serves the request, else the kernel's. */
static int cdev_call(struct ct_kfd_state *st, int fd, unsigned long request, void *arg)
{
	if (st->emul) {
		bool served;
		int r = ct_emul_cdev_ioctl(st, request, arg, &served);
		if (served)
			return r;
	}
	return CT_REAL(ioctl)(fd, request, arg);
}

static void on_gsession(int fd, struct ct_kfd_state *st, int r, int e, struct ct_cdev_session_op *s,
			uint64_t ns, uintptr_t site)
{
	char detail[DETAIL_MAX];

	if (!s) {
		ct_event(CT_EV_CALL_FAILED, "ioctl(CIOCGSESSION)", e, r, CT_NO_PATH, true,
			 "arg=not decoded (the kernel did not read it)");
		return;
	}
	ct_cdev_fmt_session(detail, sizeof(detail), s, false);
	if (r < 0) {
		ct_event(CT_EV_CALL_FAILED, "ioctl(CIOCGSESSION)", e, r, CT_NO_PATH, true, "%s", detail);
		return;
	}
	struct ct_cdev_session *ses = ct_cdev_session_add(st, s->ses);
	if (!ses)
		return;
	ses->cipher = s->cipher;
	ses->mac = s->mac;
	ses->keylen = s->keylen;
	ses->setup_ns = ns;
	ses->route = CT_ROUTE_NONE;
	if (!ct_cdev_openssl_cipher(s->cipher, s->keylen, ses->cipher_name, sizeof(ses->cipher_name))) {
		const char *n = ct_cdev_alg_name(s->cipher ? s->cipher : s->mac);
		snprintf(ses->cipher_name, sizeof(ses->cipher_name), "%s", n ? n : "unknown");
	}
	if (ct_emul_cdev_ours(st, s->ses)) {
		ses->route = CT_ROUTE_AESNI;
		ses->drv_flags = CT_PATH_ROUTED;
		snprintf(ses->impl, sizeof(ses->impl), "%s", CT_AESNI_IMPL);
		ct_event_at_site(CT_EV_SESSION, "ioctl(CIOCGSESSION)", CT_NO_PATH, site,
				 "%s driver=" CT_AESNI_DRIVER " kernel_driver_only=0", detail);
		ct_event(CT_EV_ROUTE, "ioctl(CIOCGSESSION)", 0, r, CT_NO_PATH, false,
			 "api=cryptodev cipher=%s route=" CT_AESNI_TARGET " served=in-process",
			 ses->cipher_name);
		return;
	}
	/* Ask the kernel which driver it bound, as the program may never do. */
	struct ct_cdev_session_info_op si = { .ses = s->ses };
	bool have_info = CT_REAL(ioctl)(fd, CT_CIOCGSESSINFO, &si) == 0;
	if (have_info)
		session_set_driver(ses, &si);
	else
		snprintf(ses->impl, sizeof(ses->impl), "kernel:unknown");
	/* one per session: counted per call site, the stack captured once */
	ct_event_at_site(CT_EV_SESSION, "ioctl(CIOCGSESSION)", CT_NO_PATH, site,
			 "%s driver=%s kernel_driver_only=%s", detail, ses->impl + 7,
			 have_info ? ((si.flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY) ? "1" : "0") : "unknown");
}

/* An operation ioctl returned: count it on its session's path. */
static void on_crypt(struct ct_thread *t, struct ct_kfd_state *st, const char *call, int r, int e,
		     uint32_t ses_id, uint32_t op, uint32_t len, struct ct_op_timer *timer,
		     const char *detail)
{
	uint8_t dir = cdev_dir(op);
	struct ct_cdev_session *s = ct_cdev_session_find(st, ses_id);
	uint32_t path = s ? session_path(t, s, dir) : unknown_session_path(dir);

	if (!s || s->route != CT_ROUTE_AESNI) /* served in-process: no syscall made */
		ct_count_syscall(t, path);
	ct_op_end(t, timer, path, len, r >= 0);
	if (s)
		s->last_path = path;
	st->cdev_last_len = len;
	if (r < 0)
		ct_event(CT_EV_CALL_FAILED, call, e, r, path, true, "%s", detail);
}

/* Did the kernel read the argument before failing with e? cryptodev copies it in first and
 * fails after (EINVAL, ENOMEM, ENOENT...); these errors come before any read (or from a driver
 * that never reads it, or a seccomp/LSM denial), so a bad pointer must not be touched. */
static bool arg_was_read(int e)
{
	switch (e) {
	case EFAULT:
	case ENOTTY:
	case EBADF:
	case ENOSYS:
	case EOPNOTSUPP:
	case EPERM:
	case EACCES:
	case EINTR:
		return false;
	default:
		return true;
	}
}

static int ioctl_tracked(struct ct_kfd_state *st, int fd, unsigned long request, void *arg, uintptr_t site)
{
	int nr = ct_cdev_ioctl_nr(request);
	struct ct_thread *t = nr >= 0 ? ct_thread_get() : NULL;

	if (!t || !ct_enter(t, CT_FAM_KERNEL))
		return cdev_call(st, fd, request, arg);

	char detail[DETAIL_MAX] = "";
	struct ct_op_timer timer;
	uint64_t t0 = ct_now_ns();
	bool is_op = nr == CT_NR_CIOCCRYPT || nr == CT_NR_CIOCAUTHCRYPT || nr == CT_NR_CIOCASYNCCRYPT;
	if (is_op)
		ct_op_begin(t, &timer, st->cdev_last_len); /* the size is read after the call */
	int r = cdev_call(st, fd, request, arg);
	int e = ct_errno_save();
	uint64_t ns = ct_now_ns() - t0;
	bool readable = arg && (r >= 0 || arg_was_read(e));

	switch (nr) {
	case CT_NR_CIOCGSESSION:
		on_gsession(fd, st, r, e, readable ? arg : NULL, ns, site);
		break;
	case CT_NR_CIOCFSESSION:
		if (readable) {
			struct ct_cdev_session *s = ct_cdev_session_find(st, *(uint32_t *)arg);
			if (s && s->last_path != CT_NO_PATH)
				ct_phase_teardown(t, s->last_path, ns);
			if (r == 0)
				ct_cdev_session_del(s);
		}
		if (r < 0) {
			if (readable || !arg)
				ct_cdev_fmt_ioctl(detail, sizeof(detail), request, arg);
			else
				snprintf(detail, sizeof(detail), "op=CIOCFSESSION arg=not decoded");
			ct_event(CT_EV_CALL_FAILED, "ioctl(CIOCFSESSION)", e, r, CT_NO_PATH, true, "%s",
				 detail);
		}
		break;
	case CT_NR_CIOCCRYPT:
	case CT_NR_CIOCASYNCCRYPT:
		if (readable) {
			const struct ct_cdev_crypt_op *c = arg;
			if (r < 0)
				ct_cdev_fmt_ioctl(detail, sizeof(detail), request, arg);
			on_crypt(t, st, nr == CT_NR_CIOCCRYPT ? "ioctl(CIOCCRYPT)" : "ioctl(CIOCASYNCCRYPT)",
				 r, e, c->ses, c->op, c->len, &timer, detail);
		} else {
			ct_event(CT_EV_CALL_FAILED,
				 nr == CT_NR_CIOCCRYPT ? "ioctl(CIOCCRYPT)" : "ioctl(CIOCASYNCCRYPT)", e, r,
				 CT_NO_PATH, true, "arg=not decoded (the kernel did not read it)");
		}
		break;
	case CT_NR_CIOCAUTHCRYPT:
		if (readable) {
			const struct ct_cdev_crypt_auth_op *a = arg;
			if (r < 0)
				ct_cdev_fmt_ioctl(detail, sizeof(detail), request, arg);
			on_crypt(t, st, "ioctl(CIOCAUTHCRYPT)", r, e, a->ses, a->op, a->len, &timer, detail);
		} else {
			ct_event(CT_EV_CALL_FAILED, "ioctl(CIOCAUTHCRYPT)", e, r, CT_NO_PATH, true,
				 "arg=not decoded (the kernel did not read it)");
		}
		break;
	case CT_NR_CIOCGSESSINFO:
		/* The program asked itself: keep what the kernel told it. */
		if (r == 0 && readable) {
			const struct ct_cdev_session_info_op *si = arg;
			struct ct_cdev_session *s = ct_cdev_session_find(st, si->ses);
			if (s && !strcmp(s->impl, "kernel:unknown"))
				session_set_driver(s, si);
		}
		goto other;
	case CT_NR_CIOCKEY:
		/* An asymmetric operation: what was asked (crk_op, parameter counts and sizes, never
		 * the numbers) and the device's status. One-shot and per operation: no stack. */
		if (r >= 0 && readable) {
			const struct ct_cdev_crypt_kop *k = arg;
			ct_cdev_fmt_kop(detail, sizeof(detail), k);
			ct_event(CT_EV_SESSION, "ioctl(CIOCKEY)", 0, r, CT_NO_PATH, false, "%s status=%u",
				 detail, k->crk_status);
		}
		goto other;
	case CT_NR_CIOCASYMFEAT:
		/* The device's asymmetric features, asked once at start-up, as a session set-up is. The
		 * argument is only an output: a failure has nothing to decode. */
		if (r >= 0) {
			if (readable)
				ct_cdev_fmt_asymfeat(detail, sizeof(detail), *(const uint32_t *)arg);
			else
				snprintf(detail, sizeof(detail), "arg=NULL");
			ct_event(CT_EV_SESSION, "ioctl(CIOCASYMFEAT)", 0, r, CT_NO_PATH, true, "%s", detail);
		} else if (r < 0) {
			ct_event(CT_EV_CALL_FAILED, "ioctl(CIOCASYMFEAT)", e, r, CT_NO_PATH, true,
				 "op=CIOCASYMFEAT");
		}
		break;
	case CT_NR_CRIOGET:
		if (r == 0 && readable && !ct_kfd_get((int)*(uint32_t *)arg)) /* emulated: entered */
			ct_kfd_new((int)*(uint32_t *)arg, CT_KFD_CDEV_CLONE);
		goto other;
	case CT_NR_CIOCASYNCFETCH: {
		/* The completion of an earlier CIOCASYNCCRYPT: one more syscall for that path. */
		if (readable && r == 0) {
			const struct ct_cdev_crypt_op *c = arg;
			struct ct_cdev_session *s = ct_cdev_session_find(st, c->ses);
			if (s && s->last_path != CT_NO_PATH)
				ct_count_syscall(t, s->last_path);
		}
		goto other;
	}
	default:
other:
		/* A fetch with nothing ready yet is how async users poll, not a failure. */
		if (r < 0 && !(nr == CT_NR_CIOCASYNCFETCH && e == EAGAIN)) {
			const char *name = ct_cdev_ioctl_name(request);
			char call[48];
			snprintf(call, sizeof(call), "ioctl(%s)", name ? name : "cryptodev");
			if (readable || !arg)
				ct_cdev_fmt_ioctl(detail, sizeof(detail), request, arg);
			else
				snprintf(detail, sizeof(detail), "op=%s arg=not decoded", name ? name : "?");
			ct_event(CT_EV_CALL_FAILED, call, e, r, CT_NO_PATH, true, "%s", detail);
		}
		break;
	}
	ct_leave(t, CT_FAM_KERNEL);
	ct_errno_restore(e);
	return r;
}

/* glibc declares ioctl(int, unsigned long, ...), musl ioctl(int, int, ...) (CT_IOCTL_REQUEST_T,
 * meson's test); the third argument is always one word. real is the twin the program called
 * (ioctl, __ioctl_time64); a /dev/crypto request carries no time_t, so the tracked path's own
 * calls are the same with either. */
static int ioctl_hook(int (*real)(int, CT_IOCTL_REQUEST_T, ...), int fd, CT_IOCTL_REQUEST_T request,
		      void *arg, uintptr_t site)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);
	if (CT_LIKELY(!st) || (st->kind != CT_KFD_CDEV && st->kind != CT_KFD_CDEV_CLONE)) {
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
		return real(fd, request, arg);
	}
	/* the kernel reads the request as 32 bits: musl's int must not sign-extend into the decoders */
	return ioctl_tracked(st, fd, (unsigned)request, arg, site);
}

CT_EXPORT int ioctl(int fd, CT_IOCTL_REQUEST_T request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return ioctl_hook(CT_REAL(ioctl), fd, request, arg, (uintptr_t)__builtin_return_address(0));
}

#ifdef CT_TIME64_HOOKS
int __ioctl_time64(int fd, unsigned long request, ...);
CT_EXPORT int __ioctl_time64(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return ioctl_hook(CT_REAL(__ioctl_time64), fd, request, arg, (uintptr_t)__builtin_return_address(0));
}
#endif

void ct_cdev_closed(struct ct_thread *t, struct ct_kfd_state *st)
{
	(void)t;
	ct_cdev_session_del_file(st);
}
