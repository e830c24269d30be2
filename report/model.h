/* SPDX-License-Identifier: MIT */
/*
 * model.h - the reporter's in-memory model: one rp_proc per trace file (newest snapshot of each
 * path, event and process fact), and the merged view across processes with the derived figures
 * (wall, user, sys, cycles/byte, percentiles). Loading, merging, deriving, findings and the
 * printers each live in their own file; the unit tests build models by hand through this API.
 * Strings are ct_str slices into copies of the records that hold them (owned by their rp_proc);
 * the model never holds a trace file: timelines and snapshots are read again from the files
 * (ops.c, window.c, through records.c), so memory follows paths, processes and call sites.
 */
#ifndef CT_REPORT_MODEL_H
#define CT_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"
#include "trace_stream.h"

struct rp_u32list {
	uint32_t *v;
	size_t n, cap;
};

/* Figures derived from a path's counters (see docs/report.md for the method). */
struct rp_derived {
	double wall_ns;  /* estimated wall time of all calls */
	bool wall_exact; /* every call was timed */
	bool wall_known; /* at least one call was timed */
	bool cpu_known;  /* CPU samples exist: user/sys are estimates, else unknown */
	double user_ns, sys_ns;
	double cycles_per_byte; /* < 0: unknown (no TSC frequency, no timing or no bytes) */
	bool lat_known;
	uint64_t p50_ns, p99_ns; /* lower bounds of the latency buckets */
	double bucket_wall_ns[CT_SIZE_BUCKETS];
	double data_wall_ns;             /* the data calls' part of wall_ns (the size buckets) */
	double phase_wall_ns[CT_PHASES]; /* key/message set-up, AAD, final, tag: the rest */
	bool phase_known[CT_PHASES];
	double phases_wall_ns;
	double pause_ns; /* pauses inside runs of calls, left out of wall_ns (ct_cell_pause_ns) */
	double cell_pause_ns[CT_CELLS]; /* the same per cell: size buckets, then phases */
	uint64_t messages;              /* rp_messages */
	double per_message_ns;          /* AEAD paths: wall_ns / messages (0: no messages) */
};

struct rp_path {
	struct ct_path_def def;
	struct ct_path_stats st;
	bool has_def, has_stats;
	/* CPU cycles per second (the TSC's rate) of the process that recorded it (merged: first
	 * known); 0 when its tick counter is not the CPU clock (CT_HDR_TICKS_NOT_CYCLES) */
	uint64_t tsc_hz;
	struct rp_u32list pids; /* merged paths: the processes that contributed */
	struct rp_derived d;
	/* The request-size filter recomputes calls from the kept buckets; syscalls, setup and
	 * teardown cannot be split by size, so their per-operation figures use all the calls. */
	bool size_cut;
	uint64_t calls_all_sizes;
};

struct rp_event {
	struct ct_event ev;
	uint32_t pid;           /* per-process events: the process */
	struct rp_u32list pids; /* merged events: the processes it was seen in */
};

/* A process's lifetime, CPU and the crypto part of them (rp_model_merge, selected paths only). */
struct rp_proc_figures {
	bool wall_known;        /* lifetime known: END or PROC mono_ns after the header's start */
	bool cpu_known;         /* a PROC record gave utime + stime */
	double wall_ns, cpu_ns; /* lifetime, utime + stime */
	double crypto_wall_ns;  /* sum of the paths' wall time (paths with known timing) */
	double crypto_cpu_ns;   /* sum of the paths' user + sys (paths with CPU samples) */
	bool crypto_wall_known, crypto_cpu_known;
	uint64_t crypto_calls, crypto_bytes;
};

/* One line of a process's CPU profile: samples in code of one kind (profile.c). */
struct rp_profile_item {
	char category[24]; /* "AES", "GHASH", "SHA-256", "ChaCha20", "" (not crypto) */
	char impl[40];     /* "VAES-512 + VPCLMULQDQ", "AES-NI", "tables (no AES-NI)", ... */
	char module[64];   /* the file's base name */
	char function[96]; /* its symbol, else "+0x<start>" in the module */
	char via[16];      /* "HMAC": the samples' call stacks pass through an HMAC function */
	uint64_t samples;
	struct ct_str path; /* the module's path (two copies of one library are two modules) */
};

/* The hooks against the profile (profile_check.c): the hooked cipher calls' CPU time, and the
 * least and the most of the sampled code that can be theirs, with the sampling error of each. */
struct rp_hooks_check {
	bool made;            /* the process has in-process cipher paths, a profile, and no selection
			     * that cuts its paths (the profile covers all of its work) */
	double hooks_s;       /* the in-process paths' user CPU (WALL where CPU was not sampled) */
	double profile_s;     /* cipher code (AES, GHASH, ChaCha20...) in every module */
	double error_s;       /* profile_s's bound: 3 sigma of the samples + 5 % of hooks_s */
	double profile_max_s; /* + the rest of the hooked libcrypto, its modules and the preload */
	double error_max_s;
	double outside_s;           /* cipher code outside the modules the hooked calls run in */
	char outside_module[64];    /* the largest of those modules */
	struct ct_str outside_path; /* its path */
	char hooked_module[64];     /* the hooked libcrypto's base name */
	int verdict; /* 0: agree; 1: the profile saw more cipher code than the calls took; -1: the
		      * calls took more than all the code they can run */
};

/* A sampled offset in crypto code and the category of its function. */
struct rp_profile_offcat {
	struct ct_str path; /* the module's */
	uint64_t off;
	char category[24];
};

/* A PROFILE_STACKS record, and where the module records of its image begin in mods. */
struct rp_profile_stackrec {
	struct ct_profile_stacks r; /* the stacks point into the file's bytes */
	size_t mod_base;
};

/* A process's sampled user-space CPU (PROFILE records, appended by the launcher). */
struct rp_profile {
	bool has;           /* a PROFILE record was read */
	uint32_t period_us; /* the sampling period */
	/* the user CPU one sample stands for (rp_profile_sample_time): the period, or less where the
	 * sampling clock ran ahead of the process's own CPU time (the hypervisor's steal) */
	double sample_s;
	uint64_t samples, lost, unmapped;
	struct ct_profile *mods; /* the per-module records (entries point into the file's bytes) */
	size_t nmods, cap_mods;
	struct rp_profile_item *items; /* classified (rp_profile_classify), most samples first */
	size_t nitems;
	size_t image_base;                  /* mods of the image being read (after its totals record) */
	struct rp_profile_stackrec *stacks; /* its call stacks (PROFILE_STACKS) */
	size_t nstacks, cap_stacks;
	uint64_t stacks_dropped;
	char stacks_note[200];   /* why the profile has no call stacks (leaf only), when it says */
	uint64_t crypto_samples; /* in items with a category */
	struct rp_hooks_check check;
	struct ct_profile_time *times; /* PROFILE_TIME records: the samples by time bin */
	size_t ntimes, cap_times;
	/* the offsets in crypto code (rp_profile_classify), sorted by module path and offset: what
	 * the timeline's samples are (profile_time.c) */
	struct rp_profile_offcat *crypto_offs;
	size_t ncrypto_offs, cap_crypto_offs;
};

enum rp_status { RP_COMPLETE = 0, RP_TRUNCATED = 1, RP_INCOMPLETE = 2 };

struct rp_proc {
	const char *file;
	struct ct_header hdr;
	struct ct_proc proc;
	struct ct_end end;
	bool has_hdr, has_proc, has_end;
	enum ct_read_status read_status; /* CT_READ_EOF when the file read cleanly */
	char damage[160];                /* reader's message when truncated or corrupt */
	uint64_t ops_batches, ops, ops_dropped;
	/* the operations the kept ones stand for (the sum of their weights: --max-ops-rate keeps
	 * 1 in K above its rate); not known when the load passed over the batches (a window) */
	uint64_t ops_weight;
	bool ops_weight_unknown;
	struct rp_path *paths;
	size_t npaths, cap_paths;
	struct rp_event *events;
	size_t nevents, cap_events;
	void *map; /* a trace loaded from memory (rp_load_buffer): its bytes, owned; NULL for files */
	size_t map_len;
	/* the files of this process's record stream, in order (a process whose writer reopened its
	 * trace continues in X.ctrace.N): read again by records.c; `end` is where each file's whole
	 * records ended when it was loaded (a damaged file's tail is not read again) */
	struct rp_trace_part {
		char *file;
		uint64_t end;
	} * parts;
	size_t nparts, cap_parts;
	struct ct_module *modules; /* MODULE records: files and build ids of call-site modules */
	size_t nmodules, cap_modules;
	char **owned; /* strings made after loading (symbols.c's renamed call
					  * sites), freed with the model */
	size_t nowned, cap_owned;
	struct rp_profile prof;
	/* Filled by rp_model_merge (merge.c, roles.c, figures.c): */
	bool superseded; /* a later file of the same process (same pid and start: the
					  * writer reopened after the program closed its fd) holds
					  * newer cumulative snapshots, so this one is not counted */
	char role[96];   /* "sshd connection monitor [priv]", "ssh client"... */
	struct rp_proc_figures fig;
	/* Filled by the time window (window.c): path totals are the difference of two cumulative
	 * snapshots, taken at win_from_s and win_to_s (seconds from the first process start). */
	bool win_cut;
	double win_from_s, win_to_s;
	bool win_wall_known, win_cpu_known;
	double win_wall_ns, win_cpu_ns; /* the process's lifetime and CPU between the two */
};

enum rp_severity { RP_INFO = 0, RP_WARNING = 1, RP_ERROR = 2 };

struct rp_finding {
	const char *kind; /* stable kebab-case name */
	enum rp_severity severity;
	char message[1024];  /* one paragraph, plain words */
	char evidence[1024]; /* the numbers and events it rests on */
	char fix[512];
	uint32_t pid; /* 0: the whole run */
	/* A finding over several processes: the executable they all are (what the metrics label
	 * it with; rp_finding_note_exe), exe_mixed when they are not one. */
	struct ct_str exe;
	bool exe_mixed;
};

struct rp_filter {
	long long pid; /* -1: all */
	const char *cipher_glob;
	const char *api;
	uint64_t min_size, max_size; /* request-size filter, by size bucket (max 0: none) */
	bool path_cut;               /* --path dropped some paths (select.c) */
};

/* --since/--until (seconds from the first process start) on path totals: window.c */
struct rp_window {
	bool active, has_since, has_until;
	double since_s, until_s;
	unsigned flush_ms; /* the largest flush interval of the cut processes */
};

/* A call site demangle.c rewrote: the string every output shows, and the one it replaced. */
struct rp_mangled {
	const char *shown;
	struct ct_str recorded;
};

struct rp_model {
	struct rp_proc *procs;
	size_t nprocs, cap_procs;
	/* set before loading when only a time window is reported: the load passes over per-call
	 * batches unread (their CRC unchecked), and the window's own are checked when a timeline
	 * reads them (docs/reports.md "Large traces") */
	bool load_skips_ops;
	struct rp_path *paths; /* merged across processes */
	size_t npaths, cap_paths;
	struct rp_event *events; /* merged across processes */
	size_t nevents, cap_events;
	struct rp_finding *findings;
	size_t nfindings, cap_findings;
	char **warnings;
	size_t nwarnings, cap_warnings;
	struct rp_filter filter;
	struct rp_window window;
	struct rp_mangled *mangled; /* demangle.c */
	size_t nmangled, cap_mangled;
	uint64_t files_unreadable; /* trace files that could not be opened or were not traces */
};

/* ---- model.c: building */
void rp_model_init(struct rp_model *m);
void rp_model_free(struct rp_model *m);
struct rp_proc *rp_model_add_proc(struct rp_model *m);
/* Newest snapshot wins: these replace an earlier record with the same id. */
struct rp_path *rp_proc_path(struct rp_proc *p, uint32_t path_id); /* finds or adds */
void rp_proc_set_event(struct rp_proc *p, const struct ct_event *ev);
void rp_proc_add_module(struct rp_proc *p, const struct ct_module *mod); /* replaces by name + file */
/* A PROFILE record (totals, or one module's samples; the entries stay in the file's bytes). */
void rp_proc_add_profile(struct rp_proc *p, const struct ct_profile *r);
/* A PROFILE_STACKS record (its frames name the module records of the image read last). */
void rp_proc_add_profile_stacks(struct rp_proc *p, const struct ct_profile_stacks *r);
/* Names profile frames: module mod of pr (an index into pr->mods), file offset off, as a profile
 * item's module, function, category and impl (profile.c). */
struct rp_frame_names;
struct rp_frame_names *rp_frame_names_new(const struct rp_profile *pr);
void rp_frame_name(struct rp_frame_names *nm, size_t mod, uint64_t off, struct rp_profile_item *key);
void rp_frame_names_free(struct rp_frame_names *nm);
/* An item's category as the report shows it: "HMAC-SHA256" for SHA-256 via HMAC, else the
 * category. */
const char *rp_profile_item_label(const struct rp_profile_item *it, char *buf, size_t cap);
/* Names and classifies every process's profile samples by the code they fell in (profile.c). */
void rp_profile_classify(struct rp_model *m);
/* The groups crypto categories add up to (codeclass.c's rp_code_group): key exchange and
 * signatures apart from bulk ciphers and MACs, and digests. */
enum { RP_PROFILE_GROUPS = 4 };
extern const char *const rp_profile_group_names[RP_PROFILE_GROUPS];
/* A profile's crypto samples per group, in rp_profile_group_names' order. */
void rp_profile_group_samples(const struct rp_profile *pr, uint64_t n[RP_PROFILE_GROUPS]);
/* The group of a profile line's category ("" for no category). */
const char *rp_profile_item_group(const struct rp_profile_item *it);
void rp_proc_add_profile_time(struct rp_proc *p, const struct ct_profile_time *r);
/* ---- profile_time.c: the profile over time */
#define RP_PROFILE_TIME_CATS 8
struct rp_profile_bin {
	uint64_t start_mono_ns, dur_ns;
	uint64_t samples, crypto;
	uint64_t cat[RP_PROFILE_TIME_CATS]; /* per crypto category, as named in cats[] */
};
/* Sorts the profile's crypto offsets for the lookups below (run by rp_profile_classify). */
void rp_profile_time_index(struct rp_profile *pr);
/* The process's samples by time bin, in time order, bins without samples left out; *out is the
 * caller's to free; cats[] (RP_PROFILE_TIME_CATS) gets the categories' names. */
size_t rp_profile_timeline(const struct rp_profile *pr, struct rp_profile_bin **out, const char **cats,
			   size_t *ncats);
/* The hooks against the profile for one process (profile_check.c; run by rp_model_merge). */
void rp_profile_hooks_check(const struct rp_model *m, struct rp_proc *p);
/* The user CPU a sample of p's profile stands for, into p->prof.sample_s (profile_check.c). */
void rp_profile_sample_time(struct rp_proc *p);
/* What one sample of pr counts, in seconds: sample_s once set, else the period. */
static inline double rp_profile_sample_s(const struct rp_profile *pr)
{
	return pr->sample_s > 0 ? pr->sample_s : pr->period_us / 1e6;
}
bool rp_proc_own(struct rp_proc *p, char *s); /* p frees s with the model; false: not taken */
void rp_model_warn(struct rp_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool rp_u32list_add(struct rp_u32list *l, uint32_t v); /* adds if absent */
bool rp_u32list_has(const struct rp_u32list *l, uint32_t v);
/* Makes room for one more element in *arr (n in use, room for *cap, elem bytes each), doubling
 * it and zeroing the new room; false when memory ran out: the caller then drops the element. */
bool rp_grow(void **arr, size_t *cap, size_t n, size_t elem);

/* ---- load.c: reading trace files. Returns 0 (read cleanly), 1 (damaged: what was read is kept,
 * msg says where), 2 (unreadable / not a trace / newer version: nothing kept). msg: one line. */
int rp_load_file(struct rp_model *m, const char *path, char *msg, size_t msgcap);
/* A FILE or a DIR of *.ctrace files (a spool root: with those of its per-user directories,
 * named by uid, one level down); worst status of the files, messages go to err. */
int rp_load_path(struct rp_model *m, const char *path, FILE *err);
/* Whether DIR (or its per-user directories) holds a trace; true when it cannot be read, so that
 * the loader says why. */
bool rp_dir_has_traces(const char *dir);
/* Loads a trace already in memory (tests); buf is copied. */
int rp_load_buffer(struct rp_model *m, const char *name, const void *buf, size_t len, char *msg,
		   size_t msgcap);

/* ---- records.c: a process's records read again, from its files in order, in bounded memory */
struct rp_records {
	const struct rp_proc *p;
	size_t part; /* the file being read */
	int fd;
	bool open;
	struct ct_stream s;
};
void rp_records_open(struct rp_records *it, const struct rp_proc *p);
/* The next record (skip_ops: OPS payloads not read, see ct_stream_next); CT_READ_EOF at the end of
 * the last file, or the status that ended it. */
enum ct_read_status rp_records_next(struct rp_records *it, struct ct_record *rec, bool skip_ops);
void rp_records_close(struct rp_records *it);

/* ---- merge.c: filters, merge across processes, derived figures */
void rp_derive(struct rp_path *p);
/* An AEAD path's messages: each ends with a final, or a tag set or read (CCM decryption has no
 * final, a GCM encryption through openssl speed no tag: the larger count), or is a TLS 1.0-1.2
 * record framed by the record AAD ctrl and sealed or opened by one EVP_Cipher. */
uint64_t rp_messages(const struct ct_path_stats *s);
/* An AEAD cipher (GCM, CCM, OCB, SIV, ChaCha20-Poly1305): its paths have a cost per message. */
bool rp_cipher_is_aead(struct ct_str cipher);
/* A path whose calls wait for a peer (CT_PATH_IO_WAIT: TLS records): its wall time includes the
 * network and the other side, so what its calls cost is their CPU time (user + sys). */
static inline bool rp_path_io_wait(const struct rp_path *p)
{
	return (p->def.flags & CT_PATH_IO_WAIT) != 0;
}
/* What a path's calls cost: their wall time, an io-wait path's CPU time; *known whether it is. */
double rp_path_cost_ns(const struct rp_path *p, bool *known);
void rp_model_merge(struct rp_model *m);
bool rp_path_selected(const struct rp_model *m, const struct rp_path *p);
/* Data calls whose time was measured directly (probes, and calls inside accepted spans). */
double rp_measured_calls(const struct ct_path_stats *s);
/* Contexts were set up on the path (key set-ups, inits) and nothing else: no data call, no kernel
 * session, no other phase. Such a path is not shown (its set-ups fold into the path that did the
 * work, when there is one: merge.c). */
bool rp_path_setups_only(const struct ct_path_stats *s);
/* Every counter of a path's stats, out = op(a, b) field by field (path_id untouched): one list of
 * the fields for the merge's sums and the time window's differences. out may be a. */
void rp_stats_combine(struct ct_path_stats *out, const struct ct_path_stats *a, const struct ct_path_stats *b,
		      uint64_t (*op)(uint64_t, uint64_t));
/* Same path in two processes: api, impl, cipher, key bits, direction, entry and route agree. */
bool rp_same_path(const struct rp_path *a, const struct rp_path *b);
/* The same but for the data entry (EVP_*Update or EVP_Cipher): a path and its entry variants. */
bool rp_same_path_any_entry(const struct ct_path_def *a, const struct ct_path_def *b);
enum rp_status rp_proc_status(const struct rp_proc *p);
const char *rp_status_name(enum rp_status s);
/* A process that the report shows: selected by --pid and not superseded by a later file. */
bool rp_proc_shown(const struct rp_model *m, const struct rp_proc *p);

/* ---- roles.c: what a process is ("sshd: monitor [priv]", "ssh client"), into buf; run by
 * rp_model_merge into p->role once superseded files are marked. */
void rp_proc_role(const struct rp_model *m, const struct rp_proc *p, char *buf, size_t cap);
/* p->role, or "?" when it has none, for a sentence. */
const char *rp_proc_role_label(const struct rp_proc *p);

/* ---- figures.c: p->fig, a process's lifetime, CPU and the crypto share of them, over its
 * selected paths (run by rp_model_merge once the paths are derived). */
void rp_proc_figures(const struct rp_model *m, struct rp_proc *p);

/* ---- callsites.c: who created a path's contexts, from its call site (innermost frame first) */
struct rp_creator {
	char created_by[160]; /* first frame outside libcrypto, without the offset when it has a
				 * symbol: "ssh!cipher_init", "libssl.so.3+0x4e5a1" */
	char module[96];      /* its module: "ssh", "libssl.so.3" */
	char via[128];        /* the outermost named libcrypto frame under it: "libcrypto.so.3!RAND_status" */
	const char *purpose;  /* "TLS", "SSH transport", "random numbers (DRBG)", or "" */
};
/* false when the call site is empty. */
bool rp_callsite_creator(struct ct_str callsite, struct rp_creator *c);
/* A frame's module ("ssh" of "ssh+0x632ac" or "ssh!main+0x1c"), and whether it names a symbol. */
struct ct_str rp_frame_module(struct ct_str frame);
bool rp_frame_has_symbol(struct ct_str frame);
/* A call site with frames renamed (symbols.c names them, demangle.c demangles them): rename
 * writes a frame's new text into out and returns true, or false to keep it. Returns the new
 * call site (malloc'ed), or NULL when no frame changed (or out of memory). */
#define RP_FRAME_MAX 2304
typedef bool (*rp_frame_renamer)(void *ctx, struct ct_str frame, char *out, size_t cap);
char *rp_callsite_rewrite(struct ct_str cs, rp_frame_renamer rename, void *ctx);

/* ---- creators.c: the context set-ups of a merged path (CT_EV_CONTEXT events, one per call site,
 * counted) and the usage patterns seen on its contexts (CT_EV_CTX_USAGE), across processes. */
#define RP_USAGE_IV_REINIT (1u << 0) /* a new IV per message, same key (TLS 1.3 records) */
#define RP_USAGE_TLS1_AAD (1u << 1)  /* EVP_CTRL_AEAD_TLS1_AAD (TLS 1.0-1.2 AEAD records) */
#define RP_USAGE_IV_FIXED (1u << 2)  /* EVP_CTRL_GCM_SET_IV_FIXED (TLS 1.2 GCM) */
#define RP_USAGE_SET_IVLEN (1u << 3) /* EVP_CTRL_AEAD_SET_IVLEN */
#define RP_USAGE_MAC_KEY (1u << 4)   /* EVP_CTRL_AEAD_SET_MAC_KEY (TLS CBC-HMAC composite) */
#define RP_CREATOR_SITES 8
struct rp_creator_site {
	struct ct_str callsite;
	uint64_t setups;
	struct rp_creator who;
	unsigned ssh_uses; /* OpenSSH's sites: key shielding (1), transport (2), seen where */
};
struct rp_path_creators {
	uint64_t setups; /* context set-ups (inits naming a cipher) seen, all sites */
	uint32_t usage;  /* RP_USAGE_* */
	struct rp_creator_site sites[RP_CREATOR_SITES]; /* most set-ups first */
	size_t nsites;
	uint64_t other_setups; /* at sites beyond RP_CREATOR_SITES */
};
/* path: an element of m->paths (merged). False when no set-up of it was recorded (a trace of an
 * older cryptrace: then only the path's first call site, def.callsite, is known). */
bool rp_path_creators(const struct rp_model *m, const struct rp_path *path, struct rp_path_creators *pc);
/* What the creator used the contexts for: "TLS 1.3 records", "TLS 1.2 records", "SSH transport",
 * "private-key shielding (...)", "random numbers (DRBG)", "" when unknown. */
const char *rp_creator_purpose(const struct rp_creator *c, uint32_t usage);
/* The purpose of a path's contexts created at c, judged in process p (NULL: in every shown
 * process that has the path): c->purpose, except that OpenSSH's contexts are transport or key
 * shielding by the work they did. */
const char *rp_path_purpose(const struct rp_model *m, const struct rp_proc *p, const struct rp_path *path,
			    const struct rp_creator *c);
/* Who created a path's contexts (its first call site), corrected for an entry variant the first
 * creator never drives (the DRBG never calls EVP_Cipher), in p (NULL: every shown process).
 * False when the path has no call site. */
bool rp_path_creator(const struct rp_model *m, const struct rp_proc *p, const struct rp_path *path,
		     struct rp_creator *c);
/* p carries SSH traffic: OpenSSH's contexts on one of its paths did transport work. */
bool rp_proc_ssh_transport(const struct rp_proc *p);

/* ---- symbols.c: names for the call-site frames a traced process could not name (static
 * functions: "module+0xoff"), from the module files and debug files the trace's MODULE records
 * name, when their build ids match. Reads those files: `cryptrace report` runs it after
 * loading unless --no-symbols. */
void rp_symbolize(struct rp_model *m);

/* ---- demangle.c: C++ and Rust names in call-site frames ("module!ns::Class::method+0x1c", no
 * parameter list), demangled by the C++ runtime's __cxa_demangle. `cryptrace report` runs it
 * after rp_symbolize; every output then shows the demangled frames. */
void rp_demangle(struct rp_model *m);
/* The call site as it was before rp_demangle (JSON's callsite_mangled): callsite itself when it
 * was not rewritten. callsite: a string of the model (a path's, an event's). */
struct ct_str rp_callsite_mangled(const struct rp_model *m, struct ct_str callsite);
/* One symbol: "_ZN4node6crypto10CipherBase10CommonInitE..." -> "node::crypto::CipherBase::
 * CommonInit" in out; false when it is not a mangled name (or the build has no demangler). */
bool rp_demangle_symbol(const char *sym, size_t len, char *out, size_t cap);

/* ---- folded.c: folded stacks for flamegraph.pl, one "frame;frame;leaf weight" per line */
/* bytes and time: the hooked paths under their call sites; samples: the CPU profile's call
 * stacks (leaf only when the profile has none) */
enum rp_folded_weight { RP_FOLD_BYTES = 0, RP_FOLD_TIME = 1, RP_FOLD_SAMPLES = 2 };
void rp_print_folded(const struct rp_model *m, enum rp_folded_weight weight, FILE *out);

/* ---- findings/: the findings, one file per family (findings/findings.h) */
void rp_findings_evaluate(struct rp_model *m);
/* Why nothing was intercepted, from the process facts: one line, no trailing period
 * (findings/nothing_intercepted.c). */
void rp_nothing_reason(const struct rp_model *m, char *buf, size_t cap);
const char *rp_severity_name(enum rp_severity s);

/* ---- text.c / json.c */
void rp_print_text(const struct rp_model *m, FILE *out);
void rp_print_json(const struct rp_model *m, FILE *out);
void rp_print_summary(const struct rp_model *m, FILE *out);

/* ---- kernel.c: a cryptodev/AF_ALG path the way the 2011 cryptodev-vs-AF_ALG comparison (seed
 * 003 in the project's brief) compared the two interfaces: session set-up ("init"), each
 * operation by request size, teardown ("deinit"), syscalls per operation, spliced against copied
 * requests. Figures < 0 are unknown. */
struct rp_kernel_fig {
	uint64_t setup_calls, teardown_calls;
	double setup_ns, teardown_ns;  /* mean per session set-up / teardown */
	uint64_t ops, spliced, copied; /* operations (all request sizes) */
	double syscalls_per_op;
	double session_ns_per_op; /* set-up + teardown time spread over the operations */
};
bool rp_path_is_kernel(const struct rp_path *p);
bool rp_model_has_kernel(const struct rp_model *m);
void rp_kernel_figures(const struct rp_path *p, struct rp_kernel_fig *k);
/* Mean wall time of one operation of size bucket b, and bytes per second of the bucket's
 * operations alone and with the session cost per operation added (that comparison's "init +
 * encrypt + deinit"). */
double rp_kernel_op_ns(const struct rp_path *p, unsigned b);
double rp_kernel_op_bps(const struct rp_path *p, unsigned b);
double rp_kernel_full_bps(const struct rp_path *p, unsigned b);

/* ---- window.c: the sentence the outputs print about a --since/--until cut (empty: no window) */
void rp_window_note(const struct rp_model *m, char *buf, size_t cap);

/* ---- fmt.c: humanized numbers for the text printers (into buf, returns buf) */
char *rp_fmt_bytes(char *buf, size_t cap, double bytes);
char *rp_fmt_ns(char *buf, size_t cap, double ns);
char *rp_fmt_count(char *buf, size_t cap, double n);
const char *rp_errno_name(int err, char *buf, size_t cap);

/* ---- strings.c: ct_str slices (no NUL terminator needed, nothing allocated) */
/* "crypto" for "crypto\0x" style NUL-joined strings: the i-th part. */
struct ct_str rp_str_part(struct ct_str s, char sep, unsigned i);
unsigned rp_str_nparts(struct ct_str s, char sep);
bool rp_str_eq(struct ct_str a, struct ct_str b);
bool rp_str_is(struct ct_str a, const char *lit);
bool rp_str_starts(struct ct_str a, const char *prefix);
/* The first occurrence of needle in s and the rest of s from there; .p NULL when there is none
 * (or needle is empty). */
struct ct_str rp_str_find(struct ct_str s, const char *needle);
/* The part of s after its last sep ("cbc" of "aes-128-cbc" with '-'); all of s without one. */
struct ct_str rp_str_after_last(struct ct_str s, char sep);
/* "libcrypto.so.3" of "/usr/lib/x86_64-linux-gnu/libcrypto.so.3". */
struct ct_str rp_str_basename(struct ct_str path);

#endif
