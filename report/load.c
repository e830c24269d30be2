/* SPDX-License-Identifier: MIT */
/*
 * load.c - reads trace files into the model: validates, decodes every record, and keeps the
 * newest snapshot per id. A damaged file keeps everything read before the damage.
 */
#include "errno_abi.h"
#include "model.h"
#include "redact.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static void apply_record(struct rp_proc *p, const struct ct_record *rec)
{
	struct rp_path *path;
	switch (rec->type) {
	case CT_REC_HEADER:
		p->hdr = rec->u.header;
		p->has_hdr = true;
		for (size_t i = 0; i < p->nevents; i++)
			p->events[i].pid = p->hdr.pid;
		break;
	case CT_REC_PATH:
		path = rp_proc_path(p, rec->u.path.path_id);
		if (path) {
			path->def = rec->u.path;
			path->has_def = true;
		}
		break;
	case CT_REC_STATS:
		path = rp_proc_path(p, rec->u.stats.path_id);
		if (path) {
			path->st = rec->u.stats;
			path->has_stats = true;
		}
		break;
	case CT_REC_EVENT:
		rp_proc_set_event(p, &rec->u.event);
		break;
	case CT_REC_OPS:
		p->ops_batches++;
		p->ops += rec->u.ops.count;
		if (!rec->u.ops.ops_data && rec->u.ops.count)
			p->ops_weight_unknown = true; /* passed over unread */
		else if (!rec->u.ops.weights_log2)
			p->ops_weight += rec->u.ops.count;
		else
			for (uint32_t i = 0; i < rec->u.ops.count; i++)
				p->ops_weight += (uint64_t)1 << rec->u.ops.weights_log2[i];
		if (rec->u.ops.dropped > p->ops_dropped)
			p->ops_dropped = rec->u.ops.dropped;
		break;
	case CT_REC_PROC:
		p->proc = rec->u.proc;
		p->has_proc = true;
		break;
	case CT_REC_END:
		p->end = rec->u.end;
		p->has_end = true;
		break;
	case CT_REC_MODULE:
		rp_proc_add_module(p, &rec->u.module);
		break;
	case CT_REC_PROFILE_STACKS:
		rp_proc_add_profile_stacks(p, &rec->u.stacks);
		break;
	case CT_REC_PROFILE:
		rp_proc_add_profile(p, &rec->u.profile);
		break;
	case CT_REC_PROFILE_TIME:
		rp_proc_add_profile_time(p, &rec->u.profile_time);
		break;
	default: /* CT_REC_THREAD: names only, not reported yet */
		break;
	}
}

/* A trace written before cryptrace redacted command lines may hold a password typed on one:
 * the same rule (common/redact.h) applies here, so no report shows it. */
static void redact_argv(struct rp_proc *p)
{
	if (!p->has_hdr || !p->hdr.argv.len)
		return;
	/* "x" -> "<redacted>" is the largest growth: 10 bytes per byte */
	size_t cap = (size_t)p->hdr.argv.len * 11 + 16;
	char *out = malloc(cap);
	unsigned count = 0;
	if (!out)
		return;
	size_t n = ct_argv_redact(p->hdr.argv.p, p->hdr.argv.len, false, out, cap, &count);
	if (!count || !rp_proc_own(p, out)) {
		free(out);
		return;
	}
	p->hdr.argv = (struct ct_str){ .p = out, .len = (uint32_t)n };
	p->hdr.argv_redacted += count;
}

/* The events' errno values as this reporter numbers them, so that every name, strerror and
 * comparison with <errno.h>'s constants (kernel-refused's EAFNOSUPPORT) means what the traced
 * program got: a trace written on MIPS records EAFNOSUPPORT as 124, which is EMEDIUMTYPE here. */
static void errnos_to_own(struct rp_model *m, struct rp_proc *p)
{
	enum ct_errno_abi abi = ct_errno_abi_parse(p->hdr.errno_abi);
	if (abi == ct_errno_abi_own())
		return;
	bool warned = false;
	for (size_t i = 0; i < p->nevents; i++) {
		int err = p->events[i].ev.err;
		int own = err ? ct_errno_to_own(abi, err) : 0;
		if (err && !own && !warned) {
			const char *name = ct_errno_abi_name(abi, err);
			if (ct_errno_abi_has_table(abi))
				rp_model_warn(m,
					      "%s: errno %d (%s in the trace's \"%.*s\" numbering) has no "
					      "counterpart in this reporter's: its events show errno %d",
					      p->file, err, name ? name : "no name",
					      (int)p->hdr.errno_abi.len, p->hdr.errno_abi.p, -err);
			else
				rp_model_warn(
					m,
					"%s: its errno values are in the \"%.*s\" numbering, which this "
					"reporter has no table for: its events show them negated and unnamed",
					p->file, (int)p->hdr.errno_abi.len, p->hdr.errno_abi.p);
			warned = true;
		}
		/* a negative value names nothing and still says the call failed */
		p->events[i].ev.err = own ? own : -err;
	}
}

/* ---- records kept: a decoded record's strings point into the stream's window, which moves on.
 * What the model keeps is re-decoded from a copy the process owns; the records that recur
 * (STATS, PROC, EVENT snapshots every flush) keep no copy unless their strings changed. */

static bool same_str(struct ct_str a, struct ct_str b)
{
	return a.len == b.len && (!a.len || memcmp(a.p, b.p, a.len) == 0);
}

/* rec, decoded again from a copy of its bytes the process owns (false: out of memory). */
static bool stabilize(struct rp_proc *p, const struct ct_stream *s, const struct ct_record *rec,
		      struct ct_record *out)
{
	size_t len;
	const uint8_t *raw = ct_stream_raw(s, rec, &len);
	char *copy = raw ? malloc(len) : NULL;
	if (!copy)
		return false;
	memcpy(copy, raw, len);
	if (!rp_proc_own(p, copy)) {
		free(copy);
		return false;
	}
	struct ct_reader one;
	return ct_decode_one(&one, (const uint8_t *)copy, len, rec->offset, s->r.version, out) ==
		       CT_READ_OK &&
	       out->type == rec->type;
}

static const struct rp_event *event_of(const struct rp_proc *p, uint32_t event_id)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].ev.event_id == event_id)
			return &p->events[i];
	return NULL;
}

static void apply_streamed(struct rp_proc *p, const struct ct_stream *s, struct ct_record *rec,
			   struct ct_record *scratch)
{
	switch (rec->type) {
	case CT_REC_STATS: /* no strings */
	case CT_REC_OPS:   /* counts only */
	case CT_REC_THREAD:
		apply_record(p, rec);
		return;
	case CT_REC_EVENT: {
		/* an event's strings are its identity: a later snapshot of it only counts on */
		const struct rp_event *old = event_of(p, rec->u.event.event_id);
		if (old && same_str(old->ev.call, rec->u.event.call) &&
		    same_str(old->ev.detail, rec->u.event.detail) &&
		    same_str(old->ev.callsite, rec->u.event.callsite)) {
			rec->u.event.call = old->ev.call;
			rec->u.event.detail = old->ev.detail;
			rec->u.event.callsite = old->ev.callsite;
			apply_record(p, rec);
			return;
		}
		break;
	}
	case CT_REC_PROC:
		if (p->has_proc && same_str(p->proc.crypto_libs, rec->u.proc.crypto_libs) &&
		    same_str(p->proc.libcrypto, rec->u.proc.libcrypto)) {
			rec->u.proc.crypto_libs = p->proc.crypto_libs;
			rec->u.proc.libcrypto = p->proc.libcrypto;
			apply_record(p, rec);
			return;
		}
		break;
	default:
		break;
	}
	if (stabilize(p, s, rec, scratch))
		apply_record(p, scratch);
}

/* What the first records of a trace say about its process. */
struct hdr_id {
	bool ok;
	uint32_t pid;
	uint64_t start_realtime_ns, start_mono_ns;
};

/* One trace being read: opened (its preamble judged) and its first record read before the
 * caller knows which process the records go to, so that the file is read once. */
struct trace_reader {
	struct ct_stream s;
	struct ct_record *rec;  /* two: the record and apply_streamed's scratch (~4 KiB each) */
	enum ct_read_status st; /* the open's status, then the first record's */
	bool first_pending;     /* rec holds the first record, not applied yet */
	struct hdr_id id;       /* the first record's, when it is the HEADER */
};

/* Opens a file (fd) or a buffer (map, len) and reads its first record. Returns the open's
 * status: CT_READ_NOT_TRACE or CT_READ_VERSION: not ours to read (err says why, nothing to
 * apply); anything else: reader_drain reads it into a process (a damaged start included). */
static enum ct_read_status reader_open(struct trace_reader *r, int fd, const void *map, size_t len,
				       bool skip_ops, char *err, size_t errcap)
{
	memset(r, 0, sizeof(*r));
	r->rec = malloc(2 * sizeof(*r->rec));
	if (!r->rec) {
		snprintf(err, errcap, "out of memory");
		return r->st = CT_READ_TRUNCATED;
	}
	enum ct_read_status st = fd >= 0 ? ct_stream_open_fd(&r->s, fd, UINT64_MAX)
					 : ct_stream_open_mem(&r->s, map, len);
	if (st != CT_READ_OK) {
		snprintf(err, errcap, "%s", r->s.r.error);
		return r->st = st;
	}
	r->st = ct_stream_next(&r->s, r->rec, skip_ops);
	if (r->st == CT_READ_OK) {
		r->first_pending = true;
		if (r->rec->type == CT_REC_HEADER)
			r->id = (struct hdr_id){ .ok = true,
						 .pid = r->rec->u.header.pid,
						 .start_realtime_ns = r->rec->u.header.start_realtime_ns,
						 .start_mono_ns = r->rec->u.header.start_mono_ns };
	}
	return CT_READ_OK;
}

static void reader_close(struct trace_reader *r)
{
	if (r->rec)
		ct_stream_close(&r->s);
	free(r->rec);
	r->rec = NULL;
}

/* Reads the opened trace on into p: every record up to the end or the damage, OPS batches
 * counted, and closes it. Returns the final status; *good_end where its whole records end;
 * err gets the message of a damaged or unreadable one. Every byte is read and its CRC checked
 * once, here (the damage stops the process's records where it is), unless only a window is
 * asked for; later passes (records.c) pass over the batches they do not need. */
static enum ct_read_status reader_drain(struct rp_proc *p, struct trace_reader *r, bool skip_ops,
					uint64_t *good_end, char *err, size_t errcap)
{
	enum ct_read_status st = r->st;
	if (r->rec) {
		if (r->first_pending)
			apply_streamed(p, &r->s, r->rec, r->rec + 1);
		while (st == CT_READ_OK && (st = ct_stream_next(&r->s, r->rec, skip_ops)) == CT_READ_OK)
			apply_streamed(p, &r->s, r->rec, r->rec + 1);
		*good_end = r->s.good_end;
		if (st != CT_READ_EOF)
			snprintf(err, errcap, "%s", r->s.r.error);
	}
	reader_close(r);
	return st;
}

/* The status and message of a process's load, once its last file is read. */
static int finish_proc(struct rp_model *m, struct rp_proc *p, enum ct_read_status st, const char *error,
		       const char *name, char *msg, size_t msgcap)
{
	redact_argv(p);
	errnos_to_own(m, p);
	/* no room for paths the process did not define: a path is ~5 KiB, and a spool holds
	 * thousands of one-path processes */
	if (p->npaths && p->npaths < p->cap_paths) {
		struct rp_path *fit = realloc(p->paths, p->npaths * sizeof(*p->paths));
		if (fit) {
			p->paths = fit;
			p->cap_paths = p->npaths;
		}
	}
	p->read_status = st;
	if (st == CT_READ_EOF) {
		msg[0] = 0;
		return 0;
	}
	snprintf(p->damage, sizeof(p->damage), "%s", error);
	snprintf(msg, msgcap, "%s: %s", name, error);
	return 1;
}

static bool add_part(struct rp_proc *p, const char *file, uint64_t end)
{
	char *f = strdup(file);
	if (!f || !rp_grow((void **)&p->parts, &p->cap_parts, p->nparts, sizeof(*p->parts))) {
		free(f);
		return false;
	}
	p->parts[p->nparts++] = (struct rp_trace_part){ .file = f, .end = end };
	return true;
}

/* Opens a trace file to read: a regular file, not followed through a symbolic link it is not. */
static int open_trace(const char *path, char *msg, size_t msgcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0) {
		snprintf(msg, msgcap, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(msg, msgcap, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* A new process for the trace `name`, or NULL with msg set (2). */
static struct rp_proc *new_proc(struct rp_model *m, const char *name, char *msg, size_t msgcap)
{
	struct rp_proc *p = rp_model_add_proc(m);
	char *fname = strdup(name);
	if (!p || !fname) {
		snprintf(msg, msgcap, "%s: out of memory", name);
		free(fname);
		return NULL;
	}
	p->file = fname;
	return p;
}

int rp_load_buffer(struct rp_model *m, const char *name, const void *buf, size_t len, char *msg,
		   size_t msgcap)
{
	/* the model keeps its own copy: later passes (records.c) read it again */
	void *copy = malloc(len ? len : 1);
	if (!copy) {
		snprintf(msg, msgcap, "%s: out of memory", name);
		return 2;
	}
	if (len)
		memcpy(copy, buf, len);
	char error[160] = "";
	struct trace_reader r;
	enum ct_read_status st = reader_open(&r, -1, copy, len, m->load_skips_ops, error, sizeof(error));
	struct rp_proc *p = NULL;
	if (st == CT_READ_NOT_TRACE || st == CT_READ_VERSION)
		snprintf(msg, msgcap, "%s: %s", name, error);
	else
		p = new_proc(m, name, msg, msgcap);
	if (!p) {
		reader_close(&r);
		free(copy);
		return 2;
	}
	p->map = copy;
	p->map_len = len;
	uint64_t good_end = 0;
	st = reader_drain(p, &r, m->load_skips_ops, &good_end, error, sizeof(error));
	return finish_proc(m, p, st, error, name, msg, msgcap);
}

int rp_load_file(struct rp_model *m, const char *path, char *msg, size_t msgcap)
{
	int fd = open_trace(path, msg, msgcap);
	if (fd < 0)
		return 2;
	char error[160] = "";
	struct trace_reader r;
	enum ct_read_status st = reader_open(&r, fd, NULL, 0, m->load_skips_ops, error, sizeof(error));
	struct rp_proc *p = NULL;
	if (st == CT_READ_NOT_TRACE || st == CT_READ_VERSION)
		snprintf(msg, msgcap, "%s: %s", path, error);
	else
		p = new_proc(m, path, msg, msgcap);
	if (!p) {
		reader_close(&r);
		close(fd);
		return 2;
	}
	uint64_t good_end = 0;
	st = reader_drain(p, &r, m->load_skips_ops, &good_end, error, sizeof(error));
	close(fd);
	add_part(p, path, good_end);
	return finish_proc(m, p, st, error, path, msg, msgcap);
}

/* ---- continuations: the writer starts "X.<pid>.ctrace.N" when the program closed its trace fd
 * (close_range, closefrom). Each file repeats the header and every cumulative snapshot, so the
 * files of one process are one record stream: appended in order, a later snapshot replaces an
 * earlier one by id and the per-call batches add up. */

struct trace_name {
	char *full;
	size_t base_len;    /* length of ".../X.<pid>.ctrace" */
	unsigned long part; /* 0: the first file, N: ".N" */
};

static int cmp_trace_name(const void *a, const void *b)
{
	const struct trace_name *x = a, *y = b;
	size_t n = x->base_len < y->base_len ? x->base_len : y->base_len;
	int c = memcmp(x->full, y->full, n);
	if (c)
		return c;
	if (x->base_len != y->base_len)
		return x->base_len < y->base_len ? -1 : 1;
	return x->part < y->part ? -1 : x->part > y->part;
}

static void report_rc(struct rp_model *m, FILE *err, int rc, const char *msg, int *worst)
{
	if (rc)
		fprintf(err, "cryptrace report: %s%s\n", rc == 1 ? "warning: " : "", msg);
	if (rc == 1)
		rp_model_warn(m, "%s", msg);
	if (rc == 2)
		m->files_unreadable++;
	if (rc > *worst)
		*worst = rc;
}

/* finish_proc for a process whose damage (if any) is already in p->damage */
static void finish_group_proc(struct rp_model *m, struct rp_proc *p, enum ct_read_status st, FILE *err,
			      int *worst)
{
	char damage[sizeof(p->damage)], msg[512];
	snprintf(damage, sizeof(damage), "%s", p->damage);
	int rc = finish_proc(m, p, st, damage, p->file, msg, sizeof(msg));
	report_rc(m, err, rc, msg, worst);
}

static bool same_process(const struct rp_proc *p, const struct hdr_id *id)
{
	return p->has_hdr && id->ok && id->pid == p->hdr.pid &&
	       id->start_realtime_ns == p->hdr.start_realtime_ns && id->start_mono_ns == p->hdr.start_mono_ns;
}

/* Loads the files of one base name (sorted by part): continuations of the same process (same
 * pid and start time in the header) are read on into the first file's process, a damaged file's
 * records up to the damage; a file that is not one (a reused pid, an exec'd image) is a process
 * of its own. One file is open at a time. */
static int load_group(struct rp_model *m, struct trace_name *g, size_t n, FILE *err)
{
	char msg[512], error[160] = "";
	int worst = 0;
	struct rp_proc *cur = NULL;
	size_t cur_index = 0; /* cur may move as the model grows: found again by index */
	const char *cur_name = NULL, *last_file = NULL;
	enum ct_read_status cur_st = CT_READ_EOF;
	for (size_t i = 0; i < n; i++) {
		int fd = open_trace(g[i].full, msg, sizeof(msg));
		if (fd < 0) {
			report_rc(m, err, 2, msg, &worst);
			continue;
		}
		struct trace_reader r;
		error[0] = 0;
		enum ct_read_status st =
			reader_open(&r, fd, NULL, 0, m->load_skips_ops, error, sizeof(error));
		cur = cur_name ? &m->procs[cur_index] : NULL;
		if (cur && st == CT_READ_OK && same_process(cur, &r.id)) {
			if (cur_st != CT_READ_EOF) {
				snprintf(msg, sizeof(msg), "%s: %s (continued in %s)", last_file,
					 cur->damage[0] ? cur->damage : error, g[i].full);
				report_rc(m, err, 1, msg, &worst);
			}
		} else {
			if (cur)
				finish_group_proc(m, cur, cur_st, err, &worst);
			cur = NULL;
			cur_name = NULL;
			if (st == CT_READ_NOT_TRACE || st == CT_READ_VERSION) {
				snprintf(msg, sizeof(msg), "%s: %s", g[i].full, error);
				report_rc(m, err, 2, msg, &worst);
				reader_close(&r);
				close(fd);
				continue;
			}
			cur = new_proc(m, g[i].full, msg, sizeof(msg));
			if (!cur) {
				report_rc(m, err, 2, msg, &worst);
				reader_close(&r);
				close(fd);
				continue;
			}
			cur_index = (size_t)(cur - m->procs);
			cur_name = cur->file;
		}
		uint64_t good_end = 0;
		error[0] = 0;
		cur_st = reader_drain(cur, &r, m->load_skips_ops, &good_end, error, sizeof(error));
		close(fd);
		add_part(cur, g[i].full, good_end);
		snprintf(cur->damage, sizeof(cur->damage), "%s", cur_st == CT_READ_EOF ? "" : error);
		last_file = g[i].full;
	}
	if (cur_name)
		finish_group_proc(m, &m->procs[cur_index], cur_st, err, &worst);
	return worst;
}

static int load_names(struct rp_model *m, struct trace_name *names, size_t n, FILE *err)
{
	int worst = 0;
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_trace_name); /* stable output order */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && names[j].base_len == names[i].base_len &&
		       memcmp(names[j].full, names[i].full, names[i].base_len) == 0)
			j++;
		int rc = load_group(m, names + i, j - i, err);
		if (rc > worst)
			worst = rc;
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i].full);
	return worst;
}

static bool add_name(struct trace_name **names, size_t *n, size_t *cap, char *full, long part)
{
	if (!rp_grow((void **)names, cap, *n, sizeof(**names)))
		return false;
	size_t len = strlen(full);
	if (part > 0)
		len = (size_t)(strrchr(full, '.') - full);
	(*names)[(*n)++] = (struct trace_name){ .full = full, .base_len = len, .part = (unsigned long)part };
	return true;
}

static void free_names(struct trace_name *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i].full);
	free(names);
}

/* A spool's per-user directory is named by the uid alone (docs/fleet.md). */
static bool is_uid_name(const char *name)
{
	if (!*name || strlen(name) > 10)
		return false;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

/* The trace files of directory dfd (named path; dfd is closed here). A spool root
 * (spool_root) also lends the trace files of its per-user directories, one level down, so
 * that `report`, `export` and `serve` take the spool itself. Nothing is followed: a symlink
 * planted in a shared directory is not a trace of this run (the writer never writes through
 * one), and a per-user directory is opened with O_NOFOLLOW relative to its parent. false: the
 * directory could not be read (errno says why). */
static bool list_dir(int dfd, const char *path, bool spool_root, struct trace_name **names, size_t *n,
		     size_t *cap)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		errno = e;
		return false;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat fs;
		if (fstatat(dirfd(d), de->d_name, &fs, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		size_t need = strlen(path) + strlen(de->d_name) + 2;
		char *full = malloc(need);
		if (!full)
			break;
		snprintf(full, need, "%s/%s", path, de->d_name);
		long part = ct_trace_name_part(de->d_name);
		if (S_ISREG(fs.st_mode) && part >= 0 && add_name(names, n, cap, full, part))
			continue;
		if (spool_root && S_ISDIR(fs.st_mode) && is_uid_name(de->d_name)) {
			int sub =
				openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				list_dir(sub, full, false, names, n, cap); /* unreadable: skipped */
		}
		free(full);
	}
	closedir(d);
	return true;
}

/* "X.ctrace.N" given by name after "X.ctrace" (a shell glob does that): its records are already
 * in X.ctrace's process when its header is that process's. */
static bool already_loaded(const struct rp_model *m, const char *path)
{
	const char *dot = strrchr(path, '.');
	size_t base_len = dot ? (size_t)(dot - path) : 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (p->file && !strcmp(p->file, path))
			return true;
		if (!p->file || strlen(p->file) != base_len || strncmp(p->file, path, base_len) ||
		    !p->has_hdr)
			continue;
		char msg[256], error[160];
		int fd = open_trace(path, msg, sizeof(msg));
		if (fd < 0)
			return false;
		struct trace_reader r;
		bool same = reader_open(&r, fd, NULL, 0, true, error, sizeof(error)) == CT_READ_OK &&
			    same_process(p, &r.id);
		reader_close(&r);
		close(fd);
		if (same)
			return true;
	}
	return false;
}

bool rp_dir_has_traces(const char *dir)
{
	struct trace_name *names = NULL;
	size_t n = 0, cap = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !list_dir(dfd, dir, true, &names, &n, &cap))
		return true; /* let the loader say why */
	free_names(names, n);
	return n > 0;
}

int rp_load_path(struct rp_model *m, const char *path, FILE *err)
{
	char msg[512];
	struct stat sb;
	struct trace_name *names = NULL;
	size_t n = 0, cap = 0;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || !list_dir(dfd, path, true, &names, &n, &cap)) {
			fprintf(err, "cryptrace report: %s: %s\n", path, strerror(errno));
			free_names(names, n);
			return 2;
		}
		if (n == 0) {
			fprintf(err, "cryptrace report: %s: no .ctrace files in this directory\n", path);
			free(names);
			return 2;
		}
		int rc = load_names(m, names, n, err);
		free(names);
		return rc;
	}
	/* One file named "X.ctrace": its continuations X.ctrace.1, .2... beside it belong to it. */
	long part = ct_trace_name_part(path);
	if (part == 0) {
		char *full = strdup(path);
		if (full && add_name(&names, &n, &cap, full, 0)) {
			for (unsigned k = 1; k < 1000; k++) {
				size_t need = strlen(path) + 12;
				char *c = malloc(need);
				if (!c)
					break;
				snprintf(c, need, "%s.%u", path, k);
				struct stat fs;
				if (stat(c, &fs) != 0 || !S_ISREG(fs.st_mode) ||
				    !add_name(&names, &n, &cap, c, k)) {
					free(c);
					break;
				}
			}
			int rc = load_names(m, names, n, err);
			free(names);
			return rc;
		}
		free(full);
		free(names);
	}
	if (part > 0 && already_loaded(m, path))
		return 0;
	int worst = 0;
	int rc = rp_load_file(m, path, msg, sizeof(msg));
	report_rc(m, err, rc, msg, &worst);
	return rc;
}
