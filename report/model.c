/* SPDX-License-Identifier: MIT */
/* model.c - building the reporter's model: processes, their newest path/event snapshots, warnings. */
#include "model.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool rp_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return true;
}

bool rp_u32list_has(const struct rp_u32list *l, uint32_t v)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return true;
	return false;
}

bool rp_u32list_add(struct rp_u32list *l, uint32_t v)
{
	if (rp_u32list_has(l, v))
		return true;
	if (!rp_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return false;
	l->v[l->n++] = v;
	return true;
}

void rp_model_init(struct rp_model *m)
{
	*m = (struct rp_model){ .filter = { .pid = -1 } };
}

void rp_model_free(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		free(p->paths);
		free(p->events);
		free(p->modules);
		free(p->prof.mods);
		free(p->prof.stacks);
		free(p->prof.items);
		free(p->prof.times);
		free(p->prof.crypto_offs);
		for (size_t k = 0; k < p->nowned; k++)
			free(p->owned[k]);
		free(p->owned);
		free(p->map);
		for (size_t k = 0; k < p->nparts; k++)
			free(p->parts[k].file);
		free(p->parts);
		free((void *)p->file);
	}
	for (size_t i = 0; i < m->npaths; i++)
		free(m->paths[i].pids.v);
	for (size_t i = 0; i < m->nevents; i++)
		free(m->events[i].pids.v);
	for (size_t i = 0; i < m->nwarnings; i++)
		free(m->warnings[i]);
	free(m->procs);
	free(m->paths);
	free(m->events);
	free(m->findings);
	free(m->warnings);
	free(m->mangled);
	rp_model_init(m);
}

struct rp_proc *rp_model_add_proc(struct rp_model *m)
{
	if (!rp_grow((void **)&m->procs, &m->cap_procs, m->nprocs, sizeof(*m->procs)))
		return NULL;
	struct rp_proc *p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->read_status = CT_READ_EOF;
	return p;
}

struct rp_path *rp_proc_path(struct rp_proc *p, uint32_t path_id)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (p->paths[i].def.path_id == path_id)
			return &p->paths[i];
	if (!rp_grow((void **)&p->paths, &p->cap_paths, p->npaths, sizeof(*p->paths)))
		return NULL;
	struct rp_path *path = &p->paths[p->npaths++];
	memset(path, 0, sizeof(*path));
	path->def.path_id = path_id;
	path->def.impl = path->def.cipher = path->def.requested = path->def.callsite = path->def.proto =
		ct_str_from(NULL);
	path->st.path_id = path_id;
	return path;
}

void rp_proc_set_event(struct rp_proc *p, const struct ct_event *ev)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].ev.event_id == ev->event_id) {
			p->events[i].ev = *ev;
			return;
		}
	if (!rp_grow((void **)&p->events, &p->cap_events, p->nevents, sizeof(*p->events)))
		return;
	struct rp_event *e = &p->events[p->nevents++];
	memset(e, 0, sizeof(*e));
	e->ev = *ev;
	e->pid = p->hdr.pid;
}

void rp_model_warn(struct rp_model *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *s = strdup(buf);
	if (!s || !rp_grow((void **)&m->warnings, &m->cap_warnings, m->nwarnings, sizeof(char *))) {
		free(s);
		return;
	}
	m->warnings[m->nwarnings++] = s;
}

void rp_proc_add_module(struct rp_proc *p, const struct ct_module *mod)
{
	/* by name and file: two mapped objects may share a base name (extension modules of two
	 * Python packages); the flags of both records are kept */
	for (size_t i = 0; i < p->nmodules; i++)
		if (rp_str_eq(p->modules[i].name, mod->name) && rp_str_eq(p->modules[i].path, mod->path)) {
			uint32_t flags = p->modules[i].flags | mod->flags;
			p->modules[i] = *mod;
			p->modules[i].flags = flags;
			return;
		}
	if (!rp_grow((void **)&p->modules, &p->cap_modules, p->nmodules, sizeof(*p->modules)))
		return;
	p->modules[p->nmodules++] = *mod;
}

void rp_proc_add_profile(struct rp_proc *p, const struct ct_profile *r)
{
	struct rp_profile *pr = &p->prof;
	pr->has = true;
	if (r->period_us)
		pr->period_us = r->period_us;
	if (!r->module.len) { /* the totals of one image (a file holds one; two add up) */
		pr->samples += r->samples;
		pr->lost += r->lost;
		pr->unmapped += r->unmapped;
		pr->image_base = pr->nmods;
		return;
	}
	if (!rp_grow((void **)&pr->mods, &pr->cap_mods, pr->nmods, sizeof(*pr->mods)))
		return;
	pr->mods[pr->nmods++] = *r;
}

void rp_proc_add_profile_stacks(struct rp_proc *p, const struct ct_profile_stacks *r)
{
	struct rp_profile *pr = &p->prof;
	pr->stacks_dropped += r->dropped;
	if (r->flags & CT_STACKS_LEAF_ONLY) {
		snprintf(pr->stacks_note, sizeof(pr->stacks_note), "%.*s", (int)r->note.len, r->note.p);
		return;
	}
	if (!r->count || !rp_grow((void **)&pr->stacks, &pr->cap_stacks, pr->nstacks, sizeof(*pr->stacks)))
		return;
	pr->stacks[pr->nstacks++] = (struct rp_profile_stackrec){ *r, pr->image_base };
}

void rp_proc_add_profile_time(struct rp_proc *p, const struct ct_profile_time *r)
{
	struct rp_profile *pr = &p->prof;
	if (!r->bin_us || !rp_grow((void **)&pr->times, &pr->cap_times, pr->ntimes, sizeof(*pr->times)))
		return;
	pr->times[pr->ntimes++] = *r;
}

bool rp_proc_own(struct rp_proc *p, char *s)
{
	if (!rp_grow((void **)&p->owned, &p->cap_owned, p->nowned, sizeof(*p->owned)))
		return false;
	p->owned[p->nowned++] = s;
	return true;
}
