/* SPDX-License-Identifier: MIT */
/*
 * test_format.c - the trace format: every record type round-trips, damaged input is reported
 * (truncated at every offset, single-bit flips, foreign files) and never crashes the reader,
 * payloads grow forward-compatibly, and the bucket functions hold their edges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "errno_abi.h"
#include "trace_format.h"
#include "tracegen.h"

static bool str_is(struct ct_str s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

static const char odd_argv[] = "prog\0--name=\"x\\y\"\0\xff\xfe\0tab\there";

/* A small valid file with one record of every type. */
static void build_all_types(struct tg *g)
{
	tg_init(g);
	struct ct_header h = tg_default_header(4242, odd_argv, sizeof(odd_argv) - 1);
	h.aesni_cpb_milli = 650;
	h.ia32cap = ct_str_from("~0x200000200000000");
	h.flags = CT_HDR_PER_CALL;
	h.argv_redacted = 3;
	h.errno_abi = ct_str_from("mips");
	h.max_ops_rate = 250000;
	h.ops_window_ms = 100;
	tg_header(g, &h);
	struct ct_path_def p = {
		.path_id = 7,
		.api = CT_API_AFALG,
		.dir = CT_DIR_DECRYPT,
		.key_bits = 256,
		.entry = CT_ENTRY_AFALG_AIO,
		.route = CT_ROUTE_AFALG,
		.flags = CT_PATH_SW_DRIVER,
		.impl = ct_str_from("kernel:cbc-aes-generic"),
		.cipher = ct_str_from("aes-256-cbc"),
		.requested = ct_str_from("engine:afalg"),
		.callsite = ct_str_from("libcrypto.so.3!EVP_DecryptUpdate+0x40\nprog!main+0x12"),
		.proto = ct_str_from("TLS1.3"),
	};
	tg_path(g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 7, 1000, 4096, 5000, 0.1, 0.8);
	tg_add_calls(s, 3, 0, 50);
	s->errors = 2;
	s->syscalls = 3000;
	s->setup_calls = 1;
	s->setup_ns = 12345;
	s->teardown_calls = 1;
	s->teardown_ns = 678;
	s->spliced_calls = 9;
	s->lat[CT_LAT_BUCKETS - 1] = 1;
	/* spans and phases: the fields added after the first release */
	s->size[ct_size_bucket(4096)].span_calls = 400;
	s->size[ct_size_bucket(4096)].span_ns = 1999999;
	s->size[ct_size_bucket(4096)].span_rejected = 17;
	s->size[ct_size_bucket(4096)].span_rejected_ns = 123456789; /* added later still */
	s->phase[CT_PHASE_AAD] = (struct ct_size_bucket){ .calls = 1000,
							  .bytes = 13000,
							  .timed_calls = 4,
							  .timed_ns = (uint64_t)-5,
							  .span_calls = 300,
							  .span_ns = 6000,
							  .span_rejected = 2,
							  .span_rejected_ns = 70000 };
	s->phase[CT_PHASE_TAG].calls = 1000;
	s->tls_records = 1000;
	tg_stats(g, s);
	free(s);
	struct ct_event e = {
		.event_id = 3,
		.kind = CT_EV_CALL_FAILED,
		.err = 97,
		.ret = -1,
		.path_id = CT_NO_PATH,
		.tid = 4243,
		.first_mono_ns = 10,
		.last_mono_ns = 20,
		.count = 5,
		.call = ct_str_from("socket"),
		.detail = ct_str_from("domain=AF_ALG type=SOCK_SEQPACKET"),
		.callsite = ct_str_from("afalg.so!afalg_create_sk+0x20"),
	};
	tg_event(g, &e);
	struct ct_op ops[3] = {
		{ .start_mono_ns = 100, .dur_ns = 5, .path_id = 7, .bytes = 16 },
		{ .start_mono_ns = 200, .dur_ns = 6, .path_id = 7, .bytes = 32 },
		{ .start_mono_ns = UINT64_MAX, .dur_ns = UINT32_MAX, .path_id = 7, .bytes = UINT32_MAX },
	};
	struct ct_ops_batch b = { .tid = 4243, .dropped = 11 };
	tg_ops(g, &b, ops, 3);
	/* a batch the rate cap sampled: weights follow the ops */
	ops[0].weight = 1;
	ops[1].weight = 64;
	ops[2].weight = 1u << 31;
	tg_ops(g, &b, ops, 3);
	struct ct_thread_info t = { .tid = 4243, .name = ct_str_from("worker-1") };
	tg_thread(g, &t);
	struct ct_proc pr = {
		.mono_ns = 99,
		.utime_ns = 1,
		.stime_ns = 2,
		.maxrss_kb = 3,
		.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL,
		.threads_seen = 2,
		.dropped_ops = 4,
		.dropped_events = 5,
		.write_errors = 6,
		.hooked_calls = 1003,
		.crypto_libs = ct_str_from("/lib/libcrypto.so.3\n/lib/libgnutls.so.30"),
		.libcrypto = ct_str_from("OpenSSL 3.0.19"),
		.aesni_cpb_milli = 194,
		.ops_sampled_out = 123456789012ull,
		.ops_max_weight = 64,
	};
	tg_proc(g, &pr);
	struct ct_end end = { .mono_ns = 1234, .reason = CT_END_SIGNAL, .status = 9 };
	tg_end(g, &end);
}

static void test_round_trip_every_type(void **state)
{
	(void)state;
	struct tg g;
	build_all_types(&g);
	struct ct_reader r;
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(r.version, CT_FORMAT_VERSION);
	struct ct_record *rec = calloc(1, sizeof(*rec));

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_HEADER);
	assert_int_equal(rec->offset, CT_PREAMBLE_SIZE);
	const struct ct_header *h = &rec->u.header;
	assert_int_equal(h->pid, 4242);
	assert_int_equal(h->tsc_hz, 2000000000ull);
	assert_int_equal(h->aesni_cpb_milli, 650);
	assert_int_equal(h->flags, CT_HDR_PER_CALL);
	assert_int_equal(h->argv.len, sizeof(odd_argv) - 1);
	assert_memory_equal(h->argv.p, odd_argv, sizeof(odd_argv) - 1);
	assert_true(str_is(h->ia32cap, "~0x200000200000000"));
	assert_true(str_is(h->timing, "every call timed with the TSC"));
	assert_int_equal(h->argv_redacted, 3);
	assert_true(str_is(h->errno_abi, "mips"));
	assert_int_equal(h->max_ops_rate, 250000);
	assert_int_equal(h->ops_window_ms, 100);

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_PATH);
	assert_int_equal(rec->u.path.path_id, 7);
	assert_int_equal(rec->u.path.api, CT_API_AFALG);
	assert_int_equal(rec->u.path.dir, CT_DIR_DECRYPT);
	assert_int_equal(rec->u.path.key_bits, 256);
	assert_int_equal(rec->u.path.entry, CT_ENTRY_AFALG_AIO);
	assert_int_equal(rec->u.path.route, CT_ROUTE_AFALG);
	assert_int_equal(rec->u.path.flags, CT_PATH_SW_DRIVER);
	assert_true(str_is(rec->u.path.impl, "kernel:cbc-aes-generic"));
	assert_true(str_is(rec->u.path.requested, "engine:afalg"));
	assert_true(str_is(rec->u.path.callsite, "libcrypto.so.3!EVP_DecryptUpdate+0x40\nprog!main+0x12"));
	assert_true(str_is(rec->u.path.proto, "TLS1.3"));

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_STATS);
	const struct ct_path_stats *s = &rec->u.stats;
	assert_int_equal(s->path_id, 7);
	assert_int_equal(s->calls, 1003);
	assert_int_equal(s->bytes, 1000 * 4096);
	assert_int_equal(s->errors, 2);
	assert_int_equal(s->timed_ns, 1000 * 5000 + 3 * 50);
	assert_int_equal(s->syscalls, 3000);
	assert_int_equal(s->setup_ns, 12345);
	assert_int_equal(s->teardown_ns, 678);
	assert_int_equal(s->spliced_calls, 9);
	assert_int_equal(s->size[0].calls, 3);
	assert_int_equal(s->size[ct_size_bucket(4096)].calls, 1000);
	assert_int_equal(s->size[ct_size_bucket(4096)].timed_ns, 5000000);
	assert_int_equal(s->lat[ct_lat_bucket(5000)], 1000);
	assert_int_equal(s->lat[CT_LAT_BUCKETS - 1], 1);
	assert_int_equal(s->cpu_samples, 101);
	assert_int_equal(s->size[ct_size_bucket(4096)].span_calls, 400);
	assert_int_equal(s->size[ct_size_bucket(4096)].span_ns, 1999999);
	assert_int_equal(s->size[ct_size_bucket(4096)].span_rejected, 17);
	assert_int_equal(s->size[ct_size_bucket(4096)].span_rejected_ns, 123456789);
	assert_int_equal(s->size[0].span_calls, 0);
	assert_int_equal(s->size[0].span_rejected_ns, 0);
	assert_int_equal(s->phase[CT_PHASE_AAD].calls, 1000);
	assert_int_equal(s->phase[CT_PHASE_AAD].bytes, 13000);
	assert_int_equal(s->phase[CT_PHASE_AAD].timed_calls, 4);
	assert_int_equal((int64_t)s->phase[CT_PHASE_AAD].timed_ns, -5); /* a negative sum survives */
	assert_int_equal(s->phase[CT_PHASE_AAD].span_calls, 300);
	assert_int_equal(s->phase[CT_PHASE_AAD].span_ns, 6000);
	assert_int_equal(s->phase[CT_PHASE_AAD].span_rejected, 2);
	assert_int_equal(s->phase[CT_PHASE_AAD].span_rejected_ns, 70000);
	assert_int_equal(s->phase[CT_PHASE_TAG].calls, 1000);
	assert_int_equal(s->phase[CT_PHASE_KEY].calls, 0);
	assert_int_equal(s->tls_records, 1000);

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_EVENT);
	assert_int_equal(rec->u.event.err, 97);
	assert_int_equal(rec->u.event.ret, -1);
	assert_int_equal(rec->u.event.path_id, CT_NO_PATH);
	assert_int_equal(rec->u.event.count, 5);
	assert_true(str_is(rec->u.event.call, "socket"));

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_OPS);
	assert_int_equal(rec->u.ops.count, 3);
	assert_int_equal(rec->u.ops.dropped, 11);
	struct ct_op op;
	ct_decode_op_at(&rec->u.ops, 1, &op);
	assert_int_equal(op.start_mono_ns, 200);
	assert_int_equal(op.bytes, 32);
	ct_decode_op_at(&rec->u.ops, 2, &op);
	assert_int_equal(op.start_mono_ns, UINT64_MAX);
	assert_int_equal(op.dur_ns, UINT32_MAX);
	ct_decode_op_at(&rec->u.ops, 3, &op); /* out of range reads as zero */
	assert_int_equal(op.bytes, 0);
	/* every weight 1: no weights written, each reads as 1 */
	assert_null(rec->u.ops.weights_log2);
	ct_decode_op_at(&rec->u.ops, 0, &op);
	assert_int_equal(op.weight, 1);

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_OPS);
	assert_int_equal(rec->u.ops.count, 3);
	assert_non_null(rec->u.ops.weights_log2);
	ct_decode_op_at(&rec->u.ops, 0, &op);
	assert_int_equal(op.weight, 1);
	assert_int_equal(op.start_mono_ns, 100);
	ct_decode_op_at(&rec->u.ops, 1, &op);
	assert_int_equal(op.weight, 64);
	assert_int_equal(op.bytes, 32);
	ct_decode_op_at(&rec->u.ops, 2, &op);
	assert_int_equal(op.weight, 1u << 31);
	assert_int_equal(op.dur_ns, UINT32_MAX);

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_THREAD);
	assert_true(str_is(rec->u.thread.name, "worker-1"));

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_PROC);
	assert_int_equal(rec->u.proc.hooked_calls, 1003);
	assert_int_equal(rec->u.proc.write_errors, 6);
	assert_true(str_is(rec->u.proc.libcrypto, "OpenSSL 3.0.19"));
	assert_int_equal(rec->u.proc.aesni_cpb_milli, 194);
	assert_int_equal(rec->u.proc.ops_sampled_out, 123456789012ull);
	assert_int_equal(rec->u.proc.ops_max_weight, 64); /* the last field */

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_END);
	assert_int_equal(rec->u.end.reason, CT_END_SIGNAL);
	assert_int_equal(rec->u.end.status, 9);

	assert_int_equal(ct_reader_next(&r, rec), CT_READ_EOF);
	assert_int_equal(ct_reader_next(&r, rec), CT_READ_EOF);
	free(rec);
	tg_free(&g);
}

static void test_encoder_bounds(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct ct_end e = { .reason = CT_END_EXIT };
	size_t need = ct_encode_end(buf, sizeof(buf), &e);
	assert_int_equal(need, 8 + 16 + 4);
	for (size_t cap = 0; cap < need; cap++)
		assert_int_equal(ct_encode_end(buf, cap, &e), 0);
	assert_int_equal(ct_encode_preamble(buf, 15), 0);
	assert_int_equal(ct_encode_preamble(buf, 16), 16);
	/* A string that would push the payload past CT_MAX_PAYLOAD is refused, not written. */
	size_t big = CT_MAX_PAYLOAD + 100;
	uint8_t *out = malloc(big + 64);
	char *name = malloc(CT_MAX_PAYLOAD);
	memset(name, 'a', CT_MAX_PAYLOAD);
	struct ct_thread_info t = { .tid = 1, .name = { .p = name, .len = CT_MAX_PAYLOAD } };
	assert_int_equal(ct_encode_thread(out, big + 64, &t), 0);
	free(name);
	free(out);
}

/* Reads a whole buffer; returns the final status and the number of records read. */
static enum ct_read_status read_all(const uint8_t *buf, size_t len, size_t *nrec, char *err, size_t errcap)
{
	struct ct_reader r;
	struct ct_record *rec = malloc(sizeof(*rec));
	enum ct_read_status st = ct_reader_init(&r, buf, len);
	*nrec = 0;
	if (st == CT_READ_OK)
		while ((st = ct_reader_next(&r, rec)) == CT_READ_OK)
			(*nrec)++;
	if (err)
		snprintf(err, errcap, "%s", r.error);
	free(rec);
	return st;
}

static void test_truncation_every_offset(void **state)
{
	(void)state;
	struct tg g;
	build_all_types(&g);
	assert_true(g.nrecords == 9);
	for (size_t cut = 0; cut < g.len; cut++) {
		/* A copy of exactly cut bytes, so tools like ASan see any read past it. */
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, g.buf, cut);
		size_t whole = 0, n;
		while (whole < g.nrecords && g.ends[whole] <= cut)
			whole++;
		char err[200];
		enum ct_read_status st = read_all(copy, cut, &n, err, sizeof(err));
		bool at_boundary = cut == CT_PREAMBLE_SIZE || (whole > 0 && g.ends[whole - 1] == cut);
		if (at_boundary) {
			assert_int_equal(st, CT_READ_EOF);
		} else {
			if (st != CT_READ_TRUNCATED)
				fail_msg("cut at %zu: status %d (%s)", cut, st, err);
			assert_non_null(strstr(err, "truncated"));
		}
		assert_int_equal(n, whole);
		free(copy);
	}
	tg_free(&g);
}

static void test_bit_flips_never_crash(void **state)
{
	(void)state;
	struct tg g;
	build_all_types(&g);
	uint8_t *copy = malloc(g.len);
	size_t ok = 0, corrupt = 0, other = 0;
	for (size_t bit = 0; bit < g.len * 8; bit++) {
		memcpy(copy, g.buf, g.len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		size_t n;
		char err[200];
		enum ct_read_status st = read_all(copy, g.len, &n, err, sizeof(err));
		if (bit / 8 < 8) { /* the magic */
			assert_int_equal(st, CT_READ_NOT_TRACE);
			continue;
		}
		if (bit / 8 < CT_PREAMBLE_SIZE) {
			/* version, preamble size or flags: any clean answer will do, just no crash */
			ok += st == CT_READ_EOF;
			other += st != CT_READ_EOF;
			continue;
		}
		if (st != CT_READ_CORRUPT)
			fail_msg("bit %zu (byte %zu): status %d: %s", bit, bit / 8, st, err);
		corrupt++;
		if (st == CT_READ_CORRUPT)
			assert_non_null(strstr(err, "at byte"));
	}
	/* Every flip inside a record is caught by the CRC or the header checks, including flips
	 * of a length field (not mistaken for a truncated file). */
	assert_int_equal(corrupt, (g.len - CT_PREAMBLE_SIZE) * 8);
	assert_true(ok > 0); /* the flags word is free for now: flips there still read */
	(void)other;
	free(copy);
	tg_free(&g);
}

static void test_foreign_and_version(void **state)
{
	(void)state;
	size_t n;
	char err[200];
	const char *elf =
		"\x7f"
		"ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\0\0\0\0";
	assert_int_equal(read_all((const uint8_t *)elf, 20, &n, err, sizeof(err)), CT_READ_NOT_TRACE);
	assert_non_null(strstr(err, "not a cryptrace trace file"));
	assert_int_equal(read_all((const uint8_t *)"hello", 5, &n, err, sizeof(err)), CT_READ_NOT_TRACE);
	assert_int_equal(read_all((const uint8_t *)"", 0, &n, err, sizeof(err)), CT_READ_TRUNCATED);
	uint8_t pre[CT_PREAMBLE_SIZE];
	ct_encode_preamble(pre, sizeof(pre));
	ct_put_le16(pre + 8, CT_FORMAT_VERSION + 1);
	assert_int_equal(read_all(pre, sizeof(pre), &n, err, sizeof(err)), CT_READ_VERSION);
	assert_non_null(strstr(err, "newer"));
	/* A bigger preamble from a newer minor writer: records start after it. */
	struct tg g;
	tg_init(&g);
	ct_put_le16(g.buf + 10, CT_PREAMBLE_SIZE + 8);
	tg_raw(&g, "\0\0\0\0\0\0\0\0", 8);
	struct ct_end e = { .reason = CT_END_EXIT };
	tg_end(&g, &e);
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_EOF);
	assert_int_equal(n, 1);
	tg_free(&g);
}

/* Builds a record by hand: type, payload; returns its size. */
static size_t frame(uint8_t *out, uint16_t type, const uint8_t *payload, uint32_t len)
{
	ct_put_le16(out, type);
	ct_put_le16(out + 2, 0);
	ct_put_le32(out + 4, len);
	memcpy(out + 8, payload, len);
	ct_put_le32(out + 8 + len, ct_crc32c(0, out, 8 + len));
	return 12 + len;
}

static void test_forward_compatibility(void **state)
{
	(void)state;
	uint8_t rec[256], payload[128];
	struct tg g;
	tg_init(&g);
	/* A newer END with two extra trailing fields: the known ones still decode. */
	struct ct_end e = { .mono_ns = 5, .reason = CT_END_EXEC, .status = 3 };
	size_t n = ct_encode_end(rec, sizeof(rec), &e);
	uint32_t plen = (uint32_t)(n - 12);
	memcpy(payload, rec + 8, plen);
	memset(payload + plen, 0xab, 12);
	tg_raw(&g, rec, frame(rec, CT_REC_END, payload, plen + 12));
	/* An older THREAD with the name missing entirely: reads as empty. */
	ct_put_le32(payload, 77);
	tg_raw(&g, rec, frame(rec, CT_REC_THREAD, payload, 4));
	/* A record type from the future: skipped, CRC still checked. */
	tg_raw(&g, rec, frame(rec, 200, (const uint8_t *)"future", 6));
	/* An older PROC that stops after mono_ns: every later field reads as zero. */
	ct_put_le64(payload, 42);
	tg_raw(&g, rec, frame(rec, CT_REC_PROC, payload, 8));
	struct ct_reader r;
	struct ct_record *out = calloc(1, sizeof(*out));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_END);
	assert_int_equal(out->u.end.reason, CT_END_EXEC);
	assert_int_equal(out->u.end.status, 3);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_THREAD);
	assert_int_equal(out->u.thread.tid, 77);
	assert_int_equal(out->u.thread.name.len, 0);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_PROC);
	assert_int_equal(out->u.proc.mono_ns, 42);
	assert_int_equal(out->u.proc.hooked_calls, 0);
	assert_int_equal(out->u.proc.crypto_libs.len, 0);
	assert_int_equal(out->u.proc.aesni_cpb_milli, 0);
	assert_int_equal(out->u.proc.ops_sampled_out, 0);
	assert_int_equal(out->u.proc.ops_max_weight, 0);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_EOF);
	free(out);
	tg_free(&g);
}

/* The header's errno numbering (added at its end): a header from before it reads as "", which is
 * the generic numbering, and the numberings name a number as Linux's headers do. */
static void test_errno_abi(void **state)
{
	(void)state;
	uint8_t rec[1024], payload[1024];
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(9, "x", 1);
	h.errno_abi = ct_str_from("mips");
	h.max_ops_rate = 1000;
	h.ops_window_ms = 100;
	size_t n = ct_encode_header(rec, sizeof(rec), &h);
	/* the same header as a writer from before the field wrote it: without its last string and
	 * the rate cap's two u32 after it */
	uint32_t plen = (uint32_t)(n - 12 - 8 - 4 - strlen("mips"));
	memcpy(payload, rec + 8, plen);
	tg_raw(&g, rec, frame(rec, CT_REC_HEADER, payload, plen));
	struct ct_reader r;
	struct ct_record *out = calloc(1, sizeof(*out));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->u.header.pid, 9);
	assert_int_equal(out->u.header.errno_abi.len, 0);
	assert_int_equal(ct_errno_abi_parse(out->u.header.errno_abi), CT_ERRNO_ABI_GENERIC);
	assert_int_equal(out->u.header.max_ops_rate, 0); /* no cap in a trace from before it */
	assert_int_equal(out->u.header.ops_window_ms, 0);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_EOF);
	free(out);
	tg_free(&g);

	assert_int_equal(ct_errno_abi_parse(ct_str_from("mips")), CT_ERRNO_ABI_MIPS);
	assert_int_equal(ct_errno_abi_parse(ct_str_from("generic")), CT_ERRNO_ABI_GENERIC);
	assert_int_equal(ct_errno_abi_parse(ct_str_from("alpha")), CT_ERRNO_ABI_ALPHA);
	assert_int_equal(ct_errno_abi_parse(ct_str_from("vax")), CT_ERRNO_ABI_UNKNOWN);
	assert_string_equal(ct_errno_abi_label(CT_ERRNO_ABI_MIPS), "mips");
	/* 124: EAFNOSUPPORT on MIPS, EMEDIUMTYPE everywhere else */
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_MIPS, 124), "EAFNOSUPPORT");
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_GENERIC, 124), "EMEDIUMTYPE");
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_GENERIC, 97), "EAFNOSUPPORT");
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_MIPS, 1133), "EDQUOT");
	/* an alias's number is named by its first name, as glibc's strerrorname_np does */
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_GENERIC, 11), "EAGAIN");
	assert_string_equal(ct_errno_abi_name(CT_ERRNO_ABI_GENERIC, 35), "EDEADLK");
	assert_int_equal(ct_errno_abi_value(CT_ERRNO_ABI_MIPS, "EWOULDBLOCK"), 11);
	assert_null(ct_errno_abi_name(CT_ERRNO_ABI_GENERIC, 0));
	assert_null(ct_errno_abi_name(CT_ERRNO_ABI_ALPHA, 1));
	assert_false(ct_errno_abi_has_table(CT_ERRNO_ABI_SPARC));
	/* into this build's own numbering: <errno.h>'s constants */
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_MIPS, 124), EAFNOSUPPORT);
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_MIPS, 1133), EDQUOT);
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_GENERIC, 97),
			 ct_errno_abi_value(ct_errno_abi_own(), "EAFNOSUPPORT"));
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_MIPS, ENOENT), ENOENT);
	/* EINIT: MIPS only, so without a counterpart unless this build is MIPS's */
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_MIPS, 141),
			 ct_errno_abi_own() == CT_ERRNO_ABI_MIPS ? 141 : 0);
	assert_int_equal(ct_errno_to_own(CT_ERRNO_ABI_ALPHA, 2), 0);
	/* the own table is this C library's numbering */
	assert_int_equal(ct_errno_abi_value(ct_errno_abi_own(), "EAFNOSUPPORT"), EAFNOSUPPORT);
	assert_int_equal(ct_errno_abi_value(ct_errno_abi_own(), "ECANCELED"), ECANCELED);
	assert_int_equal(ct_errno_abi_value(ct_errno_abi_own(), "ELOOP"), ELOOP);
}

/* PROFILE_STACKS: stacks of frames (module index, offset) round-trip, a leaf-only record carries
 * its reason, and a depth running past the payload is malformed, not read. */
static void test_profile_stacks(void **state)
{
	(void)state;
	uint8_t buf[1024];
	struct tg g;
	tg_init(&g);
	uint32_t samples[2] = { 7, UINT32_MAX }, mods[4] = { 1, 0, 0, 2 };
	uint16_t depths[2] = { 3, 1 };
	uint64_t offs[4] = { 0x1234, 0x99, UINT64_MAX, 0x40 };
	struct ct_profile_stacks h = { .dropped = 5 };
	size_t n = ct_encode_profile_stacks(buf, sizeof(buf), &h, samples, depths, mods, offs, 2);
	assert_int_equal(n, 8 + 4 + 8 + 4 + 4 + (6 + 36) + (6 + 12) + 4);
	tg_raw(&g, buf, n);
	h = (struct ct_profile_stacks){ .flags = CT_STACKS_LEAF_ONLY, .note = ct_str_from("refused") };
	n = ct_encode_profile_stacks(buf, sizeof(buf), &h, NULL, NULL, NULL, NULL, 0);
	tg_raw(&g, buf, n);
	struct ct_reader r;
	struct ct_record *rec = calloc(1, sizeof(*rec));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->type, CT_REC_PROFILE_STACKS);
	assert_int_equal(rec->u.stacks.dropped, 5);
	assert_int_equal(rec->u.stacks.count, 2);
	size_t at = 0;
	struct ct_stack st;
	uint32_t mod;
	uint64_t off;
	assert_true(ct_profile_stack_next(&rec->u.stacks, &at, &st));
	assert_int_equal(st.samples, 7);
	assert_int_equal(st.depth, 3);
	ct_stack_frame_at(&st, 0, &mod, &off);
	assert_int_equal(mod, 1);
	assert_int_equal(off, 0x1234);
	ct_stack_frame_at(&st, 2, &mod, &off);
	assert_int_equal(mod, 0);
	assert_int_equal(off, UINT64_MAX);
	assert_true(ct_profile_stack_next(&rec->u.stacks, &at, &st));
	assert_int_equal(st.samples, UINT32_MAX);
	assert_int_equal(st.depth, 1);
	ct_stack_frame_at(&st, 0, &mod, &off);
	assert_int_equal(mod, 2);
	assert_int_equal(off, 0x40);
	assert_false(ct_profile_stack_next(&rec->u.stacks, &at, &st));
	assert_int_equal(ct_reader_next(&r, rec), CT_READ_OK);
	assert_int_equal(rec->u.stacks.flags, CT_STACKS_LEAF_ONLY);
	assert_true(str_is(rec->u.stacks.note, "refused"));
	assert_int_equal(rec->u.stacks.count, 0);
	assert_int_equal(ct_reader_next(&r, rec), CT_READ_EOF);
	tg_free(&g);

	/* one stack whose depth claims more frames than the payload holds */
	tg_init(&g);
	h = (struct ct_profile_stacks){ 0 };
	n = ct_encode_profile_stacks(buf, sizeof(buf), &h, samples, depths, mods, offs, 1);
	uint8_t payload[256];
	size_t plen = n - 12;
	memcpy(payload, buf + 8, plen);
	ct_put_le16(payload + 4 + 8 + 4 + 4 + 4, 4); /* depth 3 -> 4 */
	tg_raw(&g, buf, frame(buf, CT_REC_PROFILE_STACKS, payload, (uint32_t)plen));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, rec), CT_READ_CORRUPT);
	free(rec);
	tg_free(&g);
}

/* MODULE gained a flags field at its end (CT_MODULE_MAPPED: every mapped object is listed); a
 * record from an older writer, three strings only, reads as flags 0. */
static void test_module_flags(void **state)
{
	(void)state;
	uint8_t rec[512], payload[512];
	struct tg g;
	tg_init(&g);
	struct ct_module mod = { .name = ct_str_from("_rust.abi3.so"),
				 .path = ct_str_from("/venv/site-packages/cryptography/_rust.abi3.so"),
				 .build_id = ct_str_from("ab12"),
				 .flags = CT_MODULE_MAPPED };
	size_t n = ct_encode_module(rec, sizeof(rec), &mod);
	assert_true(n > 0);
	tg_raw(&g, rec, n);
	mod.flags = 0;
	n = ct_encode_module(rec, sizeof(rec), &mod);
	memcpy(payload, rec + 8, n - 12);
	tg_raw(&g, rec, frame(rec, CT_REC_MODULE, payload, (uint32_t)(n - 12 - 4))); /* no flags */
	struct ct_reader r;
	struct ct_record *out = calloc(1, sizeof(*out));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_MODULE);
	assert_true(str_is(out->u.module.name, "_rust.abi3.so"));
	assert_true(str_is(out->u.module.build_id, "ab12"));
	assert_int_equal(out->u.module.flags, CT_MODULE_MAPPED);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_MODULE);
	assert_true(str_is(out->u.module.path, "/venv/site-packages/cryptography/_rust.abi3.so"));
	assert_int_equal(out->u.module.flags, 0);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_EOF);
	free(out);
	tg_free(&g);
}

/* PROFILE_TIME (the profile by time bin) round-trips its entries; one whose count runs past its
 * payload is corrupt, not read past. */
static void test_profile_time(void **state)
{
	(void)state;
	uint8_t rec[512];
	struct tg g;
	tg_init(&g);
	struct ct_profile_time t = { .bin_us = 20000,
				     .start_mono_ns = 123456789012ull,
				     .module = ct_str_from("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"),
				     .left_out = 4242 };
	const uint32_t bins[3] = { 0, 7, 4000000000u };
	const uint64_t offs[3] = { 0xe00b0, 0xe00c4, 0x1ffffffffull };
	const uint32_t cnts[3] = { 1, 250, 3 };
	size_t n = ct_encode_profile_time(rec, sizeof(rec), &t, bins, offs, cnts, 3);
	assert_true(n > 0);
	tg_raw(&g, rec, n);
	struct ct_reader r;
	struct ct_record *out = calloc(1, sizeof(*out));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->type, CT_REC_PROFILE_TIME);
	const struct ct_profile_time *d = &out->u.profile_time;
	assert_int_equal(d->bin_us, 20000);
	assert_true(d->start_mono_ns == 123456789012ull);
	assert_true(str_is(d->module, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"));
	assert_int_equal(d->count, 3);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t bin, cnt;
		uint64_t off;
		ct_profile_time_at(d, i, &bin, &off, &cnt);
		assert_int_equal(bin, bins[i]);
		assert_true(off == offs[i]);
		assert_int_equal(cnt, cnts[i]);
	}
	assert_int_equal(d->left_out, 4242);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_EOF);
	tg_free(&g);
	/* a record from before left_out was written (its payload ends with the entries) reads as 0 */
	tg_init(&g);
	uint8_t old[512];
	memcpy(old, rec + 8, n - 12 - 8);
	tg_raw(&g, rec, frame(rec, CT_REC_PROFILE_TIME, old, (uint32_t)(n - 12 - 8)));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_OK);
	assert_int_equal(out->u.profile_time.count, 3);
	assert_int_equal(out->u.profile_time.left_out, 0);
	tg_free(&g);
	/* the count says 4 entries, the payload holds 3 */
	tg_init(&g);
	n = ct_encode_profile_time(rec, sizeof(rec), &t, bins, offs, cnts, 3);
	uint8_t payload[512];
	memcpy(payload, rec + 8, n - 12);
	size_t count_at = 4 + 8 + 4 + t.module.len;
	ct_put_le32(payload + count_at, 4);
	tg_raw(&g, rec, frame(rec, CT_REC_PROFILE_TIME, payload, (uint32_t)(n - 12)));
	assert_int_equal(ct_reader_init(&r, g.buf, g.len), CT_READ_OK);
	assert_int_equal(ct_reader_next(&r, out), CT_READ_CORRUPT);
	free(out);
	tg_free(&g);
}

static void test_malformed_payloads(void **state)
{
	(void)state;
	uint8_t rec[256], payload[64];
	size_t n;
	char err[200];
	struct tg g;
	/* A string whose length runs past the payload. */
	tg_init(&g);
	ct_put_le32(payload, 1);
	ct_put_le32(payload + 4, 1000);
	tg_raw(&g, rec, frame(rec, CT_REC_THREAD, payload, 10));
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	assert_non_null(strstr(err, "malformed"));
	tg_free(&g);
	/* A field cut in half. */
	tg_init(&g);
	tg_raw(&g, rec, frame(rec, CT_REC_THREAD, payload, 2));
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	tg_free(&g);
	/* An ops batch claiming more ops than it holds. */
	tg_init(&g);
	memset(payload, 0, sizeof(payload));
	ct_put_le32(payload + 4, 1000000);
	tg_raw(&g, rec, frame(rec, CT_REC_OPS, payload, 16 + 20));
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	tg_free(&g);
	/* Two ops followed by one weight byte of two: the weights cut short. */
	tg_init(&g);
	memset(payload, 0, sizeof(payload));
	ct_put_le32(payload + 4, 2);
	tg_raw(&g, rec, frame(rec, CT_REC_OPS, payload, 16 + 2 * 20 + 1));
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	tg_free(&g);
	/* A length above CT_MAX_PAYLOAD is corrupt, not a truncated file to wait for. */
	tg_init(&g);
	uint8_t hdr[12] = { 0 };
	ct_put_le16(hdr, CT_REC_END);
	ct_put_le32(hdr + 4, CT_MAX_PAYLOAD + 1);
	tg_raw(&g, hdr, sizeof(hdr));
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	assert_non_null(strstr(err, "byte 16"));
	tg_free(&g);
	/* Stats whose sparse histogram promises more entries than the payload holds. */
	tg_init(&g);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 1, 10, 16, 100, -1, 0);
	size_t len = ct_encode_stats(rec, sizeof(rec), s);
	assert_true(len > 0);
	uint32_t plen = ct_get_le32(rec + 4);
	/* the size-histogram count sits right after the 124 bytes of fixed fields */
	ct_put_le16(rec + 8 + 124, 5);
	ct_put_le32(rec + 8 + plen, ct_crc32c(0, rec, 8 + plen));
	tg_raw(&g, rec, len);
	assert_int_equal(read_all(g.buf, g.len, &n, err, sizeof(err)), CT_READ_CORRUPT);
	free(s);
	tg_free(&g);
}

static void test_newest_snapshot_in_truncated_file(void **state)
{
	(void)state;
	/* A later STATS replaces an earlier one; cutting inside the later keeps the earlier. */
	struct tg g;
	tg_init(&g);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 1, 10, 16, 100, -1, 0);
	tg_stats(&g, s);
	tg_fill_stats(s, 1, 20, 16, 100, -1, 0);
	tg_stats(&g, s);
	size_t n;
	assert_int_equal(read_all(g.buf, g.len - 1, &n, NULL, 0), CT_READ_TRUNCATED);
	assert_int_equal(n, 1);
	free(s);
	tg_free(&g);
}

static void test_buckets(void **state)
{
	(void)state;
	assert_int_equal(ct_size_bucket(0), 0);
	assert_int_equal(ct_size_bucket(1), 1);
	assert_int_equal(ct_size_bucket(15), 4);
	assert_int_equal(ct_size_bucket(16), 5);
	assert_int_equal(ct_size_bucket(8191), 13);
	assert_int_equal(ct_size_bucket(8192), 14);
	assert_int_equal(ct_size_bucket(UINT64_MAX), CT_SIZE_BUCKETS - 1);
	for (unsigned b = 1; b < CT_SIZE_BUCKETS; b++) {
		uint64_t low = ct_size_bucket_low(b);
		assert_int_equal(ct_size_bucket(low), b);
		assert_int_equal(ct_size_bucket(low - 1), b - 1);
	}
	assert_int_equal(ct_size_bucket_low(0), 0);
	assert_int_equal(ct_size_bucket_low(5), 16);
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++) {
		uint64_t low = ct_lat_bucket_low(b);
		assert_int_equal(ct_lat_bucket(low), b);
		if (b)
			assert_int_equal(ct_lat_bucket(low - 1), b - 1);
		if (b + 1 < CT_LAT_BUCKETS)
			assert_true(ct_lat_bucket_low(b + 1) > low);
	}
	assert_int_equal(ct_lat_bucket(UINT64_MAX), CT_LAT_BUCKETS - 1);
	assert_int_equal(ct_lat_bucket(1000), ct_lat_bucket(1023));
	assert_int_not_equal(ct_lat_bucket(1023), ct_lat_bucket(1024));
	assert_int_equal(ct_crc32c(0, "123456789", 9), 0xe3069283);
	/* Chaining equals one pass. */
	assert_int_equal(ct_crc32c(ct_crc32c(0, "1234", 4), "56789", 5), 0xe3069283);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ct_api_name(CT_API_EVP), "evp");
	assert_string_equal(ct_api_name(CT_API_AES), "aes");
	assert_string_equal(ct_api_name(CT_API_CRYPTODEV), "cryptodev");
	assert_string_equal(ct_api_name(CT_API_AFALG), "afalg");
	assert_string_equal(ct_api_name(CT_API_GCRYPT), "gcrypt");
	assert_string_equal(ct_api_name(CT_API_GNUTLS), "gnutls");
	assert_string_equal(ct_api_name(CT_API_TLS), "tls");
	assert_string_equal(ct_api_name(CT_API_KTLS), "ktls");
	assert_string_equal(ct_api_name(99), "unknown");
	assert_string_equal(ct_dir_name(CT_DIR_DECRYPT), "decrypt");
	assert_string_equal(ct_route_name(CT_ROUTE_NONE), "");
	assert_string_equal(ct_route_name(CT_ROUTE_AESNI), "aesni");
	assert_string_equal(ct_event_kind_name(CT_EV_CALL_FAILED), "call-failed");
	assert_string_equal(ct_event_kind_name(CT_EV_CIPHER_FETCH), "cipher-fetch");
	assert_string_equal(ct_event_kind_name(0), "unknown");
	assert_string_equal(ct_entry_name(CT_ENTRY_EVP_CIPHER), "EVP_Cipher");
	assert_string_equal(ct_entry_name(CT_ENTRY_EVP_AEAD), "EVP_AEAD seal/open");
	struct ct_str s = ct_str_from(NULL);
	assert_int_equal(s.len, 0);
	assert_non_null(s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_type),
		cmocka_unit_test(test_encoder_bounds),
		cmocka_unit_test(test_truncation_every_offset),
		cmocka_unit_test(test_bit_flips_never_crash),
		cmocka_unit_test(test_foreign_and_version),
		cmocka_unit_test(test_forward_compatibility),
		cmocka_unit_test(test_errno_abi),
		cmocka_unit_test(test_module_flags),
		cmocka_unit_test(test_profile_stacks),
		cmocka_unit_test(test_profile_time),
		cmocka_unit_test(test_malformed_payloads),
		cmocka_unit_test(test_newest_snapshot_in_truncated_file),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
