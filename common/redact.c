/* SPDX-License-Identifier: MIT */
/*
 * redact.c - the command-line rule of redact.h. A command line is read word by word, the way
 * the programs on it read it:
 *  - a word naming a program the rule knows (openssl, curl, sshpass, mysql...: by basename)
 *    starts that program's options, wherever it stands, so wrappers (sudo, env, timeout, nice,
 *    xargs, ssh host CMD) are covered;
 *  - that program's options that carry a secret, in each form it accepts: the next word
 *    (-K HEX), glued to a short option (-pSECRET, also ending a cluster: zip -rP X), after '='
 *    (--password=X; OpenSSL also takes -opt=X and --opt);
 *  - in every program: long options that always take a secret (--password X, --passphrase X,
 *    --token X...), a hex value after -K, -iv, --key and the like (a key or an IV, whatever
 *    program takes it), NAME=VALUE where NAME ends in password, passwd, passphrase, secret, token,
 *    apikey... (--db-password=X, -Dssl.keyStorePassword=X, MYSQL_PWD=X), and the password of
 *    a URL's user:password@;
 *  - a word holding spaces is a shell command line (sh -c "...", ssh host "..."): its words
 *    are read the same way, quotes and all.
 * Kept on purpose: what leads to a secret without being one (-kfile FILE, -pass file:F, fd:N,
 * env:NAME or stdin, --password-file=F, openvpn's --auth-user-pass FILE) and user names.
 */
#include "redact.h"

#include <stdint.h>
#include <string.h>

enum how {
	H_WHOLE,    /* the value: "<redacted>" */
	H_PASSARG,  /* OpenSSL's pass phrase argument: pass:X; file:, fd:, env:, stdin are kept */
	H_USERPASS, /* user:password */
	H_USERPCT,  /* user%password (Samba) */
	H_HOSTURL,  /* [scheme://]user:password@host (a proxy) */
	H_URL,      /* any word: the password of each scheme://user:password@ in it */
	H_CERT,     /* file:password (curl --cert; "\:" belongs to the file name) */
	H_KEYVAL,   /* OpenSSL -macopt/-kdfopt/-pkeyopt name:value: key, hexkey, pass... */
	H_HEADER,   /* an HTTP header "Name: value": Authorization, Cookie... */
	H_OPTLIST,  /* mount -o a=b,password=x */
	H_HEX,      /* a value that is a key or IV in hex: 16 hex digits or more */
};

/* How an option takes its value. */
#define NEXT 1u    /* the next word: -K HEX */
#define GLUED 2u   /* right after the option's name: -pSECRET, /p:SECRET */
#define EQ 4u      /* after '=': --password=X, -pass=pass:X */
#define CLUSTER 8u /* a one-letter option that may end a cluster of flags: -rP X, -sSuUSER:PW */

struct opt {
	const char *name;
	unsigned char forms, how;
};

/* Program flags */
#define P_OPENSSL_DASHES 1u /* -opt and --opt are one option (OpenSSL's opt_next) */
#define P_END_AT_OPERAND 2u /* options end at the first operand: the command sshpass runs */
#define P_OWN_PASSWORD 4u   /* --password takes no next word (mysql prompts for it) */

#define MAX_OPTS 20
struct prog {
	const char *names; /* basenames, each followed by a space */
	const char *sub;   /* only after this first operand (openssl ca), or NULL */
	unsigned char flags;
	struct opt opts[MAX_OPTS]; /* ends at the first NULL name */
};

/* clang-format off */
static const struct prog progs[] = {
	{ "openssl ", NULL, P_OPENSSL_DASHES, {
		{ "-K", NEXT | EQ, H_WHOLE }, { "-iv", NEXT | EQ, H_WHOLE },
		{ "-k", NEXT | EQ, H_WHOLE }, { "-hmac", NEXT | EQ, H_WHOLE },
		{ "-psk", NEXT | EQ, H_WHOLE }, { "-srppass", NEXT | EQ, H_WHOLE },
		{ "-pass", NEXT | EQ, H_PASSARG }, { "-passin", NEXT | EQ, H_PASSARG },
		{ "-passout", NEXT | EQ, H_PASSARG }, { "-password", NEXT | EQ, H_PASSARG },
		{ "-macopt", NEXT | EQ, H_KEYVAL }, { "-kdfopt", NEXT | EQ, H_KEYVAL },
		{ "-pkeyopt", NEXT | EQ, H_KEYVAL },
	} },
	/* openssl ca -key: the password of the CA key (elsewhere -key names a key file) */
	{ "openssl ", "ca", P_OPENSSL_DASHES, { { "-key", NEXT | EQ, H_WHOLE } } },
	{ "sshpass ", NULL, P_END_AT_OPERAND, { { "-p", NEXT | GLUED, H_WHOLE } } },
	{ "curl ", NULL, 0, {
		{ "-u", NEXT | GLUED | CLUSTER, H_USERPASS }, { "--user", NEXT | EQ, H_USERPASS },
		{ "-U", NEXT | GLUED | CLUSTER, H_USERPASS }, { "--proxy-user", NEXT | EQ, H_USERPASS },
		{ "-x", NEXT | GLUED | CLUSTER, H_HOSTURL }, { "--proxy", NEXT | EQ, H_HOSTURL },
		{ "--preproxy", NEXT | EQ, H_HOSTURL },
		{ "-E", NEXT | GLUED | CLUSTER, H_CERT }, { "--cert", NEXT | EQ, H_CERT },
		{ "--proxy-cert", NEXT | EQ, H_CERT },
		{ "--pass", NEXT | EQ, H_WHOLE }, { "--proxy-pass", NEXT | EQ, H_WHOLE },
		{ "--tlspassword", NEXT | EQ, H_WHOLE }, { "--proxy-tlspassword", NEXT | EQ, H_WHOLE },
		{ "--oauth2-bearer", NEXT | EQ, H_WHOLE },
		{ "-H", NEXT | GLUED | CLUSTER, H_HEADER }, { "--header", NEXT | EQ, H_HEADER },
		{ "--proxy-header", NEXT | EQ, H_HEADER },
	} },
	{ "wget ", NULL, 0, { { "--header", NEXT | EQ, H_HEADER } } },
	{ "mysql mysqldump mysqladmin mysqlimport mysqlshow mysqlcheck mysqlslap mysqlbinlog "
	  "mariadb mariadb-dump mariadb-admin mariadb-import mariadb-show mariadb-check "
	  "mariadb-slap mariadb-binlog ", NULL, P_OWN_PASSWORD, {
		{ "-p", GLUED, H_WHOLE }, { "--password", EQ, H_WHOLE },
	} },
	{ "zip ", NULL, 0, {
		{ "-P", NEXT | GLUED | CLUSTER, H_WHOLE }, { "--password", NEXT | EQ, H_WHOLE },
	} },
	{ "unzip funzip ", NULL, 0, { { "-P", NEXT | GLUED | CLUSTER, H_WHOLE } } },
	{ "7z 7za 7zr ", NULL, 0, { { "-p", GLUED, H_WHOLE } } },
	{ "ldapsearch ldapadd ldapmodify ldapdelete ldapmodrdn ldapcompare ldapwhoami ldapexop "
	  "ldappasswd ", NULL, 0, { { "-w", NEXT | GLUED | CLUSTER, H_WHOLE } } },
	{ "ldappasswd ", NULL, 0, {
		{ "-a", NEXT | GLUED | CLUSTER, H_WHOLE }, { "-s", NEXT | GLUED | CLUSTER, H_WHOLE },
	} },
	{ "redis-cli ", NULL, 0, { { "-a", NEXT, H_WHOLE }, { "--pass", NEXT | EQ, H_WHOLE } } },
	{ "smbclient smbcacls smbget rpcclient net ", NULL, 0, {
		{ "-U", NEXT | GLUED, H_USERPCT }, { "--user", NEXT | EQ, H_USERPCT },
	} },
	{ "mount mount.cifs mount.smb3 ", NULL, 0, {
		{ "-o", NEXT | GLUED, H_OPTLIST }, { "--options", NEXT | EQ, H_OPTLIST },
	} },
	/* docker run -p is a port: only login's -p is a password */
	{ "docker podman buildah skopeo ", "login", 0, {
		{ "-p", NEXT | GLUED, H_WHOLE }, { "--password", NEXT | EQ, H_WHOLE },
	} },
	{ "xfreerdp wlfreerdp sdl-freerdp ", NULL, 0, { { "/p:", GLUED, H_WHOLE } } },
	{ "kcapi-enc ", NULL, 0, { { "--iv", NEXT | EQ, H_WHOLE } } },
};
/* clang-format on */
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

/* Long options that take a secret as the next word wherever they exist. */
static const char *const generic_next[] = {
	"--password",     "--passwd",         "--passphrase",    "--http-password",
	"--ftp-password", "--proxy-password", "--client-secret", "--api-key",
	"--token",        "--auth-token",     "--access-token",  NULL,
};

/* NAME=VALUE carries a secret when NAME ends with one of these (compared in lower case), which
 * leaves --password-file=F, PasswordAuthentication=no and OLDPWD=/dir alone. */
static const char *const secret_endings[] = {
	"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
	"api-key",  "_pwd",   "-pwd",       "_pass",  "-pass", NULL,
};

/* Options that take a key or an IV in every program that has them: a hex value after them is
 * one (a program the rule does not know, or one named by a variable in a shell line: exec "$1"
 * enc -K HEX). ssh -K or curl -K FILE take no hex. */
static const char *const hex_opts[] = { "-K", "-iv", "--iv", "-key", "--key", "-hexkey", "--hexkey", NULL };

static const char *const keyval_names[] = {
	/* OpenSSL -macopt / -kdfopt / -pkeyopt */
	"key", "hexkey", "pass", "hexpass", "password", "secret", "hexsecret", NULL,
};
static const char *const optlist_names[] = { "password", "pass", "passwd", "secret", NULL };
static const char *const secret_headers[] = { "authorization", "proxy-authorization", "cookie", NULL };
static const char *const header_words[] = {
	"token", "secret", "apikey", "api-key", "password", "passwd", NULL
};

/* ---- output --------------------------------------------------------------------------------- */

struct sink {
	char *p;
	size_t cap, len;
	bool full; /* something did not fit: the argument being written is dropped */
};

static void put(struct sink *o, const char *s, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void put_redacted(struct sink *o)
{
	put(o, CT_REDACTED, sizeof(CT_REDACTED) - 1);
}

/* ---- small string helpers ------------------------------------------------------------------- */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool starts(const char *v, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	return n >= k && !memcmp(v, lit, k);
}

static bool same(const char *v, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(v, lit, n);
}

static bool same_nocase(const char *v, size_t n, const char *lit)
{
	if (n != strlen(lit))
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(v[i]) != lit[i])
			return false;
	return true;
}

static bool in_list(const char *const *list, const char *v, size_t n, bool nocase)
{
	for (; *list; list++)
		if (nocase ? same_nocase(v, n, *list) : same(v, n, *list))
			return true;
	return false;
}

static bool ends_nocase(const char *v, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	return n >= k && same_nocase(v + n - k, k, lit);
}

static bool contains_nocase(const char *v, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	for (size_t i = 0; i + k <= n; i++)
		if (same_nocase(v + i, k, lit))
			return true;
	return false;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A word is a name in a space-separated, space-ended list. */
static bool name_in(const char *names, const char *v, size_t n)
{
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ' ');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !memcmp(p, v, n))
			return true;
		p += k + (e ? 1 : 0);
	}
	return false;
}

static const char *find(const char *v, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(v + i, lit, k))
			return v + i;
	return NULL;
}

/* ---- the transforms: a value, written as it may be recorded --------------------------------- */

/* user:password -> user:<redacted> (sep ':'), user%password likewise; a bare user stays. */
static void after_sep(struct sink *o, const char *v, size_t n, char sep)
{
	const char *s = memchr(v, sep, n);
	if (!s) {
		put(o, v, n);
		return;
	}
	put(o, v, (size_t)(s - v) + 1);
	put_redacted(o);
}

/* The password of each scheme://user:password@host in v; bare: v may also start with the
 * user:password@host part itself (curl --proxy u:p@host:3128). */
static void url_passwords(struct sink *o, const char *v, size_t n, bool bare)
{
	size_t copied = 0, from = 0;
	for (bool first = true;; first = false) {
		const char *sep = find(v + from, n - from, "://");
		size_t a;
		if (sep)
			a = (size_t)(sep - v) + 3;
		else if (bare && first)
			a = 0;
		else
			break;
		size_t e = a;
		while (e < n && !strchr("/?#", v[e]) && !is_space(v[e]))
			e++;
		const char *at = NULL;
		for (size_t i = a; i < e; i++)
			if (v[i] == '@')
				at = v + i;
		const char *colon = at ? memchr(v + a, ':', (size_t)(at - (v + a))) : NULL;
		if (colon) {
			put(o, v + copied, (size_t)(colon - v) + 1 - copied);
			put_redacted(o);
			copied = (size_t)(at - v);
		}
		from = e;
		if (!sep)
			break;
	}
	put(o, v + copied, n - copied);
}

static void transform(struct sink *o, enum how how, const char *v, size_t n)
{
	const char *c;

	switch (how) {
	case H_WHOLE:
		put_redacted(o);
		return;
	case H_PASSARG:
		if (starts(v, n, "pass:")) {
			put(o, v, 5);
			put_redacted(o);
		} else if (starts(v, n, "env:") || starts(v, n, "file:") || starts(v, n, "fd:") ||
			   same(v, n, "stdin")) {
			put(o, v, n);
		} else {
			put_redacted(o); /* not a form OpenSSL knows: a password typed without pass: */
		}
		return;
	case H_USERPASS:
		after_sep(o, v, n, ':');
		return;
	case H_USERPCT:
		after_sep(o, v, n, '%');
		return;
	case H_HOSTURL:
		url_passwords(o, v, n, true);
		return;
	case H_URL:
		url_passwords(o, v, n, false);
		return;
	case H_CERT:
		if (!starts(v, n, "pkcs11:"))
			for (size_t i = 0; i < n; i++)
				if (v[i] == ':' && (i == 0 || v[i - 1] != '\\')) {
					put(o, v, i + 1);
					put_redacted(o);
					return;
				}
		put(o, v, n);
		return;
	case H_KEYVAL:
		c = memchr(v, ':', n);
		if (c && in_list(keyval_names, v, (size_t)(c - v), false)) {
			put(o, v, (size_t)(c - v) + 1);
			put_redacted(o);
		} else {
			put(o, v, n);
		}
		return;
	case H_HEADER: {
		c = memchr(v, ':', n);
		size_t k = c ? (size_t)(c - v) : 0;
		while (k && is_space(v[k - 1]))
			k--;
		bool secret = c && in_list(secret_headers, v, k, true);
		for (const char *const *w = header_words; c && !secret && *w; w++)
			secret = contains_nocase(v, k, *w);
		if (secret) {
			put(o, v, (size_t)(c - v) + 1);
			put(o, " ", 1);
			put_redacted(o);
		} else {
			put(o, v, n);
		}
		return;
	}
	case H_HEX: {
		bool hex = n >= 16;
		for (size_t i = 0; hex && i < n; i++)
			hex = strchr("0123456789abcdefABCDEF", v[i]) != NULL;
		if (hex)
			put_redacted(o);
		else
			put(o, v, n);
		return;
	}
	case H_OPTLIST:
		for (size_t i = 0; i <= n;) {
			const char *e = memchr(v + i, ',', n - i);
			size_t k = e ? (size_t)(e - (v + i)) : n - i;
			const char *eq = memchr(v + i, '=', k);
			if (i)
				put(o, ",", 1);
			if (eq && in_list(optlist_names, v + i, (size_t)(eq - (v + i)), true)) {
				put(o, v + i, (size_t)(eq - (v + i)) + 1);
				put_redacted(o);
			} else {
				put(o, v + i, k);
			}
			if (!e)
				break;
			i += k + 1;
		}
		return;
	}
}

/* ---- reading words -------------------------------------------------------------------------- */

#define MAX_RULES 4
#define NO_VALUE SIZE_MAX

struct scan {
	const struct prog *rules[MAX_RULES]; /* the options of the program being read */
	unsigned nrules;
	unsigned flags;   /* P_* of those rules */
	const char *prog; /* its basename, for its sub-command rules */
	size_t prog_len;
	bool want_sub; /* its first operand may add rules (openssl ca) */
	bool ended;    /* "--", or sshpass's command: no more options */
	int pending;   /* enum how of the value the next word is, or -1 */
	unsigned redacted;
};

static void scan_init(struct scan *s)
{
	memset(s, 0, sizeof(*s));
	s->pending = -1;
}

static void add_rule(struct scan *s, const struct prog *p)
{
	if (s->nrules < MAX_RULES) {
		s->rules[s->nrules++] = p;
		s->flags |= p->flags;
	}
}

/* A word naming a program the rule knows: its options follow. */
static bool program(struct scan *s, const char *v, size_t n)
{
	const char *b = v;
	for (size_t i = 0; i < n; i++)
		if (v[i] == '/')
			b = v + i + 1;
	size_t bn = n - (size_t)(b - v);
	bool known = false, sub = false;
	for (size_t i = 0; bn && i < NPROGS; i++) {
		if (!name_in(progs[i].names, b, bn))
			continue;
		if (progs[i].sub) {
			sub = true;
			continue;
		}
		if (!known) {
			s->nrules = 0;
			s->flags = 0;
		}
		known = true;
		add_rule(s, &progs[i]);
	}
	if (!known && !sub)
		return false;
	if (!known) {
		s->nrules = 0;
		s->flags = 0;
	}
	s->prog = b;
	s->prog_len = bn;
	s->want_sub = sub;
	s->ended = false;
	return true;
}

static void sub_command(struct scan *s, const char *v, size_t n)
{
	for (size_t i = 0; i < NPROGS; i++)
		if (progs[i].sub && same(v, n, progs[i].sub) && name_in(progs[i].names, s->prog, s->prog_len))
			add_rule(s, &progs[i]);
}

/* One of the program's secret options: sets s->pending (*off = NO_VALUE) when its value is the
 * next word, else says where in v the value starts and how to write it. */
static bool option(struct scan *s, const char *v, size_t n, enum how *how, size_t *off)
{
	for (unsigned r = 0; r < s->nrules; r++) {
		const char *x = v;
		size_t xn = n;
		if ((s->rules[r]->flags & P_OPENSSL_DASHES) && starts(x, xn, "--") && xn > 2) {
			x++;
			xn--;
		}
		const struct opt *opts = s->rules[r]->opts;
		for (const struct opt *o = opts; o < opts + MAX_OPTS && o->name; o++) {
			size_t k = strlen(o->name);
			if (xn < k || memcmp(x, o->name, k))
				continue;
			if ((o->forms & NEXT) && xn == k) {
				s->pending = o->how;
				*off = NO_VALUE;
				return true;
			}
			if ((o->forms & EQ) && xn > k && x[k] == '=') {
				*how = o->how;
				*off = (size_t)(x - v) + k + 1;
				return true;
			}
			if ((o->forms & GLUED) && xn > k) {
				*how = o->how;
				*off = (size_t)(x - v) + k;
				return true;
			}
		}
	}
	/* a cluster of one-letter flags ending in one of the options: -rP X, -sSuUSER:PW */
	if (n < 3 || v[0] != '-' || v[1] == '-')
		return false;
	for (size_t i = 2; i < n; i++)
		for (unsigned r = 0; r < s->nrules; r++)
			for (const struct opt *o = s->rules[r]->opts;
			     o < s->rules[r]->opts + MAX_OPTS && o->name; o++) {
				if (!(o->forms & CLUSTER) || o->name[1] != v[i])
					continue;
				if (i + 1 == n) {
					s->pending = o->how;
					*off = NO_VALUE;
				} else {
					*how = o->how;
					*off = i + 1;
				}
				return true;
			}
	return false;
}

/* NAME=VALUE with a NAME that says it holds a secret: where VALUE starts. */
static bool secret_assignment(const char *v, size_t n, size_t *off)
{
	const char *eq = memchr(v, '=', n);
	if (!eq || eq == v || (size_t)(eq - v) + 1 == n)
		return false;
	size_t k = (size_t)(eq - v);
	for (size_t i = 0; i < k; i++)
		if (is_space(v[i]))
			return false;
	for (const char *const *e = secret_endings; *e; e++)
		if (ends_nocase(v, k, *e)) {
			*off = k + 1;
			return true;
		}
	return false;
}

/* Writes v[0..off) and the value after it the way how says; a word the rule leaves as it was
 * is written as it stood in the input (raw: with its quotes, inside a shell command line). */
static void emit(struct scan *s, struct sink *o, const char *raw, size_t rawlen, const char *v, size_t n,
		 size_t off, enum how how)
{
	size_t start = o->len;
	put(o, v, off);
	transform(o, how, v + off, n - off);
	if (o->full)
		return;
	if (o->len - start == n && !memcmp(o->p + start, v, n)) {
		o->len = start;
		put(o, raw, rawlen);
		return;
	}
	s->redacted++;
}

static void shell_words(struct scan *outer, struct sink *o, const char *w, size_t n);

static void word(struct scan *s, struct sink *o, const char *raw, size_t rawlen, const char *v, size_t n,
		 bool nested)
{
	enum how how = H_WHOLE;
	size_t off;

	if (s->pending >= 0) {
		how = (enum how)s->pending;
		s->pending = -1;
		emit(s, o, raw, rawlen, v, n, 0, how);
		return;
	}
	if (s->want_sub && n && v[0] != '-') {
		s->want_sub = false;
		sub_command(s, v, n);
		put(o, raw, rawlen);
		return;
	}
	if (!s->ended && same(v, n, "--")) {
		s->ended = true;
		put(o, raw, rawlen);
		return;
	}
	if (n && v[0] != '-' && program(s, v, n)) {
		put(o, raw, rawlen);
		return;
	}
	if (!s->ended && option(s, v, n, &how, &off)) {
		if (off == NO_VALUE)
			put(o, raw, rawlen);
		else
			emit(s, o, raw, rawlen, v, n, off, how);
		return;
	}
	if (!s->ended && !(s->flags & P_OWN_PASSWORD) && in_list(generic_next, v, n, false)) {
		s->pending = H_WHOLE;
		put(o, raw, rawlen);
		return;
	}
	if (!s->ended && in_list(hex_opts, v, n, false)) {
		s->pending = H_HEX;
		put(o, raw, rawlen);
		return;
	}
	const char *eq = memchr(v, '=', n);
	if (!s->ended && eq && in_list(hex_opts, v, (size_t)(eq - v), false)) {
		emit(s, o, raw, rawlen, v, n, (size_t)(eq - v) + 1, H_HEX);
		return;
	}
	if ((s->flags & P_END_AT_OPERAND) && n && v[0] != '-')
		s->ended = true;
	if (secret_assignment(v, n, &off)) {
		emit(s, o, raw, rawlen, v, n, off, H_WHOLE);
		return;
	}
	if (!nested) {
		for (size_t i = 0; i < n; i++)
			if (is_space(v[i])) {
				shell_words(s, o, v, n);
				return;
			}
	}
	emit(s, o, raw, rawlen, v, n, 0, H_URL);
}

#define SHELL_WORD_MAX 2048

static bool shell_sep(char c)
{
	return is_space(c) || c == ';' || c == '|' || c == '&' || c == '(' || c == ')';
}

/* A word holding a shell command line: its words, unquoted as sh would, go through the same
 * rule; separators and the words the rule keeps are copied as they stand. */
static void shell_words(struct scan *outer, struct sink *o, const char *w, size_t n)
{
	struct scan s;
	char val[SHELL_WORD_MAX];

	scan_init(&s);
	for (size_t i = 0; i < n;) {
		if (shell_sep(w[i])) {
			put(o, w + i, 1);
			i++;
			continue;
		}
		size_t j = i, vn = 0;
		bool over = false;
		char quote = 0;
		while (j < n && (quote || !shell_sep(w[j]))) {
			char c = w[j++];
			if (quote == '\'' && c == '\'') {
				quote = 0;
				continue;
			}
			if (quote == '"' && c == '"') {
				quote = 0;
				continue;
			}
			if (!quote && (c == '\'' || c == '"')) {
				quote = c;
				continue;
			}
			if (c == '\\' && quote != '\'' && j < n && (!quote || strchr("\"\\$`", w[j])))
				c = w[j++];
			if (vn < sizeof(val))
				val[vn++] = c;
			else
				over = true;
		}
		if (over) { /* too long to read: nothing of it is kept */
			put_redacted(o);
			s.redacted++;
		} else {
			word(&s, o, w + i, j - i, val, vn, true);
		}
		i = j;
	}
	outer->redacted += s.redacted;
}

size_t ct_argv_redact(const char *in, size_t len, bool exe_only, char *out, size_t cap, unsigned *redacted)
{
	struct sink o = { .p = out, .cap = cap };
	struct scan s;

	scan_init(&s);
	for (size_t i = 0, k = 0; i < len; k++) {
		const char *e = memchr(in + i, 0, len - i);
		size_t n = e ? (size_t)(e - (in + i)) : len - i;
		size_t mark = o.len;
		unsigned before = s.redacted;
		if (k)
			put(&o, "", 1);
		word(&s, &o, in + i, n, in + i, n, false);
		if (o.full) {
			o.len = mark;
			s.redacted = before;
			break;
		}
		if (exe_only)
			break;
		i += n + 1;
	}
	if (redacted)
		*redacted = s.redacted;
	return o.len;
}
