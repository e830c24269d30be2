/* SPDX-License-Identifier: MIT */
/*
 * load.c - reads trace files into the model: validates, decodes every record, and keeps the
 * newest snapshot per id. A damaged file keeps everything read before the damage.
 */
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
	default: /* CT_REC_THREAD: names only, not reported yet */
		break;
	}
}

/* Takes ownership of buf (malloc'd). */
static int load_owned(struct rp_model *m, const char *name, void *buf, size_t len, char *msg,
		      size_t msgcap)
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

int rp_load_file(struct rp_model *m, const char *path, char *msg, size_t msgcap)
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
			char *nb = cap < ((size_t)1 << 40) ? realloc(buf, cap * 2) : NULL;
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
	return load_owned(m, path, buf, len, msg, msgcap);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_ctrace(const char *name)
{
	size_t n = strlen(name);
	return n > 7 && strcmp(name + n - 7, ".ctrace") == 0;
}

int rp_load_path(struct rp_model *m, const char *path, FILE *err)
{
	char msg[512];
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		DIR *d = opendir(path);
		if (!d) {
			fprintf(err, "cryptrace report: %s: %s\n", path, strerror(errno));
			return 2;
		}
		char **names = NULL;
		size_t n = 0, cap = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (!is_ctrace(de->d_name))
				continue;
			size_t need = strlen(path) + strlen(de->d_name) + 2;
			char *full = malloc(need);
			if (!full)
				break;
			snprintf(full, need, "%s/%s", path, de->d_name);
			struct stat fs;
			if (stat(full, &fs) != 0 || !S_ISREG(fs.st_mode)) {
				free(full);
				continue;
			}
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 16;
				char **nn = realloc(names, ncap * sizeof(*names));
				if (!nn) {
					free(full);
					break;
				}
				names = nn;
				cap = ncap;
			}
			names[n++] = full;
		}
		closedir(d);
		int worst = 0;
		if (n == 0) {
			fprintf(err, "cryptrace report: %s: no .ctrace files in this directory\n", path);
			worst = 2;
		}
		if (n > 1)
			qsort(names, n, sizeof(*names), cmp_str); /* stable output order */
		for (size_t i = 0; i < n; i++) {
			int rc = rp_load_file(m, names[i], msg, sizeof(msg));
			if (rc)
				fprintf(err, "cryptrace report: %s%s\n", rc == 1 ? "warning: " : "", msg);
			if (rc > worst)
				worst = rc;
			if (rc == 1)
				rp_model_warn(m, "%s", msg);
			free(names[i]);
		}
		free(names);
		return worst;
	}
	int rc = rp_load_file(m, path, msg, sizeof(msg));
	if (rc)
		fprintf(err, "cryptrace report: %s%s\n", rc == 1 ? "warning: " : "", msg);
	if (rc == 1)
		rp_model_warn(m, "%s", msg);
	return rc;
}
