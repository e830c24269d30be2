/* SPDX-License-Identifier: MIT */
/*
 * callsites.c - who created a path's cipher contexts. The preload records the stack of a path's
 * first context init as "module!symbol+0xoff" (or "module+0xoff" where the module exports no
 * symbol there: stripped executables, libssl's internal functions) frames, innermost first.
 * The interesting frame is the first one outside libcrypto: the code that asked for the cipher
 * (ssh's cipher_init, libssl's change-cipher-state, curl...), so the report can say
 * "aes-256-gcm contexts created by libssl.so.3 for TLS".
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module ends at the '!' of "module!symbol+0xoff", or else at the last '+': module names
 * may hold a '+' themselves (libstdc++.so.6+0x9a1c). */
struct ct_str rp_frame_module(struct ct_str f)
{
	const char *bang = memchr(f.p, '!', f.len);
	uint32_t k;
	if (bang) {
		k = (uint32_t)(bang - f.p);
	} else {
		k = f.len;
		while (k > 0 && f.p[k - 1] != '+')
			k--;
		k = k ? k - 1 : f.len; /* before the last '+'; no '+' at all: the whole frame */
	}
	return (struct ct_str){ .p = f.p, .len = k };
}

bool rp_frame_has_symbol(struct ct_str f)
{
	return memchr(f.p, '!', f.len) != NULL;
}

/* "module!symbol" without "+0xoff"; a frame without a symbol stays whole (its offset is all
 * that tells two call sites in a stripped module apart). */
static void frame_name(struct ct_str f, char *buf, size_t cap)
{
	uint32_t len = f.len;
	if (rp_frame_has_symbol(f))
		for (uint32_t k = f.len; k > 0; k--)
			if (f.p[k - 1] == '+') {
				len = k - 1;
				break;
			}
	snprintf(buf, cap, "%.*s", (int)len, f.p);
}

static bool is_libcrypto(struct ct_str module)
{
	return rp_str_starts(module, "libcrypto") || rp_str_starts(module, "libcryptrace");
}

static const char *purpose_of(struct ct_str module, const char *via)
{
	if (strstr(via, "RAND_") || strstr(via, "EVP_RAND"))
		return "random numbers (DRBG)";
	if (rp_str_starts(module, "libssl"))
		return "TLS";
	if (rp_str_is(module, "ssh") || rp_str_is(module, "sshd") || rp_str_starts(module, "libssh"))
		return "SSH transport";
	return "";
}

bool rp_callsite_creator(struct ct_str callsite, struct rp_creator *c)
{
	memset(c, 0, sizeof(*c));
	c->purpose = "";
	unsigned n = rp_str_nparts(callsite, '\n');
	if (n == 0)
		return false;
	unsigned k = 0;
	for (; k < n; k++) {
		struct ct_str f = rp_str_part(callsite, '\n', k);
		if (!is_libcrypto(rp_frame_module(f)))
			break;
		/* the outermost named libcrypto frame is the API the creator called */
		if (rp_frame_has_symbol(f))
			frame_name(f, c->via, sizeof(c->via));
	}
	/* All frames inside libcrypto (a deep stack cut short): name the outermost one. */
	struct ct_str f = rp_str_part(callsite, '\n', k < n ? k : n - 1);
	struct ct_str mod = rp_frame_module(f);
	frame_name(f, c->created_by, sizeof(c->created_by));
	snprintf(c->module, sizeof(c->module), "%.*s", (int)mod.len, mod.p);
	c->purpose = purpose_of(mod, c->via);
	return true;
}

char *rp_callsite_rewrite(struct ct_str cs, rp_frame_renamer rename, void *ctx)
{
	unsigned n = rp_str_nparts(cs, '\n');
	size_t cap = (size_t)cs.len + 1, used = 0;
	char *buf = malloc(cap), frame[RP_FRAME_MAX];
	bool changed = false;
	if (!buf)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		struct ct_str f = rp_str_part(cs, '\n', i);
		const char *text = f.p;
		size_t len = f.len;
		if (rename(ctx, f, frame, sizeof(frame))) {
			text = frame;
			len = strlen(frame);
			changed = true;
		}
		if (used + len + 2 > cap) { /* a new name is often longer than what it replaces */
			size_t ncap = (used + len + 2) * 2;
			char *grown = realloc(buf, ncap);
			if (!grown) {
				free(buf);
				return NULL;
			}
			buf = grown;
			cap = ncap;
		}
		if (i)
			buf[used++] = '\n';
		memcpy(buf + used, text, len);
		used += len;
	}
	buf[used] = 0;
	if (!changed) {
		free(buf);
		return NULL;
	}
	return buf;
}
