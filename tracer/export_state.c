/* SPDX-License-Identifier: MIT */
/*
 * export_state.c - what `cryptrace export` remembers between runs, so that an exported counter
 * never goes backwards when a process exits or its trace leaves the spool (export.h).
 *
 * A process is known by its pid and start time (its continuations X.ctrace.N share them). Three
 * sets, each bounded: the retired totals per series (as many as the series), the finished
 * traces already retired and still in the spool (so they are not added twice; forgotten once
 * their file is gone, since it cannot come back), and the live traces' counters as last seen
 * (retired as such when the trace vanishes before its END: what it did after the last export is
 * lost, never subtracted). A live trace's counters are kept per series as the larger of the last
 * seen and the new: a trace rewritten with smaller numbers (anyone may write into a spool) cannot
 * make a counter go down.
 *
 * The file is text, a line per entry; label texts are the escaped ones of openmetrics.c (no line
 * feed in them):
 *   cryptrace-export-state 1
 *   R <calls> <bytes> <seconds> <labels>        retired totals
 *   D <id>                                      a finished trace already retired
 *   L <id> <calls> <bytes> <seconds> <labels>   a live trace's counters, last seen
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"

#define STATE_MAGIC "cryptrace-export-state 1"
#define STATE_LINE_MAX 16384
#define ID_MAX 48

struct trace_entry {
	char id[ID_MAX];
	struct rp_om_counters c; /* L: last seen; D: empty */
	bool seen;               /* in the spool this run */
};

struct entries {
	struct trace_entry *v;
	size_t n, cap;
};

struct ct_export_state {
	struct rp_om_counters retired;
	struct entries done, live;
};

static struct trace_entry *find(struct entries *e, const char *id)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->v[i].id, id))
			return &e->v[i];
	return NULL;
}

static struct trace_entry *add(struct entries *e, const char *id)
{
	struct trace_entry *t = find(e, id);
	if (t)
		return t;
	if (!rp_grow((void **)&e->v, &e->cap, e->n, sizeof(*e->v)))
		return NULL;
	t = &e->v[e->n++];
	snprintf(t->id, sizeof(t->id), "%s", id);
	return t;
}

static void drop(struct entries *e, size_t i)
{
	rp_om_counters_free(&e->v[i].c);
	e->v[i] = e->v[--e->n];
}

static void add_all(struct rp_om_counters *to, const struct rp_om_counters *from)
{
	for (size_t i = 0; i < from->n; i++)
		rp_om_add(to, from->v[i].labels, from->v[i].calls, from->v[i].bytes, from->v[i].seconds);
	to->dropped += from->dropped;
}

/* into, per series, the larger of into's and now's figures (series of either) */
static void merge_max(struct rp_om_counters *into, const struct rp_om_counters *now)
{
	for (size_t i = 0; i < now->n; i++) {
		const struct rp_om_counter *x = &now->v[i];
		struct rp_om_counter *y = NULL;
		for (size_t k = 0; k < into->n && !y; k++)
			if (!strcmp(into->v[k].labels, x->labels))
				y = &into->v[k];
		if (!y) {
			rp_om_add(into, x->labels, x->calls, x->bytes, x->seconds);
			continue;
		}
		y->calls = x->calls > y->calls ? x->calls : y->calls;
		y->bytes = x->bytes > y->bytes ? x->bytes : y->bytes;
		y->seconds = x->seconds > y->seconds ? x->seconds : y->seconds;
	}
}

/* "R 1 2 0.5 api=..." and "L id 1 2 0.5 api=...": the numbers and the labels after them */
static bool parse_counter(char *s, struct rp_om_counters *c)
{
	char *end;
	errno = 0;
	unsigned long long calls = strtoull(s, &end, 10);
	if (end == s || *end != ' ')
		return false;
	s = end + 1;
	unsigned long long bytes = strtoull(s, &end, 10);
	if (end == s || *end != ' ')
		return false;
	s = end + 1;
	double seconds = strtod(s, &end);
	if (end == s || *end != ' ' || errno || !(seconds >= 0))
		return false;
	s = end + 1;
	if (!*s)
		return false;
	rp_om_add(c, s, calls, bytes, seconds);
	return true;
}

static bool parse_line(struct ct_export_state *s, char *line)
{
	if (line[0] == 'R' && line[1] == ' ')
		return parse_counter(line + 2, &s->retired);
	if ((line[0] == 'D' || line[0] == 'L') && line[1] == ' ') {
		char *id = line + 2, *sp = strchr(id, ' ');
		if (line[0] == 'L' && !sp)
			return false;
		if (sp)
			*sp = 0;
		if (!*id || strlen(id) >= ID_MAX)
			return false;
		struct trace_entry *t = add(line[0] == 'D' ? &s->done : &s->live, id);
		if (!t)
			return false;
		return line[0] == 'D' ? !sp : parse_counter(sp + 1, &t->c);
	}
	return false;
}

struct ct_export_state *ct_export_state_new(void)
{
	return calloc(1, sizeof(struct ct_export_state));
}

struct ct_export_state *ct_export_state_load(const char *path, char *msg, size_t cap)
{
	struct ct_export_state *s = ct_export_state_new();
	if (!s) {
		snprintf(msg, cap, "out of memory");
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return s; /* the first run */
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		snprintf(msg, cap, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(s);
		return NULL;
	}
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	bool ok = true;
	while (ok && (len = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		if (len > STATE_LINE_MAX || len == 0 || line[len - 1] != '\n') {
			ok = false;
			break;
		}
		line[len - 1] = 0;
		ok = lineno == 1 ? !strcmp(line, STATE_MAGIC) : parse_line(s, line);
	}
	if (ok && lineno == 0)
		ok = false;
	free(line);
	fclose(f);
	if (!ok) {
		snprintf(msg, cap,
			 "%s: not a cryptrace export state (line %lu); move it away to count from zero "
			 "(every exported counter then restarts, which Prometheus takes as a reset)",
			 path, lineno);
		ct_export_state_free(s);
		return NULL;
	}
	return s;
}

static void proc_id(const struct rp_proc *p, char *id, size_t cap)
{
	snprintf(id, cap, "%" PRIu32 ".%" PRIu64, p->hdr.pid, p->hdr.start_realtime_ns);
}

void ct_export_state_update(struct ct_export_state *s, const struct rp_model *m)
{
	for (size_t i = 0; i < s->done.n; i++)
		s->done.v[i].seen = false;
	for (size_t i = 0; i < s->live.n; i++)
		s->live.v[i].seen = false;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p) || !p->has_hdr)
			continue;
		char id[ID_MAX];
		proc_id(p, id, sizeof(id));
		struct trace_entry *d = find(&s->done, id);
		if (d) { /* retired already: counted once */
			d->seen = true;
			continue;
		}
		struct rp_om_counters now = { 0 };
		rp_om_proc_counters(m, p, &now);
		struct trace_entry *l = add(&s->live, id);
		if (!l) {
			rp_om_counters_free(&now);
			continue;
		}
		merge_max(&l->c, &now);
		rp_om_counters_free(&now);
		l->seen = true;
		if (p->has_end) { /* finished: retire it now, remember it while its file is there */
			add_all(&s->retired, &l->c);
			size_t k = (size_t)(l - s->live.v);
			drop(&s->live, k);
			d = add(&s->done, id);
			if (d)
				d->seen = true;
		}
	}
	for (size_t i = s->live.n; i-- > 0;) /* gone before their END: retired as last seen */
		if (!s->live.v[i].seen) {
			add_all(&s->retired, &s->live.v[i].c);
			drop(&s->live, i);
		}
	for (size_t i = s->done.n; i-- > 0;) /* their files are gone: they cannot come back */
		if (!s->done.v[i].seen)
			drop(&s->done, i);
}

void ct_export_state_totals(const struct ct_export_state *s, struct rp_om_counters *out)
{
	add_all(out, &s->retired);
	for (size_t i = 0; i < s->live.n; i++)
		add_all(out, &s->live.v[i].c);
}

static void put_counters(FILE *f, const char *tag, const char *id, const struct rp_om_counters *c)
{
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, "%s%s%s %llu %llu %.17g %s\n", tag, id ? " " : "", id ? id : "",
			(unsigned long long)c->v[i].calls, (unsigned long long)c->v[i].bytes, c->v[i].seconds,
			c->v[i].labels);
}

static void fill_state(FILE *f, void *ctx)
{
	const struct ct_export_state *s = ctx;
	fputs(STATE_MAGIC "\n", f);
	put_counters(f, "R", NULL, &s->retired);
	for (size_t i = 0; i < s->done.n; i++)
		fprintf(f, "D %s\n", s->done.v[i].id);
	for (size_t i = 0; i < s->live.n; i++)
		put_counters(f, "L", s->live.v[i].id, &s->live.v[i].c);
}

bool ct_export_state_save(const struct ct_export_state *s, const char *path, char *msg, size_t cap)
{
	return ct_write_atomic(path, 0600, fill_state, (void *)s, msg, cap);
}

void ct_export_state_free(struct ct_export_state *s)
{
	if (!s)
		return;
	rp_om_counters_free(&s->retired);
	while (s->done.n)
		drop(&s->done, 0);
	while (s->live.n)
		drop(&s->live, 0);
	free(s->done.v);
	free(s->live.v);
	free(s);
}

bool ct_write_atomic(const char *path, unsigned mode, void (*fill)(FILE *f, void *ctx), void *ctx, char *msg,
		     size_t cap)
{
	size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp) {
		snprintf(msg, cap, "%s: out of memory", path);
		return false;
	}
	/* beside the target, so that rename is atomic; not named *.prom, so that node_exporter never
	 * reads a half-written one */
	snprintf(tmp, n, "%s.tmpXXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(msg, cap, "%s: %s", fd >= 0 ? tmp : path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return false;
	}
	fill(f, ctx);
	bool ok = fflush(f) == 0 && !ferror(f) && fchmod(fd, mode) == 0 && fsync(fd) == 0;
	int err = errno;
	ok = fclose(f) == 0 && ok;
	if (ok && rename(tmp, path) != 0) {
		err = errno;
		ok = false;
	}
	if (!ok) {
		snprintf(msg, cap, "%s: %s", path, strerror(err ? err : EIO));
		unlink(tmp);
	}
	free(tmp);
	return ok;
}

int ct_export_state_lock(const char *state, unsigned wait_s, const char *who)
{
	size_t n = strlen(state) + 8;
	char *path = malloc(n);
	if (!path) {
		fprintf(stderr, "cryptrace %s: out of memory\n", who);
		return -1;
	}
	snprintf(path, n, "%s.lock", state);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* the default directory is systemd's StateDirectory=: by hand it may not exist yet */
		fprintf(stderr, "cryptrace %s: %s: %s%s\n", who, path, strerror(errno),
			errno == ENOENT ? " (make its directory, or give --state FILE)" : "");
		free(path);
		return -1;
	}
	for (unsigned waited_ms = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited_ms += 100) {
		if (errno != EWOULDBLOCK || waited_ms >= wait_s * 1000u) {
			fprintf(stderr, "cryptrace %s: %s: %s\n", who, state,
				errno == EWOULDBLOCK
					? "in use by another cryptrace export or serve (each needs a state "
					  "file of its own)"
					: strerror(errno));
			close(fd);
			free(path);
			return -1;
		}
		usleep(100000);
	}
	free(path);
	return fd;
}
