/* SPDX-License-Identifier: MIT */
/*
 * config.c - CRYPTRACE_* variables, read once with secure_getenv (docs/environment.md), and the
 * preload's own log. A bad value is a one-line warning and the default; never fatal. The log
 * goes only where CRYPTRACE_LOG asks: never on the host's stdio otherwise.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "conffile.h"
#include "cpu.h"
#include "route_spec.h"
#include "internal.h"

#define LOG_PREFIX "cryptrace: "

static struct ct_config cfg = {
	.sample_period = 256,
	.sample_all_bytes = 128 * 1024,
	.flush_ms = 1000,
	/* ~5 MB/s of trace at 21 bytes per kept op: a timeline a person can still load, from a
	 * program that makes millions of calls a second (docs/reports.md, "Per-call timeline") */
	.max_ops_rate = 250000,
	.route_direct = true,
	.flusher = true,
};
static uint32_t aesni_cpb;
static const char *ia32cap;
static int log_fd = -1;
static char warning[200]; /* the last configuration problem, for a CT_EV_TRACE_WARNING */

/* Every CRYPTRACE_* plus LD_PRELOAD as seen at start, for re-injection across exec. Copied:
 * programs rewrite their environment block (sshd's setproctitle clobbers it, setenv moves it), so
 * no pointer into environ may be kept. */
#define MAX_ENV 24
#define ENV_ARENA 8192
static const char *saved_env[MAX_ENV + 1];
static char env_arena[ENV_ARENA];
static size_t env_used;
static char out_dir_copy[1024], route_copy[CT_ROUTE_SPEC_MAX], ia32cap_copy[128];
static struct ct_conffile conf; /* static: a 9 KB struct is too much for a constructor's stack */

/* A private copy of s in the arena (NULL when it does not fit). */
static const char *keep(const char *s)
{
	size_t n = strlen(s) + 1;
	if (env_used + n > sizeof(env_arena))
		return NULL;
	char *d = env_arena + env_used;
	memcpy(d, s, n);
	env_used += n;
	return d;
}

/* secure_getenv(name) copied into buf; NULL when unset, empty or too long (logged). */
static const char *getenv_copy(const char *name, char *buf, size_t cap)
{
	const char *v = secure_getenv(name);
	if (!v || !*v)
		return NULL;
	if (strlen(v) >= cap) {
		ct_log(1, "%s is longer than %zu bytes; ignored", name, cap - 1);
		return NULL;
	}
	memcpy(buf, v, strlen(v) + 1);
	return buf;
}

unsigned ct_sample_period = 256, ct_sample_all_bytes = 128 * 1024;
bool ct_per_call;

const struct ct_config *ct_config(void)
{
	return &cfg;
}

const char *const *ct_config_env(void)
{
	return saved_env;
}

const char *ct_config_warning(void)
{
	return warning;
}

const char *ct_config_ia32cap(void)
{
	return ia32cap ? ia32cap : "";
}

uint32_t ct_config_aesni_cpb(void)
{
	return aesni_cpb;
}

void ct_log(unsigned level, const char *fmt, ...)
{
	if (level == 0 || level > cfg.log_level || log_fd < 0)
		return;
	int saved = errno;
	char line[512];
	int n = snprintf(line, sizeof(line), LOG_PREFIX "[%d] ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	ssize_t w = write(log_fd, line, len);
	(void)w;
	errno = saved;
}

/* A 0/1 variable: unset or empty gives unset, a value that is neither is warned about (what it
 * then means: if_bad) and gives bad. */
static bool parse_switch(const char *name, bool unset, bool bad, const char *if_bad)
{
	const char *v = secure_getenv(name);
	if (!v || !*v)
		return unset;
	if (!strcmp(v, "0") || !strcmp(v, "1"))
		return v[0] == '1';
	snprintf(warning, sizeof(warning), "%s=\"%.40s\" is neither 0 nor 1; %s", name, v, if_bad);
	ct_log(1, "%s", warning);
	return bad;
}

/* name's value as an unsigned decimal in [lo, hi]: 1 and *v, 0 when unset or empty, -1 when it is
 * something else (*text: the value, for the caller's warning). */
static int env_decimal(const char *name, unsigned long long lo, unsigned long long hi, unsigned long long *v,
		       const char **text)
{
	const char *s = secure_getenv(name);
	*text = s;
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v < lo || *v > hi || *s == '-' ? -1 : 1;
}

/* Parses an unsigned decimal in [lo, hi]; a bad value warns and keeps *out. */
static void parse_uint(const char *name, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned long long v;
	const char *s;
	int r = env_decimal(name, lo, hi, &v, &s);
	if (r < 0) {
		snprintf(warning, sizeof(warning), "%s=\"%.40s\" is not a number in %u..%u; using %u", name,
			 s, lo, hi, *out);
		ct_log(1, "%s", warning);
	} else if (r > 0) {
		*out = (unsigned)v;
	}
}

static void open_log(void)
{
	const char *lv = secure_getenv("CRYPTRACE_LOG");
	if (!lv || !*lv)
		return;
	cfg.log_level = 1;
	if (!strcmp(lv, "2") || !strcmp(lv, "debug"))
		cfg.log_level = 2;
	const char *file = secure_getenv("CRYPTRACE_LOG_FILE");
	if (file && *file) {
		int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			int hi = fcntl(fd, F_DUPFD_CLOEXEC, 1010);
			if (hi >= 0) {
				close(fd);
				fd = hi;
			}
			log_fd = fd;
			return;
		}
	}
	log_fd = STDERR_FILENO; /* the user asked for the log and gave no file */
}

static void save_env(void)
{
	extern char **environ;
	unsigned n = 0;
	for (char **e = environ; e && *e && n < MAX_ENV; e++) {
		if (strncmp(*e, "CRYPTRACE_", 10) && strncmp(*e, "LD_PRELOAD=", 11))
			continue;
		const char *copy = keep(*e);
		if (copy)
			saved_env[n++] = copy;
	}
	saved_env[n] = NULL;
}

static void conf_warn(void *arg, unsigned line, const char *what)
{
	const char *path = arg;
	if (line)
		snprintf(warning, sizeof(warning), "%.80s:%u: %s", path, line, what);
	else
		snprintf(warning, sizeof(warning), "%.80s: %s", path, what);
	ct_log(1, "%s", warning);
}

/* The executable's path, for the include/exclude globs ("" when /proc is not there). */
static void exe_path(char *dst, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dst, cap - 1);
	dst[n > 0 ? n : 0] = 0;
}

/* CRYPTRACE_OUT unset: the always-on mode, when the configuration file names a spool and
 * selects this executable. The file is never read when CRYPTRACE_OUT is set: a launcher's (or a
 * person's) explicit trace is not the host's always-on one. */
static bool load_always_on(bool mode_from_env)
{
	const char *path = secure_getenv("CRYPTRACE_CONFIG");
	if (!path || !*path)
		path = CT_CONF_DEFAULT_PATH;
	if (ct_conffile_load(path, &conf, conf_warn, (void *)path) <= 0 || !conf.spool[0])
		return false;
	if (conf.n_include || conf.n_exclude) {
		char exe[PATH_MAX];
		exe_path(exe, sizeof(exe));
		if (!ct_conffile_selects(&conf, exe)) {
			ct_log(2, "%s: not selected by %s", exe, path);
			return false;
		}
	}
	cfg.spool_root = conf.spool;
	cfg.max_file_bytes = conf.max_file_bytes;
	cfg.max_spool_bytes = conf.max_spool_bytes;
	cfg.max_age_s = conf.max_age_s;
	if (!mode_from_env && conf.mode >= 0)
		cfg.per_call = conf.mode == 1;
	return true;
}

/* What follows from the settings, once they are read. */
static void config_apply(void)
{
	if (cfg.per_call)
		cfg.sample_period = 1; /* per-call mode times every call */
	ct_per_call = cfg.per_call;
	if (!cfg.per_call)
		cfg.max_ops_rate = 0; /* no timeline to cap */
	ct_ops_cap_configure(cfg.max_ops_rate);
	ct_sample_period = cfg.sample_period;
	/* sample_all_bytes 0 means "time every call" as well */
	ct_sample_all_bytes = cfg.per_call ? 0 : cfg.sample_all_bytes;
	cfg.enabled = true;
}

/* CRYPTRACE_TSC_HZ: the launcher's measure of the TSC's rate (tracer/calibrate.c), taken instead
 * of measuring it here. A value outside 10 MHz..100 GHz, or not a number, warns and is measured. */
static void parse_tsc_hz(void)
{
	unsigned long long hz;
	const char *s;
	int r = env_decimal("CRYPTRACE_TSC_HZ", 10000000ull, 100000000000ull, &hz, &s);
	if (r < 0) {
		snprintf(warning, sizeof(warning),
			 "CRYPTRACE_TSC_HZ=\"%.40s\" is not a rate in 10000000..100000000000 Hz; "
			 "measuring it",
			 s);
		ct_log(1, "%s", warning);
	} else if (r > 0) {
		ct_tsc_hz_set(hz);
	}
}

/* The program's own OPENSSL_ia32cap (OPENSSL_armcap on ARM): a fact about the process, which the
 * trace header records (a mask of AES-NI is the software-aes finding's cause), read whether the
 * trace started with it or by an attach. An attach read only its own settings at first, and an
 * attached masked process's finding then hung on its timing alone: under load it could miss. */
static void read_openssl_cap(void)
{
	const char *cap = secure_getenv(CT_OPENSSL_CAP_ENV);
	if (cap) {
		snprintf(ia32cap_copy, sizeof(ia32cap_copy), "%s", cap);
		ia32cap = ia32cap_copy;
	}
}

void ct_config_load(void)
{
	bool mode_from_env;
	open_log();
	if (getauxval(AT_SECURE)) {
		/* secure_getenv gives nothing here anyway; a setuid program is never traced */
		cfg.enabled = false;
		return;
	}
	save_env();
	const char *mode = secure_getenv("CRYPTRACE_MODE");
	mode_from_env = mode && *mode;
	if (mode && *mode) {
		if (!strcmp(mode, "calls"))
			cfg.per_call = true;
		else if (strcmp(mode, "stats")) {
			snprintf(warning, sizeof(warning),
				 "CRYPTRACE_MODE=\"%.40s\" is neither stats nor calls; using stats", mode);
			ct_log(1, "%s", warning);
		}
	}
	/* The command line is recorded with its secrets redacted (common/redact.h); 0: the
	 * executable only. */
	cfg.argv_exe_only = !parse_switch("CRYPTRACE_ARGV", true, false, "recording the executable only");
	/* 0: a routed context's calls all go through libcrypto's EVP, as before the direct lane
	 * (route/lane.h); for comparing the two, and a way around a fault in the lane. */
	cfg.route_direct = parse_switch("CRYPTRACE_ROUTE_DIRECT", true, true, "using 1");
	/* 0: no flusher thread (flusher.c), for a program that must stay single-threaded (it
	 * counts its threads, or an emulator breaks threads' TLS: docs/port.md, qemu-i386) */
	cfg.flusher = parse_switch("CRYPTRACE_FLUSHER", true, true, "using 1");
	parse_uint("CRYPTRACE_SAMPLE", 1, 1u << 30, &cfg.sample_period);
	parse_uint("CRYPTRACE_SAMPLE_ALL_BYTES", 0, 1u << 30, &cfg.sample_all_bytes);
	parse_uint("CRYPTRACE_FLUSH_MS", 10, 3600000, &cfg.flush_ms);
	parse_uint("CRYPTRACE_MAX_OPS_RATE", 0, CT_MAX_OPS_RATE_LIMIT, &cfg.max_ops_rate);
	unsigned cpb = 0;
	parse_uint("CRYPTRACE_AESNI_CPB", 0, 1000000, &cpb);
	aesni_cpb = cpb;
	parse_tsc_hz();
	read_openssl_cap();
	cfg.route_spec = getenv_copy("CRYPTRACE_ROUTE", route_copy, sizeof(route_copy));
	cfg.out_dir = getenv_copy("CRYPTRACE_OUT", out_dir_copy, sizeof(out_dir_copy));
	if (cfg.out_dir && cfg.out_dir[0] != '/') {
		/* a relative directory must not follow the program's chdir (daemons chdir("/")) */
		static char abs_dir[PATH_MAX];
		if (realpath(cfg.out_dir, abs_dir))
			cfg.out_dir = abs_dir;
	}
	if (!cfg.out_dir && !load_always_on(mode_from_env)) {
		ct_log(1,
		       "CRYPTRACE_OUT is not set and no spool is configured: nothing is traced in this "
		       "process");
		cfg.enabled = false;
		return;
	}
	config_apply();
}

/* `cryptrace attach` (attach.c): the process's environment is not ours to read, its settings
 * come as "key=value" lines from the tracer (attach_abi.h). The same settings as the
 * environment's, checked the same way; a bad line is refused (false), nothing half-set. */
bool ct_config_load_attach(const char *spec)
{
	struct ct_config c = cfg;
	c.per_call = false;
	c.out_dir = NULL;
	c.route_spec = NULL;
	c.spool_root = NULL;
	for (const char *p = spec; p && *p;) {
		size_t n = strcspn(p, "\n");
		char line[1100];
		if (n >= sizeof(line))
			return false;
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (p[n] == '\n');
		char *eq = strchr(line, '=');
		if (!eq)
			return false;
		*eq = 0;
		const char *v = eq + 1;
		char *end;
		if (!strcmp(line, "out") && v[0] == '/' && strlen(v) < sizeof(out_dir_copy)) {
			memcpy(out_dir_copy, v, strlen(v) + 1);
			c.out_dir = out_dir_copy;
		} else if (!strcmp(line, "mode") && (!strcmp(v, "calls") || !strcmp(v, "stats"))) {
			c.per_call = !strcmp(v, "calls");
		} else if (!strcmp(line, "route") && strlen(v) < sizeof(route_copy)) {
			memcpy(route_copy, v, strlen(v) + 1); /* the tracer parsed it already */
			c.route_spec = route_copy;
		} else if (!strcmp(line, "tsc_hz")) {
			unsigned long long hz = strtoull(v, &end, 10);
			if (*end)
				return false;
			if (hz) /* the tracer measured it: the process does not wait to measure it */
				ct_tsc_hz_set(hz);
		} else if (!strcmp(line, "flush_ms")) {
			unsigned long ms = strtoul(v, &end, 10);
			if (*end || ms < 10 || ms > 3600000)
				return false;
			c.flush_ms = (unsigned)ms;
		} else
			return false;
	}
	if (!c.out_dir)
		return false;
	read_openssl_cap();
	cfg = c;
	saved_env[0] = NULL; /* nothing to carry across exec: the new image is not ours */
	config_apply();
	return true;
}
