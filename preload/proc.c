/* SPDX-License-Identifier: MIT */
/*
 * proc.c - following the process: fork (pthread_atfork: the child starts from zero with its own
 * trace file and the parent's pid as ppid), exec (a final snapshot and END before the image goes,
 * and an environment that still carries LD_PRELOAD and every CRYPTRACE_* so the new image traces
 * itself) and vfork (the child shares our memory: it must never write, only exec or _exit).
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "flusher.h"
#include "signals.h"

static void atfork_prepare(void)
{
	if (!ct_ready())
		return;
	ct_signals_fork_prepare();
	/* every lock a child might need, in the order the flusher takes them */
	ct_flush_lock();
	ct_events_lock();
	ct_registry_lock();
}

static void atfork_parent(void)
{
	if (!ct_ready())
		return;
	ct_registry_unlock();
	ct_events_unlock();
	ct_flush_unlock();
	ct_signals_fork_done();
}

static void atfork_child(void)
{
	if (!ct_ready())
		return;
	/* the locks the prepare handler took are re-initialised below, not unlocked */
	ct_sig_crit = 0;
	ct_sig_deferred = 0;
	ct_registry_after_fork_child();
	ct_events_reset();
	ct_callsite_after_fork_child();
	ct_g.ppid = ct_g.pid;
	ct_g.pid = (uint32_t)getpid();
	ct_attach_after_fork_child();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	ct_g.start_mono_ns = ct_now_ns();
	ct_g.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	atomic_store(&ct_g.hooked_calls_slow, 0);
	atomic_store(&ct_g.dropped_events, 0);
	atomic_store(&ct_g.threads_seen, 1);
	ct_thread_after_fork_child();
	ct_writer_after_fork_child();  /* unlocks/re-inits the flush lock and opens the new file */
	ct_flusher_after_fork_child(); /* after the file: the parent's flusher gets a successor */
	ct_signals_fork_done();
}

void ct_proc_install_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

bool ct_proc_is_vfork_child(void)
{
	return ct_ready() && getpid() != (pid_t)ct_g.pid;
}

bool ct_in_vfork_child(void)
{
	return ct_proc_is_vfork_child();
}

static size_t name_len(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq ? (size_t)(eq - kv) : strlen(kv);
}

static const char *env_find(char *const envp[], const char *name, size_t n)
{
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

char *const *ct_proc_fix_env(char *const envp[])
{
	/* loaded late (`cryptrace attach`): the new image is not ours to trace, as a process the
	 * attach never saw start would not be */
	if (!ct_ready() || !ct_g.self_path[0] || ct_attach_late())
		return envp;
	const char *const *saved = ct_config_env();
	const char *missing[32];
	unsigned nmissing = 0;
	for (const char *const *s = saved; *s && nmissing < 30; s++) {
		if (!strncmp(*s, "LD_PRELOAD=", 11))
			continue;
		if (!env_find(envp, *s, name_len(*s)))
			missing[nmissing++] = *s;
	}
	const char *preload = env_find(envp, "LD_PRELOAD", 10);
	bool preload_ok = preload && strstr(preload, "libcryptrace");
	if (!nmissing && preload_ok)
		return envp;

	size_t count = 0, bytes = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	bytes = (count + nmissing + 2) * sizeof(char *) + strlen(ct_g.self_path) + 16 +
		(preload ? strlen(preload) : 0);
	/* mmap, not malloc: a vfork child shares the parent's heap. The size goes first, for
	 * ct_proc_free_env. */
	bytes += sizeof(size_t) * 2;
	size_t *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return envp;
	base[0] = bytes;
	char **out = (char **)(base + 2);
	char *str = (char *)(out + count + nmissing + 2);
	size_t k = 0;
	for (char *const *e = envp; e && *e; e++) {
		if (!preload_ok && !strncmp(*e, "LD_PRELOAD=", 11))
			continue;
		out[k++] = *e;
	}
	for (unsigned i = 0; i < nmissing; i++)
		out[k++] = (char *)missing[i];
	if (!preload_ok) {
		strcpy(str, "LD_PRELOAD=");
		strcat(str, ct_g.self_path);
		if (preload && *preload) {
			strcat(str, ":");
			strcat(str, preload);
		}
		out[k++] = str;
	}
	out[k] = NULL;
	return out;
}

void ct_proc_free_env(char *const *env, char *const *orig)
{
	if (!env || env == orig)
		return;
	size_t *base = (size_t *)env - 2;
	munmap(base, base[0]);
}

void ct_proc_before_exec(const char *call, const char *file)
{
	if (!ct_ready() || ct_proc_is_vfork_child())
		return;
	ct_event(CT_EV_CHILD, call, 0, 0, CT_NO_PATH, false, "exec %s", file ? file : "?");
	ct_writer_end(CT_END_EXEC, 0);
}

void ct_proc_exec_failed(void)
{
	if (!ct_ready() || ct_proc_is_vfork_child())
		return;
	ct_writer_reopen_after_failed_exec();
}
