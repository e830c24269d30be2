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

/* Takes ownership of buf (malloc'd). */
static int load_owned(struct rp_model *m, const char *name, void *buf, size_t len, char *msg, size_t msgcap)
{
	struct ct_reader r;
	enum ct_read_status st = ct_reader_init(&r, buf, len);
	if (st == CT_READ_NOT_TRACE || st == CT_READ_VERSION) {
		snprintf(msg, msgcap, "%s: %s", name, r.error);
		free(buf);
		return 2;
	}
	struct rp_proc *p = rp_model_add_proc(m);
	char *fname = strdup(name);
	if (!p || !fname) {
		snprintf(msg, msgcap, "%s: out of memory", name);
		free(fname);
		free(buf);
		return 2;
	}
	p->file = fname;
	p->map = buf;
	p->map_len = len;
	if (st == CT_READ_OK) {
		struct ct_record *rec = malloc(sizeof(*rec)); /* ~4 KiB: keep it off small stacks */
		if (!rec) {
			snprintf(msg, msgcap, "%s: out of memory", name);
			return 2;
		}
		while ((st = ct_reader_next(&r, rec)) == CT_READ_OK)
			apply_record(p, rec);
		free(rec);
	}
	redact_argv(p);
	errnos_to_own(m, p);
	p->read_status = st;
	if (st == CT_READ_EOF) {
		msg[0] = 0;
		return 0;
	}
	snprintf(p->damage, sizeof(p->damage), "%s", r.error);
	snprintf(msg, msgcap, "%s: %s", name, r.error);
	return 1;
}

int rp_load_buffer(struct rp_model *m, const char *name, const void *buf, size_t len, char *msg,
		   size_t msgcap)
{
	void *copy = malloc(len ? len : 1);
	if (!copy) {
		snprintf(msg, msgcap, "%s: out of memory", name);
		return 2;
	}
	if (len)
		memcpy(copy, buf, len);
	return load_owned(m, name, copy, len, msg, msgcap);
}

/* Reads a whole regular file into a malloc'd buffer. Returns 0, or 2 with msg set. */
static int read_whole(const char *path, char **out, size_t *outlen, char *msg, size_t msgcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msgcap, "%s: %s", path, strerror(errno));
		return 2;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(msg, msgcap, "%s: not a regular file", path);
		close(fd);
		return 2;
	}
	/* Read rather than mmap: a trace still being written (or cut) must not SIGBUS us. */
	size_t cap = (size_t)sb.st_size + 1, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		snprintf(msg, msgcap, "%s: out of memory", path);
		close(fd);
		return 2;
	}
	for (;;) {
		if (len == cap) {
			/* up to 1 TiB, or what size_t can count on a 32-bit target */
			char *nb = cap <= SIZE_MAX / 2 && (uint64_t)cap * 2 <= ((uint64_t)1 << 40)
					   ? realloc(buf, cap * 2)
					   : NULL;
			if (!nb) {
				snprintf(msg, msgcap, "%s: out of memory", path);
				free(buf);
				close(fd);
				return 2;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(msg, msgcap, "%s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return 2;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*outlen = len;
	return 0;
}

int rp_load_file(struct rp_model *m, const char *path, char *msg, size_t msgcap)
{
	char *buf;
	size_t len;
	if (read_whole(path, &buf, &len, msg, msgcap))
		return 2;
	return load_owned(m, path, buf, len, msg, msgcap);
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

/* "*.ctrace" -> 0, "*.ctrace.N" -> N, anything else -> -1 */
static long trace_part(const char *name)
{
	const char *dot = strstr(name, ".ctrace");
	long part = -1;
	while (dot) {
		const char *rest = dot + 7;
		if (*rest == 0 && dot > name) {
			part = 0;
		} else if (*rest == '.' && rest[1] >= '0' && rest[1] <= '9' && dot > name) {
			char *end;
			errno = 0;
			unsigned long n = strtoul(rest + 1, &end, 10);
			if (*end == 0 && !errno && n > 0 && n < 1000000)
				part = (long)n;
		}
		dot = strstr(dot + 1, ".ctrace");
	}
	return part;
}

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

struct hdr_id {
	bool ok;
	uint32_t pid;
	uint64_t start_realtime_ns, start_mono_ns;
	size_t first_record; /* offset of the first record (after the preamble) */
	size_t good_end;     /* end of the last whole record */
	enum ct_read_status st;
	char error[160];
};

static void scan_ids(const char *buf, size_t len, struct hdr_id *id)
{
	struct ct_reader r;
	memset(id, 0, sizeof(*id));
	id->st = ct_reader_init(&r, (const uint8_t *)buf, len);
	if (id->st != CT_READ_OK) {
		snprintf(id->error, sizeof(id->error), "%s", r.error);
		return;
	}
	id->first_record = r.off;
	struct ct_record *rec = malloc(sizeof(*rec));
	if (!rec)
		return;
	size_t before = r.off;
	while ((id->st = ct_reader_next(&r, rec)) == CT_READ_OK) {
		if (rec->type == CT_REC_HEADER && !id->ok) {
			id->ok = true;
			id->pid = rec->u.header.pid;
			id->start_realtime_ns = rec->u.header.start_realtime_ns;
			id->start_mono_ns = rec->u.header.start_mono_ns;
		}
		before = r.off;
	}
	id->good_end = before;
	if (id->st != CT_READ_EOF)
		snprintf(id->error, sizeof(id->error), "%s", r.error);
	free(rec);
}

static void report_rc(struct rp_model *m, FILE *err, int rc, const char *msg, int *worst)
{
	if (rc)
		fprintf(err, "cryptrace report: %s%s\n", rc == 1 ? "warning: " : "", msg);
	if (rc == 1)
		rp_model_warn(m, "%s", msg);
	if (rc > *worst)
		*worst = rc;
}

/* Loads the files of one base name (sorted by part): continuations of the same process (same
 * pid and start time in the header) are appended to the first file's records; a file that is
 * not one (a reused pid, an exec'd image) is a process of its own. */
static int load_group(struct rp_model *m, struct trace_name *g, size_t n, FILE *err)
{
	char msg[512];
	int worst = 0;
	char *acc = NULL;
	size_t acc_len = 0;
	const char *acc_name = NULL;
	struct hdr_id acc_id = { 0 };
	for (size_t i = 0; i <= n; i++) {
		char *buf = NULL;
		size_t len = 0;
		struct hdr_id id = { 0 };
		if (i < n) {
			int rc = read_whole(g[i].full, &buf, &len, msg, sizeof(msg));
			if (rc) {
				report_rc(m, err, rc, msg, &worst);
				continue;
			}
			scan_ids(buf, len, &id);
			bool continues = acc && id.ok && acc_id.ok && id.pid == acc_id.pid &&
					 id.start_realtime_ns == acc_id.start_realtime_ns &&
					 id.start_mono_ns == acc_id.start_mono_ns;
			if (continues) {
				if (acc_id.st != CT_READ_EOF) {
					snprintf(msg, sizeof(msg), "%s: %s (continued in %s)", acc_name,
						 acc_id.error, g[i].full);
					report_rc(m, err, 1, msg, &worst);
				}
				size_t keep = acc_id.good_end, add = len - id.first_record;
				char *nb = realloc(acc, keep + add + 1);
				if (!nb) {
					free(buf);
					continue;
				}
				memcpy(nb + keep, buf + id.first_record, add);
				free(buf);
				acc = nb;
				acc_len = keep + add;
				/* the stream now ends where this file ends */
				acc_id.st = id.st;
				acc_id.good_end = keep + (id.good_end - id.first_record);
				snprintf(acc_id.error, sizeof(acc_id.error), "%s", id.error);
				continue;
			}
		}
		if (acc) {
			int rc = load_owned(m, acc_name, acc, acc_len, msg, sizeof(msg));
			report_rc(m, err, rc, msg, &worst);
		}
		acc = buf;
		acc_len = len;
		acc_id = id;
		acc_name = i < n ? g[i].full : NULL;
	}
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
		char *buf, msg[256];
		size_t len;
		struct hdr_id id;
		if (read_whole(path, &buf, &len, msg, sizeof(msg)))
			return false;
		scan_ids(buf, len, &id);
		free(buf);
		if (id.ok && id.pid == p->hdr.pid && id.start_realtime_ns == p->hdr.start_realtime_ns &&
		    id.start_mono_ns == p->hdr.start_mono_ns)
			return true;
	}
	return false;
}

int rp_load_path(struct rp_model *m, const char *path, FILE *err)
{
	char msg[512];
	struct stat sb;
	struct trace_name *names = NULL;
	size_t n = 0, cap = 0;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		DIR *d = opendir(path);
		if (!d) {
			fprintf(err, "cryptrace report: %s: %s\n", path, strerror(errno));
			return 2;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			long part = trace_part(de->d_name);
			if (part < 0)
				continue;
			size_t need = strlen(path) + strlen(de->d_name) + 2;
			char *full = malloc(need);
			if (!full)
				break;
			snprintf(full, need, "%s/%s", path, de->d_name);
			/* lstat: a symlink planted in a shared output directory is not followed (the
			 * writer never writes through one, so it is not a trace of this run) */
			struct stat fs;
			if (lstat(full, &fs) != 0 || !S_ISREG(fs.st_mode) ||
			    !add_name(&names, &n, &cap, full, part)) {
				free(full);
				continue;
			}
		}
		closedir(d);
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
	long part = trace_part(path);
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
