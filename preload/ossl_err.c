/* SPDX-License-Identifier: MIT */
/*
 * ossl_err.c - the reason a libcrypto call failed, from OpenSSL's error queue (see ossl_err.h).
 *
 * Peek functions only, never ERR_get_error or ERR_clear_error: the program may print the queue
 * (openssl's CLI does) or act on it. They are resolved at run time like every libcrypto function:
 * OpenSSL 3's ERR_peek_error_all / ERR_peek_last_error_all, else 1.1's *_line_data.
 *
 * What is read of an entry: its code, its data text when OpenSSL owns a copy of it (flags
 * MALLOCED|STRING), and the library and reason strings of libcrypto's own libraries. An entry's
 * file and function names are pointers into the module that raised it, and an engine module is
 * unloaded again when its bind fails (openssl's afalg engine on a kernel without AF_ALG), so they
 * are compared as pointers but never read; the strings an engine registers for its own library
 * numbers (ERR_LIB_USER and up) live in that module too, so those errors print as numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ossl_err.h"
#include "core.h"

typedef unsigned long (*peek_all_fn)(const char **file, int *line, const char **func, const char **data,
				     int *flags);
typedef unsigned long (*peek_data_fn)(const char **file, int *line, const char **data, int *flags);
typedef const char *(*err_string_fn)(unsigned long e);

#define ERR_TXT_MALLOCED 0x01
#define ERR_TXT_STRING 0x02
#define ERR_LIB_SYS 2
#define ERR_LIB_USER 128

struct err_fns {
	peek_all_fn first_all, last_all;
	peek_data_fn first_data, last_data;
	err_string_fn lib_string, reason_string;
};

/* Resolved once and published whole through one pointer: no lock (a fork in the middle must not
 * leave one held). Two threads resolving at once both get a correct table; one publishes it. */
static struct err_fns fns_table;
static const struct err_fns *fns_pub;

static void resolve(struct err_fns *out)
{
	const struct err_fns *pub = __atomic_load_n(&fns_pub, __ATOMIC_ACQUIRE);
	if (pub) {
		*out = *pub;
		return;
	}
	struct err_fns f = { 0 };
	f.first_all = (peek_all_fn)ct_resolve("ERR_peek_error_all");
	f.last_all = (peek_all_fn)ct_resolve("ERR_peek_last_error_all");
	if (!f.first_all || !f.last_all) {
		f.first_all = f.last_all = NULL;
		f.first_data = (peek_data_fn)ct_resolve("ERR_peek_error_line_data");
		f.last_data = (peek_data_fn)ct_resolve("ERR_peek_last_error_line_data");
	}
	f.lib_string = (err_string_fn)ct_resolve("ERR_lib_error_string");
	f.reason_string = (err_string_fn)ct_resolve("ERR_reason_error_string");
	*out = f;
	static int publishing;
	if (!__atomic_exchange_n(&publishing, 1, __ATOMIC_ACQ_REL)) {
		fns_table = f;
		__atomic_store_n(&fns_pub, &fns_table, __ATOMIC_RELEASE);
	}
}

struct entry {
	unsigned long code;
	const char *file, *data;
	int line, flags;
};

static bool peek(const struct err_fns *fns, bool last, struct entry *e)
{
	memset(e, 0, sizeof(*e));
	if (fns->first_all)
		e->code = (last ? fns->last_all : fns->first_all)(&e->file, &e->line, NULL, &e->data,
								  &e->flags);
	else if (fns->first_data && fns->last_data)
		e->code = (last ? fns->last_data : fns->first_data)(&e->file, &e->line, &e->data, &e->flags);
	else
		return false;
	return true;
}

void ct_err_mark(struct ct_err_mark *m)
{
	int saved = errno;
	struct err_fns fns;
	struct entry e;

	resolve(&fns);
	memset(m, 0, sizeof(*m));
	m->usable = peek(&fns, true, &e);
	m->empty = e.code == 0;
	m->code = e.code;
	m->file = e.file;
	m->line = e.line;
	m->data = e.data;
	errno = saved;
}

static bool same_entry(const struct ct_err_mark *m, const struct entry *e)
{
	return !m->empty && m->code == e->code && m->file == e->file && m->line == e->line &&
	       m->data == e->data;
}

/* Appends s, with control characters replaced, at most max bytes of it. */
static size_t put_clean(char *buf, size_t cap, size_t len, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max && len + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[len++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (len < cap)
		buf[len] = '\0';
	return len;
}

static size_t put(char *buf, size_t cap, size_t len, const char *s)
{
	return put_clean(buf, cap, len, s, SIZE_MAX);
}

/* "DSO support routines" -> "DSO", "engine routines" -> "engine". */
static size_t put_lib(char *buf, size_t cap, size_t len, const char *lib)
{
	static const char *const tails[] = { " support routines", " routines" };
	size_t n = strlen(lib);

	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t t = strlen(tails[i]);

		if (n > t && !strcmp(lib + n - t, tails[i])) {
			n -= t;
			break;
		}
	}
	return put_clean(buf, cap, len, lib, n);
}

/* One entry: "library: reason: data". */
static size_t put_entry(const struct err_fns *fns, char *buf, size_t cap, size_t len, const struct entry *e)
{
	bool v3 = fns->first_all != NULL;
	bool sys = v3 ? (e->code & 0x80000000ul) != 0 : ((e->code >> 24) & 0xff) == ERR_LIB_SYS;
	unsigned lib = sys ? ERR_LIB_SYS : (unsigned)((v3 ? e->code >> 23 : e->code >> 24) & 0xff);
	unsigned long reason = v3 ? e->code & (sys ? 0x7ffffffful : 0x7ffffful) : e->code & 0xfff;
	char num[64];

	if (sys) {
		len = put(buf, cap, len, "system: ");
		len = put(buf, cap, len, strerror((int)reason));
	} else {
		/* libcrypto's own libraries only: an engine's strings live in its module */
		const char *ls = lib < ERR_LIB_USER && fns->lib_string ? fns->lib_string(e->code) : NULL;
		const char *rs = lib < ERR_LIB_USER && fns->reason_string ? fns->reason_string(e->code)
									  : NULL;

		if (ls) {
			len = put_lib(buf, cap, len, ls);
		} else {
			snprintf(num, sizeof(num), "lib(%u)", lib);
			len = put(buf, cap, len, num);
		}
		len = put(buf, cap, len, ": ");
		if (rs) {
			len = put(buf, cap, len, rs);
		} else {
			snprintf(num, sizeof(num), "reason(%lu)", reason);
			len = put(buf, cap, len, num);
		}
	}
	if (e->data && e->data[0] &&
	    (e->flags & (ERR_TXT_MALLOCED | ERR_TXT_STRING)) == (ERR_TXT_MALLOCED | ERR_TXT_STRING)) {
		len = put(buf, cap, len, ": ");
		len = put_clean(buf, cap, len, e->data, 200);
	}
	return len;
}

size_t ct_err_reason(const struct ct_err_mark *before, char *buf, size_t cap)
{
	int saved = errno;
	struct err_fns fns;
	struct entry first, last;
	size_t len = 0;

	if (!cap)
		return 0;
	buf[0] = '\0';
	resolve(&fns);
	if (!before->usable || !peek(&fns, true, &last) || !last.code || same_entry(before, &last)) {
		errno = saved;
		return 0;
	}
	/* The oldest entry is the call's own only if the queue was empty before it. */
	bool have_first = before->empty && peek(&fns, false, &first) && first.code &&
			  !(first.code == last.code && first.file == last.file && first.line == last.line &&
			    first.data == last.data);

	if (have_first) {
		len = put_entry(&fns, buf, cap, len, &first);
		len = put(buf, cap, len, "; then ");
	}
	len = put_entry(&fns, buf, cap, len, &last);
	errno = saved;
	return len < cap ? len : cap - 1;
}
