/* SPDX-License-Identifier: MIT */
/*
 * cmd_serve.c - `cryptrace serve --listen ADDR:PORT TRACEDIR...`: serves GET /metrics for a
 * direct Prometheus scrape (docs/metrics.md). Read-only (GET and HEAD of /metrics, nothing else),
 * on loopback unless --allow-remote, one connection at a time with a bounded request (the head
 * only, at most SERVE_REQUEST_MAX bytes, within SERVE_TIMEOUT_S), the traces read as untrusted
 * data on each scrape (export_collect.c). The export state lives in memory, so counters never go
 * backwards while serve runs; with --state FILE it is also saved after each scrape and read at
 * start, so they do not across a restart either (without it a restart is a reset, which
 * Prometheus's rate() takes).
 * OpenMetrics when the scraper's Accept asks for it, else the text format 0.0.4.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"
#include "tracer.h"

#define SERVE_REQUEST_MAX 8192
#define SERVE_TIMEOUT_S 10

/* "127.0.0.1:9464", "[::1]:9464", "localhost:9464" (a name: its first address) */
static int listen_on(const char *spec, bool allow_remote)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host) || !colon[1]) {
		fprintf(stderr, "cryptrace serve: --listen needs ADDRESS:PORT (127.0.0.1:9464), not '%s'\n",
			spec);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	char *h = host;
	if (h[0] == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = 0;
		h++;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE },
			*ai = NULL;
	int e = getaddrinfo(h, colon + 1, &hints, &ai);
	if (e) {
		fprintf(stderr, "cryptrace serve: --listen %s: %s\n", spec, gai_strerror(e));
		return -1;
	}
	bool loopback =
		ai->ai_family == AF_INET
			? (ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) == 127
			: ai->ai_family == AF_INET6 &&
				  IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
	if (!loopback && !allow_remote) {
		fprintf(stderr,
			"cryptrace serve: --listen %s is not a loopback address: the metrics name this "
			"host's programs; add --allow-remote to serve them to the network\n",
			spec);
		freeaddrinfo(ai);
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
		fprintf(stderr, "cryptrace serve: --listen %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the scraper went away */
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, const char *status, const char *type, const char *body, size_t len, bool head)
{
	char hdr[512];
	int n = snprintf(
		hdr, sizeof(hdr),
		"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		status, type, len, strncmp(status, "405", 3) ? "" : "Allow: GET, HEAD\r\n");
	send_all(fd, hdr, (size_t)n);
	if (!head)
		send_all(fd, body, len);
}

static void error_reply(int fd, const char *status)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%s\n", status);
	respond(fd, status, "text/plain; charset=utf-8", body, (size_t)n, false);
}

/* Reads the request head (to the blank line); 0, or the HTTP status to refuse it with. */
static const char *read_head(int fd, char *buf, size_t cap)
{
	size_t used = 0;
	while (!memmem(buf, used, "\r\n\r\n", 4)) {
		if (used + 1 >= cap)
			return "431 Request Header Fields Too Large";
		ssize_t r = recv(fd, buf + used, cap - 1 - used, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return "408 Request Timeout"; /* closed, or the timeout passed */
		used += (size_t)r;
		buf[used] = 0;
	}
	return NULL;
}

/* The Accept header asks for OpenMetrics (Prometheus asks for it first, then text 0.0.4). */
static bool wants_openmetrics(const char *head)
{
	for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n"))
		if (!strncasecmp(l + 2, "Accept:", 7)) {
			const char *end = strstr(l + 2, "\r\n");
			const char *om = strstr(l + 2, "application/openmetrics-text");
			return om && end && om < end;
		}
	return false;
}

static void serve_one(int fd, struct ct_export_state *st, const char *state_path, char **dirs, int n)
{
	struct timeval tv = { .tv_sec = SERVE_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	char head[SERVE_REQUEST_MAX];
	const char *bad = read_head(fd, head, sizeof(head));
	if (bad) {
		error_reply(fd, bad);
		return;
	}
	char method[8], target[64], version[16];
	if (sscanf(head, "%7s %63s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7)) {
		error_reply(fd, "400 Bad Request");
		return;
	}
	bool head_only = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head_only) {
		error_reply(fd, "405 Method Not Allowed");
		return;
	}
	if (strcmp(target, "/metrics") && strncmp(target, "/metrics?", 9)) {
		error_reply(fd, "404 Not Found");
		return;
	}
	bool om = wants_openmetrics(head);
	char *body = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&body, &len);
	if (!mem) {
		error_reply(fd, "500 Internal Server Error");
		return;
	}
	ct_export_collect(st, dirs, n, om, stderr, mem);
	char msg[600];
	if (state_path && !ct_export_state_save(st, state_path, msg, sizeof(msg)))
		fprintf(stderr, "cryptrace serve: state: %s\n", msg); /* served anyway: kept in memory */
	if (fclose(mem) != 0) {
		free(body);
		error_reply(fd, "500 Internal Server Error");
		return;
	}
	respond(fd, "200 OK",
		om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		   : "text/plain; version=0.0.4; charset=utf-8",
		body, len, head_only);
	free(body);
}

int command_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "allow-remote", no_argument, NULL, 'r' },
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *listen_spec = NULL, *state_path = NULL;
	bool allow_remote = false;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 'r':
			allow_remote = true;
			break;
		case 's':
			state_path = optarg;
			break;
		case 'h':
			ct_usage_serve(stdout);
			return 0;
		default:
			fprintf(stderr, "cryptrace serve: unknown option '%s' (try --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return 2;
		}
	}
	if (!listen_spec) {
		fprintf(stderr, "cryptrace serve: --listen ADDRESS:PORT is required (127.0.0.1:9464)\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "cryptrace serve: no trace directory given (try --help)\n");
		return 2;
	}
	int lock = -1;
	struct ct_export_state *st = NULL;
	char msg[600] = "out of memory";
	if (state_path) {
		lock = ct_export_state_lock(state_path, 0, "serve");
		if (lock < 0)
			return 2;
		st = ct_export_state_load(state_path, msg, sizeof(msg));
	} else {
		st = ct_export_state_new();
	}
	if (!st) {
		fprintf(stderr, "cryptrace serve: %s\n", msg);
		if (lock >= 0)
			close(lock);
		return 2;
	}
	int lfd = listen_on(listen_spec, allow_remote);
	if (lfd < 0) {
		ct_export_state_free(st);
		if (lock >= 0)
			close(lock);
		return 2;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	/* the line a supervisor (or a test) waits for; port 0 asked for any free port */
	fprintf(stderr, "cryptrace serve: listening on http://%s%s%s:%u/metrics\n",
		ss.ss_family == AF_INET6 ? "[" : "", addr, ss.ss_family == AF_INET6 ? "]" : "", port);
	fflush(stderr);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				usleep(100000); /* out of fds for now: try again, not in a busy loop */
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
				continue;
			fprintf(stderr, "cryptrace serve: accept: %s\n", strerror(errno));
			break;
		}
		serve_one(fd, st, state_path, argv + optind, argc - optind);
		close(fd);
	}
	ct_export_state_free(st);
	close(lfd);
	if (lock >= 0)
		close(lock);
	return 2;
}
