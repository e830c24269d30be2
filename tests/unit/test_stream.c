/* SPDX-License-Identifier: MIT */
/*
 * test_stream.c - the streaming reader (common/trace_stream.c) against the whole-buffer reader:
 * the same records at the same offsets, the same final status and message, over a buffer and over
 * a file, for a trace cut at every offset and with every bit flipped; OPS batches skipped unread
 * still give their counts and time range, and read back whole give the same ops; a trace many
 * times the window's size reads through with the window's memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace_format.h"
#include "trace_stream.h"
#include "tracegen.h"

/* One record of a type no reader knows (a newer writer's), CRC right: both readers pass over it. */
static void unknown_record(struct tg *g)
{
	uint8_t r[8 + 5 + 4] = { 0 };
	ct_put_le16(r, 99);
	ct_put_le32(r + 4, 5);
	memcpy(r + 8, "later", 5);
	ct_put_le32(r + 13, ct_crc32c(0, r, 13));
	tg_raw(g, r, sizeof(r));
	if (g->nrecords < sizeof(g->ends) / sizeof(g->ends[0]))
		g->ends[g->nrecords] = g->len;
	g->nrecords++;
}

/* A per-call trace: header, path, thread, OPS batches (one empty), an unknown record, stats,
 * event, proc, end. */
static void build_trace(struct tg *g, uint32_t batches, uint32_t ops_per_batch)
{
	tg_init(g);
	struct ct_header h = tg_default_header(77, "prog\0", 5);
	h.flags = CT_HDR_PER_CALL;
	tg_header(g, &h);
	struct ct_path_def p = { .path_id = 1,
				 .api = CT_API_EVP,
				 .dir = CT_DIR_ENCRYPT,
				 .key_bits = 128,
				 .impl = ct_str_from("provider:default"),
				 .cipher = ct_str_from("aes-128-ctr") };
	tg_path(g, &p);
	struct ct_thread_info t = { .tid = 78, .name = ct_str_from("worker") };
	tg_thread(g, &t);
	struct ct_op *ops = calloc(ops_per_batch ? ops_per_batch : 1, sizeof(*ops));
	for (uint32_t b = 0; b < batches; b++) {
		uint32_t n = b == 1 ? 0 : ops_per_batch;
		for (uint32_t i = 0; i < n; i++)
			ops[i] = (struct ct_op){ .start_mono_ns = 1000000ull * b + 100ull * i,
						 .dur_ns = 50,
						 .path_id = 1,
						 .bytes = 64 + i };
		struct ct_ops_batch ob = { .tid = 78, .count = n, .dropped = b };
		tg_ops(g, &ob, ops, n);
		if (b == 0)
			unknown_record(g);
	}
	free(ops);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 1, 1000, 64, 40, 1, 0);
	tg_stats(g, s);
	free(s);
	struct ct_event e = { .event_id = 1,
			      .call = ct_str_from("ENGINE_by_id"),
			      .detail = ct_str_from("afalg") };
	tg_event(g, &e);
	struct ct_proc pr = { .mono_ns = 5, .libcrypto = ct_str_from("OpenSSL 3.0") };
	tg_proc(g, &pr);
	struct ct_end end = { .mono_ns = 6 };
	tg_end(g, &end);
}

/* What a reader saw: each record's type and offset (and an OPS record's count), its final status
 * and message. */
struct seen {
	uint64_t key[64];
	size_t n;
	enum ct_read_status st;
	char error[160];
};

static void note(struct seen *x, const struct ct_record *rec)
{
	uint64_t k = rec->offset << 16 | rec->type;
	if (rec->type == CT_REC_OPS)
		k ^= (uint64_t)rec->u.ops.count << 40 ^ (uint64_t)rec->u.ops.tid << 52;
	if (x->n < 64)
		x->key[x->n] = k;
	x->n++;
}

static void read_whole(const uint8_t *buf, size_t len, struct seen *x)
{
	struct ct_reader r;
	struct ct_record *rec = malloc(sizeof(*rec));
	memset(x, 0, sizeof(*x));
	x->st = ct_reader_init(&r, buf, len);
	if (x->st == CT_READ_OK)
		while ((x->st = ct_reader_next(&r, rec)) == CT_READ_OK)
			note(x, rec);
	snprintf(x->error, sizeof(x->error), "%s", x->st == CT_READ_EOF ? "" : r.error);
	free(rec);
}

static void read_stream(struct ct_stream *s, enum ct_read_status st, bool skip_ops, struct seen *x)
{
	struct ct_record *rec = malloc(sizeof(*rec));
	memset(x, 0, sizeof(*x));
	x->st = st;
	if (st == CT_READ_OK)
		while ((x->st = ct_stream_next(s, rec, skip_ops)) == CT_READ_OK)
			note(x, rec);
	snprintf(x->error, sizeof(x->error), "%s", x->st == CT_READ_EOF ? "" : s->r.error);
	ct_stream_close(s);
	free(rec);
}

static void read_mem(const uint8_t *buf, size_t len, bool skip_ops, struct seen *x)
{
	struct ct_stream s;
	enum ct_read_status st = ct_stream_open_mem(&s, buf, len);
	read_stream(&s, st, skip_ops, x);
}

static void read_fd(const uint8_t *buf, size_t len, bool skip_ops, struct seen *x)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fflush(f);
	struct ct_stream s;
	enum ct_read_status st = ct_stream_open_fd(&s, fileno(f), UINT64_MAX);
	read_stream(&s, st, skip_ops, x);
	fclose(f);
}

static void assert_same(const struct seen *a, const struct seen *b, const char *what, size_t where)
{
	if (a->st != b->st || a->n != b->n || strcmp(a->error, b->error) ||
	    memcmp(a->key, b->key, sizeof(a->key[0]) * (a->n < 64 ? a->n : 64)))
		fail_msg("%s at %zu: %d %zu records \"%s\" vs %d %zu records \"%s\"", what, where, a->st,
			 a->n, a->error, b->st, b->n, b->error);
}

static void test_cut_at_every_offset(void **state)
{
	(void)state;
	struct tg g;
	build_trace(&g, 4, 3);
	for (size_t cut = 0; cut <= g.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, g.buf, cut);
		struct seen whole, x;
		read_whole(copy, cut, &whole);
		read_mem(copy, cut, false, &x);
		assert_same(&whole, &x, "cut, buffer", cut);
		read_fd(copy, cut, false, &x);
		assert_same(&whole, &x, "cut, file", cut);
		/* a cut inside a batch is a cut whether its payload is read or not */
		read_fd(copy, cut, true, &x);
		assert_same(&whole, &x, "cut, file, ops skipped", cut);
		free(copy);
	}
	tg_free(&g);
}

/* Where byte `at` is, for a reader that skips OPS payloads: 0 checked as the whole reader checks
 * it, 1 unchecked (an OPS record's payload or CRC, except its op count, which must match the
 * payload's length for the record to be skipped at all), 2 an OPS record's header (its damage is
 * found, maybe at the next record: a damaged length can match a batch layout). */
static int skipped_part(const struct tg *g, size_t at)
{
	size_t start = CT_PREAMBLE_SIZE;
	for (size_t i = 0; i < g->nrecords; i++) {
		size_t end = g->ends[i];
		if (at >= start && at < end) {
			if (ct_get_le16(g->buf + start) != CT_REC_OPS ||
			    (at >= start + 12 && at < start + 16))
				return 0;
			return at < start + 8 ? 2 : 1;
		}
		start = end;
	}
	return 0;
}

static void test_bit_flips(void **state)
{
	(void)state;
	struct tg g;
	build_trace(&g, 3, 2);
	uint8_t *copy = malloc(g.len);
	size_t unchecked = 0;
	for (size_t bit = 0; bit < g.len * 8; bit++) {
		memcpy(copy, g.buf, g.len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		struct seen whole, x;
		read_whole(copy, g.len, &whole);
		read_fd(copy, g.len, false, &x);
		assert_same(&whole, &x, "flip, file", bit);
		read_mem(copy, g.len, false, &x);
		assert_same(&whole, &x, "flip, buffer", bit);
		read_fd(copy, g.len, true, &x);
		int part = skipped_part(&g, bit / 8);
		if (part == 0)
			assert_same(&whole, &x, "flip, file, ops skipped", bit);
		else if (part == 2 && x.st != CT_READ_CORRUPT)
			fail_msg("flip in an OPS header at bit %zu not caught: %d \"%s\"", bit, x.st,
				 x.error);
		unchecked += part == 1;
	}
	assert_true(unchecked > 0);
	free(copy);
	tg_free(&g);
}

/* A trace of 40 batches of 50,000 ops (~40 MB, 20 windows): skipped batches give their counts and
 * first and last start; read back, their ops are the ones written. */
static void test_large_trace_skip_and_load(void **state)
{
	(void)state;
	struct tg g;
	const uint32_t batches = 40, per = 50000;
	build_trace(&g, batches, per);
	FILE *f = tmpfile();
	assert_int_equal(fwrite(g.buf, 1, g.len, f), g.len);
	fflush(f);
	struct ct_stream s;
	assert_int_equal(ct_stream_open_fd(&s, fileno(f), UINT64_MAX), CT_READ_OK);
	struct ct_record *rec = malloc(2 * sizeof(*rec));
	uint32_t b = 0;
	uint64_t ops = 0;
	while (ct_stream_next(&s, rec, true) == CT_READ_OK) {
		if (rec->type != CT_REC_OPS)
			continue;
		uint32_t n = b == 1 ? 0 : per;
		assert_int_equal(rec->u.ops.count, n);
		assert_int_equal(rec->u.ops.dropped, b);
		assert_null(rec->u.ops.ops_data);
		if (n) {
			assert_int_equal(s.skipped_first_ns, 1000000ull * b);
			assert_int_equal(s.skipped_last_ns, 1000000ull * b + 100ull * (n - 1));
		}
		if (b % 7 == 0 && n) { /* some read back whole */
			assert_int_equal(ct_stream_load_skipped(&s, rec + 1), CT_READ_OK);
			for (uint32_t i = 0; i < n; i += 997) {
				struct ct_op op;
				ct_decode_op_at(&rec[1].u.ops, i, &op);
				assert_int_equal(op.start_mono_ns, 1000000ull * b + 100ull * i);
				assert_int_equal(op.bytes, 64 + i);
				assert_int_equal(op.weight, 1);
			}
		}
		ops += n;
		b++;
	}
	assert_int_equal(s.r.status, CT_READ_EOF);
	assert_int_equal(b, batches);
	assert_int_equal(ops, (uint64_t)(batches - 1) * per);
	assert_int_equal(s.good_end, g.len);
	ct_stream_close(&s);
	/* and read whole, CRC checked, the same way the buffer reader reads it */
	struct seen whole, x;
	read_whole(g.buf, g.len, &whole);
	read_fd(g.buf, g.len, false, &x);
	assert_same(&whole, &x, "large, file", 0);
	free(rec);
	fclose(f);
	tg_free(&g);
}

/* A limit short of the file's end reads as a file of that length (a damaged file's good part). */
static void test_limit(void **state)
{
	(void)state;
	struct tg g;
	build_trace(&g, 2, 2);
	FILE *f = tmpfile();
	assert_int_equal(fwrite(g.buf, 1, g.len, f), g.len);
	fflush(f);
	for (size_t i = 0; i < g.nrecords; i++) {
		struct ct_stream s;
		struct seen whole, x;
		read_whole(g.buf, g.ends[i], &whole);
		enum ct_read_status st = ct_stream_open_fd(&s, fileno(f), g.ends[i]);
		read_stream(&s, st, false, &x);
		assert_same(&whole, &x, "limit", g.ends[i]);
		assert_int_equal(x.st, CT_READ_EOF);
	}
	fclose(f);
	tg_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_at_every_offset),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_large_trace_skip_and_load),
		cmocka_unit_test(test_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
