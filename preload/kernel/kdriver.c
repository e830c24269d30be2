/* SPDX-License-Identifier: MIT */
/*
 * kdriver.c - /proc/crypto read at bind time, once per (type, name), the answers cached in a
 * small fixed table. The file is read with the real open/read into an mmap'd buffer (no malloc
 * in hooks); a kernel that hides /proc/crypto leaves the driver unknown, never fails the bind.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"
#include "kdriver.h"

#define CACHE_SLOTS 32
#define PROC_CRYPTO_MAX (4u << 20)

static struct {
	char type[16], name[129];
	bool found;
	struct ct_kdrv drv;
} cache[CACHE_SLOTS];
static unsigned cache_used;
static atomic_flag cache_lock = ATOMIC_FLAG_INIT;

uint32_t ct_kdriver_path_flag(enum ct_kdrv_class cls)
{
	switch (cls) {
	case CT_KDRV_HW:
		return CT_PATH_HW_DRIVER;
	case CT_KDRV_CPU:
		return CT_PATH_CPU_DRIVER;
	case CT_KDRV_SW:
		return CT_PATH_SW_DRIVER;
	default:
		return 0;
	}
}

/* /proc files report size 0: read until EOF, doubling an mmap'd buffer. */
static bool read_proc_crypto(char **text, size_t *len, size_t *cap)
{
	int fd = CT_REAL(open)("/proc/crypto", O_RDONLY | O_CLOEXEC);
	size_t n = 0, size = 64 * 1024;
	char *buf;

	if (fd < 0)
		return false;
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	while (buf != MAP_FAILED) {
		ssize_t r = CT_REAL(read)(fd, buf + n, size - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == size) {
			if (size * 2 > PROC_CRYPTO_MAX)
				break;
			char *bigger = mremap(buf, size, size * 2, MREMAP_MAYMOVE);
			if (bigger == MAP_FAILED)
				break;
			buf = bigger;
			size *= 2;
		}
	}
	CT_REAL(close)(fd);
	if (buf == MAP_FAILED)
		return false;
	*text = buf;
	*len = n;
	*cap = size;
	return true;
}

bool ct_kdriver_resolve(const char *afalg_type, const char *name, struct ct_kdrv *out)
{
	memset(out, 0, sizeof(*out));
	if (!name || !*name)
		return false;
	while (atomic_flag_test_and_set_explicit(&cache_lock, memory_order_acquire))
		;
	for (unsigned i = 0; i < cache_used; i++) {
		if (strcmp(cache[i].type, afalg_type ? afalg_type : "") || strcmp(cache[i].name, name))
			continue;
		bool found = cache[i].found;
		*out = cache[i].drv;
		atomic_flag_clear_explicit(&cache_lock, memory_order_release);
		return found;
	}
	atomic_flag_clear_explicit(&cache_lock, memory_order_release);

	/* Outside the lock: reading the file takes a few hundred microseconds. Two threads binding
	 * the same new name both read it; both get the same answer. */
	char *text;
	size_t len, cap;
	bool found = false;
	if (read_proc_crypto(&text, &len, &cap)) {
		found = ct_proc_crypto_resolve(text, len, name, afalg_type, out);
		munmap(text, cap);
	}
	while (atomic_flag_test_and_set_explicit(&cache_lock, memory_order_acquire))
		;
	if (cache_used < CACHE_SLOTS) {
		unsigned i = cache_used++;
		snprintf(cache[i].type, sizeof(cache[i].type), "%s", afalg_type ? afalg_type : "");
		snprintf(cache[i].name, sizeof(cache[i].name), "%s", name);
		cache[i].found = found;
		cache[i].drv = *out;
	}
	atomic_flag_clear_explicit(&cache_lock, memory_order_release);
	return found;
}
