/* SPDX-License-Identifier: MIT */
/*
 * creators.c - who sets up a path's cipher contexts, how many, and for what. The preload records
 * one CT_EV_CONTEXT event per (path, call site) with a count of set-ups (inits naming a cipher),
 * and one CT_EV_CTX_USAGE event per path and usage pattern (a TLS record-layer ctrl, IV-only
 * re-inits). Here they are gathered per merged path across processes, and the pattern names the
 * protocol: libssl with a new IV per record is TLS 1.3, libssl with EVP_CTRL_AEAD_TLS1_AAD or a
 * fixed GCM IV is TLS 1.2 (or older).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static uint32_t usage_bit(struct ct_str detail)
{
	static const struct { const char *prefix; uint32_t bit; } pats[] = {
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
static bool event_on_path(const struct rp_proc *p, const struct ct_event *ev, const struct rp_path *path)
{
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].def.path_id == ev->path_id)
			return rp_same_path_any_entry(&p->paths[k].def, &path->def);
	return false;
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
			if (j < pc->nsites) {
				pc->sites[j].setups += ev->count;
			} else if (pc->nsites < RP_CREATOR_SITES) {
				pc->sites[pc->nsites].callsite = ev->callsite;
				pc->sites[pc->nsites].setups = ev->count;
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
		if (k < n)
			pc->sites[k].setups += pc->sites[j].setups;
		else
			pc->sites[n++] = pc->sites[j];
	}
	pc->nsites = n;
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
