/* SPDX-License-Identifier: MIT */
/*
 * proc.c (hooks) - process life cycle: fork (the atfork handlers in ../proc.c do the work; the
 * parent notes the child), the exec family and posix_spawn (final snapshot + END before the image
 * is replaced, environment re-injected so the new image traces itself), and exit (its status goes
 * into the END record). vfork is deliberately not hooked: a wrapper's stack frame would be shared
 * with the child; the exec hooks recognise a vfork child by its pid and never write from it.
 */
/* setrlimit and setrlimit64 are distinct exported symbols: with a 64-bit off_t the headers would
 * rename the first into the second */
#undef _FILE_OFFSET_BITS
#include <spawn.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "ct_config.h"
#include "internal.h"

/* glibc types the resource as an enum under _GNU_SOURCE; musl and POSIX say int */
#ifndef CT_HAVE_RLIMIT_RESOURCE_T
typedef int __rlimit_resource_t;
#endif

/* musl defines setrlimit64, prlimit64 and struct rlimit64 as macros for the plain names (its
 * rlim_t is 64-bit everywhere): a program's setrlimit64 call is a setrlimit call, and the *64
 * hooks would define the plain ones twice. */
#if !defined(setrlimit64) && !defined(prlimit64)
#define CT_RLIMIT64_HOOKS 1
#endif

extern char **environ;

/* Resolved at start (ct_proc_hooks_resolve), not on first use: the first use may be in a vfork
 * child, where dlsym (loader lock, malloc) would run on memory the parent's other threads use. */
static __typeof__(&fork) real_fork;
static __typeof__(&exit) real_exit;
static __typeof__(&_exit) real__exit;
static __typeof__(&execve) real_execve;
static __typeof__(&execvpe) real_execvpe;
static __typeof__(&fexecve) real_fexecve;
static __typeof__(&posix_spawn) real_posix_spawn;
static __typeof__(&posix_spawnp) real_posix_spawnp;
static __typeof__(&setrlimit) real_setrlimit;
static __typeof__(&prlimit) real_prlimit;
#ifdef CT_RLIMIT64_HOOKS
static __typeof__(&setrlimit64) real_setrlimit64;
static __typeof__(&prlimit64) real_prlimit64;
#endif

#define RESOLVE(fn)                                                                                          \
	do {                                                                                                 \
		if (!__atomic_load_n(&real_##fn, __ATOMIC_ACQUIRE))                                          \
			__atomic_store_n(&real_##fn, (__typeof__(&fn))ct_resolve(#fn), __ATOMIC_RELEASE);    \
	} while (0)

void ct_proc_hooks_resolve(void)
{
	RESOLVE(fork);
	RESOLVE(exit);
	RESOLVE(_exit);
	RESOLVE(execve);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(posix_spawn);
	RESOLVE(posix_spawnp);
	RESOLVE(setrlimit);
	RESOLVE(prlimit);
#ifdef CT_RLIMIT64_HOOKS
	RESOLVE(setrlimit64);
	RESOLVE(prlimit64);
#endif
}

#define REAL(fn)                                                                                             \
	(__atomic_load_n(&real_##fn, __ATOMIC_ACQUIRE) ? real_##fn : (ct_proc_hooks_resolve(), real_##fn))

CT_EXPORT pid_t fork(void)
{
	__typeof__(&fork) real = REAL(fork);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	pid_t pid = real();
	if (pid > 0 && ct_ready()) {
		int e = errno;
		ct_event(CT_EV_CHILD, "fork", 0, pid, CT_NO_PATH, false, "fork");
		errno = e;
	}
	return pid;
}

CT_EXPORT void exit(int status)
{
	__typeof__(&exit) real = REAL(exit);
	ct_exit_status = status;
	if (real)
		real(status);
	_exit(status); /* unreachable unless libc has no exit: never return from exit() */
}

/* main's start and its return. The program's start code (crt1) calls __libc_start_main through
 * the PLT, so main is wrapped here: at its start the exit handler is registered (init.c: after
 * the loader's own exit handler, so that ours runs first and END is written before any library's
 * destructor), and the value it returns is recorded before libc hands it to exit from inside
 * itself, past the exit hook above (musl has no on_exit to tell a handler the status). glibc
 * passes a seventh argument (the stack end), musl six: seven are forwarded, the last unused there. */
typedef int (*ct_main_fn)(int, char **, char **);
typedef int (*ct_start_main_fn)(ct_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
				void *);
static ct_main_fn real_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
	ct_register_exit_handler();
	int status = real_main(argc, argv, envp);
	ct_exit_status = status;
	return status;
}

CT_EXPORT int __libc_start_main(ct_main_fn main_fn, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
CT_EXPORT int __libc_start_main(ct_main_fn main_fn, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	ct_start_main_fn real = (ct_start_main_fn)ct_resolve("__libc_start_main");
	if (CT_UNLIKELY(!real))
		_exit(127); /* no libc to start the program with: nothing else can run */
	real_main = main_fn;
	return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* _exit skips atexit handlers and destructors: write the last snapshot here (not in a vfork
 * child, which shares our memory and file offsets). */
CT_EXPORT void _exit(int status)
{
	__typeof__(&_exit) real = REAL(_exit);
	if (ct_ready() && !ct_proc_is_vfork_child()) {
		ct_exit_status = status;
		ct_writer_end(CT_END_EXIT, status);
	}
	if (real)
		real(status);
	for (;;)
		; /* _exit never returns; without libc's there is nothing better to do */
}

/* An exec that returns failed: the trace goes on (END is written again at exit). */
static int exec_failed(int r, char *const *fixed, char *const *orig)
{
	int e = errno;
	ct_proc_exec_failed();
	ct_proc_free_env(fixed, orig);
	errno = e;
	return r;
}

CT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	__typeof__(&execve) real = REAL(execve);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	char *const *env = ct_proc_fix_env(envp);
	ct_proc_before_exec("execve", path);
	return exec_failed(real(path, argv, env), env, envp);
}

CT_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

CT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	__typeof__(&execvpe) real = REAL(execvpe);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	char *const *env = ct_proc_fix_env(envp);
	ct_proc_before_exec("execvpe", file);
	return exec_failed(real(file, argv, env), env, envp);
}

CT_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

CT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	__typeof__(&fexecve) real = REAL(fexecve);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	char *const *env = ct_proc_fix_env(envp);
	ct_proc_before_exec("fexecve", "(fd)");
	return exec_failed(real(fd, argv, env), env, envp);
}

/* execl* take their arguments as varargs: collect them into an argv on the stack. */
#define COLLECT_ARGS(arg0, last, argvp)                                                                      \
	size_t argc_ = 1;                                                                                    \
	va_list ap_;                                                                                         \
	va_start(ap_, arg0);                                                                                 \
	while (va_arg(ap_, const char *))                                                                    \
		argc_++;                                                                                     \
	va_end(ap_);                                                                                         \
	const char *argvp[argc_ + 1];                                                                        \
	argvp[0] = arg0;                                                                                     \
	va_start(ap_, arg0);                                                                                 \
	for (size_t i_ = 1; i_ <= argc_; i_++)                                                               \
		argvp[i_] = va_arg(ap_, const char *);                                                       \
	last = va_arg(ap_, char *const *);                                                                   \
	va_end(ap_);

CT_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *const *unused;
	COLLECT_ARGS(arg, unused, argv)
	(void)unused;
	return execve(path, (char *const *)argv, environ);
}

CT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *const *unused;
	COLLECT_ARGS(arg, unused, argv)
	(void)unused;
	return execvpe(file, (char *const *)argv, environ);
}

CT_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp;
	COLLECT_ARGS(arg, envp, argv)
	return execve(path, (char *const *)argv, envp);
}

#define SPAWN_HOOK(fn, what)                                                                                 \
	CT_EXPORT int fn(pid_t *pid, const char *what, const posix_spawn_file_actions_t *fa,                 \
			 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])              \
	{                                                                                                    \
		__typeof__(&fn) real = REAL(fn);                                                             \
		if (CT_UNLIKELY(!real))                                                                      \
			return ENOSYS;                                                                       \
		char *const *env = ct_proc_fix_env(envp);                                                    \
		pid_t child = 0;                                                                             \
		int r = real(&child, what, fa, attr, argv, env);                                             \
		if (pid)                                                                                     \
			*pid = child;                                                                        \
		ct_proc_free_env(env, envp);                                                                 \
		if (ct_ready() && !ct_proc_is_vfork_child()) {                                               \
			int e = errno;                                                                       \
			ct_event(CT_EV_CHILD, #fn, r, r ? -1 : child, CT_NO_PATH, r != 0, "spawn %s", what); \
			errno = e;                                                                           \
		}                                                                                            \
		return r;                                                                                    \
	}

SPAWN_HOOK(posix_spawn, path)
SPAWN_HOOK(posix_spawnp, file)

/* RLIMIT_FSIZE: writing past it kills the process with SIGXFSZ (sshd's sandboxed child sets it to
 * 0 right before seccomp). Flush while we can, then keep the trace under the limit. */
static void fsize_limit_set(int resource, uint64_t cur)
{
	if (resource == RLIMIT_FSIZE && ct_ready() && !ct_proc_is_vfork_child())
		ct_writer_fsize_limit(cur);
}

CT_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rlim)
{
	__typeof__(&setrlimit) real = REAL(setrlimit);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	int e = errno; /* rlim is nonnull by contract */
	fsize_limit_set(resource, rlim->rlim_cur);
	errno = e;
	return real(resource, rlim);
}

#ifdef CT_RLIMIT64_HOOKS
CT_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rlim)
{
	__typeof__(&setrlimit64) real = REAL(setrlimit64);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	int e = errno; /* rlim is nonnull by contract */
	fsize_limit_set(resource, rlim->rlim_cur);
	errno = e;
	return real(resource, rlim);
}
#endif

CT_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *new_limit,
		      struct rlimit *old_limit)
{
	__typeof__(&prlimit) real = REAL(prlimit);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	if (new_limit && (pid == 0 || pid == getpid())) {
		int e = errno;
		fsize_limit_set(resource, new_limit->rlim_cur);
		errno = e;
	}
	return real(pid, resource, new_limit, old_limit);
}

#ifdef CT_RLIMIT64_HOOKS
CT_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *new_limit,
			struct rlimit64 *old_limit)
{
	__typeof__(&prlimit64) real = REAL(prlimit64);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	if (new_limit && (pid == 0 || pid == getpid())) {
		int e = errno;
		fsize_limit_set(resource, new_limit->rlim_cur);
		errno = e;
	}
	return real(pid, resource, new_limit, old_limit);
}
#endif
