/* SPDX-License-Identifier: MIT */
/*
 * lowlevel_api.c - the `lowlevel-api` finding: cipher work through the low-level AES_* API (no
 * providers, no engines, and no AES-NI in OpenSSL 3.0's table code) or through EVP_Cipher(), the
 * raw one-shot entry. The advice fits whose code made the calls (callsites.c names the creator,
 * owner.c says whose file it is), what they cost (a packaged program's costless calls are no
 * finding at all) and the OpenSSL it ran on: 1.1 has no providers and none of the 3.0 calls the
 * advice names (EVP_CIPHER_fetch, EVP_CipherInit_ex2). AES_* is table code on x86-64 in every
 * version (AES_cbc_encrypt at 0.23-0.29 GB/s in 1.1.1w, 3.0.22 and 3.5.9 against 1.4 GB/s
 * through EVP on the same AES-NI CPU: docs/openssl-versions.md).
 */
#include "findings.h"
#include "owner.h"

#include <stdio.h>

/* Severity: AES_* carrying a real share of the work is a warning (no provider, no engine, and in
 * OpenSSL 1.1 and 3.x AES_encrypt & co. are table code without AES-NI). EVP_Cipher runs in the
 * provider at full speed, and a few AES_* blocks (OpenSSH's UMAC pads) cost nothing: info, or no
 * finding at all when the code is a packaged program's that the reader does not maintain. */
#define LOWLEVEL_WARN_SHARE 0.01

/* The file of the module that created a merged path's contexts (its first call site), from the
 * MODULE records of the processes that have the path, else a traced executable of that name;
 * "" when unknown. */
static void module_file(const struct rp_model *m, const struct rp_path *p, const char *module, char *file,
			size_t cap)
{
	file[0] = 0;
	for (size_t i = 0; i < m->nprocs && !file[0]; i++) {
		const struct rp_proc *q = &m->procs[i];
		if (p->pids.n && !rp_u32list_has(&p->pids, q->hdr.pid))
			continue;
		for (size_t k = 0; k < q->nmodules; k++)
			if (rp_str_is(q->modules[k].name, module) && q->modules[k].path.len) {
				snprintf(file, cap, "%.*s", S(q->modules[k].path));
				return;
			}
		if (q->hdr.exe.len && rp_str_is(rp_str_basename(q->hdr.exe), module))
			snprintf(file, cap, "%.*s", S(q->hdr.exe));
	}
}

/* Every process of the path ran OpenSSL 1.x (OpenSSL_version() as the trace recorded it). */
static bool on_openssl_1(const struct rp_model *m, const struct rp_path *p)
{
	bool any = false;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if (p->pids.n && !rp_u32list_has(&p->pids, q->hdr.pid))
			continue;
		struct ct_str v = q->proc.libcrypto.len ? q->proc.libcrypto : q->hdr.libcrypto;
		if (!rp_str_starts(v, "OpenSSL 1."))
			return false;
		any = true;
	}
	return any;
}

/* `openssl speed` made the calls: what it measures is the reader's command line to change. */
static bool by_openssl_speed(const struct rp_model *m, const struct rp_path *p)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if ((!p->pids.n || rp_u32list_has(&p->pids, q->hdr.pid)) &&
		    rp_str_is(rp_str_basename(q->hdr.exe), "openssl") &&
		    rp_str_is(rp_str_part(q->hdr.argv, '\0', 1), "speed"))
			return true;
	}
	return false;
}

/* Every process with the path runs BoringSSL (its OpenSSL_version() says just that): there AES_*
 * uses AES-NI like EVP does and there are no engines or providers to bypass, so neither AES_* nor
 * EVP_Cipher slows anything, and EVP_CIPHER_fetch, the fix below, does not exist. */
static bool only_boringssl(const struct rp_model *m, const struct rp_path *p)
{
	bool any = false;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if (p->pids.n && !rp_u32list_has(&p->pids, q->hdr.pid))
			continue;
		struct ct_str lib = q->proc.libcrypto.len ? q->proc.libcrypto : q->hdr.libcrypto;
		if (!rp_str_starts(lib, "BoringSSL"))
			return false;
		any = true;
	}
	return any;
}

void rp_eval_lowlevel_api(struct rp_model *m)
{
	uint64_t total_bytes = 0;
	for (size_t i = 0; i < m->npaths; i++)
		total_bytes += m->paths[i].st.bytes;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		bool aes = p->def.api == CT_API_AES;
		bool raw = p->def.api == CT_API_EVP && p->def.entry == CT_ENTRY_EVP_CIPHER;
		if (!(aes || raw) || !p->st.calls || only_boringssl(m, p))
			continue;
		/* whose code made the calls, and what they cost */
		struct rp_creator c;
		char file[512] = "";
		struct rp_owner own = { .kind = RP_OWNER_UNKNOWN };
		bool named = rp_callsite_creator(p->def.callsite, &c);
		if (named) {
			module_file(m, p, c.module, file, sizeof(file));
			rp_file_owner(file, &own);
		}
		bool readers = !named || rp_owner_is_readers(&own);
		bool speed = by_openssl_speed(m, p);
		bool v1 = on_openssl_1(m, p);
		double share = total_bytes ? (double)p->st.bytes / (double)total_bytes : 0;
		bool weighty = aes && share >= LOWLEVEL_WARN_SHARE;
		/* a packaged program's call that costs nothing measurable is not a finding: nothing in
		 * it for the reader to change, nothing it slows down */
		if (!readers && !speed && !weighty)
			continue;
		struct rp_finding *f = rp_finding_add(m, "lowlevel-api", weighty ? RP_WARNING : RP_INFO, 0);
		if (!f)
			return;
		char b[32], who[700] = "";
		rp_fmt_bytes(b, sizeof(b), (double)p->st.bytes);
		if (named && file[0])
			snprintf(who, sizeof(who), ", called by %s (%s, %s)", c.created_by, file, own.desc);
		else if (named)
			snprintf(who, sizeof(who), ", called by %s", c.created_by);
		if (aes)
			CAT(message,
			    "%llu calls (%s) of %.*s %s went through the low-level AES_* API%s. It "
			    "bypasses %s, so no offload or %s configuration can apply, and in "
			    "OpenSSL %s it does not use AES-NI either (table code).",
			    (unsigned long long)p->st.calls, b, S(p->def.cipher), ct_dir_name(p->def.dir),
			    who, v1 ? "engines (OpenSSL 1.1 has no providers)" : "engines and providers",
			    v1 ? "engine" : "provider", v1 ? "1.1" : "3.x");
		else
			CAT(message,
			    "%llu calls (%s) of %.*s %s went through EVP_Cipher(), the raw one-shot "
			    "entry point%s.",
			    (unsigned long long)p->st.calls, b, S(p->def.cipher), ct_dir_name(p->def.dir),
			    who);
		if (raw && speed)
			CAT(message,
			    " It is what `openssl speed` without -evp measures (older versions "
			    "measured the low-level AES_* functions there); it still runs in %.*s at "
			    "that implementation's speed: this is about what is being measured, not "
			    "a slow path.",
			    S(p->def.impl));
		else if (raw)
			CAT(message,
			    " It runs in %.*s at that implementation's full speed, so it costs "
			    "nothing measurable here; OpenSSL documents it as not meant for "
			    "applications (no buffering or padding, a return value that means "
			    "different things per cipher).",
			    S(p->def.impl));
		else if (weighty)
			CAT(message, " It carries %.1f%% of the bytes here.", 100.0 * share);
		else
			CAT(message,
			    " It carries under 1%% of the bytes here, so it costs nothing "
			    "measurable.");
		CAT(evidence, "path %zu: api=%s entry=%s impl=%.*s calls=%llu bytes=%llu", i + 1,
		    ct_api_name(p->def.api), ct_entry_name(p->def.entry), S(p->def.impl),
		    (unsigned long long)p->st.calls, (unsigned long long)p->st.bytes);
		if (p->def.callsite.len)
			CAT(evidence, "; first used at %.*s", S(rp_str_part(p->def.callsite, '\n', 0)));
		if (file[0])
			CAT(evidence, "; %s: %s", file, own.desc);
		if (speed)
			CAT(fix,
			    "Add -evp to `openssl speed` to measure the EVP path that applications "
			    "use.");
		else if (!readers)
			CAT(fix,
			    "Nothing to change in your code: this is %s's own code (%s). If this "
			    "share matters, a configuration of that program that avoids it (another "
			    "cipher or MAC) or a newer release may.",
			    c.module, own.desc);
		else if (raw && v1)
			CAT(fix,
			    "Nothing to change for speed. In code you maintain, EVP_CipherUpdate and "
			    "EVP_CipherFinal_ex (after EVP_CipherInit_ex with EVP_aes_*()) are the "
			    "documented calls.");
		else if (raw)
			CAT(fix,
			    "Nothing to change for speed. In code you maintain, EVP_CipherUpdate and "
			    "EVP_CipherFinal_ex (after EVP_CipherInit_ex2 with a cipher from "
			    "EVP_CIPHER_fetch) are the documented calls.");
		else if (v1)
			CAT(fix,
			    "Use EVP_CipherInit_ex with EVP_aes_128_cbc() (or the mode and key size "
			    "you need), then EVP_CipherUpdate/EVP_CipherFinal_ex: OpenSSL 1.1's "
			    "AES-NI code, and an engine's offload where one is configured (the same "
			    "calls keep working on OpenSSL 3).");
		else
			CAT(fix,
			    "Use EVP_CipherInit_ex2 with a cipher from EVP_CIPHER_fetch, then "
			    "EVP_CipherUpdate/EVP_CipherFinal_ex: the provider's AES-NI code, and "
			    "offload where it is configured.");
	}
}
