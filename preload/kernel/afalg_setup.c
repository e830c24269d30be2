/* SPDX-License-Identifier: MIT */
/*
 * afalg_setup.c - AF_ALG session set-up: socket(AF_ALG), bind (sockaddr_alg decoded by the
 * caller's addrlen; the driver resolved through /proc/crypto), setsockopt(SOL_ALG) (key length
 * and AEAD tag size, never the key), accept/accept4 (the op socket inherits the tfm's state).
 * Their durations add up to the set-up time; closing the op socket is the teardown. Every
 * failure is recorded with its errno, decoded parameters and call site.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "afalg_ops.h"
#include "emul.h"
#include "kdriver.h"
#include "kernel/kernel_decode.h"
#include "khooks.h"
#include "ktls.h"

#define DETAIL_MAX 320

const char *ct_sock_type_name(int type, char *buf, size_t cap)
{
	static const char *const names[] = {
		[SOCK_STREAM] = "SOCK_STREAM", [SOCK_DGRAM] = "SOCK_DGRAM",         [SOCK_RAW] = "SOCK_RAW",
		[SOCK_RDM] = "SOCK_RDM",       [SOCK_SEQPACKET] = "SOCK_SEQPACKET",
	};
	int base = type & 0xf;
	const char *name = base < (int)(sizeof(names) / sizeof(names[0])) ? names[base] : NULL;
	char raw[16];

	if (!name) {
		snprintf(raw, sizeof(raw), "%d", base);
		name = raw;
	}
	snprintf(buf, cap, "%s%s%s", name, type & SOCK_CLOEXEC ? "|SOCK_CLOEXEC" : "",
		 type & SOCK_NONBLOCK ? "|SOCK_NONBLOCK" : "");
	return buf;
}

void ct_afalg_describe(const struct ct_alg_state *a, char *buf, size_t cap)
{
	/* An AEAD's tag size decides whether a decryption is refused: name it once it was set. */
	char tag[24] = "";
	if (a->authsize)
		snprintf(tag, sizeof(tag), " authsize=%u", a->authsize);
	snprintf(buf, cap, "type=%s name=%s keylen=%u%s", a->type[0] ? a->type : "?",
		 a->name[0] ? a->name : "?", a->keylen, tag);
}

/* The OpenSSL cipher name of the bound algorithm and key (or the kernel name). */
static void set_cipher(struct ct_alg_state *a)
{
	if (!ct_alg_openssl_cipher(a->name, a->keylen, a->cipher, sizeof(a->cipher)))
		snprintf(a->cipher, sizeof(a->cipher), "%.*s", (int)sizeof(a->cipher) - 1, a->name);
}

CT_EXPORT int socket(int domain, int type, int protocol)
{
	if (!CT_REAL(socket)) {
		errno = ENOSYS;
		return -1;
	}
	if (CT_LIKELY(domain != AF_ALG))
		return CT_REAL(socket)(domain, type, protocol);
	uint64_t t0 = ct_now_ns();
	/* With an aesni route the socket is ours from the start (the algorithm comes with bind,
	 * which hands names the route leaves to the kernel back to a real AF_ALG socket). */
	bool emul = ct_emul_enabled() && protocol == 0 && (type & 0xf) == SOCK_SEQPACKET;
	int fd = emul ? ct_emul_alg_socket(type) : CT_REAL(socket)(domain, type, protocol);
	int e = ct_errno_save();
	uint64_t ns = ct_now_ns() - t0;
	struct ct_thread *t = ct_thread_get();

	if (fd >= 0) {
		struct ct_kfd_state *st = emul ? ct_kfd_get(fd) : ct_kfd_new(fd, CT_KFD_ALG_TFM);
		if (st)
			st->alg.setup_ns = ns;
	} else if (t && ct_enter(t, CT_FAM_KERNEL)) {
		char ty[48];
		ct_event(CT_EV_CALL_FAILED, "socket", e, fd, CT_NO_PATH, true,
			 "family=AF_ALG type=%s protocol=%d", ct_sock_type_name(type, ty, sizeof(ty)),
			 protocol);
		ct_leave(t, CT_FAM_KERNEL);
	}
	ct_errno_restore(e);
	return fd;
}

CT_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (CT_LIKELY(!st) || st->kind != CT_KFD_ALG_TFM)
		return CT_REAL(bind)(fd, addr, addrlen);
	const uintptr_t site = (uintptr_t)__builtin_return_address(0);
	uint64_t t0 = ct_now_ns();
	int r = st->emul ? ct_emul_alg_bind(fd, st, addr, addrlen) : CT_REAL(bind)(fd, addr, addrlen);
	int e = ct_errno_save();
	uint64_t ns = ct_now_ns() - t0;
	struct ct_thread *t = ct_thread_get();
	bool readable = addr && !(r < 0 && e == EFAULT);
	char detail[DETAIL_MAX];

	st->alg.setup_ns += ns;
	if (r == 0 && readable) {
		struct ct_alg_addr a;
		ct_alg_decode_addr(addr, addrlen, &a);
		snprintf(st->alg.type, sizeof(st->alg.type), "%s", a.type);
		snprintf(st->alg.name, sizeof(st->alg.name), "%s", a.name);
	}
	if (t && ct_enter(t, CT_FAM_KERNEL)) {
		if (readable)
			ct_alg_fmt_addr(detail, sizeof(detail), addr, addrlen);
		else
			snprintf(detail, sizeof(detail), "addr=%s addrlen=%u", addr ? "unreadable" : "NULL",
				 (unsigned)addrlen);
		if (r < 0) {
			ct_event(CT_EV_CALL_FAILED, "bind", e, r, CT_NO_PATH, true, "%s", detail);
		} else if (st->emul) {
			snprintf(st->alg.impl, sizeof(st->alg.impl), "%s", CT_AESNI_IMPL);
			st->alg.drv_flags = CT_PATH_ROUTED;
			st->alg.route = CT_ROUTE_AESNI;
			ct_event_at_site(CT_EV_SESSION, "bind", CT_NO_PATH, site,
					 "%s driver=" CT_AESNI_DRIVER " class=cpu", detail);
			ct_event(CT_EV_ROUTE, "bind", 0, r, CT_NO_PATH, false,
				 "api=afalg name=%s route=" CT_AESNI_TARGET " served=in-process",
				 st->alg.name);
		} else {
			struct ct_kdrv d;
			bool found = ct_kdriver_resolve(st->alg.type, st->alg.name, &d);
			snprintf(st->alg.impl, sizeof(st->alg.impl), "kernel:%s",
				 found ? d.driver : "unknown");
			st->alg.drv_flags = found ? ct_kdriver_path_flag(d.cls) : 0;
			/* one per session: counted per call site, the stack captured once */
			if (found)
				ct_event_at_site(CT_EV_SESSION, "bind", CT_NO_PATH, site,
						 "%s driver=%s module=%s priority=%d class=%s", detail,
						 d.driver, d.module, d.priority, ct_kdrv_class_name(d.cls));
			else
				ct_event_at_site(CT_EV_SESSION, "bind", CT_NO_PATH, site,
						 "%s driver=unknown (not in /proc/crypto)", detail);
		}
		ct_leave(t, CT_FAM_KERNEL);
	}
	ct_errno_restore(e);
	return r;
}

/* real: the twin the program called (setsockopt, __setsockopt64); ALG and TLS options carry no
 * time_t, so the tracked paths' own calls are the same with either. */
static int setsockopt_hook(int (*real)(int, int, int, const void *, socklen_t), int fd, int level,
			   int optname, const void *optval, socklen_t optlen)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (CT_UNLIKELY(ct_ktls_sockopt(level, optname)))
		return ct_ktls_setsockopt(fd, st, level, optname, optval, optlen);
	if (CT_LIKELY(!st) || level != SOL_ALG)
		return real(fd, level, optname, optval, optlen);
	uint64_t t0 = ct_now_ns();
	int r = st->emul ? ct_emul_alg_setsockopt(st, optname, optval, optlen)
			 : real(fd, level, optname, optval, optlen);
	int e = ct_errno_save();
	struct ct_thread *t = ct_thread_get();

	st->alg.setup_ns += ct_now_ns() - t0;
	if (r == 0 && optname == CT_ALG_SET_KEY) {
		st->alg.keylen = optlen;
		set_cipher(&st->alg);
	} else if (r == 0 && optname == CT_ALG_SET_AEAD_AUTHSIZE) {
		st->alg.authsize = optlen;
	}
	if (r < 0 && t && ct_enter(t, CT_FAM_KERNEL)) {
		char opt[96];
		ct_alg_fmt_sockopt(opt, sizeof(opt), level, optname, optval, optlen);
		ct_event(CT_EV_CALL_FAILED, "setsockopt", e, r, CT_NO_PATH, true, "type=%s name=%s %s",
			 st->alg.type[0] ? st->alg.type : "?", st->alg.name[0] ? st->alg.name : "?", opt);
		ct_leave(t, CT_FAM_KERNEL);
	}
	ct_errno_restore(e);
	return r;
}

CT_EXPORT int setsockopt(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	return setsockopt_hook(CT_REAL(setsockopt), fd, level, optname, optval, optlen);
}

#ifdef CT_TIME64_HOOKS
int __setsockopt64(int fd, int level, int optname, const void *optval, socklen_t optlen);
CT_EXPORT int __setsockopt64(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	return setsockopt_hook(CT_REAL(__setsockopt64), fd, level, optname, optval, optlen);
}
#endif

/* accept on an emulated tfm: a socketpair end with the op's emulation, entered in the table. */
static int emul_accept(struct ct_kfd_state *tfm, int flags)
{
	int peer = -1;
	int fd = ct_emul_alg_accept(tfm, flags, &peer);

	if (fd < 0)
		return fd;
	struct ct_kfd_state *op = ct_kfd_new(fd, CT_KFD_ALG_OP);
	if (op && ct_emul_alg_attach_op(op, tfm, peer))
		return fd;
	if (op)
		ct_kfd_free(ct_kfd_forget(fd));
	CT_REAL(close)(fd);
	CT_REAL(close)(peer);
	errno = ENOMEM;
	return -1;
}

static int accepted(const char *call, struct ct_kfd_state *tfm, int r, int e, uint64_t ns)
{
	struct ct_thread *t = ct_thread_get();

	if (r >= 0) {
		struct ct_kfd_state *op = tfm->emul ? ct_kfd_get(r) : ct_kfd_new(r, CT_KFD_ALG_OP);
		if (op) {
			op->alg = tfm->alg;
			ct_kfd_hold(tfm);
			op->tfm_ref = tfm;
			op->alg.tfm = &tfm->alg;
			op->alg.setup_ns = tfm->alg.setup_ns + ns;
			tfm->alg.setup_ns = 0; /* later accepts on this tfm cost only themselves */
			memset(op->alg.paths, 0, sizeof(op->alg.paths));
			op->alg.last_path = CT_NO_PATH;
			op->alg.op_open = false;
			if (!op->alg.cipher[0])
				set_cipher(&op->alg);
		}
	} else if (t && ct_enter(t, CT_FAM_KERNEL)) {
		char d[DETAIL_MAX];
		ct_afalg_describe(&tfm->alg, d, sizeof(d));
		ct_event(CT_EV_CALL_FAILED, call, e, r, CT_NO_PATH, true, "%s", d);
		ct_leave(t, CT_FAM_KERNEL);
	}
	return r;
}

CT_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (CT_LIKELY(!st) || st->kind != CT_KFD_ALG_TFM)
		return CT_REAL(accept)(fd, addr, addrlen);
	uint64_t t0 = ct_now_ns();
	int r = st->emul ? emul_accept(st, 0) : CT_REAL(accept)(fd, addr, addrlen);
	int e = ct_errno_save();
	accepted("accept", st, r, e, ct_now_ns() - t0);
	ct_errno_restore(e);
	return r;
}

CT_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (CT_LIKELY(!st) || st->kind != CT_KFD_ALG_TFM)
		return CT_REAL(accept4)(fd, addr, addrlen, flags);
	uint64_t t0 = ct_now_ns();
	int r = st->emul ? emul_accept(st, flags) : CT_REAL(accept4)(fd, addr, addrlen, flags);
	int e = ct_errno_save();
	accepted("accept4", st, r, e, ct_now_ns() - t0);
	ct_errno_restore(e);
	return r;
}

void ct_afalg_closed(struct ct_thread *t, struct ct_kfd_state *st, uint64_t close_ns)
{
	struct ct_alg_state *a = &st->alg;

	if (a->op_open) /* sent but never read back: not a completed operation */
		a->op_open = false;
	/* A socket closed without a single operation (a probe) has no path to charge. */
	if (a->last_path != CT_NO_PATH)
		ct_phase_teardown(t, a->last_path, close_ns);
}
