/* SPDX-License-Identifier: MIT */
/*
 * syslog.c - one line to the host's log (the syslog socket, /dev/log) for what an operator of
 * the always-on mode must see without having set CRYPTRACE_LOG: a refused spool (spool.c).
 *
 * Not syslog(3): that shares openlog()'s state and its socket with the traced program, which
 * may use syslog itself; closelog() here would close the program's connection. A datagram of
 * its own, sent and closed, touches nothing of the program's. The real socket functions are
 * called (CT_REAL), not our own hooks of them. CRYPTRACE_SYSLOG names another socket (the
 * tests' receiver) or, empty or "none", turns it off.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core.h"
#include "internal.h"

#define SYSLOG_SOCKET "/dev/log"
#define LOG_AUTH_WARNING "<36>" /* facility auth (4) x 8 + severity warning (4): RFC 3164 */

void ct_syslog(const char *fmt, ...)
{
	const char *path = secure_getenv("CRYPTRACE_SYSLOG");
	if (!path)
		path = SYSLOG_SOCKET;
	if (!*path || !strcmp(path, "none"))
		return;
	struct sockaddr_un to = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(to.sun_path))
		return;
	memcpy(to.sun_path, path, strlen(path) + 1);
	int saved = errno;
	char line[512];
	int n = snprintf(line, sizeof(line), LOG_AUTH_WARNING "cryptrace[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 1)
		len = sizeof(line) - 1;
	if (CT_REAL(socket) && CT_REAL(sendto) && CT_REAL(close)) {
		int fd = CT_REAL(socket)(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			ssize_t w = CT_REAL(sendto)(fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL,
						    (const struct sockaddr *)&to, sizeof(to));
			(void)w; /* no log daemon: nothing to do about it */
			CT_REAL(close)(fd);
		}
	}
	errno = saved;
}
