/* SPDX-License-Identifier: MIT */
/*
 * conffile.c - the parser of /etc/cryptrace.conf (conffile.h, docs/fleet.md). It runs in the
 * constructor of every process of a host, before the program's main: one read() into a static
 * buffer, no malloc, no stdio, nothing kept that points into the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conffile.h"

static char file_buf[CT_CONF_MAX_BYTES + 1];

static void warnf(ct_conf_warn_fn warn, void *arg, unsigned line, const char *fmt, const char *s)
{
	char what[160];
	snprintf(what, sizeof(what), fmt, s);
	if (warn)
		warn(arg, line, what);
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* A decimal number with an optional unit from units ("KMG" as powers of 1024, or "smhd"). */
static bool parse_amount(const char *s, bool time, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return false;
	uint64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	uint64_t mult = 1;
	if (*s) {
		static const char sizes[] = "KMG", times[] = "smhd";
		static const uint64_t size_mult[] = { 1024, 1024 * 1024, 1024 * 1024 * 1024 };
		static const uint64_t time_mult[] = { 1, 60, 3600, 86400 };
		const char *units = time ? times : sizes;
		const char *u = strchr(units, *s);
		if (!u || s[1])
			return false;
		mult = time ? time_mult[u - units] : size_mult[u - units];
	}
	if (v > UINT64_MAX / mult)
		return false;
	*out = v * mult;
	return true;
}

static void add_glob(char (*list)[CT_CONF_GLOB_LEN], unsigned *n, const char *key, const char *value,
		     ct_conf_warn_fn warn, void *arg, unsigned line)
{
	if (*n >= CT_CONF_MAX_GLOBS) {
		warnf(warn, arg, line, "more than 16 %s globs; this one is ignored", key);
		return;
	}
	if (strlen(value) >= CT_CONF_GLOB_LEN) {
		warnf(warn, arg, line, "%s glob longer than 255 bytes; ignored", key);
		return;
	}
	memcpy(list[*n], value, strlen(value) + 1);
	(*n)++;
}

/* One "key = value" line, trimmed, NUL-terminated, no NUL inside. */
static void parse_line(char *s, struct ct_conffile *c, ct_conf_warn_fn warn, void *arg, unsigned line)
{
	while (is_space(*s))
		s++;
	size_t len = strlen(s);
	while (len && is_space(s[len - 1]))
		s[--len] = 0;
	if (!*s || *s == '#')
		return;
	char *eq = strchr(s, '=');
	if (!eq) {
		c->warnings++;
		warnf(warn, arg, line, "not \"key = value\": \"%.40s\"; ignored", s);
		return;
	}
	char *key_end = eq;
	while (key_end > s && is_space(key_end[-1]))
		key_end--;
	*key_end = 0;
	char *value = eq + 1;
	while (is_space(*value))
		value++;
	const char *key = s;
	if (!strcmp(key, "spool")) {
		if (value[0] != '/' || strlen(value) >= sizeof(c->spool)) {
			c->warnings++;
			warnf(warn, arg, line, "spool must be an absolute path under 512 bytes: \"%.40s\"",
			      value);
		} else
			memcpy(c->spool, value, strlen(value) + 1);
	} else if (!strcmp(key, "include") || !strcmp(key, "exclude")) {
		bool inc = key[0] == 'i';
		if (!*value) {
			c->warnings++;
			warnf(warn, arg, line, "%s without a glob; ignored", key);
		} else
			add_glob(inc ? c->include : c->exclude, inc ? &c->n_include : &c->n_exclude, key,
				 value, warn, arg, line);
	} else if (!strcmp(key, "mode")) {
		if (!strcmp(value, "stats"))
			c->mode = 0;
		else if (!strcmp(value, "calls"))
			c->mode = 1;
		else {
			c->warnings++;
			warnf(warn, arg, line, "mode \"%.40s\" is neither stats nor calls; ignored", value);
		}
	} else if (!strcmp(key, "max_file_bytes") || !strcmp(key, "max_spool_bytes") ||
		   !strcmp(key, "max_age")) {
		bool time = key[4] == 'a';
		uint64_t *dst = time            ? &c->max_age_s
				: key[4] == 'f' ? &c->max_file_bytes
						: &c->max_spool_bytes;
		if (!parse_amount(value, time, dst)) {
			c->warnings++;
			warnf(warn, arg, line,
			      time ? "max_age \"%.40s\" is not a number of seconds (suffix s, m, h or d); ignored"
				   : "size \"%.40s\" is not a number of bytes (suffix K, M or G); ignored",
			      value);
		}
	} else {
		c->warnings++;
		warnf(warn, arg, line, "unknown key \"%.40s\"; ignored", key);
	}
}

void ct_conffile_parse(const char *text, size_t len, struct ct_conffile *c, ct_conf_warn_fn warn, void *arg)
{
	memset(c, 0, sizeof(*c));
	c->mode = -1;
	char line[CT_CONF_MAX_LINE + 1];
	size_t pos = 0;
	unsigned lineno = 0;
	while (pos < len) {
		lineno++;
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t n = end - pos;
		if (n > CT_CONF_MAX_LINE) {
			c->warnings++;
			warnf(warn, arg, lineno, "line longer than %s bytes; ignored", "1024");
		} else if (memchr(text + pos, 0, n)) {
			c->warnings++;
			warnf(warn, arg, lineno, "line holds a NUL byte; ignored%s", "");
		} else {
			memcpy(line, text + pos, n);
			line[n] = 0;
			parse_line(line, c, warn, arg, lineno);
		}
		pos = end + 1;
	}
}

int ct_conffile_load(const char *path, struct ct_conffile *c, ct_conf_warn_fn warn, void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		/* *c untouched: resetting it would fault in its pages in every process of a host that
		 * has the library loaded and no configuration (docs/fleet.md, the start-up cost) */
		if (errno == ENOENT)
			return 0;
		warnf(warn, arg, 0, "cannot read the configuration: %s", strerror(errno));
		return -1;
	}
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(file_buf) && (r = read(fd, file_buf + n, sizeof(file_buf) - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			warnf(warn, arg, 0, "cannot read the configuration: %s", strerror(errno));
			close(fd);
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	if (n > CT_CONF_MAX_BYTES) {
		warnf(warn, arg, 0, "configuration longer than %s bytes: the rest is ignored", "16384");
		n = CT_CONF_MAX_BYTES;
		while (n && file_buf[n - 1] != '\n')
			n--; /* never a cut last line */
	}
	ct_conffile_parse(file_buf, n, c, warn, arg);
	return 1;
}

bool ct_conffile_selects(const struct ct_conffile *c, const char *exe)
{
	for (unsigned i = 0; i < c->n_exclude; i++)
		if (fnmatch(c->exclude[i], exe, 0) == 0)
			return false;
	if (!c->n_include)
		return true;
	for (unsigned i = 0; i < c->n_include; i++)
		if (fnmatch(c->include[i], exe, 0) == 0)
			return true;
	return false;
}
