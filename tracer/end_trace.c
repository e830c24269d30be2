/* SPDX-License-Identifier: MIT */
/*
 * end_trace.c - the end of a trace whose process could not write it. The preload writes END from
 * the process's exit handlers; a program that leaves through the exit_group system call without
 * them (every Go program: its runtime never calls libc's exit, even when main returns) ends with
 * its trace open, and the report called age, which exited 0, "incomplete". The launcher is that
 * process's parent and knows its exit status, so after waiting for it, it completes the trace:
 * a trace-warning event saying what happened and what that means for the figures, then END.
 *
 * Only the command the launcher started itself (its child), only when it exited (a signal death
 * is another story: the process was stopped, the trace says so by having no END), and only a file
 * that reads cleanly to its end without END: the newest image of that pid (an exec'd program
 * writes a new file; the earlier ones end with END(exec)). The file is appended to with one
 * write, never followed through a symbolic link.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "trace_format.h"
#include "trace_stream.h"
#include "tracer.h"

/* What one trace file of the pid says about itself. */
struct file_state {
	bool clean; /* read to a clean end */
	bool ended; /* has END */
	bool has_header;
	uint32_t pid;
	uint64_t start_mono_ns;
	uint64_t last_mono_ns; /* the newest snapshot: its last PROC, else its start */
	uint32_t max_event_id;
	uint64_t paths; /* STATS records seen: crypto work was recorded */
};

static bool inspect(const char *path, struct file_state *fs)
{
	memset(fs, 0, sizeof(*fs));
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	/* streamed, per-call batches passed over unread: a multi-GB trace costs little memory */
	struct ct_stream s;
	struct ct_record *rec = malloc(sizeof(*rec));
	enum ct_read_status st = rec ? ct_stream_open_fd(&s, fd, UINT64_MAX) : CT_READ_CORRUPT;
	bool opened = rec != NULL;

	while (st == CT_READ_OK && (st = ct_stream_next(&s, rec, true)) == CT_READ_OK) {
		switch (rec->type) {
		case CT_REC_HEADER:
			fs->has_header = true;
			fs->pid = rec->u.header.pid;
			fs->start_mono_ns = fs->last_mono_ns = rec->u.header.start_mono_ns;
			break;
		case CT_REC_PROC:
			fs->last_mono_ns = rec->u.proc.mono_ns;
			break;
		case CT_REC_EVENT:
			if (rec->u.event.event_id > fs->max_event_id)
				fs->max_event_id = rec->u.event.event_id;
			break;
		case CT_REC_STATS:
			fs->paths++;
			break;
		case CT_REC_END:
			fs->ended = true;
			break;
		default:
			break;
		}
	}
	fs->clean = st == CT_READ_EOF;
	if (opened)
		ct_stream_close(&s);
	close(fd);
	free(rec);
	return true;
}

/* "<comm>.<pid>.ctrace" or "<comm>.<pid>.ctrace.<n>". */
static bool names_pid(const char *name, uint32_t pid)
{
	char want[32];
	int n = snprintf(want, sizeof(want), ".%u.ctrace", pid);
	const char *at = strstr(name, want);

	return at && (at[n] == '\0' || (at[n] == '.' && at[n + 1] >= '0' && at[n + 1] <= '9'));
}

bool ct_end_trace_complete(const char *outdir, uint32_t pid, int status, uint64_t end_mono_ns)
{
	char **names;
	int n = ct_outdir_list(outdir, &names);
	char best[PATH_MAX] = "";
	struct file_state best_fs = { 0 };

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct file_state fs;

		if (!names_pid(names[i], pid) ||
		    snprintf(path, sizeof(path), "%s/%s", outdir, names[i]) >= (int)sizeof(path) ||
		    !inspect(path, &fs) || !fs.has_header || fs.pid != pid)
			continue;
		/* the newest image of the pid decides: when it ended, nothing is left to do */
		if (!best[0] || fs.start_mono_ns >= best_fs.start_mono_ns) {
			snprintf(best, sizeof(best), "%s", path);
			best_fs = fs;
		}
	}
	if (n > 0)
		ct_names_free(names, n);
	if (!best[0] || best_fs.ended || !best_fs.clean)
		return false;

	char detail[400];
	double since = (double)(best_fs.last_mono_ns - best_fs.start_mono_ns) / 1e9;

	snprintf(detail, sizeof(detail),
		 "the process exited with status %d without running its exit "
		 "handlers (it called exit_group directly, as Go programs do, or _exit), so it could "
		 "not close its trace; cryptrace run recorded its exit status. %s (%.3f s after it "
		 "started) %s",
		 status,
		 best_fs.paths ? "Cipher calls after its last snapshot"
			       : "It recorded no cipher call; any after its last snapshot",
		 since, best_fs.paths ? "are not in this trace" : "would not be in this trace");
	struct ct_event ev = {
		.event_id = best_fs.max_event_id + 1,
		.kind = CT_EV_TRACE_WARNING,
		.path_id = CT_NO_PATH,
		.tid = pid,
		.first_mono_ns = end_mono_ns,
		.last_mono_ns = end_mono_ns,
		.count = 1,
		.call = ct_str_from(RP_EXIT_UNSEEN_CALL),
		.detail = ct_str_from(detail),
		.callsite = ct_str_from(""),
	};
	struct ct_end end = { .mono_ns = end_mono_ns, .reason = CT_END_EXIT, .status = status };
	uint8_t buf[2048];
	size_t used = ct_encode_event(buf, sizeof(buf), &ev);
	size_t m = used ? ct_encode_end(buf + used, sizeof(buf) - used, &end) : 0;

	if (!m)
		return false;
	used += m;
	int fd = open(best, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	bool ok = ct_write_all(fd, buf, used);

	if (close(fd) != 0)
		ok = false;
	return ok;
}
