/* SPDX-License-Identifier: MIT */
/*
 * peek.c - reads of the process's own memory that cannot fault: what reads a library's private
 * structures (a libgcrypt or GnuTLS handle made before `cryptrace attach`, hooks/gcrypt_late.c,
 * hooks/gnutls.c) uses, where a layout other than the one expected would make a plain read
 * follow a pointer that is none. process_vm_readv on the process itself returns EFAULT for an
 * address it cannot read; no ptrace permission is needed for one's own pid.
 */
#include "peek.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

bool ct_peek(const void *addr, void *out, size_t n)
{
	if (!addr || !n)
		return false;
	struct iovec local = { out, n }, remote = { (void *)addr, n };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

bool ct_peek_str_is(const void *addr, const char *s)
{
	size_t n = strlen(s) + 1;
	char buf[64];
	if (n > sizeof(buf))
		return false;
	/* a string near the end of a mapping: only its own bytes are read */
	return ct_peek(addr, buf, n) && !memcmp(buf, s, n);
}
