/* SPDX-License-Identifier: MIT */
/*
 * route_spec.h - the route spec (CRYPTRACE_ROUTE / cryptrace run --route): parsing into a fixed
 * table and looking up where a cipher request should run. Pure logic: no allocation, no I/O, so
 * the preload can use it before anything else is set up and the unit tests link it directly.
 *
 *   spec    := rule ("," rule)*
 *   rule    := glob [":" dir] "=" target [cond]  |  target [cond]
 *   glob    := lower-case OpenSSL cipher name with * and ? wildcards
 *   dir     := "enc" | "dec" | "encrypt" | "decrypt"
 *   target  := "native" | "cpu" | "aesni" | "afalg" | "cryptodev"   ("aesni": x86 only; = "cpu")
 *   cond    := (">=" | "<") size ;  size := digits ["k"|"K"|"m"|"M"]   (k = 1024)
 *
 * A bare target continues the previous rule's glob and dir. First matching rule wins; no match
 * means native. Full text: docs/routes.md.
 */
#ifndef CT_ROUTE_SPEC_H
#define CT_ROUTE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_format.h" /* enum ct_route_target, enum ct_dir */

#define CT_ROUTE_MAX_RULES 32
#define CT_ROUTE_SPEC_MAX 1024           /* bytes of a spec the preload takes, including the NUL */
#define CT_ROUTE_GLOB_MAX 48             /* bytes, including the terminating NUL */
#define CT_ROUTE_SIZE_UNKNOWN UINT64_MAX /* "at init: the request size is not known yet" */

enum ct_route_cond {
	CT_ROUTE_COND_NONE = 0,
	CT_ROUTE_COND_GE = 1, /* size >= threshold */
	CT_ROUTE_COND_LT = 2, /* size <  threshold */
};

struct ct_route_rule {
	char glob[CT_ROUTE_GLOB_MAX];
	uint8_t dir;    /* enum ct_dir: CT_DIR_UNKNOWN = both directions */
	uint8_t target; /* enum ct_route_target (never CT_ROUTE_NONE) */
	uint8_t cond;   /* enum ct_route_cond */
	uint64_t size;  /* threshold in bytes when cond != NONE */
};

struct ct_route_table {
	unsigned count;
	struct ct_route_rule rules[CT_ROUTE_MAX_RULES];
};

/* Flags from ct_route_lookup_ex. */
#define CT_ROUTE_F_MATCHED (1u << 0) /* a rule matched (else the answer is the default, native) */
#define CT_ROUTE_F_SIZE_DEPENDENT                                                                            \
	(1u << 1) /* size unknown and the matching rule has a size condition:
					       another target may apply at other sizes */

/* Parses spec into *out (which is always left valid: empty on error). Returns 0, or -1 with a
 * one-line message in err (may be NULL) naming the bad token and its 1-based column, e.g.
 * `bad route spec at 12: unknown target "aesnii" (expected native, cpu, aesni, afalg, cryptodev)`. */
int ct_route_parse(const char *spec, struct ct_route_table *out, char *err, size_t errlen);

/* Where a request goes. cipher: any case ("AES-128-CBC" matches "aes-*-cbc"); dir: enum ct_dir
 * (CT_DIR_UNKNOWN matches only rules without a direction); size: bytes of this request, or
 * CT_ROUTE_SIZE_UNKNOWN at init, in which case size conditions are ignored and the first rule
 * matching name and direction decides (ct_route_lookup_ex then reports CT_ROUTE_F_SIZE_DEPENDENT
 * if that rule has a condition). NULL table or cipher: native. */
enum ct_route_target ct_route_lookup(const struct ct_route_table *t, const char *cipher, int dir,
				     uint64_t size);
enum ct_route_target ct_route_lookup_ex(const struct ct_route_table *t, const char *cipher, int dir,
					uint64_t size, unsigned *flags);

/* Shell-style match of * and ? (no brackets), ASCII case-insensitive. */
bool ct_route_glob_match(const char *glob, const char *name);

/* Writes the table back as a canonical spec (one full rule per entry); returns the length that
 * the full text needs (like snprintf). Used by the launcher to echo what it understood. */
size_t ct_route_format(const struct ct_route_table *t, char *buf, size_t cap);

#endif
