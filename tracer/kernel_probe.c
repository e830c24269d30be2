/* SPDX-License-Identifier: MIT */
/*
 * kernel_probe.c - whether the kernel's two crypto interfaces can be reached from here: an
 * AF_ALG socket, and /dev/crypto (cryptodev-linux). `compare` picks its default routes from
 * them and `doctor` reports them; both ask the same way, by opening one and closing it again.
 * The doctor also binds AF_ALG sockets to algorithms (which instantiates their templates).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tracer.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

/* fd is what socket() or open() returned: closes it, and says whether it was one. */
static bool usable(int fd, int *err)
{
	int e = fd < 0 ? errno : 0;

	if (fd >= 0)
		close(fd);
	if (err)
		*err = e;
	return fd >= 0;
}

bool ct_afalg_usable(int *err)
{
	return usable(socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), err);
}

bool ct_cryptodev_usable(int *err)
{
	return usable(open("/dev/crypto", O_RDWR | O_CLOEXEC), err);
}

int ct_afalg_bind(const char *type, const char *alg)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", alg);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}
