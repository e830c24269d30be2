/* SPDX-License-Identifier: MIT */
/*
 * ktls.c - what the report says about kernel TLS (kTLS), per process:
 *  - `silent-fallback`: the program asked the kernel to encrypt its TLS records (setsockopt
 *    TCP_ULP "tls", SOL_TLS TLS_TX/TLS_RX), the kernel refused, and the records were encrypted in
 *    user space instead (its TLS library's AEAD paths carry them); TLS libraries do this without
 *    a word (OpenSSL's KTLS option and GnuTLS's ktls setting are requests, not demands).
 *  - `ktls-refused`: the same refusal with no user-space record work seen after it (the program
 *    stopped, sent nothing, or its TLS library is not one cryptrace traces): still the reader's
 *    kernel to fix.
 *  - `ktls-tx-only` (info): kTLS encrypts what the process sends, but it never asked for TLS_RX,
 *    so what it receives is decrypted in user space (OpenSSL 3.0 with TLS 1.3); not a fault.
 * A kTLS set-up that worked, in both directions, gets nothing.
 */
#include "findings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ULP_PREFIX "level=SOL_TCP optname=TCP_ULP"
#define TLS_PREFIX "level=SOL_TLS"

bool rp_ktls_event(const struct ct_event *e)
{
	if (e->kind != CT_EV_CALL_FAILED && e->kind != CT_EV_SESSION)
		return false;
	return rp_str_starts(e->detail, ULP_PREFIX) || rp_str_starts(e->detail, TLS_PREFIX) ||
	       rp_str_starts(e->detail, "ktls ");
}

static bool is_setup(const struct ct_event *e, const char *opt)
{
	char want[48];
	snprintf(want, sizeof(want), TLS_PREFIX " optname=%s ", opt);
	return rp_str_is(e->call, "setsockopt") && rp_str_starts(e->detail, want);
}

/* A successful SOL_TLS set-up in p (TLS_TX or TLS_RX). */
static bool any_setup_ok(const struct rp_proc *p)
{
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (e->kind == CT_EV_SESSION && (is_setup(e, "TLS_TX") || is_setup(e, "TLS_RX")))
			return true;
	}
	return false;
}

/* A refused set-up call of p. OpenSSL attaches the ULP once per direction: on TLS 1.2 the second
 * TCP_ULP gets EEXIST (it is there already) and RX is set up all the same, so EEXIST is not a
 * refusal where kTLS did get set up. */
static bool setup_failed(const struct rp_proc *p, const struct ct_event *e)
{
	if (e->kind != CT_EV_CALL_FAILED || !rp_str_is(e->call, "setsockopt"))
		return false;
	if (rp_str_starts(e->detail, ULP_PREFIX))
		return !(e->err == EEXIST && any_setup_ok(p));
	return is_setup(e, "TLS_TX") || is_setup(e, "TLS_RX");
}

/* A cipher TLS records are sealed with (AEAD: every TLS 1.3 suite, the TLS 1.2 ones kTLS takes). */
static bool record_cipher(struct ct_str c)
{
	struct ct_str mode = rp_str_after_last(c, '-');
	return rp_str_is(mode, "gcm") || rp_str_is(mode, "ccm") || rp_str_is(c, "chacha20-poly1305");
}

/* User-space record work of p that kTLS would have done: the TLS library's AEAD paths (EVP for
 * OpenSSL, GnuTLS's own), of the cipher the refused set-up named when it named one. */
static bool fallback_path(const struct rp_model *m, const struct rp_path *pp, struct ct_str cipher,
			  unsigned dirs)
{
	bool user = pp->def.api == CT_API_EVP || pp->def.api == CT_API_GNUTLS || pp->def.api == CT_API_TLS;
	return user && pp->st.calls && rp_path_selected(m, pp) && record_cipher(pp->def.cipher) &&
	       (dirs & (1u << pp->def.dir)) && (!cipher.len || rp_str_eq(pp->def.cipher, cipher));
}

/* The directions the refused set-ups were for: a SOL_TLS call names one (TLS_TX: what is sent,
 * encrypt; TLS_RX: decrypt); a refused TCP_ULP alone leaves both open. */
static unsigned refused_dirs(const struct rp_proc *p)
{
	unsigned dirs = 0;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (!setup_failed(p, e))
			continue;
		if (is_setup(e, "TLS_TX"))
			dirs |= 1u << CT_DIR_ENCRYPT;
		else if (is_setup(e, "TLS_RX"))
			dirs |= 1u << CT_DIR_DECRYPT;
	}
	return dirs ? dirs : (1u << CT_DIR_ENCRYPT) | (1u << CT_DIR_DECRYPT);
}

/* "aes-256-gcm" of "... cipher=AES_GCM_256 (aes-256-gcm) ...", or empty. */
static struct ct_str named_cipher(const struct ct_event *e)
{
	struct ct_str c = rp_str_find(e->detail, "cipher=");
	struct ct_str open = rp_str_find(c, " (");
	if (!open.len)
		return (struct ct_str){ 0 };
	struct ct_str rest = { open.p + 2, open.len - 2 };
	struct ct_str close = rp_str_find(rest, ")");
	return (struct ct_str){ rest.p, close.len ? (size_t)(close.p - rest.p) : 0 };
}

/* What the reader can do about the refusal err of call (TCP_ULP or SOL_TLS). */
static const char *ktls_fix(bool ulp, int err)
{
	if (ulp && err == ENOENT)
		return "The kernel's tls module is not loaded: `modprobe tls` (as root) turns kTLS on "
		       "now, and `echo tls > /etc/modules-load.d/tls.conf` at every boot; a kernel "
		       "built without CONFIG_TLS needs one built with it. In a container, load it on "
		       "the host. Or, if user-space TLS is fast enough, stop asking for kTLS.";
	if (!ulp && err == ENOENT)
		return "The kernel has kTLS but no implementation of this cipher loaded (its crypto "
		       "API could not allocate it): load the module that provides it (`modprobe ccm` "
		       "for AES-CCM, `modprobe chacha20poly1305` for ChaCha20-Poly1305, `modprobe gcm` "
		       "for AES-GCM), or offer a cipher this kernel has first.";
	if (err == EINVAL || err == ENOPROTOOPT || err == EOPNOTSUPP)
		return "This kernel's kTLS does not take this TLS version or cipher (TLS 1.3 needs "
		       "Linux 5.1, AES-CCM 5.2, ChaCha20-Poly1305 5.11, SM4 5.16, ARIA 6.1; AES-GCM "
		       "works since 4.13 for sending, 4.17 for receiving): offer an AES-GCM cipher "
		       "first (OpenSSL `Ciphersuites`/`CipherString`, a GnuTLS priority string), or "
		       "run a newer kernel.";
	if (err == EEXIST || err == EBUSY)
		return "The socket already had its TLS layer or keys: the program set kTLS up twice "
		       "on one connection; nothing is lost if the first set-up worked (see the kTLS "
		       "paths).";
	if (err == EPERM || err == EACCES)
		return "A security policy (seccomp, SELinux, AppArmor, a container profile) refuses "
		       "kTLS to this process: allow setsockopt(SOL_TCP, TCP_ULP) and SOL_TLS there.";
	if (err == ENOTCONN)
		return "The socket was not connected when kTLS was asked for: the kernel attaches "
		       "TLS to an established TCP connection only.";
	return "Check that this kernel has kTLS (`modprobe tls`, /proc/net/tls_stat) and takes "
	       "this cipher; the failed call and errno are in the evidence.";
}

/* Which refusal explains the others: a TCP_ULP failure explains the SOL_TLS ENOPROTOOPT that
 * OpenSSL's TLS_TX then gets; else the first. */
static const struct ct_event *first_refusal(const struct rp_proc *p)
{
	const struct ct_event *first = NULL;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (!setup_failed(p, e))
			continue;
		if (rp_str_starts(e->detail, ULP_PREFIX))
			return e;
		if (!first)
			first = e;
	}
	return first;
}

static void refused(struct rp_model *m, const struct rp_proc *p, const struct ct_event *why)
{
	struct ct_str cipher = { 0 };
	uint64_t calls = 0, bytes = 0;
	unsigned dirs = refused_dirs(p);
	for (size_t k = 0; k < p->nevents; k++)
		if (setup_failed(p, &p->events[k].ev) && named_cipher(&p->events[k].ev).len)
			cipher = named_cipher(&p->events[k].ev);
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (fallback_path(m, pp, cipher, dirs))
			calls += pp->st.calls, bytes += pp->st.bytes;
	}
	bool fell = calls > 0;
	struct rp_finding *f =
		rp_finding_add(m, fell ? "silent-fallback" : "ktls-refused", RP_WARNING, p->hdr.pid);
	if (!f)
		return;
	char eb[32], b[32];
	bool ulp = rp_str_starts(why->detail, ULP_PREFIX);
	CAT(message,
	    "%s asked the kernel to encrypt its TLS records (kTLS) and was refused: ", rp_proc_role_label(p));
	unsigned n = 0;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (!setup_failed(p, e))
			continue;
		CAT(message, "%s%.*s [%.*s] failed with %s (%s)", n++ ? "; " : "", S(e->call), S(e->detail),
		    rp_errno_name(e->err, eb, sizeof(eb)), e->err ? strerror(e->err) : "no errno");
		if (e->count > 1)
			CAT(message, " %llu times", (unsigned long long)e->count);
		CAT(evidence, "%s%.*s -> %s x%llu", n > 1 ? "; " : "", S(e->call),
		    rp_errno_name(e->err, eb, sizeof(eb)), (unsigned long long)(e->count ? e->count : 1));
		if (e->callsite.len)
			CAT(evidence, " at %.*s", S(rp_str_part(e->callsite, '\n', 0)));
	}
	CAT(message, ".");
	if (ulp && why->err == ENOENT)
		CAT(message,
		    " ENOENT from TCP_ULP means the kernel has no \"tls\" upper-layer protocol: "
		    "the tls module is not loaded.");
	if (fell) {
		CAT(message, " Its records were %s in user space instead:",
		    dirs == (1u << CT_DIR_ENCRYPT)   ? "encrypted"
		    : dirs == (1u << CT_DIR_DECRYPT) ? "decrypted"
						     : "encrypted and decrypted");
		for (size_t k = 0; k < p->npaths; k++) {
			const struct rp_path *pp = &p->paths[k];
			if (!fallback_path(m, pp, cipher, dirs))
				continue;
			rp_fmt_bytes(b, sizeof(b), (double)pp->st.bytes);
			CAT(message, " %.*s %s in %.*s (%llu calls, %s);", S(pp->def.cipher),
			    ct_dir_name(pp->def.dir), S(pp->def.impl), (unsigned long long)pp->st.calls, b);
		}
		size_t len = strlen(f->message);
		if (len && f->message[len - 1] == ';')
			f->message[len - 1] = '.';
		CAT(message, " The program did not report it.");
		CAT(evidence, "; %llu user-space record calls, %llu bytes", (unsigned long long)calls,
		    (unsigned long long)bytes);
	} else {
		CAT(message,
		    " No user-space record encryption was seen in this process after it (it "
		    "stopped, sent nothing, or its TLS library is not one cryptrace traces).");
	}
	CAT(evidence, "; pid %u %.*s", p->hdr.pid, S(p->hdr.exe));
	CAT(fix, "%s", ktls_fix(ulp, why->err));
}

static void tx_only(struct rp_model *m, const struct rp_proc *p)
{
	bool tx = false, rx = false;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		tx |= e->kind == CT_EV_SESSION && is_setup(e, "TLS_TX");
		rx |= is_setup(e, "TLS_RX"); /* asked for, worked or not: not "never asked" */
	}
	if (!tx || rx)
		return;
	uint64_t bytes = 0;
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].def.api == CT_API_KTLS && p->paths[k].def.dir == CT_DIR_ENCRYPT)
			bytes += p->paths[k].st.bytes;
	struct rp_finding *f = rp_finding_add(m, "ktls-tx-only", RP_INFO, p->hdr.pid);
	if (!f)
		return;
	char b[32];
	CAT(message,
	    "%s: the kernel encrypts the TLS records this process sends (kTLS TX, %s), but it "
	    "never asked for kTLS RX: the records it receives are decrypted in user space by its TLS "
	    "library (OpenSSL 3.0, for one, asks for TLS_RX on TLS 1.2 connections only). Not a "
	    "fault.",
	    rp_proc_role_label(p), rp_fmt_bytes(b, sizeof(b), (double)bytes));
	CAT(evidence, "setsockopt(SOL_TLS, TLS_TX) succeeded; no setsockopt(SOL_TLS, TLS_RX) was made");
	CAT(fix,
	    "Nothing to fix. For kTLS on received records too: a TLS library that asks for TLS_RX "
	    "with this protocol version (OpenSSL 3.2 or later for TLS 1.3), on Linux 4.17 or later "
	    "(5.1 for TLS 1.3).");
}

void rp_eval_ktls(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		const struct ct_event *why = first_refusal(p);
		if (why)
			refused(m, p, why);
		tx_only(m, p);
	}
}
