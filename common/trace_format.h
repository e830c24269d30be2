/* SPDX-License-Identifier: MIT */
/*
 * trace_format.h - the one trace-file format, shared by the preload (writer), the launcher and the
 * reporter (reader). Encode, decode and validate only: no hooks, no globals, no I/O, no malloc in
 * the encoder (the preload calls it from hooks). docs/trace-format.md is the prose version.
 *
 * File layout (all integers fixed-width little-endian):
 *
 *   preamble   16 bytes: magic "CRYTRACE", u16 version, u16 preamble size, u32 flags (0)
 *   record*    u16 type, u16 reserved (0), u32 payload length, payload, u32 crc32c
 *              (the CRC covers type, reserved, length and payload)
 *
 * A record's payload is a sequence of fields written with the ct_put_* helpers. Decoders read the
 * fields they know and ignore any bytes after them, and fields missing at the end of an older
 * payload read as zero / empty: that is how the format grows without a version bump.
 * Snapshots (CT_REC_STATS, CT_REC_EVENT, CT_REC_PROC) are cumulative: a later record with the
 * same id replaces an earlier one, so a file cut short still holds the newest complete snapshot.
 */
#ifndef CT_TRACE_FORMAT_H
#define CT_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_MAGIC "CRYTRACE"
#define CT_FORMAT_VERSION 1
#define CT_PREAMBLE_SIZE 16
#define CT_RECORD_HEADER_SIZE 8
#define CT_RECORD_TRAILER_SIZE 4
#define CT_MAX_PAYLOAD (1u << 20)

/* Request-size histogram: bucket b holds sizes in [2^(b-1), 2^b), bucket 0 holds size 0. */
#define CT_SIZE_BUCKETS 33
/* Latency histogram: log-linear, 4 sub-buckets per power of two of nanoseconds (see ct_lat_bucket). */
#define CT_LAT_BUCKETS 160

enum ct_record_type {
	CT_REC_HEADER = 1,   /* once, first record: who, where, how measured */
	CT_REC_PATH = 2,     /* a path definition: id -> api x impl x cipher x dir */
	CT_REC_STATS = 3,    /* cumulative counters of one path */
	CT_REC_EVENT = 4,    /* a failure, fallback, engine/provider selection, session setup... */
	CT_REC_OPS = 5,      /* per-call mode: a batch of individual operations of one thread */
	CT_REC_THREAD = 6,   /* a thread's id and name */
	CT_REC_PROC = 7,     /* cumulative process facts: rusage, loaded crypto libraries, drops */
	CT_REC_END = 8,      /* the process closed its trace cleanly (exit or exec) */
	CT_REC_MODULE = 9,   /* a module named in call sites: its file and build id, so that a
			    * reporter can name the functions the process could not */
	CT_REC_PROFILE = 10, /* sampled user-space CPU (the launcher's perf events, appended after the
			       * run): one module's samples by file offset, or the process's totals */
	/* the same samples' call stacks, frames as (PROFILE module, offset): older readers skip it */
	CT_REC_PROFILE_STACKS = 11,
	CT_REC_PROFILE_TIME = 12, /* the same samples of one module by time bin and file offset (the
				    * profile over time: Perfetto's CPU-profile tracks) */
};

enum ct_api {
	CT_API_UNKNOWN = 0,
	CT_API_EVP = 1,       /* OpenSSL EVP cipher API */
	CT_API_AES = 2,       /* OpenSSL low-level AES_* API */
	CT_API_CRYPTODEV = 3, /* /dev/crypto ioctls */
	CT_API_AFALG = 4,     /* AF_ALG sockets */
	CT_API_GCRYPT = 5,    /* libgcrypt's cipher API (gcry_cipher_*) */
	CT_API_GNUTLS = 6,    /* GnuTLS's cipher and AEAD API (gnutls_cipher_*, gnutls_aead_cipher_*) */
	CT_API_TLS = 7,       /* a TLS library's records (gnutls_record_*): the bytes the program sent and
			       * received through a session, cipher and protocol in the path */
	CT_API_KTLS = 8,      /* a socket whose TLS records the kernel encrypts (TCP_ULP "tls") */
};

enum ct_dir { CT_DIR_UNKNOWN = 0, CT_DIR_ENCRYPT = 1, CT_DIR_DECRYPT = 2 };

/* Which entry point the program used for the data operations of a path. */
enum ct_entry {
	CT_ENTRY_UNKNOWN = 0,
	CT_ENTRY_EVP_UPDATE = 1, /* EVP_{Encrypt,Decrypt,Cipher}Update / Final */
	CT_ENTRY_EVP_CIPHER = 2, /* EVP_Cipher: the raw one-shot call (openssl speed without -evp) */
	CT_ENTRY_AES_LOWLEVEL = 3,
	CT_ENTRY_CRYPTODEV_IOCTL = 4,
	CT_ENTRY_AFALG_SENDMSG = 5,  /* sendmsg/send/write + read/recv */
	CT_ENTRY_AFALG_SPLICE = 6,   /* vmsplice/splice */
	CT_ENTRY_AFALG_AIO = 7,      /* io_submit/io_getevents (OpenSSL's afalg engine, libkcapi) */
	CT_ENTRY_EVP_MULTIBLOCK = 8, /* EVP_CIPHER_CTX_ctrl(EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT): libssl
				      * encrypting several TLS 1.2 records in one call (stitched
				      * aes-cbc-hmac-sha ciphers, writes of 64 KiB or more) */
	CT_ENTRY_EVP_AEAD = 9,       /* BoringSSL's EVP_AEAD_CTX_seal/open (and _scatter/_gather): one
				      * call per message, nonce, AAD, data and tag together */
	CT_ENTRY_GCRYPT = 10,        /* gcry_cipher_encrypt/decrypt */
	CT_ENTRY_GNUTLS_CIPHER = 11, /* gnutls_cipher_encrypt / decrypt (and 2, 3) */
	CT_ENTRY_GNUTLS_AEAD = 12,   /* gnutls_aead_cipher_encrypt / decrypt (and v2):
				      * one call per message */
	CT_ENTRY_TLS_RECORD = 13,    /* gnutls_record_send / recv and their variants */
	CT_ENTRY_KTLS_SOCKET = 14,   /* send/sendmsg/sendfile/splice/write, recv/recvmsg/read on a kTLS
				      * socket */
	CT_ENTRIES
};

/*
 * The phases of a cipher operation other than its data calls. Their calls and time belong to the
 * path (the whole operation is its cost) but are shown apart from the data: AAD bytes are AAD,
 * not data, and a per-message AEAD cost is made of all of them.
 */
enum ct_phase {
	CT_PHASE_KEY = 0,   /* a key set on a context: EVP_*Init* with a key (a key schedule) */
	CT_PHASE_MSG = 1,   /* a message set up on a keyed context: an IV-only re-init, the IV ctrls
			     * (SET_IV_FIXED, IV_GEN, SET_IV_INV, SET_IVLEN), CCM's length-only update,
			     * the multi-block AAD ctrl */
	CT_PHASE_AAD = 2,   /* additional authenticated data: an update or EVP_Cipher with no output
			     * buffer, EVP_CTRL_AEAD_TLS1_AAD (bytes: the AAD's) */
	CT_PHASE_FINAL = 3, /* EVP_*Final*, EVP_Cipher with no input (a custom cipher's final) */
	CT_PHASE_TAG = 4,   /* the AEAD tag: EVP_CTRL_AEAD_GET_TAG / SET_TAG */
	CT_PHASE_INIT = 5,  /* a context set up for a cipher without a key yet (EVP_*Init* naming a
			     * cipher, key NULL): the fetch and the provider's context */
	CT_PHASES
};
/* A path's cells: its size buckets, then its phases (the STATS record's numbering of them). */
#define CT_CELLS (CT_SIZE_BUCKETS + CT_PHASES)

/* Where the preload's route sent the work (CT_ROUTE_NONE: untouched, as the program asked). */
enum ct_route_target {
	CT_ROUTE_NONE = 0,
	CT_ROUTE_NATIVE = 1,
	CT_ROUTE_AESNI = 2, /* the CPU's AES instructions (AES-NI, ARMv8 CE): target "cpu" */
	CT_ROUTE_AFALG = 3,
	CT_ROUTE_CRYPTODEV = 4,
};

/* CPU feature bits recorded in the header (filled from CPUID by common/cpu.c). */
enum ct_cpu_flag {
	CT_CPU_AES = 1u << 0,
	CT_CPU_PCLMULQDQ = 1u << 1,
	CT_CPU_AVX = 1u << 2,
	CT_CPU_AVX2 = 1u << 3,
	CT_CPU_VAES = 1u << 4,
	CT_CPU_VPCLMULQDQ = 1u << 5,
	CT_CPU_AVX512F = 1u << 6,
	CT_CPU_SHA = 1u << 7,
	CT_CPU_HYPERVISOR = 1u << 8,
	CT_CPU_GFNI = 1u << 9,
	CT_CPU_AVX512VL = 1u << 10, /* with AVX512F's OS state check */
	CT_CPU_AVX512BW = 1u << 11,
	CT_CPU_ARM_AES = 1u << 16,
	CT_CPU_ARM_PMULL = 1u << 17,
};

enum ct_event_kind {
	CT_EV_CALL_FAILED = 1,    /* a hooked call failed: call, errno, decoded params, call site */
	CT_EV_ENGINE_REQUEST = 2, /* ENGINE_by_id / ENGINE_init / ENGINE_set_default*: ret says ok */
	CT_EV_PROVIDER_LOAD = 3,  /* OSSL_PROVIDER_load / try_load: ret says ok */
	CT_EV_SESSION = 4,        /* a kernel session/socket set up (cryptodev CIOCGSESSION, AF_ALG bind),
				     * or a cryptodev public-key request (CIOCKEY, CIOCASYMFEAT) */
	CT_EV_FALLBACK = 5,       /* a route could not serve a request and fell back to native */
	CT_EV_ROUTE = 6,          /* a route was applied to a path */
	CT_EV_LIB_LOADED = 7,     /* libcrypto appeared (at start or by a later dlopen) */
	CT_EV_CHILD = 8,          /* fork/vfork/posix_spawn/exec of a child; detail says which */
	CT_EV_TRACE_WARNING = 9,  /* cryptrace's own trouble: write error, table full, bad config */
	CT_EV_CIPHER_FETCH = 10,  /* EVP_CIPHER_fetch: name, properties, provider that answered */
	CT_EV_CONTEXT = 11,       /* cipher contexts set up (an init naming a cipher), counted per
				     * call site: who creates a path's contexts, and how many */
	CT_EV_CTX_USAGE = 12,     /* a way a path's contexts are used, once per path and pattern:
				     * a TLS record-layer ctrl, a per-message IV re-init... */
};

/* CT_END_DETACH: `cryptrace attach` ended (the process goes on, untraced: docs/attach.md) */
enum ct_end_reason { CT_END_EXIT = 1, CT_END_EXEC = 2, CT_END_SIGNAL = 3, CT_END_DETACH = 4 };

/* CT_REC_HEADER flags */
#define CT_HDR_PER_CALL (1u << 0)         /* per-call (timeline) mode was on */
#define CT_HDR_ROUTES (1u << 1)           /* a route spec was active */
#define CT_HDR_SECURE_EXEC (1u << 2)      /* setuid/setgid process: tracing disabled, header only */
#define CT_HDR_ARGV_OMITTED (1u << 3)     /* argv holds argv[0] only (--no-argv, CRYPTRACE_ARGV=0) */
#define CT_HDR_TICKS_NOT_CYCLES (1u << 4) /* tsc_hz is a timer's rate, not the CPU clock's */
#define CT_HDR_ATTACHED (1u << 5)         /* `cryptrace attach` loaded the library into a running process */

/* CT_REC_PROC flags */
#define CT_PROC_INCOMPLETE (1u << 0) /* some records could not be written (disk full, EIO...) */
#define CT_PROC_HAS_LIBCRYPTO (1u << 1)
#define CT_PROC_FINAL (1u << 2) /* written at exit/exec: the last snapshot */
#define CT_PROC_PERIODIC                                                                                     \
	(1u << 3) /* a flusher thread writes a snapshot every flush interval in
				      * which something changed, idle or not */
#define CT_PROC_FSIZE_NEAR                                                                                   \
	(1u << 4)                    /* the program's RLIMIT_FSIZE is at or near the file's size:
				      * later snapshots may be refused (sshd's sandboxed child) */
#define CT_PROC_NO_FLUSHER (1u << 5) /* no flusher thread by choice (CRYPTRACE_FLUSHER=0) */

/* Path flags */
#define CT_PATH_ROUTED (1u << 0)     /* the route moved this work (impl names the route) */
#define CT_PATH_NESTED (1u << 1)     /* kernel path driven from inside an EVP call (engine) */
#define CT_PATH_HW_DRIVER (1u << 2)  /* kernel driver is hardware offload */
#define CT_PATH_CPU_DRIVER (1u << 3) /* kernel driver uses CPU instructions (aesni, ce...) */
#define CT_PATH_SW_DRIVER (1u << 4)  /* kernel driver is generic software */
/* The path's calls wait for a peer (TLS records, kTLS sockets): their wall time includes the
 * network and the other side, so it is not the cipher's cost; their CPU time is. */
#define CT_PATH_IO_WAIT (1u << 5)

/* A string inside a decoded record: points into the record buffer, not NUL-terminated. */
struct ct_str {
	const char *p;
	uint32_t len;
};

struct ct_header {
	uint32_t pid, ppid;
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at process start (constructor) */
	uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at the same moment: all *_mono_ns are on it */
	uint64_t tsc_hz;            /* tick counter rate (ticks.h); 0 when timing uses clock_gettime */
	uint32_t cpu_flags;         /* enum ct_cpu_flag */
	uint32_t flags;             /* CT_HDR_* */
	uint32_t sample_period;     /* time 1 in N calls below sample_all_bytes (1 = every call) */
	uint32_t sample_all_bytes;  /* calls of at least this many bytes are always timed */
	uint32_t flush_interval_ms;
	uint32_t aesni_cpb_milli; /* calibrated in-process AES-NI cycles/byte x1000 (0 = unknown) */
	struct ct_str exe, argv;  /* argv: arguments separated by NUL bytes */
	struct ct_str cpu_model, kernel, hostname;
	struct ct_str libcrypto;  /* OpenSSL_version(OPENSSL_VERSION) if loaded at start, else "" */
	struct ct_str ia32cap;    /* OPENSSL_ia32cap's value ("" if unset); OPENSSL_armcap's on ARM */
	struct ct_str route_spec; /* the CRYPTRACE_ROUTE in force, "" if none */
	struct ct_str timing;     /* human description of the timing method */
	uint32_t argv_redacted;   /* values in argv replaced by "<redacted>" (common/redact.h) */
	struct ct_str errno_abi;  /* the numbering of every errno in the trace: "generic", "mips"
				   * (errno_abi.h); "" in traces written before it: generic */
	/* per-call mode's cap on the timeline (docs/reports.md, "Per-call timeline"): at most
	 * max_ops_rate ops/s per process kept, counted in windows of ops_window_ms; 0: no cap (and
	 * in traces written before the cap) */
	uint32_t max_ops_rate;
	uint32_t ops_window_ms;
};
#define CT_MAX_OPS_RATE_LIMIT 1000000000u /* the largest cap accepted (ops/s); 0 is "no cap" */

struct ct_path_def {
	uint32_t path_id;
	uint8_t api; /* enum ct_api */
	uint8_t dir; /* enum ct_dir */
	uint16_t key_bits;
	uint8_t entry;  /* enum ct_entry */
	uint8_t route;  /* enum ct_route_target */
	uint32_t flags; /* CT_PATH_* */
	struct ct_str
		impl; /* "provider:default", "engine:afalg", "lowlevel", "kernel:cbc-aes-aesni", "route:aesni" */
	struct ct_str cipher;    /* OpenSSL lower-case name: "aes-128-cbc" (kernel paths map to it too) */
	struct ct_str requested; /* what the program asked for, when it differs: "engine:afalg", "cbc(aes)" */
	struct ct_str callsite; /* first context-init call site, "module!symbol+0xoff" frames joined by '\n' */
	struct ct_str proto;    /* the protocol the path's bytes travel in: "TLS1.3" (TLS and kTLS paths);
				 * empty for a bare cipher */
};

/*
 * One cell of a path's counters: the data calls of one request-size bucket, or one phase (enum
 * ct_phase). Calls and bytes are exact. Time is measured two ways (docs/report.md, "How time is
 * measured"): a *probe* times one call from its entry to the completion of its work (timed_*);
 * a *span* times a run of consecutive calls on the path, from the entry of the first to the entry
 * of the call after the last, and is accepted when nothing else ran between them (span_*) or
 * rejected when something did (span_rejected: those calls are priced at the probes' mean).
 */
struct ct_size_bucket {
	uint64_t calls, bytes;
	uint64_t timed_calls, timed_ns; /* probes: calls timed alone, and the sum of their times; the
					 * sum is of corrected times and may (rarely, for calls shorter
					 * than a clock tick) be negative: it is two's complement, and
					 * readers clamp a negative sum to 0 */
	uint64_t span_calls, span_ns;   /* calls inside accepted spans, and their share of the spans' time */
	uint64_t span_rejected;         /* calls inside spans rejected because other work ran between */
	uint64_t span_rejected_ns;      /* those spans' time, shared among their cells like span_ns */
};

struct ct_path_stats {
	uint32_t path_id;
	uint64_t calls, bytes, errors;
	uint64_t timed_calls, timed_ns; /* wall time of the measured calls */
	uint64_t cpu_samples;           /* calls whose thread CPU time was also measured */
	uint64_t cpu_sample_wall_ns, cpu_sample_user_ns, cpu_sample_sys_ns;
	uint64_t syscalls;              /* syscalls made to serve this path's operations */
	uint64_t setup_calls, setup_ns; /* kernel session/socket set-up, or context init */
	uint64_t teardown_calls, teardown_ns;
	uint64_t spliced_calls; /* AF_ALG: operations fed with splice instead of a copy */
	struct ct_size_bucket size[CT_SIZE_BUCKETS];
	uint64_t lat[CT_LAT_BUCKETS];           /* measured-call latency histogram (ct_lat_bucket) */
	struct ct_size_bucket phase[CT_PHASES]; /* the operation's other calls (enum ct_phase) */
	uint64_t tls_records;                   /* EVP_CTRL_AEAD_TLS1_AAD ctrls: each frames one TLS 1.0-1.2
					     * record (AEAD or CBC-HMAC) sealed or opened by EVP_Cipher */
};

struct ct_event {
	uint32_t event_id; /* unique in the process; a later record with the same id updates count */
	uint16_t kind;     /* enum ct_event_kind */
	int32_t err;       /* errno value (0: none) */
	int64_t ret;       /* the call's return value */
	uint32_t path_id;  /* related path, or CT_NO_PATH */
	uint32_t tid;
	uint64_t first_mono_ns, last_mono_ns;
	uint64_t count;         /* how many identical events (same kind, call, err, detail, call site) */
	struct ct_str call;     /* "socket", "ioctl(CIOCGSESSION)", "ENGINE_by_id" */
	struct ct_str detail;   /* decoded parameters: "cipher=AES_CBC keylen=32 mac=0" (never key bytes) */
	struct ct_str callsite; /* frames "module!symbol+0xoff" joined by '\n', innermost first */
};
#define CT_NO_PATH 0xffffffffu

struct ct_op {
	uint64_t start_mono_ns;
	uint32_t dur_ns;
	uint32_t path_id;
	uint32_t bytes;
	uint32_t weight; /* the operations this one stands for: 1, or K when it was kept 1 in K
			  * (per-call mode's rate cap, --max-ops-rate) */
};

/* A PROFILE record. The launcher samples the traced processes' user-space CPU (tracer/profile.c)
 * and appends these to each process's trace file when the run is over: first the totals (module
 * empty), then one per module with its samples by file offset. */
struct ct_profile {
	uint32_t period_us;     /* the sampling period (cpu-clock) */
	uint64_t samples;       /* this module's; totals: the process's (this file's part of it) */
	uint64_t lost;          /* totals: samples the kernel could not record (a full buffer) */
	uint64_t unmapped;      /* totals: samples in no file mapping (generated code, vdso) */
	struct ct_str module;   /* the file's path; "" for the totals */
	struct ct_str build_id; /* its GNU build id, hex ("": none) */
	uint32_t count;         /* (u64 file offset, u32 samples) pairs follow: ct_profile_entry_at */
	const uint8_t *entries;
};
#define CT_PROFILE_ENTRY_WIRE 12

/* A PROFILE_STACKS record: distinct call stacks of one process image's samples, after its PROFILE
 * records. A frame's module is the index of a PROFILE module record of the same image (counted
 * from 0 after the image's totals record); its offset is a file offset (the leaf's sampled
 * address; a caller's return address minus 1). */
struct ct_profile_stacks {
	uint32_t flags;     /* CT_STACKS_* */
	uint64_t dropped;   /* samples whose stack was not kept (the launcher's table was full) */
	struct ct_str note; /* with CT_STACKS_LEAF_ONLY: why no stack was sampled */
	uint32_t count;     /* stacks follow: ct_profile_stack_next */
	const uint8_t *stacks;
	size_t stacks_len;
};
#define CT_STACKS_LEAF_ONLY 1u /* no call stack was sampled (kernel, architecture): see note */
#define CT_STACK_FRAME_WIRE 12

/* One decoded stack: its samples and depth frames, innermost first. */
struct ct_stack {
	uint32_t samples;
	uint16_t depth;
	const uint8_t *frames; /* depth x (u32 module, u64 offset): ct_stack_frame_at */
};
/* A PROFILE_TIME record: one module's samples in one process image by time bin. Bin b covers
 * [start_mono_ns + b x bin_us, + bin_us) on CLOCK_MONOTONIC; the launcher widens its bins on a long
 * run to keep its memory bounded. Several records of one module add up. */
struct ct_profile_time {
	uint32_t bin_us;        /* the bin width */
	uint64_t start_mono_ns; /* where bin 0 starts */
	struct ct_str module;   /* the file's path, as in its PROFILE record */
	uint32_t count;         /* (u32 bin, u64 file offset, u32 samples) follow: ct_profile_time_at */
	const uint8_t *entries;
	uint64_t left_out; /* after the entries: samples of the run that the timeline had no room for
			    * (all images, the same in every record; they are in the PROFILE counts) */
};
#define CT_PROFILE_TIME_ENTRY_WIRE 16

struct ct_ops_batch {
	uint32_t tid;
	uint32_t count;
	uint64_t dropped; /* ops this thread dropped so far because its buffer was full */
	/* count ops follow; decode them one by one with ct_decode_op_at() */
	const uint8_t *ops_data;
	/* after them, count u8: log2 of each op's weight; NULL when the record has none (every
	 * weight 1: the writer leaves it out then, and older writers never wrote it) */
	const uint8_t *weights_log2;
};
#define CT_OP_WIRE_SIZE 20
#define CT_OP_WEIGHT_LOG2_MAX 31 /* a weight is a u32 power of two */

struct ct_thread_info {
	uint32_t tid;
	struct ct_str name;
};

/* A module (executable or shared object) that call-site frames name as "name+0xoff", or (flag
 * CT_MODULE_MAPPED) any shared object the process mapped: the file it was loaded from and its
 * GNU build id (hex, "" when it has none). */
#define CT_MODULE_MAPPED                                                                                     \
	(1u << 0) /* written because the process mapped it: a trace with one
				    * such record lists every object the process mapped */
struct ct_module {
	struct ct_str name;     /* as the frames print it: "ssh", "libssl.so.3" */
	struct ct_str path;     /* the file it was mapped from */
	struct ct_str build_id; /* lower-case hex of NT_GNU_BUILD_ID */
	uint32_t flags;         /* CT_MODULE_* (added at the end: 0 from older writers) */
};

struct ct_proc {
	uint64_t mono_ns;            /* when this snapshot was taken */
	uint64_t utime_ns, stime_ns; /* getrusage(RUSAGE_SELF) */
	uint64_t maxrss_kb;
	uint32_t flags; /* CT_PROC_* */
	uint32_t threads_seen;
	uint64_t dropped_ops, dropped_events, write_errors;
	uint64_t hooked_calls; /* every intercepted call, any family (0 = nothing seen) */
	struct ct_str
		crypto_libs; /* '\n'-joined paths of mapped crypto libraries (libcrypto, gnutls, nss, sodium...) */
	struct ct_str libcrypto;     /* OpenSSL_version() once known */
	uint32_t aesni_cpb_milli;    /* AES-NI bound measured inside this process (cycles/byte x1000)
					* when the header has none (a bare LD_PRELOAD); 0 = not measured */
	uint64_t ops_sampled_out;    /* per-call ops the rate cap did not keep (all threads; the ring
				   * full is dropped_ops) */
	uint32_t ops_max_weight;     /* the largest weight a kept op was given (0 or 1: none sampled) */
	uint64_t attach_pause_ns;    /* `cryptrace attach`: how long the attach stopped the process
				   * (0: not attached, or not known yet) */
	uint32_t attach_threads;     /* the threads it stopped */
	uint32_t attach_slots;       /* the import slots it redirected to the hooks */
	uint64_t route_direct_calls; /* routed EVP calls the direct lane served (preload/route/lane.h) */
};

struct ct_end {
	uint64_t mono_ns;
	uint32_t reason; /* enum ct_end_reason */
	int32_t status;  /* exit status, or signal number */
};

/* ---- encoding: into a caller buffer, no allocation. Each returns bytes written, 0 if it does not fit. */

size_t ct_encode_preamble(uint8_t *buf, size_t cap);
size_t ct_encode_header(uint8_t *buf, size_t cap, const struct ct_header *h);
size_t ct_encode_path(uint8_t *buf, size_t cap, const struct ct_path_def *p);
size_t ct_encode_stats(uint8_t *buf, size_t cap, const struct ct_path_stats *s);
size_t ct_encode_event(uint8_t *buf, size_t cap, const struct ct_event *e);
/* An ops batch: the header fields from *b (ops_data ignored), then n ops. */
size_t ct_encode_ops(uint8_t *buf, size_t cap, const struct ct_ops_batch *b, const struct ct_op *ops,
		     uint32_t n);
size_t ct_encode_thread(uint8_t *buf, size_t cap, const struct ct_thread_info *t);
size_t ct_encode_proc(uint8_t *buf, size_t cap, const struct ct_proc *p);
size_t ct_encode_end(uint8_t *buf, size_t cap, const struct ct_end *e);
size_t ct_encode_module(uint8_t *buf, size_t cap, const struct ct_module *m);
/* A PROFILE record with n (offset, samples) entries (p->count and p->entries are ignored). */
size_t ct_encode_profile(uint8_t *buf, size_t cap, const struct ct_profile *p, const uint64_t *offsets,
			 const uint32_t *samples, uint32_t n);
/* Entry i of a decoded PROFILE record. */
void ct_profile_entry_at(const struct ct_profile *p, uint32_t i, uint64_t *offset, uint32_t *samples);
/* A PROFILE_STACKS record: the header fields of *s (count and stacks ignored), then n stacks
 * whose depths[i] frames are consecutive in modules[] and offsets[]. */
size_t ct_encode_profile_stacks(uint8_t *buf, size_t cap, const struct ct_profile_stacks *s,
				const uint32_t *samples, const uint16_t *depths, const uint32_t *modules,
				const uint64_t *offsets, uint32_t n);
/* The stack at *at (start at 0) of a decoded record; false after the last. */
bool ct_profile_stack_next(const struct ct_profile_stacks *s, size_t *at, struct ct_stack *out);
/* Frame i of a decoded stack. */
void ct_stack_frame_at(const struct ct_stack *st, uint16_t i, uint32_t *module, uint64_t *offset);
/* A PROFILE_TIME record with n entries (t->count and t->entries are ignored). */
size_t ct_encode_profile_time(uint8_t *buf, size_t cap, const struct ct_profile_time *t, const uint32_t *bins,
			      const uint64_t *offsets, const uint32_t *samples, uint32_t n);
/* Entry i of a decoded PROFILE_TIME record. */
void ct_profile_time_at(const struct ct_profile_time *t, uint32_t i, uint32_t *bin, uint64_t *offset,
			uint32_t *samples);

/* Make a ct_str from a C string (NULL -> empty). */
struct ct_str ct_str_from(const char *s);

/* ---- decoding */

enum ct_read_status {
	CT_READ_OK = 0,
	CT_READ_EOF = 1,       /* clean end of file */
	CT_READ_TRUNCATED = 2, /* the file ends inside a record: everything before it is good */
	CT_READ_CORRUPT = 3,   /* bad CRC, impossible length or malformed payload at offset */
	CT_READ_NOT_TRACE = 4, /* no cryptrace magic: a foreign file */
	CT_READ_VERSION = 5,   /* a newer major format version than this reader knows */
};

struct ct_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;    /* offset of the next record */
	uint64_t base; /* the file offset of buf[0]: 0 for a whole file, a stream's window else */
	uint16_t version;
	enum ct_read_status status;
	char error[160];  /* one-line description once status is not OK/EOF */
	uint64_t records; /* whole records read so far: errors name the record by it */
};

struct ct_record {
	uint16_t type;
	uint64_t offset; /* where the record starts in the file */
	union {
		struct ct_header header;
		struct ct_path_def path;
		struct ct_path_stats stats;
		struct ct_event event;
		struct ct_ops_batch ops;
		struct ct_thread_info thread;
		struct ct_proc proc;
		struct ct_end end;
		struct ct_module module;
		struct ct_profile profile;
		struct ct_profile_stacks stacks;
		struct ct_profile_time profile_time;
	} u;
};

/* Checks the preamble; returns CT_READ_OK or an error status (with r->error set). */
enum ct_read_status ct_reader_init(struct ct_reader *r, const uint8_t *buf, size_t len);
/* Decodes the next record. Unknown record types are skipped (CRC still checked). Returns
 * CT_READ_OK with *rec filled, CT_READ_EOF at a clean end, or an error status; after an error
 * every later call returns the same status. Never reads outside buf. */
enum ct_read_status ct_reader_next(struct ct_reader *r, struct ct_record *rec);
/* Decodes exactly one record at r->off, as ct_reader_next does, except that a record type from a
 * newer writer (CRC good) is passed over and returned as CT_READ_OK with rec->type 0. For readers
 * that refill r->buf between records (trace_stream.c). */
enum ct_read_status ct_reader_next_one(struct ct_reader *r, struct ct_record *rec);
/* Decodes the one record in [buf, buf + len) (header, payload, CRC; no preamble), which starts at
 * byte `at` of a trace of format `version` (for its messages and rec->offset). Returns what
 * ct_reader_next would: CT_READ_OK, or an error status with r->error set (r is scratch, and says
 * why). rec points into buf. */
enum ct_read_status ct_decode_one(struct ct_reader *r, const uint8_t *buf, size_t len, uint64_t at,
				  uint16_t version, struct ct_record *rec);
/* The i-th op of a decoded batch; its weight is 1 when the batch has no weights. */
void ct_decode_op_at(const struct ct_ops_batch *b, uint32_t i, struct ct_op *op);

/* ---- shared helpers */

/* Fixed-width little-endian fields, used by the encoders and decoders. */
void ct_put_le16(uint8_t *p, uint16_t v);
void ct_put_le32(uint8_t *p, uint32_t v);
void ct_put_le64(uint8_t *p, uint64_t v);
uint16_t ct_get_le16(const uint8_t *p);
uint32_t ct_get_le32(const uint8_t *p);
uint64_t ct_get_le64(const uint8_t *p);

/* CRC32C; start with crc = 0 and pass the previous result to continue. */
uint32_t ct_crc32c(uint32_t crc, const void *data, size_t len);
/* Request-size bucket: 0 for 0, else 1 + floor(log2(size)), capped at CT_SIZE_BUCKETS-1.
 * Inline and without a branch: the preload's hooks call it on every cipher call. */
static inline unsigned ct_size_bucket(uint64_t size)
{
	unsigned b = (64 - (unsigned)__builtin_clzll(size | 1)) & -(unsigned)(size != 0);
	return __builtin_expect(b < CT_SIZE_BUCKETS, 1) ? b : CT_SIZE_BUCKETS - 1;
}
/* Smallest size that falls in bucket b (0, 1, 2, 4, ...). */
uint64_t ct_size_bucket_low(unsigned b);
/* Latency bucket of a duration in ns: four buckets per power of two (the two bits below the
 * leading one), exact below 4 ns. Inline: the timed hooks call it on every sampled call. */
static inline unsigned ct_lat_bucket(uint64_t ns)
{
	if (ns < 4)
		return (unsigned)ns;
	unsigned e = 63 - (unsigned)__builtin_clzll(ns);
	unsigned b = 4 * (e - 1) + ((unsigned)(ns >> (e - 2)) & 3);
	return b < CT_LAT_BUCKETS ? b : CT_LAT_BUCKETS - 1;
}
/* The lower bound of latency bucket b. */
uint64_t ct_lat_bucket_low(unsigned b);

const char *ct_api_name(unsigned api);     /* "evp", "aes", "cryptodev", "afalg", "unknown" */
const char *ct_dir_name(unsigned dir);     /* "encrypt", "decrypt", "unknown" */
const char *ct_entry_name(unsigned entry); /* "EVP_*Update", "EVP_Cipher", "AES_*", ... */
/* "", "native", "aesni", "afalg", "cryptodev": the trace's stable names (JSON "route"), whatever
 * the CPU; "aesni" is the CPU's AES instructions there (the path's impl names which ones). */
const char *ct_route_name(unsigned route);
const char *ct_phase_name(unsigned phase);     /* "key", "message", "aad", "final", "tag", "init" */
const char *ct_event_kind_name(unsigned kind); /* stable kebab-case names: "call-failed", ... */

/* A trace file's name, as the writer makes them: "X.ctrace" -> 0, its continuation "X.ctrace.N"
 * -> N (1..999999), anything else -> -1. The reporter, prune and the spool's cap go by it. */
long ct_trace_name_part(const char *name);

#endif
