/* SPDX-License-Identifier: MIT */
/*
 * software_aes.c - the `software-aes` finding: the CPU has AES instructions, but an in-process AES
 * path ran at software speed (cycles/byte against the AES-NI bound measured when the trace was
 * taken), or OPENSSL_ia32cap hides AES-NI (OPENSSL_armcap the ARMv8 CE) from libcrypto, or libgcrypt or GnuTLS runs its own
 * software AES (libgcrypt's hardware-feature list lacks AES-NI; GnuTLS's CPU overrides leave it
 * out). One finding per cause (the mask, the low-level API, a set OPENSSL_ia32cap, a libcrypto
 * built without assembly, libgcrypt's disabled AES-NI, GnuTLS running its AES in software),
 * listing every process affected. docs/report.md gives the limits and the measurements behind
 * them.
 */
#include "findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A path is slow when its cycles/byte over requests of SOFTWARE_AES_MIN_BYTES and more (smaller
 * ones are dominated by the cost of the call, not of the cipher) exceed SOFTWARE_AES_FACTOR x the
 * AES-NI bound calibrated when the trace was taken: AES-NI runs the parallel modes near that
 * bound, software AES several times slower. The limit never drops below SOFTWARE_AES_FLOOR_CPB,
 * since the bound comes from a parallel mode while CBC encryption is serial; without a calibrated
 * bound it is SOFTWARE_AES_FIXED_CPB, above what AES-NI needs in any mode. An OPENSSL_ia32cap that
 * masks AES-NI (bit 57) out counts whatever the timing: libcrypto's vector-permute AES (vpaes),
 * which a mask leaves in use, has run masked CBC anywhere from 8 to 22 cycles/byte from one run
 * to the next on a loaded 2-vCPU VM, too close to a clean run under load to tell by speed alone,
 * while the mask is a fact.
 */
#define SOFTWARE_AES_FACTOR 3.0
#define SOFTWARE_AES_FLOOR_CPB 4.0
#define SOFTWARE_AES_FIXED_CPB 5.0
#define SOFTWARE_AES_MIN_BYTES 8192
/* Serial modes (CBC/CFB encryption, OFB) chain every block through all the rounds, so AES-NI
 * itself runs them at rounds x the AESENC latency (3-4 cycles) per 16 bytes: about 2.2
 * cycles/byte for AES-128 and 3.1 for AES-256 in core cycles (TSC cycles run higher on a
 * throttled or shared core). With a calibrated bound (from a parallel mode), their limit is at
 * least SOFTWARE_AES_FACTOR x that: a clean CBC-128 encryption has run at 5.6 TSC cycles/byte on
 * a loaded 2-vCPU VM, and the same masked to software AES at 21.9. */
#define SOFTWARE_AES_ROUND_LATENCY 3.5
/* ... and their limit is wider than the parallel modes' factor: a clean CBC-128 encryption has
 * run at 6.6 TSC cycles/byte while the other vCPU ran AES too (the reports suite's diff test),
 * above 3x the latency bound. Software AES without assembly, 7-10x slower than AES-NI (the NetBSD
 * libcrypto of story 1, docs/stories.md), runs CBC above 15, so 4.5x (9.8 for AES-128,
 * 13.8 for AES-256) still separates the two. */
#define SOFTWARE_AES_SERIAL_FACTOR 4.5

/* OPENSSL_ia32cap bit 57 is CPUID.1:ECX.AES (bit 25 of the ECX word at bit 32). */
#define IA32CAP_AESNI (1ull << 57)

/* OPENSSL_armcap (crypto/armcap.c) replaces the whole word, no "~" form: ARMV8_AES is bit 2. */
#define ARMCAP_AES (1ull << 2)

/* The words of one trace's CPU: the header's cpu_flags say x86 or ARM, and the header's mask
 * field holds OPENSSL_ia32cap or OPENSSL_armcap accordingly (preload/config.c). */
struct cpu_words {
	const char *insns;   /* "AES-NI", "the ARMv8 Crypto Extensions" */
	const char *cap_var; /* "OPENSSL_ia32cap", "OPENSSL_armcap" */
	const char *flag;    /* cpu_flags' name of the AES bit */
	const char *gcrypt;  /* libgcrypt's hwf name of its AES code */
};

static struct cpu_words cpu_words(const struct rp_proc *pr)
{
	if (pr->hdr.cpu_flags & CT_CPU_ARM_AES)
		return (struct cpu_words){ .insns = "the ARMv8 Crypto Extensions",
					   .cap_var = "OPENSSL_armcap",
					   .flag = "arm-aes",
					   .gcrypt = "arm-aes" };
	return (struct cpu_words){
		.insns = "AES-NI", .cap_var = "OPENSSL_ia32cap", .flag = "aes", .gcrypt = "intel-aesni"
	};
}

static bool armcap_disables_aes(struct ct_str cap)
{
	char buf[64];
	if (!cap.len || cap.len >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%.*s", S(cap));
	char *end;
	unsigned long long v = strtoull(buf, &end, 0);
	return end != buf && !(v & ARMCAP_AES);
}

static bool ia32cap_disables_aesni(struct ct_str cap)
{
	char buf[64];
	if (!cap.len || cap.len >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%.*s", S(cap));
	bool clear = buf[0] == '~';
	char *end;
	unsigned long long v = strtoull(buf + clear, &end, 0);
	if (end == buf + clear)
		return false;
	return clear ? (v & IA32CAP_AESNI) != 0 : (v & IA32CAP_AESNI) == 0;
}

/* Cycles per byte over the requests of at least SOFTWARE_AES_MIN_BYTES (on CPU time when
 * sampled); < 0 when unknown. */
static double large_request_cpb(const struct rp_path *p)
{
	double wall = 0;
	uint64_t bytes = 0;
	if (!p->tsc_hz || !p->d.wall_known)
		return -1;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		if (ct_size_bucket_low(b) < SOFTWARE_AES_MIN_BYTES || !p->st.size[b].calls)
			continue;
		wall += p->d.bucket_wall_ns[b];
		bytes += p->st.size[b].bytes;
	}
	if (!bytes)
		return -1;
	/* On CPU time when it was sampled: a busy machine preempts the thread mid-call, which
	 * inflates wall time but not the cycles the cipher actually spent. */
	double share = 1;
	if (p->d.cpu_known && p->d.wall_ns > 0)
		share = fmin(1, (p->d.user_ns + p->d.sys_ns) / p->d.wall_ns);
	return wall * share * (double)p->tsc_hz / 1e9 / (double)bytes;
}

/* Slow must be the rule among a path's large requests, not a few outliers. On a busy machine a
 * timed call that sits preempted for a scheduler slice (milliseconds) raises the mean cost of a
 * path tenfold while every other call ran at AES-NI speed (curl on a loaded 2-vCPU VM has shown a
 * mean of 10.7 cycles/byte over 16 KiB TLS records whose median took 3.5 us, 0.5 cycles/byte),
 * and CPU sampling (~1/ms) rarely lands in the preempted call to correct it. So the timed calls
 * slower than the path's smallest large request (the mean size of the smallest size bucket from
 * 8 KiB up that has timed calls) at the limit must be nine in ten of the timed large ones (the
 * fastest tenth is slow too): true of software AES, where every large request is that slow, and
 * not of AES-NI on a loaded machine, where a few calls undisturbed by the load are fast however
 * many are not (a python-cryptography run under load 4-6 had half of its 8 KiB GCM decrypts
 * slower than the limit, and was called software at "half"). Measuring against that size, not a
 * fixed 8 KiB, keeps the test meaningful for a path of 1 MiB calls (every one of them is slower
 * than an 8 KiB request at any speed). Latency buckets are 4 per power of two, so a call within
 * 25% under the threshold may count. */
static bool slow_is_the_rule(const struct rp_path *p, double limit_cpb)
{
	uint64_t large_timed = 0, slow = 0;
	double smallest = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		const struct ct_size_bucket *sb = &p->st.size[b];
		if (ct_size_bucket_low(b) < SOFTWARE_AES_MIN_BYTES || !sb->timed_calls)
			continue;
		large_timed += sb->timed_calls;
		if (!smallest && sb->calls)
			smallest = (double)sb->bytes / (double)sb->calls;
	}
	if (!large_timed || !p->tsc_hz)
		return true; /* nothing to check the mean against */
	double ns = fmax(smallest, SOFTWARE_AES_MIN_BYTES) * limit_cpb / ((double)p->tsc_hz / 1e9);
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++)
		if ((double)ct_lat_bucket_low(b) >= 0.75 * ns)
			slow += p->st.lat[b];
	return 10 * slow >= 9 * large_timed;
}

static double path_limit(const struct rp_path *p, double limit)
{
	char c[64];
	snprintf(c, sizeof(c), "%.*s", (int)(p->def.cipher.len < 63 ? p->def.cipher.len : 63),
		 p->def.cipher.p);
	bool enc = p->def.dir != CT_DIR_DECRYPT;
	bool serial = strstr(c, "-ofb") || (enc && (strstr(c, "-cbc") || strstr(c, "-cfb")));
	if (!serial)
		return limit;
	unsigned bits = p->def.key_bits    ? p->def.key_bits
			: strstr(c, "256") ? 256
			: strstr(c, "192") ? 192
					   : 128;
	double rounds = bits >= 256 ? 14 : bits >= 192 ? 12 : 10;
	return fmax(limit, SOFTWARE_AES_SERIAL_FACTOR * rounds * SOFTWARE_AES_ROUND_LATENCY / 16);
}

static bool is_aes_inprocess(const struct rp_model *m, const struct rp_path *p)
{
	return rp_path_in_process(p) && p->st.calls && rp_path_selected(m, p) &&
	       (rp_str_starts(p->def.cipher, "aes") || rp_str_starts(p->def.cipher, "id-aes"));
}

/* GnuTLS's AES in software, read from the state GnuTLS chose its code from (the path's impl,
 * preload/hooks/gnutls_impl.c: SSSE3 vector-permute AES or nettle's table AES while the CPU has
 * AES-NI): a fact, like a mask, not a speed; a TLS record's time waits for the peer anyway. */
static bool gnutls_software(const struct rp_model *m, const struct rp_path *p)
{
	return (p->def.api == CT_API_GNUTLS || p->def.api == CT_API_TLS) && p->st.calls &&
	       rp_path_selected(m, p) && rp_str_starts(p->def.cipher, "aes") &&
	       (rp_str_starts(p->def.impl, "gnutls:ssse3") || rp_str_starts(p->def.impl, "nettle:generic"));
}

/* A mask in OPENSSL_ia32cap slows libcrypto's own AES (EVP, AES_*), not work a route moved off it
 * nor libgcrypt's or GnuTLS's. */
static bool masked_applies(bool masked, const struct rp_path *p)
{
	return masked && (p->def.api == CT_API_EVP || p->def.api == CT_API_AES) &&
	       !(p->def.flags & CT_PATH_ROUTED) && p->def.route != CT_ROUTE_AESNI;
}

/* libgcrypt named its AES code from its own hardware-feature list (preload/hooks/gcrypt_impl.c):
 * SSSE3's vector permutes or the generic tables are software AES, a fact on a CPU with AES
 * instructions (libgcrypt picks AES-NI whenever its list has it), whatever the timing. */
static bool gcrypt_software(const struct rp_path *p)
{
	return p->def.api == CT_API_GCRYPT &&
	       (rp_str_is(p->def.impl, "gcrypt:ssse3") || rp_str_is(p->def.impl, "gcrypt:generic"));
}

/* One process's verdict: its AES paths that ran at software speed (or, under a mask, every
 * AES path), the one with the most bytes, and the cause. */
enum sw_cause { SW_MASK, SW_LOWLEVEL, SW_SET_CAP, SW_BUILD, SW_GCRYPT, SW_GNUTLS };

struct sw_proc {
	const struct rp_proc *pr;
	const struct rp_path *main;
	double main_cpb, bound, limit, base_limit;
	bool calibrated, masked;
	const char *bound_from;
	enum sw_cause cause;
	uint64_t calls, bytes; /* over its slow paths */
};

static bool sw_path_slow(const struct sw_proc *x, const struct rp_model *m, const struct rp_path *p)
{
	if (gnutls_software(m, p))
		return true;
	if (!is_aes_inprocess(m, p))
		return false;
	double cpb = large_request_cpb(p);
	double lim = x->calibrated ? path_limit(p, x->base_limit) : x->base_limit;
	return (cpb > lim && slow_is_the_rule(p, lim)) || masked_applies(x->masked, p) || gcrypt_software(p);
}

static bool sw_judge(const struct rp_model *m, const struct rp_proc *pr, struct sw_proc *x)
{
	memset(x, 0, sizeof(*x));
	x->pr = pr;
	if (!rp_proc_shown(m, pr) || !pr->has_hdr || !(pr->hdr.cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)))
		return false;
	x->masked = pr->hdr.cpu_flags & CT_CPU_ARM_AES ? armcap_disables_aes(pr->hdr.ia32cap)
						       : ia32cap_disables_aesni(pr->hdr.ia32cap);
	x->bound = rp_aesni_bound(pr, &x->bound_from);
	x->base_limit = x->bound > 0 ? fmax(SOFTWARE_AES_FACTOR * x->bound, SOFTWARE_AES_FLOOR_CPB)
				     : SOFTWARE_AES_FIXED_CPB;
	x->calibrated = x->bound > 0; /* the serial-mode floor refines a calibrated bound only */
	x->main_cpb = -1;
	for (size_t k = 0; k < pr->npaths; k++) {
		const struct rp_path *p = &pr->paths[k];
		if (!sw_path_slow(x, m, p))
			continue;
		x->calls += p->st.calls;
		x->bytes += p->st.bytes;
		if (!x->main || p->st.bytes > x->main->st.bytes) {
			x->main = p;
			x->main_cpb = large_request_cpb(p);
		}
	}
	if (!x->main)
		return false;
	x->limit = x->calibrated ? path_limit(x->main, x->base_limit) : x->base_limit;
	x->cause = gnutls_software(m, x->main)         ? SW_GNUTLS
		   : x->main->def.api == CT_API_GCRYPT ? SW_GCRYPT
		   : x->masked                         ? SW_MASK
		   : x->main->def.api == CT_API_AES    ? SW_LOWLEVEL
		   : pr->hdr.ia32cap.len               ? SW_SET_CAP
						       : SW_BUILD;
	return true;
}

/* Same cause: the same reason (and, for a mask, the same OPENSSL_ia32cap value). */
static bool sw_same_cause(const struct sw_proc *a, const struct sw_proc *b)
{
	return a->cause == b->cause &&
	       (a->cause != SW_MASK || rp_str_eq(a->pr->hdr.ia32cap, b->pr->hdr.ia32cap)) &&
	       (a->cause != SW_GNUTLS || rp_str_eq(a->main->def.requested, b->main->def.requested));
}

/* One finding per cause, not one per process (a masked database server's nine processes would
 * give nine warnings of the same thing): the process with the most slow bytes carries the speed
 * evidence; its other slow paths and every process affected, with its share of the slow bytes,
 * are listed. */
void rp_eval_software_aes(struct rp_model *m)
{
	struct sw_proc *v = calloc(m->nprocs ? m->nprocs : 1, sizeof(*v));
	bool *done = calloc(m->nprocs ? m->nprocs : 1, sizeof(*done));
	size_t n = 0;
	for (size_t i = 0; v && done && i < m->nprocs; i++)
		if (sw_judge(m, &m->procs[i], &v[n]))
			n++;
	for (size_t g = 0; v && done && g < n; g++) {
		if (done[g])
			continue;
		/* the group of g's cause; x: the process with the most slow bytes */
		const struct sw_proc *x = &v[g];
		size_t members = 0;
		uint64_t group_bytes = 0, group_calls = 0;
		for (size_t j = g; j < n; j++) {
			if (done[j] || !sw_same_cause(&v[g], &v[j]))
				continue;
			members++;
			group_bytes += v[j].bytes;
			group_calls += v[j].calls;
			if (v[j].bytes > x->bytes)
				x = &v[j];
		}
		const struct rp_proc *pr = x->pr;
		const struct rp_path *p = x->main;
		const struct cpu_words w = cpu_words(pr);
		double main_cpb = x->main_cpb, bound = x->bound, limit = x->limit;
		struct rp_finding *f =
			rp_finding_add(m, "software-aes", RP_WARNING, members == 1 ? pr->hdr.pid : 0);
		if (!f)
			break;
		for (size_t j = g; j < n; j++)
			if (!done[j] && sw_same_cause(&v[g], &v[j]))
				rp_finding_note_exe(f, v[j].pr);
		if (x->cause == SW_GNUTLS)
			CAT(message, "This CPU has AES instructions, but GnuTLS runs %.*s %s in %.*s: %s.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl),
			    rp_str_starts(p->def.impl, "gnutls:ssse3")
				    ? "its SSSE3 vector-permute AES, software AES without the AES "
				      "instructions"
				    : "nettle's table AES, software AES without the AES instructions");
		else if (main_cpb > limit && bound > 0)
			CAT(message,
			    "This CPU has AES instructions, but %.*s %s in %.*s ran at %.1f cycles "
			    "per byte on requests of 8 KiB and more, %.1fx the %.2f cycles/byte "
			    "measured for %s on this machine when the trace was taken: that is "
			    "software AES speed.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl), main_cpb,
			    main_cpb / bound, bound, w.insns);
		else if (main_cpb > limit)
			CAT(message,
			    "This CPU has AES instructions, but %.*s %s in %.*s ran at %.1f cycles "
			    "per byte on requests of 8 KiB and more, above the %.0f cycles/byte that "
			    "%s stays under in every mode (CBC encryption, the slowest, runs near "
			    "2): that is software AES speed.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl), main_cpb, limit,
			    w.insns);
		else if (x->cause == SW_GCRYPT)
			CAT(message,
			    "This CPU has AES instructions, but libgcrypt does not use them: %.*s %s "
			    "ran in %.*s, libgcrypt's software AES.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl));
		else
			CAT(message,
			    "This CPU has AES instructions, but %s hides them from "
			    "libcrypto, so %.*s %s in %.*s runs in software AES.",
			    w.cap_var, S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl));
		/* the other slow paths, over the whole group, once per cipher and direction */
		struct {
			struct ct_str cipher;
			int dir;
			uint64_t calls;
		} also[16];
		size_t nalso = 0;
		for (size_t j = g; j < n; j++) {
			if (done[j] || !sw_same_cause(&v[g], &v[j]))
				continue;
			for (size_t k = 0; k < v[j].pr->npaths; k++) {
				const struct rp_path *o = &v[j].pr->paths[k];
				if (!sw_path_slow(&v[j], m, o) ||
				    (rp_str_eq(o->def.cipher, p->def.cipher) && o->def.dir == p->def.dir))
					continue;
				size_t a = 0;
				while (a < nalso && !(rp_str_eq(also[a].cipher, o->def.cipher) &&
						      also[a].dir == o->def.dir))
					a++;
				if (a == nalso && nalso < sizeof(also) / sizeof(also[0]))
					also[nalso++] = (typeof(also[0])){ .cipher = o->def.cipher,
									   .dir = o->def.dir };
				if (a < nalso)
					also[a].calls += o->st.calls;
			}
		}
		for (size_t a = 0; a < nalso; a++)
			CAT(message, "%s %.*s %s (%llu calls)%s",
			    a ? "" : " Also affected:", S(also[a].cipher), ct_dir_name(also[a].dir),
			    (unsigned long long)also[a].calls, a + 1 < nalso ? ";" : ".");
		size_t len;
		if (members > 1) {
			char b[32];
			rp_fmt_bytes(b, sizeof(b), (double)group_bytes);
			CAT(message, " In %zu processes (%llu calls, %s in all):", members,
			    (unsigned long long)group_calls, b);
			size_t listed = 0;
			for (size_t j = g; j < n; j++) {
				if (done[j] || !sw_same_cause(&v[g], &v[j]))
					continue;
				if (listed++ == 8) {
					CAT(message, " and %zu more;", members - 8);
					break;
				}
				rp_fmt_bytes(b, sizeof(b), (double)v[j].bytes);
				CAT(message, " pid %u %s %s (%.1f%%);", v[j].pr->hdr.pid,
				    rp_proc_role_label(v[j].pr), b,
				    group_bytes ? 100.0 * (double)v[j].bytes / (double)group_bytes : 0);
			}
			len = strlen(f->message);
			if (f->message[len - 1] == ';')
				f->message[len - 1] = '.';
		}
		CAT(message, " Likely cause: ");
		if (x->cause == SW_GNUTLS && p->def.requested.len)
			CAT(message,
			    "the environment sets %.*s: GnuTLS and nettle read it at their start and "
			    "leave AES-NI out.",
			    S(p->def.requested));
		else if (x->cause == SW_GNUTLS)
			CAT(message, "a GnuTLS or nettle built without its x86 AES code.");
		else if (x->cause == SW_MASK && pr->hdr.cpu_flags & CT_CPU_ARM_AES)
			CAT(message,
			    "the environment sets OPENSSL_armcap=%.*s, which replaces libcrypto's CPU "
			    "capabilities without ARMV8_AES (0x4).",
			    S(pr->hdr.ia32cap));
		else if (x->cause == SW_MASK)
			CAT(message,
			    "the environment sets OPENSSL_ia32cap=%.*s, which masks AES-NI (bit 57) "
			    "out of libcrypto's CPU capabilities.",
			    S(pr->hdr.ia32cap));
		else if (x->cause == SW_LOWLEVEL)
			CAT(message, "the low-level AES_* API, which may not use %s.", w.insns);
		else if (x->cause == SW_GCRYPT)
			CAT(message,
			    "libgcrypt's list of the hardware features it uses lacks %s: "
			    "/etc/gcrypt/hwf.deny denies it, or the program disabled it "
			    "(GCRYCTL_DISABLE_HWF).",
			    w.gcrypt);
		else if (x->cause == SW_SET_CAP)
			CAT(message,
			    "%s=%.*s is set; or a libcrypto built without AES "
			    "assembly (no-asm).",
			    w.cap_var, S(pr->hdr.ia32cap));
		else
			CAT(message,
			    "a libcrypto built without AES assembly (no-asm), or a CPU feature "
			    "hidden by a hypervisor.");
		CAT(evidence, "cpu_flags has %s; ", w.flag);
		if (members > 1)
			CAT(evidence, "pid %u: ", pr->hdr.pid);
		if (x->cause == SW_GNUTLS)
			CAT(evidence, "path %s %.*s %.*s%s%.*s %s: %llu calls, %llu bytes; %.*s%s",
			    ct_api_name(p->def.api), S(p->def.impl), S(p->def.cipher),
			    p->def.proto.len ? " " : "", S(p->def.proto), ct_dir_name(p->def.dir),
			    (unsigned long long)p->st.calls, (unsigned long long)p->st.bytes,
			    S(p->def.requested),
			    p->def.requested.len ? ""
						 : "GNUTLS_CPUID_OVERRIDE and NETTLE_FAT_OVERRIDE unset");
		else if (x->cause == SW_GCRYPT)
			CAT(evidence, "path %.*s %s api gcrypt impl %.*s (%llu calls); ", S(p->def.cipher),
			    ct_dir_name(p->def.dir), S(p->def.impl), (unsigned long long)p->st.calls);
		if (x->cause == SW_GNUTLS)
			; /* a fact of GnuTLS's state, not a speed */
		else if (main_cpb >= 0)
			CAT(evidence, "%.2f cycles/byte at >= 8 KiB (limit %.2f); ", main_cpb, limit);
		else
			CAT(evidence, "cycles/byte unknown (no timed requests of 8 KiB or more); ");
		if (x->cause == SW_GNUTLS)
			;
		else if (bound > 0)
			CAT(evidence, "%s bound %.2f cycles/byte, %s; ", w.insns, bound, x->bound_from);
		else
			CAT(evidence, "%s bound: %s, so the fixed limit of %.0f cycles/byte; ", w.insns,
			    x->bound_from, SOFTWARE_AES_FIXED_CPB);
		if (x->cause == SW_GNUTLS)
			;
		else if (x->cause == SW_GCRYPT)
			CAT(evidence, "libgcrypt's hardware features (hwflist) without %s", w.gcrypt);
		else if (pr->hdr.ia32cap.len)
			CAT(evidence, "%s=%.*s", w.cap_var, S(pr->hdr.ia32cap));
		else
			CAT(evidence, "%s unset", w.cap_var);
		if (x->cause == SW_GNUTLS)
			CAT(fix,
			    "Unset GNUTLS_CPUID_OVERRIDE and NETTLE_FAT_OVERRIDE in the program's "
			    "environment (a systemd unit's Environment= line, a shell profile), or "
			    "correct them to keep AES-NI: GNUTLS_CPUID_OVERRIDE with bit 0x2 (AES-NI) set "
			    "and bit 0x1 clear, NETTLE_FAT_OVERRIDE listing aesni.");
		else if (x->cause == SW_MASK && pr->hdr.cpu_flags & CT_CPU_ARM_AES)
			CAT(fix,
			    "Unset OPENSSL_armcap (or keep ARMV8_AES 0x4 and ARMV8_PMULL 0x20 set in "
			    "it).");
		else if (x->cause == SW_MASK)
			CAT(fix, "Unset OPENSSL_ia32cap (or drop ~0x200000000000000 from its mask).");
		else if (x->cause == SW_GCRYPT)
			CAT(fix,
			    "Remove the %s line from /etc/gcrypt/hwf.deny (libgcrypt's list of "
			    "hardware features not to use), or, in your own code, the "
			    "GCRYCTL_DISABLE_HWF call that names %s.",
			    w.gcrypt, w.gcrypt);
		else
			CAT(fix,
			    "Use a libcrypto built with assembly (the distribution's), through EVP; "
			    "compare with `openssl speed -evp aes-128-cbc`.");
		for (size_t j = g; j < n; j++)
			if (!done[j] && sw_same_cause(&v[g], &v[j]))
				done[j] = true;
	}
	free(v);
	free(done);
}
