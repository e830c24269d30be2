/* SPDX-License-Identifier: MIT */
/*
 * creators.c - who sets up a path's cipher contexts, how many, and for what. The preload records
 * one CT_EV_CONTEXT event per (path, call site) with a count of set-ups (inits naming a cipher),
 * and one CT_EV_CTX_USAGE event per path and usage pattern (a TLS record-layer ctrl, IV-only
 * re-inits). Here they are gathered per merged path across processes, and the pattern names the
 * protocol: libssl with a new IV per record is TLS 1.3, libssl with EVP_CTRL_AEAD_TLS1_AAD or a
 * fixed GCM IV is TLS 1.2 (or older).
 *
 * OpenSSH's cipher_init serves two uses: the transport, and key shielding (sshkey_shield_private:
 * private keys kept encrypted in memory with aes256-ctr, decrypted for each use). The preload
 * counts set-ups per return address, which is cipher_init for both, and Debian's sshd has no
 * symbols to tell its callers apart; what tells them apart is the work: a shielding context
 * encrypts or decrypts one key blob, once, while a transport context carries every packet of its
 * direction. So in each process, OpenSSH's contexts on a path that made at most one data call
 * each are key shielding (the sshd listener's only contexts besides the DRBG's).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static uint32_t usage_bit(struct ct_str detail)
{
	static const struct {
		const char *prefix;
		uint32_t bit;
	} pats[] = {
		{ "iv-reinit", RP_USAGE_IV_REINIT },
		{ "ctrl=AEAD_TLS1_AAD", RP_USAGE_TLS1_AAD },
		{ "ctrl=GCM_SET_IV_FIXED", RP_USAGE_IV_FIXED },
		{ "ctrl=AEAD_SET_IVLEN", RP_USAGE_SET_IVLEN },
		{ "ctrl=AEAD_SET_MAC_KEY", RP_USAGE_MAC_KEY },
	};
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (rp_str_starts(detail, pats[i].prefix))
			return pats[i].bit;
	return 0;
}

/* Whether the process's path an event refers to is the merged path asked about. A context is
 * set up on its path before any data call names the entry (EVP_*Update or EVP_Cipher, a variant
 * of the path with the same other fields), so the entry is not compared. */
static bool event_on_def(const struct rp_proc *p, const struct ct_event *ev, const struct ct_path_def *def)
{
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].def.path_id == ev->path_id)
			return rp_same_path_any_entry(&p->paths[k].def, def);
	return false;
}

static bool event_on_path(const struct rp_proc *p, const struct ct_event *ev, const struct rp_path *path)
{
	return event_on_def(p, ev, &path->def);
}

/* ---- OpenSSH: transport or key shielding */

#define SSH_TRANSPORT "SSH transport"
#define SSH_SHIELDING "private-key shielding (OpenSSH keeps keys encrypted in memory)"
#define SSH_BOTH "SSH transport and private-key shielding"

enum ssh_use { SSH_NONE = 0, SSH_SHIELD = 1, SSH_CARRIES = 2 };

static bool by_openssh(const struct rp_creator *c)
{
	return !strcmp(c->purpose, SSH_TRANSPORT);
}

/* What OpenSSH code did with its contexts on a path (any entry variant) in process p: at most
 * one data call per context set up is key shielding, more is transport. The DRBG's contexts may
 * share the path (aes-256-ctr encrypt) but feed EVP_CipherUpdate; OpenSSH's cipher_crypt always
 * calls EVP_Cipher, so then only EVP_Cipher calls count. A trace without set-up counts (an
 * older preload) cannot tell: there the path's first call site decides, as transport. */
static enum ssh_use ssh_use(const struct rp_proc *p, const struct ct_path_def *def)
{
	uint64_t ssh_setups = 0, other_setups = 0, calls = 0, raw_calls = 0;
	bool counted = false;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *ev = &p->events[k].ev;
		struct rp_creator c;
		if (ev->kind != CT_EV_CONTEXT || !event_on_def(p, ev, def))
			continue;
		counted = true;
		if (!rp_callsite_creator(ev->callsite, &c))
			continue;
		if (by_openssh(&c))
			ssh_setups += ev->count;
		else
			other_setups += ev->count;
	}
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (!rp_same_path_any_entry(&pp->def, def))
			continue;
		calls += pp->st.calls;
		if (pp->def.entry == CT_ENTRY_EVP_CIPHER)
			raw_calls += pp->st.calls;
	}
	if (!calls)
		return SSH_NONE; /* not this process's path, or no work on it */
	if (!counted) {
		struct rp_creator c;
		return rp_callsite_creator(def->callsite, &c) && by_openssh(&c) ? SSH_CARRIES : SSH_NONE;
	}
	if (!ssh_setups)
		return SSH_NONE;
	return (other_setups ? raw_calls : calls) <= ssh_setups ? SSH_SHIELD : SSH_CARRIES;
}

static const char *ssh_purpose(unsigned uses)
{
	if (uses == SSH_SHIELD)
		return SSH_SHIELDING;
	if (uses == (SSH_SHIELD | SSH_CARRIES))
		return SSH_BOTH;
	return SSH_TRANSPORT;
}

bool rp_proc_ssh_transport(const struct rp_proc *p)
{
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].st.calls && ssh_use(p, &p->paths[k].def) == SSH_CARRIES)
			return true;
	return false;
}

/* A path's first call site names who set up its first context; an entry variant may be someone
 * else's: the DRBG feeds its AES-256-CTR contexts through EVP_CipherUpdate only, so the
 * EVP_Cipher variant of the same path (OpenSSH's key shielding beside it) was made by another
 * creator, the one with the most set-ups on the path in p (NULL: in every shown process). */
bool rp_path_creator(const struct rp_model *m, const struct rp_proc *p, const struct rp_path *path,
		     struct rp_creator *c)
{
	if (!rp_callsite_creator(path->def.callsite, c))
		return false;
	if (path->def.entry != CT_ENTRY_EVP_CIPHER || !strstr(c->purpose, "DRBG"))
		return true;
	uint64_t best = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if ((p && q != p) || (!p && !rp_proc_shown(m, q)))
			continue;
		for (size_t k = 0; k < q->nevents; k++) {
			const struct ct_event *ev = &q->events[k].ev;
			struct rp_creator o;
			if (ev->kind == CT_EV_CONTEXT && ev->count > best && event_on_path(q, ev, path) &&
			    rp_callsite_creator(ev->callsite, &o) && !strstr(o.purpose, "DRBG")) {
				best = ev->count;
				*c = o;
			}
		}
	}
	return true;
}

const char *rp_path_purpose(const struct rp_model *m, const struct rp_proc *p, const struct rp_path *path,
			    const struct rp_creator *c)
{
	if (!by_openssh(c))
		return c->purpose;
	unsigned uses = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if ((p && q != p) || (!p && !rp_proc_shown(m, q)))
			continue;
		uses |= ssh_use(q, &path->def);
	}
	return ssh_purpose(uses);
}

static int cmp_sites(const void *a, const void *b)
{
	const struct rp_creator_site *x = a, *y = b;
	return x->setups == y->setups ? 0 : x->setups < y->setups ? 1 : -1;
}

bool rp_path_creators(const struct rp_model *m, const struct rp_path *path, struct rp_path_creators *pc)
{
	memset(pc, 0, sizeof(*pc));
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (p->superseded || !rp_proc_shown(m, p))
			continue;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *ev = &p->events[k].ev;
			if ((ev->kind != CT_EV_CONTEXT && ev->kind != CT_EV_CTX_USAGE) ||
			    !event_on_path(p, ev, path))
				continue;
			if (ev->kind == CT_EV_CTX_USAGE) {
				pc->usage |= usage_bit(ev->detail);
				continue;
			}
			pc->setups += ev->count;
			size_t j = 0;
			while (j < pc->nsites && !rp_str_eq(pc->sites[j].callsite, ev->callsite))
				j++;
			/* OpenSSH's use, judged in this process (only asked of its own call sites) */
			struct rp_creator who;
			unsigned use = rp_callsite_creator(ev->callsite, &who) && by_openssh(&who)
					       ? ssh_use(p, &path->def)
					       : 0;
			if (j < pc->nsites) {
				pc->sites[j].setups += ev->count;
				pc->sites[j].ssh_uses |= use;
			} else if (pc->nsites < RP_CREATOR_SITES) {
				pc->sites[pc->nsites].callsite = ev->callsite;
				pc->sites[pc->nsites].setups = ev->count;
				pc->sites[pc->nsites].ssh_uses = use;
				pc->nsites++;
			} else {
				pc->other_setups += ev->count;
			}
		}
	}
	for (size_t j = 0; j < pc->nsites; j++)
		rp_callsite_creator(pc->sites[j].callsite, &pc->sites[j].who);
	/* stacks that differ only inside libcrypto (or deeper in the caller) name the same creator:
	 * one line each */
	size_t n = 0;
	for (size_t j = 0; j < pc->nsites; j++) {
		size_t k = 0;
		while (k < n && (strcmp(pc->sites[k].who.created_by, pc->sites[j].who.created_by) ||
				 strcmp(pc->sites[k].who.via, pc->sites[j].who.via)))
			k++;
		if (k < n) {
			pc->sites[k].setups += pc->sites[j].setups;
			pc->sites[k].ssh_uses |= pc->sites[j].ssh_uses;
		} else {
			pc->sites[n++] = pc->sites[j];
		}
	}
	pc->nsites = n;
	for (size_t j = 0; j < pc->nsites; j++)
		if (by_openssh(&pc->sites[j].who) && pc->sites[j].ssh_uses)
			pc->sites[j].who.purpose = ssh_purpose(pc->sites[j].ssh_uses);
	qsort(pc->sites, pc->nsites, sizeof(pc->sites[0]), cmp_sites);
	return pc->setups > 0;
}

const char *rp_creator_purpose(const struct rp_creator *c, uint32_t usage)
{
	if (!strcmp(c->purpose, "TLS")) {
		if (usage & (RP_USAGE_TLS1_AAD | RP_USAGE_IV_FIXED | RP_USAGE_MAC_KEY))
			return "TLS 1.2 records";
		if (usage & RP_USAGE_IV_REINIT)
			return "TLS 1.3 records";
		return "TLS";
	}
	return c->purpose;
}
