/* SPDX-License-Identifier: MIT */
/*
 * slurp.c - reading a pipe or a /proc file whole (the doctor's probe children answer through a
 * pipe, and /proc/crypto, /proc/modules have no size to stat), and writing a buffer whole (the
 * launcher's records into trace files).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracer.h"

char *ct_read_all(int fd, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);

	while (buf) {
		if (n + 1024 > cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown)
				break; /* what was read so far is the answer */
			buf = grown;
			cap *= 2;
		}
		ssize_t got = read(fd, buf + n, cap - n - 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *ct_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (len)
		*len = 0;
	if (fd < 0)
		return NULL;

	char *buf = ct_read_all(fd, len);

	close(fd);
	return buf;
}

bool ct_write_all(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}
