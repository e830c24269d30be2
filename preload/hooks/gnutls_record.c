/* SPDX-License-Identifier: MIT */
/*
 * gnutls_record.c - the bytes a program sends and receives through a GnuTLS session
 * (gnutls_record_send*, gnutls_record_recv*): what wget, apt's https method, git over https and
 * gnutls-cli move over TLS. A path per (the session's cipher, its protocol version, direction):
 * api tls, entry CT_ENTRY_TLS_RECORD, the cipher's OpenSSL-style name and the code GnuTLS runs for
 * it (gnutls_impl.c), proto "TLS1.3", encrypt for sent and decrypt for received, and
 * CT_PATH_IO_WAIT: a record call blocks on its socket, so its wall time includes the network and
 * the peer; its CPU time (user and system apart: timing.h, ct_io_call_*) is what it cost. The
 * bytes are the application bytes a call returned (> 0 only); GNUTLS_E_AGAIN and
 * GNUTLS_E_INTERRUPTED are the non-blocking way of life, not failures; other errors are events.
 */
#include <gnutls/gnutls.h>

#include "gnutls_internal.h"
#include "internal.h"

/* (cipher, protocol, direction) -> path, for the process: a handful of entries ever. One 64-bit
 * word per entry, (key + 1) << 32 | path id, claimed with a compare-exchange from 0. */
#define SESSION_PATHS 64
static _Atomic uint64_t session_paths[SESSION_PATHS];

/* The path of a record call of dir on session (guards raised by the caller); CT_NO_PATH when the
 * registry is full. */
static uint32_t record_path(gnutls_session_t session, uint8_t dir)
{
	gnutls_cipher_algorithm_t (*cipher_get)(gnutls_session_t) = CT_REAL(gnutls_cipher_get);
	gnutls_protocol_t (*version_get)(gnutls_session_t) = CT_REAL(gnutls_protocol_get_version);
	if (!cipher_get || !version_get)
		return CT_NO_PATH;
	unsigned alg = (unsigned)cipher_get(session) & 0xffff, proto = (unsigned)version_get(session) & 0x3ff;
	uint64_t key = ((uint64_t)alg << 12 | (uint64_t)proto << 2 | dir) + 1;
	unsigned h = (unsigned)(key * 0x9e3779b1u) % SESSION_PATHS;
	for (unsigned i = 0; i < SESSION_PATHS; i++) {
		uint64_t v =
			atomic_load_explicit(&session_paths[(h + i) % SESSION_PATHS], memory_order_acquire);
		if (!v)
			break;
		if (v >> 32 == key)
			return (uint32_t)v;
	}
	char name[48];
	ct_gnutls_cipher_name((int)alg, name, sizeof(name));
	const char *(*proto_name)(gnutls_protocol_t) = CT_REAL(gnutls_protocol_get_name);
	size_t (*key_size)(gnutls_cipher_algorithm_t) = CT_REAL(gnutls_cipher_get_key_size);
	const char *pn = proto_name ? proto_name((gnutls_protocol_t)proto) : NULL;
	size_t kb = key_size ? key_size((gnutls_cipher_algorithm_t)alg) : 0;
	struct ct_path_key k = {
		.api = CT_API_TLS,
		.dir = dir,
		.entry = CT_ENTRY_TLS_RECORD,
		.key_bits = (uint16_t)(kb < 8192 ? kb * 8 : 0),
		.flags = CT_PATH_IO_WAIT,
		.impl = ct_gnutls_impl(name),
		.cipher = name,
		.requested = ct_gnutls_overrides(),
		.proto = pn ? pn : "unknown",
	};
	uint32_t id = ct_path_intern_here(&k);
	if (id == CT_NO_PATH)
		return id;
	for (unsigned i = 0; i < SESSION_PATHS; i++) {
		uint64_t expected = 0;
		if (atomic_compare_exchange_strong(&session_paths[(h + i) % SESSION_PATHS], &expected,
						   key << 32 | id) ||
		    expected >> 32 == key)
			break;
	}
	return id;
}

/* A record call's bookkeeping around the real call (which the caller makes between begin and
 * end): NULL from begin when it passes through untraced. */
static struct ct_thread *record_begin(struct ct_io_call *io)
{
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_GNUTLS))
		return NULL;
	ct_io_call_begin(t, io);
	return t;
}

static void record_end(struct ct_thread *t, struct ct_io_call *io, const char *call, gnutls_session_t session,
		       uint8_t dir, ssize_t r, uint64_t bytes)
{
	struct ct_quiet q = ct_quiet_begin(t);
	uint32_t id = record_path(session, dir);
	if (id != CT_NO_PATH && r > 0)
		ct_io_call_end(t, io, id, bytes);
	if (r < 0 && r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
		struct ct_counters *c = id == CT_NO_PATH ? NULL : ct_counters_of(t, id);
		if (c)
			CT_ADD(c->errors, 1);
		ct_gnutls_failed(call, (int)r, id);
	}
	ct_quiet_end(t, q);
	ct_leave_fast(t, CT_FAM_GNUTLS);
}

#define RECORD_HOOK(call, dir, ...)                                                                          \
	do {                                                                                                 \
		__typeof__(&call) real = CT_REAL(call);                                                      \
		if (CT_UNLIKELY(!real)) {                                                                    \
			errno = ENOSYS;                                                                      \
			return GNUTLS_E_INTERNAL_ERROR;                                                      \
		}                                                                                            \
		struct ct_io_call io;                                                                        \
		struct ct_thread *t = record_begin(&io);                                                     \
		ssize_t r = real(__VA_ARGS__);                                                               \
		if (t)                                                                                       \
			record_end(t, &io, #call, session, dir, r, r > 0 ? (uint64_t)r : 0);                 \
		return r;                                                                                    \
	} while (0)

CT_EXPORT ssize_t gnutls_record_send(gnutls_session_t session, const void *data, size_t data_size)
{
	RECORD_HOOK(gnutls_record_send, CT_DIR_ENCRYPT, session, data, data_size);
}

CT_EXPORT ssize_t gnutls_record_send2(gnutls_session_t session, const void *data, size_t data_size,
				      size_t pad, unsigned flags)
{
	RECORD_HOOK(gnutls_record_send2, CT_DIR_ENCRYPT, session, data, data_size, pad, flags);
}

CT_EXPORT ssize_t gnutls_record_send_range(gnutls_session_t session, const void *data, size_t data_size,
					   const gnutls_range_st *range)
{
	RECORD_HOOK(gnutls_record_send_range, CT_DIR_ENCRYPT, session, data, data_size, range);
}

CT_EXPORT ssize_t gnutls_record_send_file(gnutls_session_t session, int fd, off_t *offset, size_t count)
{
	RECORD_HOOK(gnutls_record_send_file, CT_DIR_ENCRYPT, session, fd, offset, count);
}

CT_EXPORT ssize_t gnutls_record_recv(gnutls_session_t session, void *data, size_t data_size)
{
	RECORD_HOOK(gnutls_record_recv, CT_DIR_DECRYPT, session, data, data_size);
}

CT_EXPORT ssize_t gnutls_record_recv_seq(gnutls_session_t session, void *data, size_t data_size,
					 unsigned char *seq)
{
	RECORD_HOOK(gnutls_record_recv_seq, CT_DIR_DECRYPT, session, data, data_size, seq);
}

/* The packet's bytes, as gnutls_packet_get gives them (the call's return is the same count). */
CT_EXPORT ssize_t gnutls_record_recv_packet(gnutls_session_t session, gnutls_packet_t *packet)
{
	ssize_t (*real)(gnutls_session_t, gnutls_packet_t *) = CT_REAL(gnutls_record_recv_packet);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return GNUTLS_E_INTERNAL_ERROR;
	}
	struct ct_io_call io;
	struct ct_thread *t = record_begin(&io);
	ssize_t r = real(session, packet);
	if (t) {
		uint64_t bytes = r > 0 ? (uint64_t)r : 0;
		void (*packet_get)(gnutls_packet_t, gnutls_datum_t *, unsigned char *) =
			CT_REAL(gnutls_packet_get);
		if (r > 0 && packet && *packet && packet_get) {
			int e = errno;
			gnutls_datum_t d = { NULL, 0 };
			packet_get(*packet, &d, NULL);
			bytes = d.size;
			errno = e;
		}
		record_end(t, &io, "gnutls_record_recv_packet", session, CT_DIR_DECRYPT, r, bytes);
	}
	return r;
}
