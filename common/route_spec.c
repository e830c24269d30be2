/* SPDX-License-Identifier: MIT */
/*
 * route_spec.c - parser and matcher for route specs (grammar in route_spec.h and docs/routes.md).
 * Errors name the token and its 1-based column so a user can find the typo in a long spec.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "route_spec.h"

/* The CPU's AES instructions are one target, CT_ROUTE_AESNI: "cpu" on every architecture, and on
 * x86 also "aesni", its name there, which the canonical form (ct_route_format) keeps. Elsewhere
 * "aesni" would claim instructions the CPU does not have: it is refused with a line naming "cpu". */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_TARGET_NAME "aesni"
#define TARGETS_EXPECTED "(expected native, cpu, aesni, afalg, cryptodev)"
#else
#define CPU_TARGET_NAME "cpu"
#define TARGETS_EXPECTED "(expected native, cpu, afalg, cryptodev)"
#endif

static const char *const target_names[] = {
	[CT_ROUTE_NATIVE] = "native",
	[CT_ROUTE_AESNI] = CPU_TARGET_NAME,
	[CT_ROUTE_AFALG] = "afalg",
	[CT_ROUTE_CRYPTODEV] = "cryptodev",
};

static const struct {
	const char *name;
	uint8_t dir;
} dir_names[] = {
	{ .name = "enc", .dir = CT_DIR_ENCRYPT },
	{ .name = "encrypt", .dir = CT_DIR_ENCRYPT },
	{ .name = "dec", .dir = CT_DIR_DECRYPT },
	{ .name = "decrypt", .dir = CT_DIR_DECRYPT },
};

/* Longest token quoted in an error message: enough to recognise it, short enough for one line. */
#define TOKEN_SHOWN 40

struct parser {
	const char *spec;
	char *err;
	size_t errlen;
};

static int fail(struct parser *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	if (!ps->err || !ps->errlen)
		return -1;
	int n = snprintf(ps->err, ps->errlen, "bad route spec at %u: ", (unsigned)(at - ps->spec) + 1);
	if (n < 0 || (size_t)n >= ps->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool token_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && strncmp(s, word, len) == 0;
}

static bool glob_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '*' || c == '?';
}

static int tokcap(size_t len)
{
	return (int)(len > TOKEN_SHOWN ? TOKEN_SHOWN : len);
}

/* [s, end) is "digits [kKmM]"; >= or < was already consumed. */
static int parse_size(struct parser *ps, const char *s, const char *end, uint64_t *out)
{
	size_t len = (size_t)(end - s);
	const char *p = s;
	uint64_t v = 0;
	if (p == end || !isdigit((unsigned char)*p))
		return fail(ps, s, "bad size \"%.*s\" (expected digits with an optional k or m)", tokcap(len),
			    s);
	for (; p < end && isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(ps, s, "size \"%.*s\" is too large", tokcap(len), s);
		v = v * 10 + d;
	}
	uint64_t mult = 1;
	if (p < end && (*p == 'k' || *p == 'K')) {
		mult = 1024;
		p++;
	} else if (p < end && (*p == 'm' || *p == 'M')) {
		mult = 1024 * 1024;
		p++;
	}
	if (p != end)
		return fail(ps, s, "bad size \"%.*s\" (expected digits with an optional k or m)", tokcap(len),
			    s);
	if (v > (UINT64_MAX - 1) / mult) /* UINT64_MAX itself means "size unknown" */
		return fail(ps, s, "size \"%.*s\" is too large", tokcap(len), s);
	*out = v * mult;
	return 0;
}

/* "target [cond]" in [s, end). */
static int parse_target(struct parser *ps, const char *s, const char *end, struct ct_route_rule *r)
{
	const char *t = s;
	while (t < end && *t != '>' && *t != '<')
		t++;
	size_t tlen = (size_t)(t - s);
	if (tlen == 0)
		return fail(ps, s, "missing target " TARGETS_EXPECTED);
	r->target = CT_ROUTE_NONE;
	for (unsigned i = 0; i < sizeof(target_names) / sizeof(target_names[0]); i++) {
		if (target_names[i] && token_is(s, tlen, target_names[i]))
			r->target = (uint8_t)i;
	}
	if (token_is(s, tlen, "cpu"))
		r->target = CT_ROUTE_AESNI;
	if (r->target == CT_ROUTE_NONE && token_is(s, tlen, "aesni"))
		return fail(ps, s,
			    "target \"aesni\" is x86's AES-NI; the AES instructions of this CPU are "
			    "target \"cpu\"");
	if (r->target == CT_ROUTE_NONE)
		return fail(ps, s, "unknown target \"%.*s\" " TARGETS_EXPECTED, tokcap(tlen), s);
	if (t == end) {
		r->cond = CT_ROUTE_COND_NONE;
		return 0;
	}
	const char *size_at;
	if (t[0] == '>' && t + 1 < end && t[1] == '=') {
		r->cond = CT_ROUTE_COND_GE;
		size_at = t + 2;
	} else if (t[0] == '<' && !(t + 1 < end && (t[1] == '=' || t[1] == '<' || t[1] == '>'))) {
		r->cond = CT_ROUTE_COND_LT;
		size_at = t + 1;
	} else {
		const char *o = t;
		while (o < end && (*o == '<' || *o == '>' || *o == '='))
			o++;
		return fail(ps, t, "bad size condition \"%.*s\" (expected >=SIZE or <SIZE)",
			    tokcap((size_t)(o - t)), t);
	}
	return parse_size(ps, size_at, end, &r->size);
}

/* "glob [:dir] = target [cond]" in [s, end); sep points at the first ':' or '='. */
static int parse_full_rule(struct parser *ps, const char *s, const char *sep, const char *end,
			   struct ct_route_rule *r)
{
	size_t glen = (size_t)(sep - s);
	if (glen == 0)
		return fail(ps, s, "empty cipher glob before \"%c\"", *sep);
	if (glen >= CT_ROUTE_GLOB_MAX)
		return fail(ps, s, "cipher glob \"%.*s...\" is longer than %d characters", TOKEN_SHOWN, s,
			    CT_ROUTE_GLOB_MAX - 1);
	for (size_t i = 0; i < glen; i++) {
		if (!glob_char_ok(s[i]))
			return fail(ps, s + i, "bad character '%c' in cipher glob \"%.*s\"", s[i],
				    tokcap(glen), s);
		r->glob[i] = (char)tolower((unsigned char)s[i]);
	}
	r->glob[glen] = 0;
	r->dir = CT_DIR_UNKNOWN;
	const char *p = sep;
	if (*p == ':') {
		const char *d = ++p;
		while (p < end && *p != '=')
			p++;
		size_t dlen = (size_t)(p - d);
		bool known = false;
		for (unsigned i = 0; i < sizeof(dir_names) / sizeof(dir_names[0]); i++) {
			if (token_is(d, dlen, dir_names[i].name)) {
				r->dir = dir_names[i].dir;
				known = true;
			}
		}
		if (!known)
			return fail(ps, d, "unknown direction \"%.*s\" (expected enc, dec, encrypt, decrypt)",
				    tokcap(dlen), d);
	}
	if (p == end || *p != '=')
		return fail(ps, p, "missing \"=TARGET\" after \"%.*s\"", tokcap((size_t)(p - s)), s);
	return parse_target(ps, p + 1, end, r);
}

int ct_route_parse(const char *spec, struct ct_route_table *out, char *err, size_t errlen)
{
	struct parser ps = { .spec = spec ? spec : "", .err = err, .errlen = errlen };
	if (err && errlen)
		err[0] = 0;
	memset(out, 0, sizeof(*out));
	const char *p = ps.spec;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return fail(&ps, p, "empty spec (expected GLOB[:DIR]=TARGET[>=SIZE|<SIZE],...)");
	struct ct_route_rule prev = { .target = CT_ROUTE_NONE };
	bool have_prev = false;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		const char *next = end;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end == p) {
			memset(out, 0, sizeof(*out));
			return fail(&ps, p, "empty rule (two commas in a row, or a comma at the end)");
		}
		struct ct_route_rule r;
		memset(&r, 0, sizeof(r));
		const char *sep = p;
		while (sep < end && !strchr(":=<>", *sep))
			sep++;
		int rc;
		if (sep < end && (*sep == ':' || *sep == '=')) {
			rc = parse_full_rule(&ps, p, sep, end, &r);
		} else if (!have_prev) {
			rc = fail(&ps, p, "\"%.*s\" has no cipher glob before it (expected GLOB=TARGET)",
				  tokcap((size_t)(end - p)), p);
		} else {
			memcpy(r.glob, prev.glob, sizeof(r.glob));
			r.dir = prev.dir;
			for (const char *c = p; c < sep; c++) {
				if (!isalnum((unsigned char)*c)) {
					rc = fail(&ps, c, "bad character '%c' in target \"%.*s\"", *c,
						  tokcap((size_t)(sep - p)), p);
					goto done;
				}
			}
			rc = parse_target(&ps, p, end, &r);
		}
done:
		if (rc < 0) {
			memset(out, 0, sizeof(*out));
			return -1;
		}
		if (out->count == CT_ROUTE_MAX_RULES) {
			memset(out, 0, sizeof(*out));
			return fail(&ps, p, "more than %d rules", CT_ROUTE_MAX_RULES);
		}
		out->rules[out->count++] = r;
		prev = r;
		have_prev = true;
		if (!*next)
			return 0;
		p = next + 1;
	}
}

bool ct_route_glob_match(const char *glob, const char *name)
{
	const char *star = NULL, *resume = NULL;
	while (*name) {
		if (*glob == '*') {
			star = glob++;
			resume = name;
		} else if (*glob &&
			   (*glob == '?' || tolower((unsigned char)*glob) == tolower((unsigned char)*name))) {
			glob++;
			name++;
		} else if (star) {
			/* backtrack: let the last * swallow one more character */
			glob = star + 1;
			name = ++resume;
		} else {
			return false;
		}
	}
	while (*glob == '*')
		glob++;
	return *glob == 0;
}

enum ct_route_target ct_route_lookup_ex(const struct ct_route_table *t, const char *cipher, int dir,
					uint64_t size, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (!t || !cipher)
		return CT_ROUTE_NATIVE;
	for (unsigned i = 0; i < t->count && i < CT_ROUTE_MAX_RULES; i++) {
		const struct ct_route_rule *r = &t->rules[i];
		if (r->dir != CT_DIR_UNKNOWN && r->dir != dir)
			continue;
		if (!ct_route_glob_match(r->glob, cipher))
			continue;
		if (size == CT_ROUTE_SIZE_UNKNOWN) {
			if (flags)
				*flags = CT_ROUTE_F_MATCHED |
					 (r->cond != CT_ROUTE_COND_NONE ? CT_ROUTE_F_SIZE_DEPENDENT : 0);
			return (enum ct_route_target)r->target;
		}
		if (r->cond == CT_ROUTE_COND_GE && size < r->size)
			continue;
		if (r->cond == CT_ROUTE_COND_LT && size >= r->size)
			continue;
		if (flags)
			*flags = CT_ROUTE_F_MATCHED;
		return (enum ct_route_target)r->target;
	}
	return CT_ROUTE_NATIVE;
}

enum ct_route_target ct_route_lookup(const struct ct_route_table *t, const char *cipher, int dir,
				     uint64_t size)
{
	return ct_route_lookup_ex(t, cipher, dir, size, NULL);
}

size_t ct_route_format(const struct ct_route_table *t, char *buf, size_t cap)
{
	size_t need = 0;
	if (cap)
		buf[0] = 0;
	for (unsigned i = 0; t && i < t->count && i < CT_ROUTE_MAX_RULES; i++) {
		const struct ct_route_rule *r = &t->rules[i];
		char one[CT_ROUTE_GLOB_MAX + 64];
		const char *dir = r->dir == CT_DIR_ENCRYPT ? ":enc" : r->dir == CT_DIR_DECRYPT ? ":dec" : "";
		const char *tname = r->target < sizeof(target_names) / sizeof(target_names[0]) &&
						    target_names[r->target]
					    ? target_names[r->target]
					    : "?";
		int n;
		if (r->cond == CT_ROUTE_COND_NONE)
			n = snprintf(one, sizeof(one), "%s%s%s=%s", i ? "," : "", r->glob, dir, tname);
		else
			n = snprintf(one, sizeof(one), "%s%s%s=%s%s%llu", i ? "," : "", r->glob, dir, tname,
				     r->cond == CT_ROUTE_COND_GE ? ">=" : "<", (unsigned long long)r->size);
		if (n < 0)
			continue;
		if (need + (size_t)n < cap)
			memcpy(buf + need, one, (size_t)n + 1);
		else if (cap)
			buf[need < cap ? need : cap - 1] = 0;
		need += (size_t)n;
	}
	return need;
}
