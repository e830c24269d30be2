/* SPDX-License-Identifier: MIT */
/*
 * attach.c - the library's side of `cryptrace attach` (docs/attach.md): loaded by the tracer's
 * remote dlopen into a process that is already running, it does nothing by itself (its
 * constructor sees that it came late: its definitions are not in the symbol search order) until
 * the tracer calls cryptrace_attach_begin with the settings the environment would have carried.
 * Then it starts as at a process's start (ct_init, a trace file whose header says "attached")
 * and points the modules' imports at its hooks (gotpatch.c). cryptrace_attach_end puts them back,
 * writes the last snapshot and END (reason detach), closes the file and leaves the library
 * inert; it stays mapped (-z nodelete: a thread may still be inside a hook), and a later attach
 * begins again in it with a new file and counters from zero.
 */
#include <dlfcn.h>

#include "attach_abi.h"
#include "flusher.h"
#include "gotpatch.h"
#include "internal.h"
#include "signals.h"
#include "writer.h"

CT_EXPORT uint32_t cryptrace_attach_state; /* enum ct_attach_state, read by the tracer */
CT_EXPORT int64_t cryptrace_attach_begin(const char *config);
CT_EXPORT int64_t cryptrace_attach_end(void);

static bool late;
static struct ct_attach_figures figures; /* the tracer writes the pause here once it resumed us */

/* The program's own search list (the executable, its preloads, their dependencies) has our
 * definitions when we were preloaded (LD_PRELOAD, /etc/ld.so.preload), not when a dlopen with
 * RTLD_LOCAL brought us. RTLD_DEFAULT would not tell: it searches from the caller's scope,
 * which has us either way. */
bool ct_attach_detect_late(void)
{
	void *program = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	late = program && dlsym(program, CT_ATTACH_STATE_SYM) != (void *)&cryptrace_attach_state;
	if (program)
		dlclose(program);
	if (late)
		__atomic_store_n(&cryptrace_attach_state, CT_ATTACH_STATE_DETACHED, __ATOMIC_RELEASE);
	return late;
}

bool ct_attach_late(void)
{
	return late;
}

void ct_attach_figures_get(uint64_t *pause_ns, uint32_t *threads, uint32_t *slots)
{
	*pause_ns = __atomic_load_n(&figures.pause_ns, __ATOMIC_RELAXED);
	*threads = __atomic_load_n(&figures.threads, __ATOMIC_RELAXED);
	*slots = figures.slots;
}

/* A fork child was never stopped by the attach: its trace says nothing of the parent's pause. */
void ct_attach_after_fork_child(void)
{
	figures.pause_ns = 0;
	figures.threads = 0;
}

int64_t cryptrace_attach_begin(const char *config)
{
	if (!late)
		return -EPERM; /* preloaded: it traces by itself */
	if (__atomic_load_n(&cryptrace_attach_state, __ATOMIC_ACQUIRE) == CT_ATTACH_STATE_ATTACHED)
		return -EALREADY;
	int saved = errno;
	figures = (struct ct_attach_figures){ 0 };
	if (atomic_load(&ct_g.state) == 0) {
		if (!ct_init_attach(config)) {
			errno = saved;
			return -EINVAL;
		}
	} else if (!ct_restart_attach(config)) {
		errno = saved;
		return -EINVAL;
	}
	long n = ct_got_patch_all();
	if (n < 0) {
		ct_writer_end(CT_END_DETACH, 0);
		ct_writer_close();
		atomic_store(&ct_g.state, 3);
		errno = saved;
		return -ENOTSUP;
	}
	figures.slots = (uint32_t)n;
	__atomic_store_n(&cryptrace_attach_state, CT_ATTACH_STATE_ATTACHED, __ATOMIC_RELEASE);
	/* the flusher from now on, not from the first cipher path: an idle server's snapshot stays
	 * fresh, and it patches the modules the program loads while attached */
	ct_signals_attach_begin();
	ct_flusher_rearm();
	ct_flusher_start();
	ct_log(2, "attached: %ld import slots point at the hooks", n);
	errno = saved;
	return (int64_t)(uintptr_t)&figures;
}

int64_t cryptrace_attach_end(void)
{
	if (__atomic_load_n(&cryptrace_attach_state, __ATOMIC_ACQUIRE) != CT_ATTACH_STATE_ATTACHED)
		return -EINVAL;
	int saved = errno;
	ct_flusher_stop(); /* joined: it patches nothing more, its last flush is in the file */
	size_t n = ct_got_restore_all();
	ct_signals_attach_end();
	ct_writer_end(CT_END_DETACH, 0);
	ct_writer_close();
	atomic_store(&ct_g.state, 3); /* a hook still running passes straight through */
	__atomic_store_n(&cryptrace_attach_state, CT_ATTACH_STATE_DETACHED, __ATOMIC_RELEASE);
	ct_log(2, "detached: %zu import slots put back", n);
	errno = saved;
	return (int64_t)n;
}
