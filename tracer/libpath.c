/* SPDX-License-Identifier: MIT */
/*
 * libpath.c - where is libcryptrace.so? The same binary must work from the build tree (tests,
 * developers) and once installed, so it looks in order at: $CRYPTRACE_LIB, the build tree next
 * to this executable (<dir of /proc/self/exe>/../preload/), and the install dir CT_LIBDIR.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ct_config.h"
#include "tracer.h"

#define CT_LIB_NAME "libcryptrace.so"

/* LD_PRELOAD splits its value on spaces and colons: a path holding either cannot be preloaded. */
static bool preloadable(const char *path, char *why, size_t why_cap)
{
	if (strpbrk(path, " :")) {
		snprintf(why, why_cap, "%s: LD_PRELOAD cannot carry a path with a space or colon", path);
		return false;
	}
	return true;
}

static bool try_candidate(const char *candidate, char *buf, size_t cap)
{
	char resolved[PATH_MAX];

	if (access(candidate, R_OK) != 0 || !realpath(candidate, resolved))
		return false;
	if (strlen(resolved) >= cap)
		return false;
	strcpy(buf, resolved);
	return true;
}

bool ct_find_library(char *buf, size_t cap, char *why, size_t why_cap)
{
	const char *env = getenv("CRYPTRACE_LIB");

	if (env && *env) {
		/* An explicit choice that does not work is an error, never a silent fallback. */
		if (!try_candidate(env, buf, cap)) {
			snprintf(why, why_cap, "CRYPTRACE_LIB=%s: no readable library there", env);
			return false;
		}
		return preloadable(buf, why, why_cap);
	}

	char exe[PATH_MAX];
	char build_tree[PATH_MAX + 32] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');

		if (slash) {
			*slash = '\0';
			snprintf(build_tree, sizeof(build_tree), "%s/../preload/" CT_LIB_NAME, exe);
			if (try_candidate(build_tree, buf, cap))
				return preloadable(buf, why, why_cap);
		}
	}

	const char *installed = CT_LIBDIR "/" CT_LIB_NAME;

	if (try_candidate(installed, buf, cap))
		return preloadable(buf, why, why_cap);

	snprintf(why, why_cap, "cannot find " CT_LIB_NAME " (looked in $CRYPTRACE_LIB, %s, %s)",
		 build_tree[0] ? build_tree : "the build tree", installed);
	return false;
}
