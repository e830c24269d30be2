/* SPDX-License-Identifier: MIT */
/*
 * foreign.c - callers bound to another libcrypto than the one we trace.
 *
 * Our hooks are in the global scope, so they also catch libcrypto calls from a library loaded
 * RTLD_LOCAL with its own libcrypto: a plugin built against OpenSSL 1.1 in a process whose
 * first libcrypto is 3.0, a Python wheel's bundled and renamed libcrypto-<hash>.so.3. Forwarded
 * to the traced libcrypto, such a call hands that library a context of another layout (the
 * program crashes), or finds no libcrypto at all (the call fails). So each exported libcrypto
 * hook first asks whether its caller's object would, without us, bind the name to a definition
 * other than the one we forward to; if so the call goes there, untouched and untraced, and one
 * TRACE_WARNING event says so. The traced libcrypto is one per process.
 *
 * Cost: the verdict is per object (a dlsym in its own scope, once); a thread keeps the address
 * ranges of the last objects found bound to ours, so the usual call is a few compares.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "linkmap.h"

__thread struct ct_caller_range ct_caller_ok[CT_CALLER_RANGES] __attribute__((tls_model("initial-exec")));
__thread void *ct_foreign_active __attribute__((tls_model("initial-exec")));
static __thread unsigned caller_ok_next __attribute__((tls_model("initial-exec")));

/* One object's verdict, and the functions of its own libcrypto asked for so far. */
#define FOREIGN_OBJECTS 32
#define FOREIGN_NAMES 48

struct object_verdict {
	const struct link_map *map; /* NULL: free slot */
	uintptr_t start, len;
	void *lib; /* its own libcrypto's handle (RTLD_NOLOAD), NULL: bound to ours */
	struct {
		const char *name;
		void *fn;
	} names[FOREIGN_NAMES];
	unsigned nnames;
};

static struct object_verdict objects[FOREIGN_OBJECTS];
static pthread_mutex_t foreign_lock = PTHREAD_MUTEX_INITIALIZER;

/* The object holding addr: its link map and the range of its PT_LOAD segments. */
struct caller_object {
	const struct link_map *map;
	const char *name;
	uintptr_t start, end;
};

static int range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct caller_object *o = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	if (info->dlpi_addr != o->map->l_addr || strcmp(name, o->name ? o->name : "") != 0)
		return 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	o->start = lo;
	o->end = hi;
	return 1;
}

static bool find_caller(const void *ra, struct caller_object *o)
{
	struct link_map *map = ct_link_map_of(ra);
	if (!map)
		return false;
	o->map = map;
	o->name = map->l_name;
	return dl_iterate_phdr(range_cb, o) != 0 && (uintptr_t)ra - o->start < o->end - o->start;
}

static void remember_ok(uintptr_t start, uintptr_t len)
{
	struct ct_caller_range *r = &ct_caller_ok[caller_ok_next++ % CT_CALLER_RANGES];
	r->start = start;
	r->len = len;
}

/* Our own library: a call from inside it is ours (a route, a helper), never foreign. */
static bool is_self(const struct link_map *map)
{
	struct link_map *self = ct_link_map_of((void *)is_self);
	return self && self == map;
}

/* The verdict for o (foreign_lock held): what its own scope binds name to, against ours. */
static struct object_verdict *judge(const struct caller_object *o, const char *name, void *ours)
{
	struct object_verdict *v = NULL;
	for (unsigned i = 0; i < FOREIGN_OBJECTS && !v; i++)
		if (objects[i].map == o->map && objects[i].start == o->start)
			v = &objects[i];
	if (v)
		return v;
	for (unsigned i = 0; i < FOREIGN_OBJECTS && !v; i++)
		if (!objects[i].map)
			v = &objects[i];
	if (!v)
		return NULL; /* table full: forward as before */
	memset(v, 0, sizeof(*v));
	v->map = o->map;
	v->start = o->start;
	v->len = o->end - o->start;
	/* the main program's scope is the global one (ours included): what RTLD_NEXT gave */
	if (!o->name || !*o->name || is_self(o->map))
		return v;
	void *h = dlopen(o->name, RTLD_NOLOAD | RTLD_LAZY);
	void *def = h ? dlsym(h, name) : NULL;
	if (h)
		dlclose(h);
	Dl_info di, oi;
	if (!def || def == ours || !dladdr(def, &di) || !di.dli_fname)
		return v;
	/* a definition in our own library is the global scope answering: bound to ours */
	if (dladdr((void *)is_self, &oi) && oi.dli_fbase == di.dli_fbase)
		return v;
	/* the same library as ours (ours may be a different symbol version of it) */
	if (ours && dladdr(ours, &oi) && oi.dli_fbase == di.dli_fbase)
		return v;
	v->lib = dlopen(di.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
	/* one event per object that calls into another copy (not for that copy's calls into itself) */
	if (v->lib && strcmp(di.dli_fname, o->name) != 0)
		ct_event(CT_EV_TRACE_WARNING, "foreign-libcrypto", 0, 0, CT_NO_PATH, false,
			 "calls from %s go to its own %s (passed through, not traced: cryptrace traces one "
			 "libcrypto per process)",
			 o->name, di.dli_fname);
	return v;
}

/* The function `name` of v's library, looked up once (foreign_lock held). */
static void *foreign_fn(struct object_verdict *v, const char *name)
{
	for (unsigned i = 0; i < v->nnames; i++)
		if (v->names[i].name == name || strcmp(v->names[i].name, name) == 0)
			return v->names[i].fn;
	void *fn = dlsym(v->lib, name);
	if (fn && v->nnames < FOREIGN_NAMES)
		v->names[v->nnames++] = (__typeof__(v->names[0])){ name, fn };
	return fn;
}

/* A call made while another libcrypto's function runs on this thread, whose return address is
 * our own forwarding frame (that library's tail call into its exported functions): the same
 * library's function. */
static void *active_fn(const char *name, void **lib)
{
	void *fn = NULL;
	int saved = errno;
	pthread_mutex_lock(&foreign_lock);
	for (unsigned i = 0; i < FOREIGN_OBJECTS && !fn; i++)
		if (objects[i].map && objects[i].lib == ct_foreign_active)
			fn = foreign_fn(&objects[i], name);
	pthread_mutex_unlock(&foreign_lock);
	errno = saved;
	*lib = ct_foreign_active;
	return fn;
}

void *ct_foreign_real(const char *name, const void *ra, void **lib)
{
	*lib = NULL;
	struct caller_object o = { 0 };
	bool found = find_caller(ra, &o);
	/* a tail call in the library we pass to returns to our forwarding frame: its call (a signal
	 * handler's call from elsewhere, meanwhile, is judged by its own caller) */
	if (ct_foreign_active && (!found || is_self(o.map)))
		return active_fn(name, lib);
	if (!found) {
		remember_ok((uintptr_t)ra, 1); /* code of no object (generated): ours, and not asked again */
		return NULL;
	}
	int saved = errno;
	void *ours = ct_resolve(name), *fn = NULL;
	pthread_mutex_lock(&foreign_lock);
	struct object_verdict *v = judge(&o, name, ours);
	if (v && !v->lib) {
		remember_ok(v->start, v->len);
	} else if (v) {
		fn = foreign_fn(v, name);
		*lib = v->lib;
	}
	pthread_mutex_unlock(&foreign_lock);
	errno = saved;
	return fn;
}
