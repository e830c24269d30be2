/* SPDX-License-Identifier: MIT */
/*
 * trace_format.c - encode, decode and validate cryptrace trace files (see trace_format.h and
 * docs/trace-format.md). No globals, no I/O, and the encoders never allocate: the preload calls
 * them from inside hooks. The decoders never read outside the buffer they were given.
 */
#include "trace_format.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ---- little-endian field helpers ----------------------------------------------------------- */

void ct_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void ct_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void ct_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint16_t ct_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

uint32_t ct_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t ct_get_le64(const uint8_t *p)
{
	return (uint64_t)ct_get_le32(p) | (uint64_t)ct_get_le32(p + 4) << 32;
}

/* ---- CRC32C (Castagnoli, reflected polynomial 0x82f63b78), table generated offline ---------- */

/* clang-format off */
static const uint32_t crc32c_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c,
	0x26a1e7e8, 0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b,
	0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c,
	0xf165b798, 0x030e349b, 0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
	0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54, 0x5d1d08bf, 0xaf768bbc,
	0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a,
	0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
	0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
	0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad,
	0x1642ae59, 0xe4292d5a, 0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a,
	0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595, 0x417b1dbc, 0xb3109ebf,
	0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
	0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c, 0xfe53516f,
	0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f,
	0x3ac7f2eb, 0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
	0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e,
	0x4767748a, 0xb50cf789, 0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859,
	0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46, 0x7198540d, 0x83f3d70e,
	0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
	0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
	0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c,
	0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4,
	0xe9141340, 0x1b7f9043, 0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
	0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3, 0x55326b08, 0xa759e80b,
	0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c,
	0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6, 0x502036a5,
	0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975,
	0x0e330a81, 0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d,
	0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905,
	0xd9f75af1, 0x2b9cd9f2, 0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
	0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530, 0x0417b1db, 0xf67c32d8,
	0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff,
	0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
	0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
	0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78,
	0x7fab5e8c, 0x8dc0dd8f, 0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee,
	0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1, 0x69e9f0d5, 0x9b8273d6,
	0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
	0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a, 0xc69f7b69,
	0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};
/* clang-format on */

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* SSE4.2's CRC32 instruction computes this CRC (Castagnoli, reflected) 8 bytes at a time: the
 * reporter checks every byte of a multi-GB per-call trace it reads, at ~10x the table's speed. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* little-endian: the byte order the CRC consumes */
		c = __builtin_ia32_crc32di(c, v);
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}

/* Asked of CPUID on first use, not through __builtin_cpu_supports: that links libgcc's
 * __cpu_indicator_init as a constructor into the preload, and its dozen CPUID instructions
 * (each a trap to the hypervisor in a VM) were most of what every process that loads the
 * library paid at start-up for a check only the reporter needs. */
static bool have_sse42(void)
{
	static int known; /* 0: not asked yet, 1: no, 2: yes */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (!k) {
		unsigned a, b, c, d;
		k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 2 : 1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
}
#endif

uint32_t ct_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
	if (len >= 64 && have_sse42())
		return ~crc32c_sse42(crc, p, len);
#endif
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- buckets and names --------------------------------------------------------------------- */

uint64_t ct_size_bucket_low(unsigned b)
{
	if (b == 0)
		return 0;
	if (b >= CT_SIZE_BUCKETS)
		b = CT_SIZE_BUCKETS - 1;
	return 1ull << (b - 1);
}

/*
 * Latency buckets: 0..3 ns one bucket each; above, 4 linear steps per power of two, so bucket
 * 4*(e-1) + s holds [(4+s) << (e-2), (5+s) << (e-2)) where e = floor(log2(ns)). That keeps the
 * relative error of a percentile under 25% over the whole range. The last bucket is open-ended.
 */
uint64_t ct_lat_bucket_low(unsigned b)
{
	if (b >= CT_LAT_BUCKETS)
		b = CT_LAT_BUCKETS - 1;
	if (b < 4)
		return b;
	unsigned e = b / 4 + 1, sub = b % 4;
	return (uint64_t)(4 + sub) << (e - 2);
}

const char *ct_api_name(unsigned api)
{
	static const char *const names[] = {
		[CT_API_EVP] = "evp",     [CT_API_AES] = "aes",       [CT_API_CRYPTODEV] = "cryptodev",
		[CT_API_AFALG] = "afalg", [CT_API_GCRYPT] = "gcrypt", [CT_API_GNUTLS] = "gnutls",
		[CT_API_TLS] = "tls",     [CT_API_KTLS] = "ktls",
	};
	return api < sizeof(names) / sizeof(names[0]) && names[api] ? names[api] : "unknown";
}

const char *ct_dir_name(unsigned dir)
{
	if (dir == CT_DIR_ENCRYPT)
		return "encrypt";
	if (dir == CT_DIR_DECRYPT)
		return "decrypt";
	return "unknown";
}

const char *ct_entry_name(unsigned entry)
{
	static const char *const names[] = {
		[CT_ENTRY_EVP_UPDATE] = "EVP_*Update",
		[CT_ENTRY_EVP_CIPHER] = "EVP_Cipher",
		[CT_ENTRY_AES_LOWLEVEL] = "AES_*",
		[CT_ENTRY_CRYPTODEV_IOCTL] = "ioctl(CIOCCRYPT)",
		[CT_ENTRY_AFALG_SENDMSG] = "sendmsg+read",
		[CT_ENTRY_AFALG_SPLICE] = "vmsplice+splice",
		[CT_ENTRY_AFALG_AIO] = "io_submit",
		[CT_ENTRY_EVP_MULTIBLOCK] = "EVP ctrl multi-block",
		[CT_ENTRY_EVP_AEAD] = "EVP_AEAD seal/open",
		[CT_ENTRY_GCRYPT] = "gcry_cipher_*",
		[CT_ENTRY_GNUTLS_CIPHER] = "gnutls_cipher_*",
		[CT_ENTRY_GNUTLS_AEAD] = "gnutls_aead_cipher_*",
		[CT_ENTRY_TLS_RECORD] = "gnutls_record_*",
		[CT_ENTRY_KTLS_SOCKET] = "kTLS socket I/O",
	};
	return entry < sizeof(names) / sizeof(names[0]) && names[entry] ? names[entry] : "unknown";
}

const char *ct_route_name(unsigned route)
{
	static const char *const names[] = {
		[CT_ROUTE_NONE] = "",       [CT_ROUTE_NATIVE] = "native",       [CT_ROUTE_AESNI] = "aesni",
		[CT_ROUTE_AFALG] = "afalg", [CT_ROUTE_CRYPTODEV] = "cryptodev",
	};
	return route < sizeof(names) / sizeof(names[0]) && names[route] ? names[route] : "unknown";
}

const char *ct_phase_name(unsigned phase)
{
	static const char *const names[CT_PHASES] = {
		[CT_PHASE_KEY] = "key",     [CT_PHASE_MSG] = "message", [CT_PHASE_AAD] = "aad",
		[CT_PHASE_FINAL] = "final", [CT_PHASE_TAG] = "tag",     [CT_PHASE_INIT] = "init",
	};
	return phase < CT_PHASES ? names[phase] : "unknown";
}

const char *ct_event_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[CT_EV_CALL_FAILED] = "call-failed",
		[CT_EV_ENGINE_REQUEST] = "engine-request",
		[CT_EV_PROVIDER_LOAD] = "provider-load",
		[CT_EV_SESSION] = "session",
		[CT_EV_FALLBACK] = "fallback",
		[CT_EV_ROUTE] = "route",
		[CT_EV_LIB_LOADED] = "lib-loaded",
		[CT_EV_CHILD] = "child",
		[CT_EV_TRACE_WARNING] = "trace-warning",
		[CT_EV_CIPHER_FETCH] = "cipher-fetch",
		[CT_EV_CONTEXT] = "context",
		[CT_EV_CTX_USAGE] = "ctx-usage",
	};
	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

struct ct_str ct_str_from(const char *s)
{
	return (struct ct_str){ .p = s ? s : "", .len = s ? (uint32_t)strlen(s) : 0 };
}

/* ---- encoding ------------------------------------------------------------------------------ */

/* A bounded writer into the caller's buffer: once something does not fit, everything after is
 * dropped and the record encoder returns 0. */
struct wbuf {
	uint8_t *buf;
	size_t cap, len;
	size_t rec_start;
	bool full;
};

static uint8_t *w_reserve(struct wbuf *w, size_t n)
{
	if (w->full || n > w->cap - w->len) {
		w->full = true;
		return NULL;
	}
	uint8_t *p = w->buf + w->len;
	w->len += n;
	return p;
}

static void w_u8(struct wbuf *w, uint8_t v)
{
	uint8_t *p = w_reserve(w, 1);
	if (p)
		*p = v;
}

static void w_u16(struct wbuf *w, uint16_t v)
{
	uint8_t *p = w_reserve(w, 2);
	if (p)
		ct_put_le16(p, v);
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	uint8_t *p = w_reserve(w, 4);
	if (p)
		ct_put_le32(p, v);
}

static void w_u64(struct wbuf *w, uint64_t v)
{
	uint8_t *p = w_reserve(w, 8);
	if (p)
		ct_put_le64(p, v);
}

static void w_str(struct wbuf *w, struct ct_str s)
{
	uint32_t len = s.p ? s.len : 0;
	w_u32(w, len);
	uint8_t *p = w_reserve(w, len);
	if (p && len)
		memcpy(p, s.p, len);
}

static struct wbuf w_begin(uint8_t *buf, size_t cap)
{
	struct wbuf w = { .buf = buf, .cap = buf ? cap : 0 };
	w_reserve(&w, CT_RECORD_HEADER_SIZE);
	return w;
}

/* Frames the payload written since w_begin: header, then the CRC over header and payload. */
static size_t w_end(struct wbuf *w, uint16_t type)
{
	if (w->full)
		return 0;
	size_t payload = w->len - CT_RECORD_HEADER_SIZE;
	if (payload > CT_MAX_PAYLOAD)
		return 0;
	ct_put_le16(w->buf, type);
	ct_put_le16(w->buf + 2, 0);
	ct_put_le32(w->buf + 4, (uint32_t)payload);
	uint32_t crc = ct_crc32c(0, w->buf, w->len);
	w_u32(w, crc);
	return w->full ? 0 : w->len;
}

size_t ct_encode_preamble(uint8_t *buf, size_t cap)
{
	if (!buf || cap < CT_PREAMBLE_SIZE)
		return 0;
	memcpy(buf, CT_MAGIC, 8);
	ct_put_le16(buf + 8, CT_FORMAT_VERSION);
	ct_put_le16(buf + 10, CT_PREAMBLE_SIZE);
	ct_put_le32(buf + 12, 0);
	return CT_PREAMBLE_SIZE;
}

size_t ct_encode_header(uint8_t *buf, size_t cap, const struct ct_header *h)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, h->pid);
	w_u32(&w, h->ppid);
	w_u64(&w, h->start_realtime_ns);
	w_u64(&w, h->start_mono_ns);
	w_u64(&w, h->tsc_hz);
	w_u32(&w, h->cpu_flags);
	w_u32(&w, h->flags);
	w_u32(&w, h->sample_period);
	w_u32(&w, h->sample_all_bytes);
	w_u32(&w, h->flush_interval_ms);
	w_u32(&w, h->aesni_cpb_milli);
	w_str(&w, h->exe);
	w_str(&w, h->argv);
	w_str(&w, h->cpu_model);
	w_str(&w, h->kernel);
	w_str(&w, h->hostname);
	w_str(&w, h->libcrypto);
	w_str(&w, h->ia32cap);
	w_str(&w, h->route_spec);
	w_str(&w, h->timing);
	w_u32(&w, h->argv_redacted);
	w_str(&w, h->errno_abi);
	w_u32(&w, h->max_ops_rate);
	w_u32(&w, h->ops_window_ms);
	return w_end(&w, CT_REC_HEADER);
}

size_t ct_encode_path(uint8_t *buf, size_t cap, const struct ct_path_def *p)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, p->path_id);
	w_u8(&w, p->api);
	w_u8(&w, p->dir);
	w_u16(&w, p->key_bits);
	w_u8(&w, p->entry);
	w_u8(&w, p->route);
	w_u32(&w, p->flags);
	w_str(&w, p->impl);
	w_str(&w, p->cipher);
	w_str(&w, p->requested);
	w_str(&w, p->callsite);
	w_str(&w, p->proto);
	return w_end(&w, CT_REC_PATH);
}

/* Cell i of a path's stats: a size bucket, then the phases (the preload's cell numbering). */
static struct ct_size_bucket *stats_cell(const struct ct_path_stats *s, unsigned i)
{
	return (struct ct_size_bucket *)(i < CT_SIZE_BUCKETS ? &s->size[i] : &s->phase[i - CT_SIZE_BUCKETS]);
}

static bool has_spans(const struct ct_size_bucket *sb)
{
	return sb->span_calls || sb->span_ns || sb->span_rejected;
}

static bool cell_used(const struct ct_size_bucket *sb)
{
	return sb->calls || sb->bytes || sb->timed_calls || has_spans(sb);
}

static void w_spans(struct wbuf *w, const struct ct_size_bucket *sb)
{
	w_u64(w, sb->span_calls);
	w_u64(w, sb->span_ns);
	w_u64(w, sb->span_rejected);
}

/* Histograms are written sparse, as (index, values) pairs for the non-empty buckets only: a
 * typical path touches a handful of buckets, and an index survives a later change of bucket count. */
size_t ct_encode_stats(uint8_t *buf, size_t cap, const struct ct_path_stats *s)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, s->path_id);
	w_u64(&w, s->calls);
	w_u64(&w, s->bytes);
	w_u64(&w, s->errors);
	w_u64(&w, s->timed_calls);
	w_u64(&w, s->timed_ns);
	w_u64(&w, s->cpu_samples);
	w_u64(&w, s->cpu_sample_wall_ns);
	w_u64(&w, s->cpu_sample_user_ns);
	w_u64(&w, s->cpu_sample_sys_ns);
	w_u64(&w, s->syscalls);
	w_u64(&w, s->setup_calls);
	w_u64(&w, s->setup_ns);
	w_u64(&w, s->teardown_calls);
	w_u64(&w, s->teardown_ns);
	w_u64(&w, s->spliced_calls);

	uint16_t n = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		n += s->size[b].calls || s->size[b].bytes || s->size[b].timed_calls;
	w_u16(&w, n);
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		const struct ct_size_bucket *sb = &s->size[b];
		if (!(sb->calls || sb->bytes || sb->timed_calls))
			continue;
		w_u8(&w, (uint8_t)b);
		w_u64(&w, sb->calls);
		w_u64(&w, sb->bytes);
		w_u64(&w, sb->timed_calls);
		w_u64(&w, sb->timed_ns);
	}
	n = 0;
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++)
		n += s->lat[b] != 0;
	w_u16(&w, n);
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++) {
		if (!s->lat[b])
			continue;
		w_u8(&w, (uint8_t)b);
		w_u64(&w, s->lat[b]);
	}
	/* Added after the first release (a reader that stops at the latency histogram still reads
	 * the rest of the record right): the spans of the size buckets, then the phases. */
	n = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		n += has_spans(&s->size[b]);
	w_u16(&w, n);
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		if (!has_spans(&s->size[b]))
			continue;
		w_u8(&w, (uint8_t)b);
		w_spans(&w, &s->size[b]);
	}
	n = 0;
	for (unsigned p = 0; p < CT_PHASES; p++)
		n += cell_used(&s->phase[p]);
	w_u16(&w, n);
	for (unsigned p = 0; p < CT_PHASES; p++) {
		const struct ct_size_bucket *ph = &s->phase[p];
		if (!cell_used(ph))
			continue;
		w_u8(&w, (uint8_t)p);
		w_u64(&w, ph->calls);
		w_u64(&w, ph->bytes);
		w_u64(&w, ph->timed_calls);
		w_u64(&w, ph->timed_ns);
		w_spans(&w, ph);
	}
	w_u64(&w, s->tls_records);
	/* Added later still: the rejected spans' time per cell (size buckets 0.., then phases) */
	n = 0;
	for (unsigned i = 0; i < CT_CELLS; i++)
		n += stats_cell(s, i)->span_rejected_ns != 0;
	w_u16(&w, n);
	for (unsigned i = 0; i < CT_CELLS; i++) {
		if (!stats_cell(s, i)->span_rejected_ns)
			continue;
		w_u8(&w, (uint8_t)i);
		w_u64(&w, stats_cell(s, i)->span_rejected_ns);
	}
	return w_end(&w, CT_REC_STATS);
}

size_t ct_encode_event(uint8_t *buf, size_t cap, const struct ct_event *e)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, e->event_id);
	w_u16(&w, e->kind);
	w_u32(&w, (uint32_t)e->err);
	w_u64(&w, (uint64_t)e->ret);
	w_u32(&w, e->path_id);
	w_u32(&w, e->tid);
	w_u64(&w, e->first_mono_ns);
	w_u64(&w, e->last_mono_ns);
	w_u64(&w, e->count);
	w_str(&w, e->call);
	w_str(&w, e->detail);
	w_str(&w, e->callsite);
	return w_end(&w, CT_REC_EVENT);
}

/* log2 of an op's weight (a power of two; 0 reads as 1, as in ops built before weights) */
static uint8_t op_weight_log2(const struct ct_op *op)
{
	return op->weight > 1 ? (uint8_t)(31 - __builtin_clz(op->weight)) : 0;
}

size_t ct_encode_ops(uint8_t *buf, size_t cap, const struct ct_ops_batch *b, const struct ct_op *ops,
		     uint32_t n)
{
	/* the weights follow the ops only when one differs from 1: an uncapped timeline costs what
	 * it did, and the first 16 + 20 x n bytes never move (readers pread an op by its offset) */
	bool weighted = false;
	for (uint32_t i = 0; i < n && !weighted; i++)
		weighted = op_weight_log2(&ops[i]) != 0;
	if ((uint64_t)n * (CT_OP_WIRE_SIZE + weighted) + 16 > CT_MAX_PAYLOAD)
		return 0;
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, b->tid);
	w_u32(&w, n);
	w_u64(&w, b->dropped);
	for (uint32_t i = 0; i < n; i++) {
		w_u64(&w, ops[i].start_mono_ns);
		w_u32(&w, ops[i].dur_ns);
		w_u32(&w, ops[i].path_id);
		w_u32(&w, ops[i].bytes);
	}
	for (uint32_t i = 0; weighted && i < n; i++)
		w_u8(&w, op_weight_log2(&ops[i]));
	return w_end(&w, CT_REC_OPS);
}

size_t ct_encode_thread(uint8_t *buf, size_t cap, const struct ct_thread_info *t)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, t->tid);
	w_str(&w, t->name);
	return w_end(&w, CT_REC_THREAD);
}

size_t ct_encode_module(uint8_t *buf, size_t cap, const struct ct_module *m)
{
	struct wbuf w = w_begin(buf, cap);
	w_str(&w, m->name);
	w_str(&w, m->path);
	w_str(&w, m->build_id);
	w_u32(&w, m->flags);
	return w_end(&w, CT_REC_MODULE);
}

size_t ct_encode_profile(uint8_t *buf, size_t cap, const struct ct_profile *p, const uint64_t *offsets,
			 const uint32_t *samples, uint32_t n)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, p->period_us);
	w_u64(&w, p->samples);
	w_u64(&w, p->lost);
	w_u64(&w, p->unmapped);
	w_str(&w, p->module);
	w_str(&w, p->build_id);
	w_u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		w_u64(&w, offsets[i]);
		w_u32(&w, samples[i]);
	}
	return w_end(&w, CT_REC_PROFILE);
}

void ct_profile_entry_at(const struct ct_profile *p, uint32_t i, uint64_t *offset, uint32_t *samples)
{
	const uint8_t *e = p->entries + (size_t)i * CT_PROFILE_ENTRY_WIRE;
	*offset = ct_get_le64(e);
	*samples = ct_get_le32(e + 8);
}

size_t ct_encode_profile_stacks(uint8_t *buf, size_t cap, const struct ct_profile_stacks *s,
				const uint32_t *samples, const uint16_t *depths, const uint32_t *modules,
				const uint64_t *offsets, uint32_t n)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, s->flags);
	w_u64(&w, s->dropped);
	w_str(&w, s->note);
	w_u32(&w, n);
	size_t f = 0;
	for (uint32_t i = 0; i < n; i++) {
		w_u32(&w, samples[i]);
		w_u16(&w, depths[i]);
		for (uint16_t k = 0; k < depths[i]; k++, f++) {
			w_u32(&w, modules[f]);
			w_u64(&w, offsets[f]);
		}
	}
	return w_end(&w, CT_REC_PROFILE_STACKS);
}

bool ct_profile_stack_next(const struct ct_profile_stacks *s, size_t *at, struct ct_stack *out)
{
	/* the decoder checked that count stacks fit in stacks_len */
	if (*at + 6 > s->stacks_len)
		return false;
	const uint8_t *p = s->stacks + *at;
	out->samples = ct_get_le32(p);
	out->depth = ct_get_le16(p + 4);
	if ((size_t)out->depth * CT_STACK_FRAME_WIRE > s->stacks_len - *at - 6)
		return false;
	out->frames = p + 6;
	*at += 6 + (size_t)out->depth * CT_STACK_FRAME_WIRE;
	return true;
}

void ct_stack_frame_at(const struct ct_stack *st, uint16_t i, uint32_t *module, uint64_t *offset)
{
	const uint8_t *f = st->frames + (size_t)i * CT_STACK_FRAME_WIRE;
	*module = ct_get_le32(f);
	*offset = ct_get_le64(f + 4);
}

size_t ct_encode_profile_time(uint8_t *buf, size_t cap, const struct ct_profile_time *t, const uint32_t *bins,
			      const uint64_t *offsets, const uint32_t *samples, uint32_t n)
{
	struct wbuf w = w_begin(buf, cap);
	w_u32(&w, t->bin_us);
	w_u64(&w, t->start_mono_ns);
	w_str(&w, t->module);
	w_u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		w_u32(&w, bins[i]);
		w_u64(&w, offsets[i]);
		w_u32(&w, samples[i]);
	}
	w_u64(&w, t->left_out);
	return w_end(&w, CT_REC_PROFILE_TIME);
}

void ct_profile_time_at(const struct ct_profile_time *t, uint32_t i, uint32_t *bin, uint64_t *offset,
			uint32_t *samples)
{
	const uint8_t *e = t->entries + (size_t)i * CT_PROFILE_TIME_ENTRY_WIRE;
	*bin = ct_get_le32(e);
	*offset = ct_get_le64(e + 4);
	*samples = ct_get_le32(e + 12);
}

size_t ct_encode_proc(uint8_t *buf, size_t cap, const struct ct_proc *p)
{
	struct wbuf w = w_begin(buf, cap);
	w_u64(&w, p->mono_ns);
	w_u64(&w, p->utime_ns);
	w_u64(&w, p->stime_ns);
	w_u64(&w, p->maxrss_kb);
	w_u32(&w, p->flags);
	w_u32(&w, p->threads_seen);
	w_u64(&w, p->dropped_ops);
	w_u64(&w, p->dropped_events);
	w_u64(&w, p->write_errors);
	w_u64(&w, p->hooked_calls);
	w_str(&w, p->crypto_libs);
	w_str(&w, p->libcrypto);
	w_u32(&w, p->aesni_cpb_milli);
	w_u64(&w, p->ops_sampled_out);
	w_u32(&w, p->ops_max_weight);
	w_u64(&w, p->attach_pause_ns);
	w_u32(&w, p->attach_threads);
	w_u32(&w, p->attach_slots);
	w_u64(&w, p->route_direct_calls);
	return w_end(&w, CT_REC_PROC);
}

size_t ct_encode_end(uint8_t *buf, size_t cap, const struct ct_end *e)
{
	struct wbuf w = w_begin(buf, cap);
	w_u64(&w, e->mono_ns);
	w_u32(&w, e->reason);
	w_u32(&w, (uint32_t)e->status);
	return w_end(&w, CT_REC_END);
}

/* ---- decoding ------------------------------------------------------------------------------ */

/* A payload cursor. A field that is entirely missing at the end reads as zero (an older writer);
 * a field cut in half, or a string longer than the payload, marks the payload malformed. */
struct rcur {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

static const uint8_t *r_take(struct rcur *c, size_t n)
{
	if (c->off == c->len)
		return NULL;
	if (n > c->len - c->off) {
		c->bad = true;
		c->off = c->len;
		return NULL;
	}
	const uint8_t *p = c->p + c->off;
	c->off += n;
	return p;
}

static uint8_t r_u8(struct rcur *c)
{
	const uint8_t *p = r_take(c, 1);
	return p ? *p : 0;
}

static uint16_t r_u16(struct rcur *c)
{
	const uint8_t *p = r_take(c, 2);
	return p ? ct_get_le16(p) : 0;
}

static uint32_t r_u32(struct rcur *c)
{
	const uint8_t *p = r_take(c, 4);
	return p ? ct_get_le32(p) : 0;
}

static uint64_t r_u64(struct rcur *c)
{
	const uint8_t *p = r_take(c, 8);
	return p ? ct_get_le64(p) : 0;
}

static struct ct_str r_str(struct rcur *c)
{
	struct ct_str s = { .p = "", .len = 0 };
	bool present = c->off < c->len;
	uint32_t len = r_u32(c);
	if (!present || c->bad || len == 0)
		return s;
	if (len > c->len - c->off) {
		c->bad = true;
		c->off = c->len;
		return s;
	}
	s.p = (const char *)c->p + c->off;
	s.len = len;
	c->off += len;
	return s;
}

static void dec_header(struct rcur *c, struct ct_header *h)
{
	h->pid = r_u32(c);
	h->ppid = r_u32(c);
	h->start_realtime_ns = r_u64(c);
	h->start_mono_ns = r_u64(c);
	h->tsc_hz = r_u64(c);
	h->cpu_flags = r_u32(c);
	h->flags = r_u32(c);
	h->sample_period = r_u32(c);
	h->sample_all_bytes = r_u32(c);
	h->flush_interval_ms = r_u32(c);
	h->aesni_cpb_milli = r_u32(c);
	h->exe = r_str(c);
	h->argv = r_str(c);
	h->cpu_model = r_str(c);
	h->kernel = r_str(c);
	h->hostname = r_str(c);
	h->libcrypto = r_str(c);
	h->ia32cap = r_str(c);
	h->route_spec = r_str(c);
	h->timing = r_str(c);
	h->argv_redacted = r_u32(c);
	h->errno_abi = r_str(c);
	h->max_ops_rate = r_u32(c); /* added at the end: 0 (no cap) from older writers */
	h->ops_window_ms = r_u32(c);
}

static void dec_path(struct rcur *c, struct ct_path_def *p)
{
	p->path_id = r_u32(c);
	p->api = r_u8(c);
	p->dir = r_u8(c);
	p->key_bits = r_u16(c);
	p->entry = r_u8(c);
	p->route = r_u8(c);
	p->flags = r_u32(c);
	p->impl = r_str(c);
	p->cipher = r_str(c);
	p->requested = r_str(c);
	p->callsite = r_str(c);
	p->proto = r_str(c);
}

static void r_spans(struct rcur *c, struct ct_size_bucket *sb)
{
	sb->span_calls += r_u64(c);
	sb->span_ns += r_u64(c);
	sb->span_rejected += r_u64(c);
}

static void dec_stats(struct rcur *c, struct ct_path_stats *s)
{
	s->path_id = r_u32(c);
	s->calls = r_u64(c);
	s->bytes = r_u64(c);
	s->errors = r_u64(c);
	s->timed_calls = r_u64(c);
	s->timed_ns = r_u64(c);
	s->cpu_samples = r_u64(c);
	s->cpu_sample_wall_ns = r_u64(c);
	s->cpu_sample_user_ns = r_u64(c);
	s->cpu_sample_sys_ns = r_u64(c);
	s->syscalls = r_u64(c);
	s->setup_calls = r_u64(c);
	s->setup_ns = r_u64(c);
	s->teardown_calls = r_u64(c);
	s->teardown_ns = r_u64(c);
	s->spliced_calls = r_u64(c);
	/* Sparse histograms; an index beyond what this reader knows folds into the last bucket,
	 * so the bucket sums still match the totals. */
	unsigned n = r_u16(c);
	for (unsigned i = 0; i < n && !c->bad; i++) {
		unsigned b = r_u8(c);
		if (b >= CT_SIZE_BUCKETS)
			b = CT_SIZE_BUCKETS - 1;
		s->size[b].calls += r_u64(c);
		s->size[b].bytes += r_u64(c);
		s->size[b].timed_calls += r_u64(c);
		s->size[b].timed_ns += r_u64(c);
		if (c->off == c->len && i + 1 < n)
			c->bad = true; /* the count promised more entries than the payload holds */
	}
	n = r_u16(c);
	for (unsigned i = 0; i < n && !c->bad; i++) {
		unsigned b = r_u8(c);
		if (b >= CT_LAT_BUCKETS)
			b = CT_LAT_BUCKETS - 1;
		s->lat[b] += r_u64(c);
		if (c->off == c->len && i + 1 < n)
			c->bad = true;
	}
	/* spans and phases: absent from the first release's records (read as none) */
	n = r_u16(c);
	for (unsigned i = 0; i < n && !c->bad; i++) {
		unsigned b = r_u8(c);
		if (b >= CT_SIZE_BUCKETS)
			b = CT_SIZE_BUCKETS - 1;
		r_spans(c, &s->size[b]);
		if (c->off == c->len && i + 1 < n)
			c->bad = true;
	}
	n = r_u16(c);
	for (unsigned i = 0; i < n && !c->bad; i++) {
		unsigned p = r_u8(c);
		struct ct_size_bucket ignored = { 0 };
		/* a phase this reader does not know is read and left out, never counted as another */
		struct ct_size_bucket *ph = p < CT_PHASES ? &s->phase[p] : &ignored;
		ph->calls += r_u64(c);
		ph->bytes += r_u64(c);
		ph->timed_calls += r_u64(c);
		ph->timed_ns += r_u64(c);
		r_spans(c, ph);
		if (c->off == c->len && i + 1 < n)
			c->bad = true;
	}
	s->tls_records = r_u64(c);
	/* the rejected spans' time: absent from older records (read as none) */
	n = r_u16(c);
	for (unsigned i = 0; i < n && !c->bad; i++) {
		unsigned cell = r_u8(c);
		uint64_t ns = r_u64(c);
		if (cell < CT_CELLS)
			stats_cell(s, cell)->span_rejected_ns += ns;
		if (c->off == c->len && i + 1 < n)
			c->bad = true;
	}
}

static void dec_event(struct rcur *c, struct ct_event *e)
{
	e->event_id = r_u32(c);
	e->kind = r_u16(c);
	e->err = (int32_t)r_u32(c);
	e->ret = (int64_t)r_u64(c);
	e->path_id = r_u32(c);
	e->tid = r_u32(c);
	e->first_mono_ns = r_u64(c);
	e->last_mono_ns = r_u64(c);
	e->count = r_u64(c);
	e->call = r_str(c);
	e->detail = r_str(c);
	e->callsite = r_str(c);
}

static void dec_ops(struct rcur *c, struct ct_ops_batch *b)
{
	b->tid = r_u32(c);
	b->count = r_u32(c);
	b->dropped = r_u64(c);
	b->ops_data = c->p + c->off;
	if ((uint64_t)b->count * CT_OP_WIRE_SIZE > c->len - c->off) {
		c->bad = true;
		b->count = 0;
		return;
	}
	c->off += (size_t)b->count * CT_OP_WIRE_SIZE;
	/* the weights (added at the end): absent, or one byte per op; a part of them is malformed */
	b->weights_log2 = NULL;
	if (c->off < c->len && b->count) {
		if (b->count > c->len - c->off) {
			c->bad = true;
			b->count = 0;
			return;
		}
		b->weights_log2 = c->p + c->off;
		c->off += b->count;
	}
}

static void dec_thread(struct rcur *c, struct ct_thread_info *t)
{
	t->tid = r_u32(c);
	t->name = r_str(c);
}

static void dec_module(struct rcur *c, struct ct_module *m)
{
	m->name = r_str(c);
	m->path = r_str(c);
	m->build_id = r_str(c);
	m->flags = r_u32(c); /* added at the end: 0 from older writers */
}

static void dec_profile(struct rcur *c, struct ct_profile *p)
{
	p->period_us = r_u32(c);
	p->samples = r_u64(c);
	p->lost = r_u64(c);
	p->unmapped = r_u64(c);
	p->module = r_str(c);
	p->build_id = r_str(c);
	p->count = r_u32(c);
	p->entries = c->p + c->off;
	if ((uint64_t)p->count * CT_PROFILE_ENTRY_WIRE > c->len - c->off) {
		c->bad = true;
		p->count = 0;
		return;
	}
	c->off += (size_t)p->count * CT_PROFILE_ENTRY_WIRE;
}

static void dec_profile_stacks(struct rcur *c, struct ct_profile_stacks *s)
{
	s->flags = r_u32(c);
	s->dropped = r_u64(c);
	s->note = r_str(c);
	s->count = r_u32(c);
	s->stacks = c->p + c->off;
	size_t start = c->off;
	for (uint32_t i = 0; i < s->count && !c->bad; i++) {
		r_u32(c);
		uint16_t depth = r_u16(c);
		if (c->bad || (size_t)depth * CT_STACK_FRAME_WIRE > c->len - c->off) {
			c->bad = true;
			break;
		}
		c->off += (size_t)depth * CT_STACK_FRAME_WIRE;
	}
	if (c->bad)
		s->count = 0;
	s->stacks_len = c->off - start;
}

static void dec_profile_time(struct rcur *c, struct ct_profile_time *t)
{
	t->bin_us = r_u32(c);
	t->start_mono_ns = r_u64(c);
	t->module = r_str(c);
	t->count = r_u32(c);
	t->entries = c->p + c->off;
	if ((uint64_t)t->count * CT_PROFILE_TIME_ENTRY_WIRE > c->len - c->off) {
		c->bad = true;
		t->count = 0;
		return;
	}
	c->off += (size_t)t->count * CT_PROFILE_TIME_ENTRY_WIRE;
	t->left_out = r_u64(c);
}

static void dec_proc(struct rcur *c, struct ct_proc *p)
{
	p->mono_ns = r_u64(c);
	p->utime_ns = r_u64(c);
	p->stime_ns = r_u64(c);
	p->maxrss_kb = r_u64(c);
	p->flags = r_u32(c);
	p->threads_seen = r_u32(c);
	p->dropped_ops = r_u64(c);
	p->dropped_events = r_u64(c);
	p->write_errors = r_u64(c);
	p->hooked_calls = r_u64(c);
	p->crypto_libs = r_str(c);
	p->libcrypto = r_str(c);
	p->aesni_cpb_milli = r_u32(c); /* added at the end: 0 from older writers */
	p->ops_sampled_out = r_u64(c); /* added later still */
	p->ops_max_weight = r_u32(c);
	p->attach_pause_ns = r_u64(c); /* `cryptrace attach`'s, added at the end */
	p->attach_threads = r_u32(c);
	p->attach_slots = r_u32(c);
	p->route_direct_calls = r_u64(c); /* the direct lane's, added at the end */
}

static void dec_end(struct rcur *c, struct ct_end *e)
{
	e->mono_ns = r_u64(c);
	e->reason = r_u32(c);
	e->status = (int32_t)r_u32(c);
}

void ct_decode_op_at(const struct ct_ops_batch *b, uint32_t i, struct ct_op *op)
{
	if (i >= b->count || !b->ops_data) {
		*op = (struct ct_op){ 0 };
		return;
	}
	const uint8_t *p = b->ops_data + (size_t)i * CT_OP_WIRE_SIZE;
	op->start_mono_ns = ct_get_le64(p);
	op->dur_ns = ct_get_le32(p + 8);
	op->path_id = ct_get_le32(p + 12);
	op->bytes = ct_get_le32(p + 16);
	uint8_t lg = b->weights_log2 ? b->weights_log2[i] : 0;
	op->weight = 1u << (lg > CT_OP_WEIGHT_LOG2_MAX ? CT_OP_WEIGHT_LOG2_MAX : lg);
}

static enum ct_read_status __attribute__((format(printf, 3, 4)))
r_fail(struct ct_reader *r, enum ct_read_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	r->status = st;
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return st;
}

enum ct_read_status ct_reader_init(struct ct_reader *r, const uint8_t *buf, size_t len)
{
	*r = (struct ct_reader){ .buf = buf, .len = buf ? len : 0, .status = CT_READ_OK };
	size_t have = r->len < 8 ? r->len : 8;
	if (r->len == 0)
		return r_fail(r, CT_READ_TRUNCATED,
			      "trace truncated at byte 0: the file is empty (the process wrote nothing)");
	if (memcmp(buf, CT_MAGIC, have) != 0)
		return r_fail(r, CT_READ_NOT_TRACE, "not a cryptrace trace file (bad magic)");
	if (r->len < CT_PREAMBLE_SIZE)
		return r_fail(r, CT_READ_TRUNCATED, "trace truncated at byte %zu inside the %d-byte preamble",
			      r->len, CT_PREAMBLE_SIZE);
	r->version = ct_get_le16(buf + 8);
	uint16_t pre = ct_get_le16(buf + 10);
	if (r->version == 0)
		return r_fail(r, CT_READ_CORRUPT, "corrupt trace: format version 0 at byte 8");
	if (r->version > CT_FORMAT_VERSION)
		return r_fail(
			r, CT_READ_VERSION,
			"trace format version %u is newer than this reader (version %d): upgrade cryptrace",
			r->version, CT_FORMAT_VERSION);
	if (pre < CT_PREAMBLE_SIZE)
		return r_fail(r, CT_READ_CORRUPT, "corrupt trace: preamble size %u at byte 10", pre);
	if (pre > r->len)
		return r_fail(r, CT_READ_TRUNCATED, "trace truncated at byte %zu inside the %u-byte preamble",
			      r->len, pre);
	r->off = pre;
	return CT_READ_OK;
}

/* Does a complete record with a valid CRC start at off? (used to tell a cut from a damaged length) */
static bool valid_record_at(const struct ct_reader *r, size_t off, size_t *budget)
{
	if (r->len - off < CT_RECORD_HEADER_SIZE + CT_RECORD_TRAILER_SIZE)
		return false;
	const uint8_t *h = r->buf + off;
	uint16_t type = ct_get_le16(h);
	uint32_t plen = ct_get_le32(h + 4);
	if (type == 0 || ct_get_le16(h + 2) != 0 || plen > CT_MAX_PAYLOAD)
		return false;
	if (plen > r->len - off - CT_RECORD_HEADER_SIZE - CT_RECORD_TRAILER_SIZE)
		return false;
	if (*budget < plen)
		return false;
	*budget -= plen;
	size_t body = CT_RECORD_HEADER_SIZE + plen;
	return ct_crc32c(0, h, body) == ct_get_le32(h + body);
}

/*
 * A record claims to run past the end of the file. That is a truncated file, unless the length
 * field itself was damaged: then the CRC matches with the length the file leaves, or a valid
 * record follows inside the claimed span (a cut file has nothing after its last partial record).
 */
static bool length_field_damaged(const struct ct_reader *r)
{
	size_t rest = r->len - r->off;
	const uint8_t *h = r->buf + r->off;
	if (rest >= CT_RECORD_HEADER_SIZE + CT_RECORD_TRAILER_SIZE) {
		size_t plen = rest - CT_RECORD_HEADER_SIZE - CT_RECORD_TRAILER_SIZE;
		uint8_t fixed[CT_RECORD_HEADER_SIZE];
		memcpy(fixed, h, 4);
		ct_put_le32(fixed + 4, (uint32_t)plen);
		uint32_t crc = ct_crc32c(0, fixed, sizeof(fixed));
		crc = ct_crc32c(crc, h + CT_RECORD_HEADER_SIZE, plen);
		if (crc == ct_get_le32(h + CT_RECORD_HEADER_SIZE + plen))
			return true;
	}
	size_t budget = 64u << 20; /* bound the work on hostile input */
	for (size_t off = r->off + 1; off + 12 <= r->len && budget; off++)
		if (valid_record_at(r, off, &budget))
			return true;
	return false;
}

/* One record; returns -1 after skipping a record of a type this reader does not know. */
static int read_one(struct ct_reader *r, struct ct_record *rec)
{
	if (r->status != CT_READ_OK)
		return r->status;
	size_t rest = r->len - r->off;
	if (rest == 0) {
		r->status = CT_READ_EOF;
		return CT_READ_EOF;
	}
	unsigned long long nrec = r->records + 1, at = r->base + r->off;
	const uint8_t *h = r->buf + r->off;
	if (rest < CT_RECORD_HEADER_SIZE)
		return r_fail(r, CT_READ_TRUNCATED,
			      "trace truncated at byte %llu (record %llu): everything before it was read", at,
			      nrec);
	uint16_t type = ct_get_le16(h);
	uint32_t plen = ct_get_le32(h + 4);
	if (type == 0 || ct_get_le16(h + 2) != 0 || plen > CT_MAX_PAYLOAD)
		return r_fail(r, CT_READ_CORRUPT,
			      "corrupt trace at byte %llu (record %llu): bad record header", at, nrec);
	if ((size_t)plen + CT_RECORD_HEADER_SIZE + CT_RECORD_TRAILER_SIZE > rest) {
		if (length_field_damaged(r))
			return r_fail(r, CT_READ_CORRUPT,
				      "corrupt trace at byte %llu (record %llu): bad record length", at,
				      nrec);
		return r_fail(r, CT_READ_TRUNCATED,
			      "trace truncated at byte %llu (record %llu): everything before it was read", at,
			      nrec);
	}
	size_t body = CT_RECORD_HEADER_SIZE + plen;
	if (ct_crc32c(0, h, body) != ct_get_le32(h + body))
		return r_fail(r, CT_READ_CORRUPT, "corrupt trace at byte %llu (record %llu): bad checksum",
			      at, nrec);

	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->offset = r->base + r->off;
	struct rcur c = { .p = h + CT_RECORD_HEADER_SIZE, .len = plen };
	switch (type) {
	case CT_REC_HEADER:
		dec_header(&c, &rec->u.header);
		break;
	case CT_REC_PATH:
		dec_path(&c, &rec->u.path);
		break;
	case CT_REC_STATS:
		dec_stats(&c, &rec->u.stats);
		break;
	case CT_REC_EVENT:
		dec_event(&c, &rec->u.event);
		break;
	case CT_REC_OPS:
		dec_ops(&c, &rec->u.ops);
		break;
	case CT_REC_THREAD:
		dec_thread(&c, &rec->u.thread);
		break;
	case CT_REC_PROC:
		dec_proc(&c, &rec->u.proc);
		break;
	case CT_REC_END:
		dec_end(&c, &rec->u.end);
		break;
	case CT_REC_MODULE:
		dec_module(&c, &rec->u.module);
		break;
	case CT_REC_PROFILE:
		dec_profile(&c, &rec->u.profile);
		break;
	case CT_REC_PROFILE_STACKS:
		dec_profile_stacks(&c, &rec->u.stacks);
		break;
	case CT_REC_PROFILE_TIME:
		dec_profile_time(&c, &rec->u.profile_time);
		break;
	default:
		/* A record type from a newer writer: the CRC was good, skip it. */
		r->off += body + CT_RECORD_TRAILER_SIZE;
		r->records++;
		return -1;
	}
	if (c.bad)
		return r_fail(r, CT_READ_CORRUPT,
			      "corrupt trace at byte %llu (record %llu): malformed payload", at, nrec);
	r->off += body + CT_RECORD_TRAILER_SIZE;
	r->records++;
	return CT_READ_OK;
}

enum ct_read_status ct_decode_one(struct ct_reader *r, const uint8_t *buf, size_t len, uint64_t at,
				  uint16_t version, struct ct_record *rec)
{
	*r = (struct ct_reader){
		.buf = buf, .len = len, .base = at, .version = version, .status = CT_READ_OK
	};
	return ct_reader_next_one(r, rec);
}

enum ct_read_status ct_reader_next_one(struct ct_reader *r, struct ct_record *rec)
{
	int st = read_one(r, rec);
	if (st < 0) { /* a record type from a newer writer: nothing to decode */
		memset(rec, 0, sizeof(*rec));
		return CT_READ_OK;
	}
	return (enum ct_read_status)st;
}

enum ct_read_status ct_reader_next(struct ct_reader *r, struct ct_record *rec)
{
	int st;
	while ((st = read_one(r, rec)) < 0)
		;
	return (enum ct_read_status)st;
}

long ct_trace_name_part(const char *name)
{
	/* by hand, not strtoul: the preload calls it and must leave errno alone */
	const char *dot = strstr(name, ".ctrace");
	long part = -1;
	while (dot) {
		const char *rest = dot + 7;
		if (*rest == 0 && dot > name) {
			part = 0;
		} else if (*rest == '.' && rest[1] >= '1' && rest[1] <= '9' && dot > name) {
			long n = 0;
			const char *d = rest + 1;
			for (; *d >= '0' && *d <= '9' && n < 1000000; d++)
				n = n * 10 + (*d - '0');
			if (*d == 0 && n < 1000000)
				part = n;
		}
		dot = strstr(dot + 1, ".ctrace");
	}
	return part;
}
