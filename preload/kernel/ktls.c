/* SPDX-License-Identifier: MIT */
/*
 * ktls.c - kernel TLS (kTLS): a TLS library hands a TCP socket's record encryption to the kernel
 * with setsockopt(SOL_TCP, TCP_ULP, "tls") and then setsockopt(SOL_TLS, TLS_TX / TLS_RX) with
 * the traffic keys. The set-up is recorded here (version and cipher from the crypto_info header,
 * never its key, IV, salt or record sequence; a failure as an event with its errno and call
 * site), and the socket enters the fd table as CT_KFD_KTLS, so that the socket hooks shared with
 * AF_ALG (afalg_data.c) and sendfile below count and time every data call on it: TX calls on the
 * encrypt path, RX calls on the decrypt path, api ktls, entry ktls-socket, flag IO_WAIT (a
 * socket call waits for the peer and the network too). Records sent or received with a
 * TLS_SET/GET_RECORD_TYPE control message (alerts, post-handshake messages) go to a path of
 * their own (protocol "TLS1.3 control"), so that the data path's bytes are the application's.
 *
 * Software kTLS (TLS_SW) and a NIC's TLS offload (TLS_HW, "device") are told apart by the
 * kernel's own counters in /proc/net/tls_stat, read around the set-up call.
 */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "khooks.h"
#include "ktls.h"

#define DETAIL_MAX 200
#define CONTROL_REQUESTED "control records (TLS record-type cmsg)"

ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count);

/* ---- software or device: /proc/net/tls_stat ------------------------------------------------- */

struct tls_counts {
	bool ok;
	unsigned long long sw, dev;
};

/* TlsTxSw / TlsTxDevice (or the Rx pair): cumulative set-ups per kind in this network namespace.
 * The file exists once the tls module is loaded; set-up is a cold path (once per connection). */
static struct tls_counts tls_stat(int optname)
{
	struct tls_counts c = { 0 };
	char buf[2048];
	size_t n = 0;
	int fd = CT_REAL(open)("/proc/net/tls_stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return c;
	for (ssize_t r; n < sizeof(buf) - 1 && (r = CT_REAL(read)(fd, buf + n, sizeof(buf) - 1 - n)) > 0;)
		n += (size_t)r;
	CT_REAL(close)(fd);
	buf[n] = 0;
	const char *sw = optname == CT_TLS_TX ? "TlsTxSw" : "TlsRxSw";
	const char *dev = optname == CT_TLS_TX ? "TlsTxDevice" : "TlsRxDevice";
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char name[32];
		unsigned long long v;
		if (sscanf(line, "%31s %llu", name, &v) != 2)
			continue;
		if (!strcmp(name, sw))
			c.sw = v, c.ok = true;
		else if (!strcmp(name, dev))
			c.dev = v;
	}
	return c;
}

/* Which kTLS served the set-up: only when exactly one of the two counters moved (another
 * socket's set-up at the same moment would make it ambiguous: then just "kernel:tls"). */
static const char *tls_impl(struct tls_counts before, struct tls_counts after)
{
	if (!before.ok || !after.ok)
		return "kernel:tls";
	bool sw = after.sw > before.sw, dev = after.dev > before.dev;
	return sw && !dev ? "kernel:tls-sw" : dev && !sw ? "kernel:tls-device" : "kernel:tls";
}

/* ---- set-up --------------------------------------------------------------------------------- */

static bool ulp_is_tls(const void *optval, socklen_t optlen)
{
	const char *s = optval;
	return s && optlen >= 3 && !memcmp(s, "tls", 3) && (optlen == 3 || s[3] == 0);
}

/* The fd's kTLS state, made on the first successful set-up call. */
static struct ct_kfd_state *ktls_state(int fd, struct ct_kfd_state *st)
{
	if (st)
		return st->kind == CT_KFD_KTLS ? st : NULL;
	return ct_kfd_new(fd, CT_KFD_KTLS);
}

static void ulp_done(int fd, struct ct_kfd_state *st, int r, int e, uint64_t ns, const void *optval,
		     socklen_t optlen, uintptr_t site)
{
	if (r == 0) {
		st = ktls_state(fd, st);
		if (st)
			st->ktls.setup_ns += ns;
	}
	struct ct_thread *t = ct_thread_get();
	if (t && ct_enter(t, CT_FAM_KERNEL)) {
		char d[DETAIL_MAX];
		if (r < 0 && e == EFAULT)
			snprintf(d, sizeof(d), "level=SOL_TCP optname=TCP_ULP ulp=unreadable");
		else
			ct_ktls_fmt_ulp(d, sizeof(d), optval, optlen);
		/* success: the program asked for kTLS (counted per call site, the stack taken once) */
		if (r == 0)
			ct_event_at_site(CT_EV_SESSION, "setsockopt", CT_NO_PATH, site, "%s", d);
		else
			ct_event(CT_EV_CALL_FAILED, "setsockopt", e, r, CT_NO_PATH, true, "%s", d);
		ct_leave(t, CT_FAM_KERNEL);
	}
}

static void crypto_info_done(int fd, struct ct_kfd_state *st, int optname, int r, int e, uint64_t ns,
			     const char *impl, const void *optval, socklen_t optlen, uintptr_t site)
{
	struct ct_thread *t = ct_thread_get();
	char d[DETAIL_MAX];
	bool readable = optval && !(r < 0 && e == EFAULT);

	if (readable)
		ct_ktls_fmt_sockopt(d, sizeof(d), optname, optval, optlen);
	else
		snprintf(d, sizeof(d), "level=SOL_TLS optname=%s crypto_info=%s",
			 ct_ktls_opt_name(optname) ? ct_ktls_opt_name(optname) : "?",
			 optval ? "unreadable" : "NULL");
	if (r == 0 && (optname == CT_TLS_TX || optname == CT_TLS_RX)) {
		st = ktls_state(fd, st);
		if (st) {
			struct ct_ktls_state *k = &st->ktls;
			struct ct_ktls_info ki;
			int d_ = optname == CT_TLS_TX ? 0 : 1;
			ct_ktls_decode_info(optval, optlen, &ki);
			snprintf(k->impl[d_], sizeof(k->impl[d_]), "%s", impl);
			snprintf(k->cipher[d_], sizeof(k->cipher[d_]), "%s",
				 ki.cipher ? ki.cipher : "unknown");
			snprintf(k->proto[d_], sizeof(k->proto[d_]), "%s", ki.proto ? ki.proto : "TLS?");
			k->key_bits[d_] = ki.key_bits;
			k->setup_ns += ns;
			/* a new key on a socket (a TLS 1.3 key update) starts over: a new path if it differs */
			atomic_store(&k->paths[d_][0], 0);
			atomic_store(&k->paths[d_][1], 0);
		}
	}
	if (!t || !ct_enter(t, CT_FAM_KERNEL))
		return;
	if (r == 0 && (optname == CT_TLS_TX || optname == CT_TLS_RX))
		ct_event_at_site(CT_EV_SESSION, "setsockopt", CT_NO_PATH, site, "%s impl=%s", d, impl);
	else if (r < 0)
		ct_event(CT_EV_CALL_FAILED, "setsockopt", e, r, CT_NO_PATH, true, "%s", d);
	ct_leave(t, CT_FAM_KERNEL);
}

int ct_ktls_setsockopt(int fd, struct ct_kfd_state *st, int level, int optname, const void *optval,
		       socklen_t optlen)
{
	if (!CT_REAL(setsockopt)) {
		errno = ENOSYS;
		return -1;
	}
	const uintptr_t site = (uintptr_t)__builtin_return_address(0);
	bool ulp = level == SOL_TCP;
	/* another ULP (mptcp, espintcp...), or a vfork child sharing our memory: not ours */
	if ((ulp && !ulp_is_tls(optval, optlen)) || (st && st->kind != CT_KFD_KTLS) || ct_in_vfork_child())
		return CT_REAL(setsockopt)(fd, level, optname, optval, optlen);
	bool keys = !ulp && (optname == CT_TLS_TX || optname == CT_TLS_RX);
	struct tls_counts before = { 0 }, after = { 0 };
	int e0 = ct_errno_save();
	if (keys)
		before = tls_stat(optname);
	ct_errno_restore(e0);
	uint64_t t0 = ct_now_ns();
	int r = CT_REAL(setsockopt)(fd, level, optname, optval, optlen);
	uint64_t ns = ct_now_ns() - t0;
	int e = ct_errno_save();
	if (ulp) {
		ulp_done(fd, st, r, e, ns, optval, optlen, site);
	} else {
		if (keys && r == 0)
			after = tls_stat(optname);
		crypto_info_done(fd, st, optname, r, e, ns, tls_impl(before, after), optval, optlen, site);
	}
	ct_errno_restore(e);
	return r;
}

/* ---- data ----------------------------------------------------------------------------------- */

/* The path of (socket, direction, data or control records): interned on first use. */
static uint32_t ktls_path(struct ct_thread *t, struct ct_kfd_state *st, enum ct_dir dir, bool control)
{
	struct ct_ktls_state *k = &st->ktls;
	int d = dir == CT_DIR_ENCRYPT ? 0 : 1;
	uint32_t id = atomic_load_explicit(&k->paths[d][control], memory_order_relaxed);

	if (CT_LIKELY(id))
		return id - 1;
	/* control records are told apart by their protocol, which the report's paths are keyed on:
	 * "TLS1.3 control" */
	char proto[16];
	snprintf(proto, sizeof(proto), "%s control", k->proto[d]);
	struct ct_path_key key = {
		.api = CT_API_KTLS,
		.dir = (uint8_t)dir,
		.entry = CT_ENTRY_KTLS_SOCKET,
		.key_bits = k->key_bits[d],
		.flags = CT_PATH_IO_WAIT,
		.impl = k->impl[d],
		.cipher = k->cipher[d],
		.proto = control ? proto : k->proto[d],
		.requested = control ? CONTROL_REQUESTED : NULL,
	};
	id = ct_kernel_path_intern(t, &key);
	if (id == CT_NO_PATH)
		return id;
	atomic_store_explicit(&k->paths[d][control], id + 1, memory_order_relaxed);
	if (k->setup_ns) {
		ct_phase_setup(t, id, k->setup_ns);
		k->setup_ns = 0;
	}
	return id;
}

void ct_ktls_begin(struct ct_ktls_call *c)
{
	c->t = ct_thread_get();
	if (c->t && !ct_enter(c->t, CT_FAM_KERNEL))
		c->t = NULL;
	if (c->t)
		ct_op_begin(c->t, &c->timer, 0);
}

void ct_ktls_end(struct ct_ktls_call *c, struct ct_kfd_state *st, enum ct_dir dir, const char *call,
		 ssize_t r, const struct msghdr *msg, int flags)
{
	if (!c->t)
		return;
	int e = ct_errno_save();
	int d = dir == CT_DIR_ENCRYPT ? 0 : 1;
	/* Only a set-up direction carries TLS records: before TLS_TX/RX (the handshake's own
	 * records, sent by the library) the socket is plain TCP in that direction. */
	if (!st->ktls.impl[d][0] || (flags & MSG_PEEK) ||
	    (r < 0 && (e == EAGAIN || e == EWOULDBLOCK || e == EINTR))) {
		ct_leave(c->t, CT_FAM_KERNEL);
		ct_errno_restore(e);
		return;
	}
	uint8_t type = CT_TLS_RECORD_APPLICATION_DATA;
	bool control = msg && !(r < 0 && e == EFAULT) && ct_ktls_record_type(msg, &type) &&
		       type != CT_TLS_RECORD_APPLICATION_DATA;
	uint32_t path = ktls_path(c->t, st, dir, control);
	if (path != CT_NO_PATH)
		ct_op_end(c->t, &c->timer, path, r > 0 ? (uint64_t)r : 0, r >= 0);
	if (r < 0) {
		const char *tn = control ? ct_ktls_record_type_name(type) : "application_data";
		ct_event(CT_EV_CALL_FAILED, call, e, r, path, true,
			 "ktls dir=%s cipher=%s proto=%s record=%s", ct_dir_name(dir), st->ktls.cipher[d],
			 st->ktls.proto[d], tn ? tn : "?");
	}
	ct_leave(c->t, CT_FAM_KERNEL);
	ct_errno_restore(e);
}

/* sendfile is a kTLS server's way to send a file (OpenSSL's SSL_sendfile, GnuTLS's
 * gnutls_record_send_file): the kernel reads, encrypts and sends it. Other fds pass through. */
CT_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	struct ct_kfd_state *st = ct_kfd_get(out_fd);

	if (!CT_REAL(sendfile)) {
		errno = ENOSYS;
		return -1;
	}
	if (CT_LIKELY(!st) || st->kind != CT_KFD_KTLS)
		return CT_REAL(sendfile)(out_fd, in_fd, offset, count);
	return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "sendfile", CT_REAL(sendfile)(out_fd, in_fd, offset, count),
			    NULL, 0);
}

/* musl defines the *64 names as macros for the plain ones (its off_t is 64-bit everywhere): a
 * program's sendfile64 call is a sendfile call, which the hook above sees. */
#ifndef sendfile64
CT_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
	struct ct_kfd_state *st = ct_kfd_get(out_fd);

	if (!CT_REAL(sendfile64)) {
		errno = ENOSYS;
		return -1;
	}
	if (CT_LIKELY(!st) || st->kind != CT_KFD_KTLS)
		return CT_REAL(sendfile64)(out_fd, in_fd, offset, count);
	return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "sendfile", CT_REAL(sendfile64)(out_fd, in_fd, offset, count),
			    NULL, 0);
}
#endif
