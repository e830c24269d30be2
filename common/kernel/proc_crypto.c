/* SPDX-License-Identifier: MIT */
/*
 * proc_crypto.c - /proc/crypto parsing (blocks of "key : value" lines separated by blank lines)
 * and driver classification by name markers kept as data.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proc_crypto.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

/* Substrings of driver or module names that mean "CPU instructions". A marker ending in '|'
 * must end a word there ("aes_ce_blk", "cbc-aes-ce", but not "marvell_cesa"). */
static const char *const cpu_markers[] = {
	"aesni", "vaes",    "-ce|",   "_ce|",  "neon", "padlock", "s390",  "p8_",
	"vmx",   "sparc64", "zvkned", "riscv", "-avx", "_avx",    "armv8", "aes-arm",
};
/* Substrings that mean "generic software" (checked before the CPU markers for template-wrapped
 * drivers like "cbc(aes-generic)"). */
static const char *const sw_markers[] = { "generic", "fixed-time", "aes-lib", "aes_ti" };
/* Offload engines whose names would otherwise match a CPU marker (Allwinner's "Crypto Engine"). */
static const char *const hw_markers[] = { "sun8i-ce", "sun8i-ss", "sun4i-ss" };

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool has_marker(const char *s, const char *const *markers, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		size_t len = strlen(markers[i]);
		bool bounded = len && markers[i][len - 1] == '|';
		if (bounded)
			len--;
		for (const char *at = s; (at = memmem(at, strlen(at), markers[i], len)); at++)
			if (!bounded || !word_char(at[len]))
				return true;
	}
	return false;
}

enum ct_kdrv_class ct_kdrv_classify(const char *driver, const char *module)
{
	if (!driver || !*driver)
		return CT_KDRV_UNKNOWN;
	if (has_marker(driver, hw_markers, N(hw_markers)))
		return CT_KDRV_HW;
	/* A template instance ("cbc(ecb(aes-fixed-time))") is as fast as the innermost cipher. */
	const char *inner = strrchr(driver, '(');
	const char *core = inner ? inner + 1 : driver;
	if (has_marker(core, cpu_markers, N(cpu_markers)))
		return CT_KDRV_CPU;
	if (has_marker(core, sw_markers, N(sw_markers)))
		return CT_KDRV_SW;
	if (inner) /* a template over a plain name ("cbc(aes)"): the software fallback */
		return CT_KDRV_SW;
	if (has_marker(module, cpu_markers, N(cpu_markers)))
		return CT_KDRV_CPU;
	/* Built into the kernel without a marker: library code. A module without one: a device. */
	if (!module || !*module || !strcmp(module, "kernel"))
		return CT_KDRV_SW;
	return CT_KDRV_HW;
}

const char *ct_kdrv_class_name(enum ct_kdrv_class cls)
{
	switch (cls) {
	case CT_KDRV_HW:
		return "hardware";
	case CT_KDRV_CPU:
		return "cpu";
	case CT_KDRV_SW:
		return "software";
	default:
		return "unknown";
	}
}

static bool type_usable(const char *type, const char *afalg_type)
{
	static const struct {
		const char *afalg, *proc;
	} map[] = {
		{ "skcipher", "skcipher" },  { "skcipher", "lskcipher" }, { "skcipher", "ablkcipher" },
		{ "skcipher", "blkcipher" }, { "skcipher", "givcipher" }, { "aead", "aead" },
		{ "hash", "shash" },         { "hash", "ahash" },         { "rng", "rng" },
	};
	for (size_t i = 0; i < N(map); i++) {
		if (strcmp(type, map[i].proc))
			continue;
		if (afalg_type ? !strcmp(afalg_type, map[i].afalg)
			       : (!strcmp(map[i].afalg, "skcipher") || !strcmp(map[i].afalg, "aead")))
			return true;
	}
	return false;
}

/* One /proc/crypto block, fields as NUL-terminated copies. */
struct block {
	char name[128], driver[128], module[64], type[24], selftest[16], internal[8];
	int priority;
};

static void set_field(struct block *b, const char *key, size_t klen, const char *val, size_t vlen)
{
	static const struct {
		const char *key;
		size_t off, size;
	} fields[] = {
		{ "name", offsetof(struct block, name), sizeof(((struct block *)0)->name) },
		{ "driver", offsetof(struct block, driver), sizeof(((struct block *)0)->driver) },
		{ "module", offsetof(struct block, module), sizeof(((struct block *)0)->module) },
		{ "type", offsetof(struct block, type), sizeof(((struct block *)0)->type) },
		{ "selftest", offsetof(struct block, selftest), sizeof(((struct block *)0)->selftest) },
		{ "internal", offsetof(struct block, internal), sizeof(((struct block *)0)->internal) },
	};
	if (klen == 8 && !memcmp(key, "priority", 8)) {
		int p = 0;
		for (size_t i = 0; i < vlen && val[i] >= '0' && val[i] <= '9'; i++)
			p = p * 10 + (val[i] - '0');
		b->priority = p;
		return;
	}
	for (size_t i = 0; i < N(fields); i++) {
		if (strlen(fields[i].key) != klen || memcmp(key, fields[i].key, klen))
			continue;
		char *dst = (char *)b + fields[i].off;
		size_t n = vlen < fields[i].size - 1 ? vlen : fields[i].size - 1;
		memcpy(dst, val, n);
		dst[n] = '\0';
		return;
	}
}

static bool block_qualifies(const struct block *b, const char *alg, const char *afalg_type)
{
	return b->name[0] && !strcmp(b->name, alg) && !strcmp(b->selftest, "passed") &&
	       strcmp(b->internal, "yes") && type_usable(b->type, afalg_type);
}

bool ct_proc_crypto_resolve(const char *text, size_t len, const char *alg, const char *afalg_type,
			    struct ct_kdrv *out)
{
	struct block cur, best;
	bool have_best = false;
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	if (!text || !alg)
		return false;
	memset(&cur, 0, sizeof(cur));
	for (;;) {
		const char *eol = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const char *line_end = eol ? eol : end;
		bool blank = true;
		for (const char *q = p; q < line_end; q++)
			if (*q != ' ' && *q != '\t' && *q != '\r')
				blank = false;
		if (blank) { /* end of a block (or of the text) */
			if (block_qualifies(&cur, alg, afalg_type) &&
			    (!have_best || cur.priority > best.priority)) {
				best = cur;
				have_best = true;
			}
			memset(&cur, 0, sizeof(cur));
		} else {
			const char *colon = memchr(p, ':', (size_t)(line_end - p));
			if (colon) {
				const char *k = p, *ke = colon, *v = colon + 1, *ve = line_end;
				while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
					ke--;
				while (v < ve && (*v == ' ' || *v == '\t'))
					v++;
				while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
					ve--;
				set_field(&cur, k, (size_t)(ke - k), v, (size_t)(ve - v));
			}
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	/* The text may end without a newline after the last block. */
	if (block_qualifies(&cur, alg, afalg_type) && (!have_best || cur.priority > best.priority)) {
		best = cur;
		have_best = true;
	}
	if (!have_best)
		return false;
	snprintf(out->name, sizeof(out->name), "%s", best.name);
	snprintf(out->driver, sizeof(out->driver), "%s", best.driver);
	snprintf(out->module, sizeof(out->module), "%s", best.module);
	snprintf(out->type, sizeof(out->type), "%s", best.type);
	out->priority = best.priority;
	out->cls = ct_kdrv_classify(best.driver, best.module);
	return true;
}
