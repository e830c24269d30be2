/* SPDX-License-Identifier: MIT */
/*
 * doctor_libcrypto.c - the doctor's OpenSSL checks: the libcrypto `openssl` loads and the other
 * copies found (doctor_libfind.c), each measured in a child process (doctor_libcrypto_child.c):
 * how fast it runs EVP aes-128-ctr and aes-128-cbc encryption at 8 KiB against cryptrace's own
 * AES-NI code; what OPENSSL_ia32cap in the environment masks; which engines and providers load
 * (with OpenSSL's own error strings when they do not). This file reads the child's answers and
 * turns them into checks and recommendations.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "doctor.h"
#include "errno_name.h"
#include "trace_format.h"
#include "tracer.h"
#include "aesni.h"

/* The libcrypto capability mask this build's OpenSSL reads from the environment. */
#if defined(__aarch64__) || defined(__arm__)
#define CAP_VAR "OPENSSL_armcap"
#else
#define CAP_VAR "OPENSSL_ia32cap"
#endif

/* OPENSSL_ia32cap bits (first word: CPUID.1 EDX | ECX << 32). */
#define IA32CAP_AESNI (1ull << 57)
#define IA32CAP_PCLMULQDQ (1ull << 33)

/* ---- the child's answer ------------------------------------------------------------------- */

/* The value of "key ..." in the child's output, up to the end of its line. */
static bool child_value(const char *text, const char *key, char *buf, size_t cap)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, klen) && l[klen] == ' ') {
			const char *v = l + klen + 1, *e = strchr(v, '\n');

			snprintf(buf, cap, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
			return true;
		}
	}
	buf[0] = '\0';
	return false;
}

/* ---- OPENSSL_ia32cap, OPENSSL_armcap -------------------------------------------------------- */

#if !defined(__aarch64__) && !defined(__arm__)
static void probe_ia32cap(struct dr_report *r)
{
	const char *v = getenv("OPENSSL_ia32cap");

	r->ia32cap = v;
	if (!v || !*v) {
		dr_add(r, "ia32cap", DR_OK, "OPENSSL_ia32cap is not set",
		       "OpenSSL uses the CPU features CPUID reports");
		return;
	}

	bool clear = v[0] == '~';
	unsigned long long word = strtoull(v + clear, NULL, 0);
	bool aes_off = clear ? (word & IA32CAP_AESNI) : !(word & IA32CAP_AESNI);
	bool clmul_off = clear ? (word & IA32CAP_PCLMULQDQ) : !(word & IA32CAP_PCLMULQDQ);
	struct dr_check *c;

	r->ia32cap_masks_aes = aes_off;
	if (aes_off)
		c = dr_add(r, "ia32cap", DR_FAIL, "OPENSSL_ia32cap masks AES-NI",
			   "OPENSSL_ia32cap=%s in the environment %s AES-NI (bit 57)%s: every "
			   "OpenSSL program started from here runs software AES",
			   v, clear ? "clears" : "leaves out",
			   clmul_off ? " and PCLMULQDQ (bit 33, GCM's GHASH)" : "");
	else
		c = dr_add(r, "ia32cap", DR_WARN, "OPENSSL_ia32cap is set",
			   "OPENSSL_ia32cap=%s in the environment; it keeps AES-NI (bit 57)%s", v,
			   clmul_off ? " but not PCLMULQDQ (bit 33): GCM's GHASH runs in software" : "");
	dr_value(c, "value", false, "%s", v);
	dr_value(c, "masks_aesni", true, "%s", aes_off ? "true" : "false");
	dr_value(c, "masks_pclmulqdq", true, "%s", clmul_off ? "true" : "false");
	dr_recommend(r, "unset OPENSSL_ia32cap (it is %s here)", v);
}

#else
/* OPENSSL_armcap (crypto/armcap.c): a number that replaces the whole capability word, no "~"
 * form; bit 2 is ARMV8_AES, bit 5 ARMV8_PMULL (arm_arch.h). Without AES, libcrypto's ARM code
 * runs its NEON vector-permute AES (or plain C): software speed. */
#define ARMCAP_AES (1ull << 2)
#define ARMCAP_PMULL (1ull << 5)

static void probe_armcap(struct dr_report *r)
{
	const char *v = getenv("OPENSSL_armcap");

	r->ia32cap = v;
	if (!v || !*v) {
		dr_add(r, "armcap", DR_OK, "OPENSSL_armcap is not set",
		       "OpenSSL uses the CPU features the kernel reports (HWCAP)");
		return;
	}

	unsigned long long word = strtoull(v, NULL, 0);
	bool aes_off = !(word & ARMCAP_AES), pmull_off = !(word & ARMCAP_PMULL);
	struct dr_check *c;

	r->ia32cap_masks_aes = aes_off && (r->cpu_flags & CT_CPU_ARM_AES);
	if (r->ia32cap_masks_aes)
		c = dr_add(r, "armcap", DR_FAIL, "OPENSSL_armcap masks the ARMv8 AES instructions",
			   "OPENSSL_armcap=%s in the environment replaces OpenSSL's capability word "
			   "without ARMV8_AES (0x4)%s: every OpenSSL program started from here runs "
			   "software AES",
			   v, pmull_off ? " and ARMV8_PMULL (0x20, GCM's GHASH)" : "");
	else
		c = dr_add(r, "armcap", DR_WARN, "OPENSSL_armcap is set",
			   "OPENSSL_armcap=%s in the environment replaces OpenSSL's capability word%s", v,
			   pmull_off ? "; it leaves out ARMV8_PMULL (0x20): GCM's GHASH runs in software"
				     : "");
	dr_value(c, "value", false, "%s", v);
	dr_value(c, "masks_aes", true, "%s", aes_off ? "true" : "false");
	dr_value(c, "masks_pmull", true, "%s", pmull_off ? "true" : "false");
	dr_recommend(r, "unset OPENSSL_armcap (it is %s here; keep at least 0x24, AES and PMULL)", v);
}
#endif

/* The mask variable of this build's OpenSSL: x86 reads OPENSSL_ia32cap, ARM OPENSSL_armcap. */
static void probe_cap_mask(struct dr_report *r)
{
#if defined(__aarch64__) || defined(__arm__)
	probe_armcap(r);
#else
	probe_ia32cap(r);
#endif
}

/* ---- checks ------------------------------------------------------------------------------- */

/* Software AES: CTR (a parallel mode, so AES-NI pipelines fully) far above our AES-NI bound.
 * OpenSSL's AES-NI CTR runs at about twice that bound (0.3 against 0.15 cycles/byte on a
 * current x86-64, measured as the fastest slice, also with every core busy); the same library
 * with AES-NI masked (its vector-permute AES) runs at 25 times it (3.9). The limit sits far from
 * both, so neither noise nor a slower AES-NI CPU moves a library across it: above 8x the bound
 * and above 2 cycles/byte, or 2.5 cycles/byte where there is no bound to compare with. */
static bool software_speed(double ctr, double bound)
{
	if (ctr <= 0)
		return false;
	/* Nanoseconds (no TSC: ARM) have no fixed tie to cycles: the ratio alone decides. */
	if (strcmp(ct_aesni_clock_unit(), "cycles") != 0)
		return bound > 0 && ctr > 8 * bound;
	if (bound > 0)
		return ctr > 8 * bound && ctr > 2.0;
	return ctr > 2.5;
}

static void libcrypto_check(struct dr_report *r, const char *path, const char *used_by, const char *out,
			    double bound, bool main_lib)
{
	char version[200], ctr_s[32], cbc_s[32], err[300];
	const char *id = main_lib ? "libcrypto" : "libcrypto:other";

	if (!out || child_value(out, "error", err, sizeof(err)) ||
	    !child_value(out, "ctr", ctr_s, sizeof(ctr_s))) {
		/* A copy built for a newer C library (another release's tree, unpacked beside this
		 * one) cannot load into this process: a fact about where it belongs, not a fault.
		 * Its programs run through that release's own loader; so can the doctor. */
		bool other_libc = out && strstr(err, "version `GLIBC_");
		struct dr_check *c =
			dr_add(r, id, other_libc ? DR_INFO : DR_WARN,
			       other_libc ? "libcrypto of a newer C library, not measured"
					  : "libcrypto could not be measured",
			       "%s: %s%s", path, out ? err : "the probe process failed",
			       other_libc ? "; to measure it, run the doctor through that C library's "
					    "loader: LOADER --library-path DIR cryptrace doctor --libcrypto "
					    "PATH (docs/openssl-versions.md)"
					  : "");

		dr_value(c, "path", false, "%s", path);
		return;
	}
	child_value(out, "version", version, sizeof(version));
	child_value(out, "cbc", cbc_s, sizeof(cbc_s));

	double ctr = atof(ctr_s), cbc = atof(cbc_s);
	bool sw = software_speed(ctr, bound) || (main_lib && r->ia32cap_masks_aes);
	char bound_s[160] = "no " CT_AESNI_INSNS " bound here (no " CT_AESNI_NEEDS " or no clock)";
	char title[160];
	enum dr_status st = sw ? DR_FAIL : DR_OK;

	if (bound > 0)
		snprintf(bound_s, sizeof(bound_s), "cryptrace's " CT_AESNI_INSNS " CTR: %.2f", bound);
	if (sw && !(r->cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)))
		st = DR_INFO; /* nothing faster exists on this CPU: a fact, nothing to change */
	snprintf(title, sizeof(title), "%s runs AES at %s speed", main_lib ? "libcrypto" : path,
		 sw ? "software" : CT_AESNI_INSNS);

	struct dr_check *c = dr_add(r, id, st, title,
				    "%s, %s%s%s%s: EVP aes-128-ctr %.2f, aes-128-cbc encrypt %.2f "
				    "%s/byte at 8 KiB (%s)%s%s%s",
				    version, path, used_by ? " (used by " : "", used_by ? used_by : "",
				    used_by ? ")" : "", ctr, cbc, ct_aesni_clock_unit(), bound_s,
				    sw && r->ia32cap_masks_aes ? "; " CAP_VAR "=" : "",
				    sw && r->ia32cap_masks_aes ? r->ia32cap : "",
				    sw && r->ia32cap_masks_aes ? " masks " CT_AESNI_INSNS : "");

	dr_value(c, "path", false, "%s", path);
	dr_value(c, "version", false, "%s", version);
	dr_value(c, "ctr_cpb", true, "%.4f", ctr);
	dr_value(c, "cbc_cpb", true, "%.4f", cbc);
	dr_value(c, "aesni_bound_cpb", true, "%s", "");
	if (bound > 0)
		snprintf(c->values[c->nvalues - 1].val, sizeof(c->values[0].val), "%.4f", bound);
	dr_value(c, "software_aes", true, "%s", sw ? "true" : "false");
	if (main_lib) {
		r->aes_software = sw;
		if (sw && !r->ia32cap_masks_aes && (r->cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)))
			dr_recommend(
				r,
				"%s runs AES in software on a CPU with " CT_AESNI_INSNS
				": use a "
				"libcrypto built with its assembler (no-asm builds never use " CT_AESNI_INSNS
				")",
				path);
	}
}

static void engine_checks(struct dr_report *r, const char *out)
{
	char dir[PATH_MAX];

	child_value(out, "engines_dir", dir, sizeof(dir));
	for (const char *l = strstr(out, "engine "); l; l = strstr(l + 1, "\nengine ")) {
		if (*l == '\n')
			l++;
		char id[64], state[16], where[16], id_key[80];
		int used = 0;
		const char *e = strchr(l, '\n');
		char rest[700];

		if (sscanf(l, "engine %63s %15s %15s %n", id, state, where, &used) < 3)
			continue;
		snprintf(rest, sizeof(rest), "%.*s", (int)(e ? e - l - used : (long)strlen(l + used)),
			 l + used);
		snprintf(id_key, sizeof(id_key), "engine:%s", id);

		struct dr_check *c;

		if (!strcmp(state, "ok")) {
			c = dr_add(r, id_key, DR_OK, "", "%s%s%s", rest,
				   strcmp(where, "builtin") ? " from " : " (built in)",
				   strcmp(where, "builtin") ? dir : "");
			snprintf(c->title, sizeof(c->title), "engine %s loads", id);
		} else if (!strcmp(where, "absent") && strcmp(id, "afalg")) {
			c = dr_add(r, id_key, DR_INFO, "",
				   "not built into this libcrypto and no "
				   "%s.so in %s",
				   id, dir[0] ? dir : "the engines directory");
			snprintf(c->title, sizeof(c->title), "engine %s is not available", id);
		} else {
			/* An engine for what this machine does not have (a VIA PadLock unit, a kernel
			 * with AF_ALG, /dev/crypto) cannot load here, and nothing here needs it: a
			 * fact, not something to change. A warning is for an engine that should work
			 * here and does not. */
			char extra[200] = "", vendor[16], why[48] = "";
			int err = r->afalg_errno, cdev_err = 0;

			if (!strcmp(id, "afalg") && !r->afalg_ok) {
				snprintf(extra, sizeof(extra),
					 "; socket(AF_ALG) fails here with %s "
					 "(probed by the doctor)",
					 err ? ct_strerrorname(err) : "?");
				snprintf(why, sizeof(why), "no AF_ALG");
			} else if (!strcmp(id, "padlock") && !ct_cpu_padlock_ace()) {
				ct_cpu_vendor(vendor, sizeof(vendor));
				snprintf(extra, sizeof(extra),
					 "; it needs a VIA or Zhaoxin CPU with a "
					 "PadLock unit, and this CPU is %s",
					 vendor[0] ? vendor : "not x86");
				snprintf(why, sizeof(why), "no PadLock CPU");
			} else if (!strcmp(id, "devcrypto") && !ct_cryptodev_usable(&cdev_err)) {
				snprintf(extra, sizeof(extra), "; open(\"/dev/crypto\") fails here with %s",
					 ct_strerrorname(cdev_err) ?: "?");
				snprintf(why, sizeof(why), "no /dev/crypto");
			}
			c = dr_add(r, id_key, why[0] ? DR_INFO : DR_WARN, "", "%s: %s%s",
				   state[0] == 'i' ? "ENGINE_init failed" : "ENGINE_by_id failed", rest,
				   extra);
			if (why[0])
				snprintf(c->title, sizeof(c->title), "engine %s cannot work here (%s)", id,
					 why);
			else
				snprintf(c->title, sizeof(c->title), "engine %s fails to load", id);
		}
		dr_value(c, "engine", false, "%s", id);
		dr_value(c, "loads", true, "%s", strcmp(state, "ok") ? "false" : "true");
		dr_value(c, "reason", false, "%s", strcmp(state, "ok") ? rest : "");
	}
}

static void provider_checks(struct dr_report *r, const char *out)
{
	for (const char *l = strstr(out, "provider "); l; l = strstr(l + 1, "\nprovider ")) {
		if (*l == '\n')
			l++;
		char name[64], state[16], id_key[80], rest[700] = "";
		int used = 0;
		const char *e = strchr(l, '\n');

		if (sscanf(l, "provider %63s %15s %n", name, state, &used) < 2)
			continue;
		if (used)
			snprintf(rest, sizeof(rest), "%.*s", (int)(e ? e - l - used : (long)strlen(l + used)),
				 l + used);
		snprintf(id_key, sizeof(id_key), "provider:%s", name);

		struct dr_check *c;

		if (!strcmp(state, "ok"))
			c = dr_add(r, id_key, DR_OK, "", "OSSL_PROVIDER_load(NULL, \"%s\") succeeded", name);
		else if (!strcmp(state, "absent"))
			c = dr_add(r, id_key, DR_INFO, "", "not installed (%s)", rest);
		else
			c = dr_add(r, id_key, !strcmp(name, "default") ? DR_FAIL : DR_WARN, "",
				   "OSSL_PROVIDER_load failed: %s", rest);
		snprintf(c->title, sizeof(c->title), "provider %s %s", name,
			 !strcmp(state, "ok")       ? "loads"
			 : !strcmp(state, "absent") ? "is not installed"
						    : "fails to load");
		dr_value(c, "provider", false, "%s", name);
		dr_value(c, "loads", true, "%s", strcmp(state, "ok") ? "false" : "true");
	}
}

/* The major version in "OpenSSL 3.0.19 27 Jan 2026" ("OpenSSL 1.1.1w ..." -> 1); 0 unknown.
 * LibreSSL and BoringSSL name themselves otherwise: unknown too. */
static int openssl_major(const char *version)
{
	int major = 0;

	return sscanf(version, "OpenSSL %d.", &major) == 1 ? major : 0;
}

/*
 * What `openssl speed` without -evp measures depends on the version: OpenSSL 3 fetches the
 * cipher from the providers and calls EVP_Cipher() on it (tests/integration/
 * speed_cipher_lowlevel.py), the same AES-NI code as -evp through the raw one-shot entry; 1.1
 * and older time the low-level AES_* functions, which on x86-64 are table code without AES-NI.
 */
static void speed_recommendation(struct dr_report *r)
{
	int major = openssl_major(r->libcrypto_version);

	if (major >= 3)
		dr_recommend(r,
			     "measure with `openssl speed -evp aes-128-ctr`: it times "
			     "EVP_EncryptUpdate, the call applications make; without -evp, "
			     "%s's speed times EVP_Cipher(), the raw one-shot call, on the same "
			     "provider code (" CT_AESNI_INSNS " speed, but not what applications call)",
			     r->libcrypto_version_short);
	else if (major > 0)
		dr_recommend(
			r,
			"measure with `openssl speed -evp aes-128-ctr`: without -evp, "
			"%s's speed times the low-level AES_* functions, which do not use " CT_AESNI_INSNS,
			r->libcrypto_version_short);
	else
		dr_recommend(r,
			     "measure with `openssl speed -evp aes-128-ctr`: without -evp, "
			     "OpenSSL 3 times EVP_Cipher() (the same provider code, " CT_AESNI_INSNS
			     " included) and OpenSSL 1.1 and older time the low-level AES_* "
			     "functions, which do not use " CT_AESNI_INSNS);
}

void dr_probe_libcrypto(struct dr_report *r)
{
	char openssl[PATH_MAX] = "", lib[PATH_MAX] = "", real[PATH_MAX] = "";
	double bound = 0;

	bound = ct_aesni_per_byte_bound();
	r->afalg_ok = ct_afalg_usable(&r->afalg_errno);
	probe_cap_mask(r);

	/* --libcrypto PATH: that library (another release's, an application's own copy) is the one
	 * measured, its engines and providers the ones checked; no `openssl` is asked. */
	bool found = r->libcrypto_given
			     ? snprintf(lib, sizeof(lib), "%s", r->libcrypto_given) < (int)sizeof(lib)
			     : dr_openssl_libcrypto(openssl, sizeof(openssl), lib, sizeof(lib));
	char foreign_arch[48];
	const bool foreign = found && !r->libcrypto_given &&
			     (dr_foreign_program(openssl, foreign_arch, sizeof(foreign_arch)) ||
			      dr_foreign_program(lib, foreign_arch, sizeof(foreign_arch)));

	if (foreign) {
		/* Its libcrypto is one this process cannot load: the copies of our own architecture
		 * are measured below, the foreign ones listed. */
		dr_add(r, "libcrypto", DR_INFO, "openssl in PATH is another architecture's program",
		       "%s loads %s, which is %s code; this doctor measures the libcrypto copies of its "
		       "own architecture (below)",
		       openssl, lib, foreign_arch);
		found = false;
		lib[0] = 0;
	} else if (found) {
		snprintf(r->libcrypto_path, sizeof(r->libcrypto_path), "%s", lib);
		if (!realpath(lib, real))
			snprintf(real, sizeof(real), "%s", lib);

		char *out = dr_libcrypto_child(lib, true);

		if (out && child_value(out, "version", r->libcrypto_version, sizeof(r->libcrypto_version))) {
			/* "OpenSSL 3.0.19 27 Jan 2026" -> "OpenSSL 3.0.19" */
			char *sp = strchr(r->libcrypto_version, ' ');

			sp = sp ? strchr(sp + 1, ' ') : NULL;
			snprintf(r->libcrypto_version_short, sizeof(r->libcrypto_version_short), "%.*s",
				 (int)(sp ? sp - r->libcrypto_version : (long)strlen(r->libcrypto_version)),
				 r->libcrypto_version);
		}
		libcrypto_check(r, lib, r->libcrypto_given ? NULL : openssl, out, bound, true);
		if (out) {
			engine_checks(r, out);
			provider_checks(r, out);
		}
		free(out);
	} else if (!foreign) {
		dr_add(r, "libcrypto", DR_INFO, "no openssl program to ask which libcrypto it loads", "%s",
		       openssl[0] ? "the dynamic loader did not list a libcrypto for it"
				  : "openssl is not in PATH (install it for this check)");
	}

	struct dr_lib_scan *ls = malloc(sizeof(*ls));

	if (ls) {
		dr_find_libcryptos(real, ls);
		for (int i = 0; i < ls->nnative; i++) {
			char *out = dr_libcrypto_child(ls->native[i], false);

			libcrypto_check(r, ls->native[i], NULL, out, bound, false);
			free(out);
		}
		dr_foreign_check(r, ls);
		free(ls);
	}
	speed_recommendation(r);
}
