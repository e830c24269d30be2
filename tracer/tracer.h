/* SPDX-License-Identifier: MIT */
/*
 * tracer.h - what the subcommands of `cryptrace` (commands.h) share: their help texts, starting
 * children, finding the preload library, inspecting the command's ELF file, preparing the output
 * directory, writing or completing a trace file the preload could not, and the AES-NI bound the
 * preload is given. Nothing here is visible to the preload.
 */
#ifndef CT_TRACER_H
#define CT_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

/* Exit codes of the launcher itself (a traced command's own status passes through unchanged). */
#define CT_EXIT_USAGE 2       /* bad option, missing command, unusable output directory */
#define CT_EXIT_NOT_EXEC 126  /* the command exists but cannot be executed */
#define CT_EXIT_NOT_FOUND 127 /* the command was not found */

/* usage.c */
/* "cryptrace COMMAND: <fmt with arg> (try: cryptrace help COMMAND)" on stderr, or without a
 * command "cryptrace: ... (try: cryptrace --help)"; returns CT_EXIT_USAGE. */
int ct_usage_error(const char *command, const char *fmt, const char *arg);
/* The usage error for what getopt_long returned when it was none of the command's options:
 * ':' (with a leading ':' in the optstring) a missing argument, else an unknown option. */
int ct_option_error(const char *command, int c, char **argv);
/* A route spec (--route) the preload will take, else false with one line on stderr: "cryptrace
 * COMMAND: bad route spec at 12: ... (see docs/routes.md)". */
bool ct_route_spec_ok(const char *command, const char *spec);
void ct_usage_main(FILE *out);
void ct_usage_run(FILE *out);
void ct_usage_compare(FILE *out);
void ct_usage_doctor(FILE *out);
void ct_usage_prune(FILE *out);
void ct_usage_report(FILE *out);
void ct_usage_export(FILE *out);
void ct_usage_serve(FILE *out);
void ct_usage_attach(FILE *out);
void ct_version(FILE *out);

/* spawn.c: the launcher's children. */
/* Puts lib in front of LD_PRELOAD (keeping the user's own preloads, never twice). */
void ct_set_preload(const char *lib);
/* In a child about to exec a traced command: the preload (ct_set_preload), CRYPTRACE_OUT and,
 * when known (non-zero), CRYPTRACE_AESNI_CPB and CRYPTRACE_TSC_HZ (docs/environment.md). */
struct ct_machine_rates;
void ct_preload_env(const char *lib, const char *outdir, const struct ct_machine_rates *rates);
/* Forks with a close-on-exec pipe from child to parent. The child closes the read end and runs
 * body(arg, wfd), which execs or exits. The parent gets the pid and the read end in *rfd; -1
 * when pipe or fork failed, with a line "<who>: pipe|fork: <error>" on stderr unless who is
 * NULL. stdio is flushed before the fork. */
pid_t ct_fork_piped(const char *who, void (*body)(void *arg, int wfd), void *arg, int *rfd);
/* Runs body in a child (ct_fork_piped, quietly) and returns all it wrote to wfd, NUL-terminated
 * and malloc'ed, once it ended; NULL when it could not be started. */
char *ct_child_output(void (*body)(void *arg, int wfd), void *arg);
/* In the child of ct_fork_piped: execvp(cmd); when that fails, its errno goes to err_fd and the
 * child exits 127 (not found) or 126. */
void ct_exec_or_report(char **cmd, int err_fd) __attribute__((noreturn));
/* In the parent: 0 when the exec of ct_exec_or_report succeeded (the pipe closed on exec), else
 * its errno. Closes rfd. */
int ct_exec_outcome(int rfd);
/* waitpid, or wait4 when ru is not NULL, again when a signal interrupts it. */
pid_t ct_wait_child(pid_t pid, int *status, struct rusage *ru);
/* A wait status the way a shell reports it: the exit status, or 128 + the signal number. */
int ct_shell_status(int status);

/* slurp.c: a pipe or file read to its end into a malloc'ed buffer with a NUL after its *len
 * (len may be NULL) bytes; NULL when out of memory or (ct_read_file) the file cannot be opened.
 * The caller closes fd. */
char *ct_read_all(int fd, size_t *len);
char *ct_read_file(const char *path, size_t *len);
/* Writes all n bytes of buf to fd (retrying short writes and EINTR); false on an error. */
bool ct_write_all(int fd, const void *buf, size_t n);

/* Nanoseconds on a clock (CLOCK_MONOTONIC for durations, CLOCK_REALTIME for dates). */
static inline uint64_t ct_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* static_trace.c: the trace file of a statically linked program, which the preload cannot enter
 * (same format, written by the launcher after the program ended). */
struct ct_static_run {
	const char *outdir; /* absolute */
	const char *exe;    /* resolved path */
	char **argv;
	uint32_t pid;
	uint64_t start_realtime_ns, start_mono_ns, end_mono_ns;
	const char *route;  /* the --route in force, or NULL */
	bool argv_exe_only; /* --no-argv: argv[0] alone */
	bool signaled;      /* status is a signal number, else an exit status */
	int status;
	struct rusage rusage;
};
bool ct_static_trace_write(const struct ct_static_run *r);

/* end_trace.c: the launcher's child exited (status) without its exit handlers (a Go program):
 * append a trace-warning event and END to its newest trace file in outdir when that file reads
 * cleanly and has no END. True when it did. */
bool ct_end_trace_complete(const char *outdir, uint32_t pid, int status, uint64_t end_mono_ns);

/* kernel_probe.c: true when socket(AF_ALG) / open("/dev/crypto") work here; else *err (may be
 * NULL) = errno. Sets *err to 0 on success. */
bool ct_afalg_usable(int *err);
bool ct_cryptodev_usable(int *err);
/* An AF_ALG socket bound to alg of type ("skcipher", "cbc(aes)"), or -errno. */
int ct_afalg_bind(const char *type, const char *alg);

/* jout.c: JSON pieces for compare and doctor. */
void ct_json_str(FILE *out, const char *s);
void ct_json_num(FILE *out, double v, bool known); /* null when !known or not finite */

/* libpath.c: finds libcryptrace.so ($CRYPTRACE_LIB, the build tree next to this executable,
 * then the install dir). Writes an absolute path into buf and returns true, or false with a
 * one-line reason in why (listing the places looked at). */
bool ct_find_library(char *buf, size_t cap, char *why, size_t why_cap);

/* elfcheck.c */
enum ct_elf_kind {
	CT_ELF_DYNAMIC = 0, /* has a PT_INTERP: the dynamic loader will honour LD_PRELOAD */
	CT_ELF_STATIC = 1,  /* ELF without PT_INTERP (static or static-pie): no preload possible */
	CT_ELF_NOT_ELF = 2, /* a script or something else: its interpreter decides */
	CT_ELF_UNKNOWN = 3, /* unreadable or malformed */
};
enum ct_elf_kind ct_elf_classify(const char *path);
/* Which machine an ELF file is for: class (32/64-bit), byte order and e_machine. A library of
 * another architecture (multiarch: /usr/lib/aarch64-linux-gnu beside x86-64) cannot be loaded
 * here, whatever its name. */
struct ct_elf_id {
	unsigned char elf_class, data;
	uint16_t machine;
};
bool ct_elf_identify(const char *path, struct ct_elf_id *id); /* false: unreadable, not ELF */
bool ct_elf_same_arch(const struct ct_elf_id *a, const struct ct_elf_id *b);
/* "aarch64, 64-bit", "i386, 32-bit", "ELF machine 999, 64-bit" */
void ct_elf_arch_name(const struct ct_elf_id *id, char *buf, size_t cap);
/* Resolves cmd the way execvp does (a name with a '/' is used as is, else the first executable
 * match in $PATH); returns false if nothing is found. */
bool ct_which(const char *cmd, char *buf, size_t cap);

/* outdir.c */
/* Creates dir (and missing parents) with mode 0700, or accepts an existing directory, then
 * proves it is writable by creating and removing a probe file. On failure returns false with a
 * one-line reason. */
bool ct_outdir_prepare(const char *dir, char *why, size_t why_cap);
/* The default directory name: "<prefix>-YYYYmmdd-HHMMSS" in the current directory, with "-2",
 * "-3" ... after it when that exists already. */
void ct_outdir_default(const char *prefix, char *buf, size_t cap);
/* The *.ctrace file names (not paths) in dir, sorted; *names is malloc'ed (free with
 * ct_names_free). Returns the count, or -1 if dir cannot be read. */
int ct_outdir_list(const char *dir, char ***names);
void ct_names_free(char **names, int n);
/* Whether name is one of names[0..n). */
bool ct_outdir_name_in(char **names, int n, const char *name);
/* The paths ("DIR/NAME") of the trace files in dir that are not among before[0..nbefore) (a
 * listing taken earlier by ct_outdir_list): what a run or an attach created. *paths is
 * malloc'ed, each path too (free with ct_names_free). Returns the count. */
int ct_outdir_new_traces(const char *dir, char **before, int nbefore, char ***paths);

/* calibrate.c: what the launcher measures of this machine once, so that the processes it runs
 * do not each measure it (docs/environment.md): the in-process AES-NI bound in cycles/byte x1000
 * (CRYPTRACE_AESNI_CPB: the reporter says how far a path is from it), and the TSC's rate
 * (CRYPTRACE_TSC_HZ: 0.5 ms or more of waiting in every process otherwise). 0 means unknown,
 * and nothing is passed. */
struct ct_machine_rates {
	uint32_t aesni_cpb_milli;
	uint64_t tsc_hz;
};
struct ct_machine_rates ct_calibrate(void);

#endif
