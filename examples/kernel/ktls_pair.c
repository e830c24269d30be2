/* SPDX-License-Identifier: MIT */
/*
 * ktls_pair.c - a kernel TLS (kTLS) client of its own: a TCP connection on loopback whose sending
 * end is handed to the kernel's TLS layer (setsockopt TCP_ULP "tls", then SOL_TLS TLS_TX with a
 * fixed test key), and, with --rx, whose receiving end decrypts in the kernel too (TLS_RX with
 * the same key). It sends --bytes through one data call (--via), optionally one control record
 * (--alert: an alert sent with a TLS_SET_RECORD_TYPE cmsg), and checks what arrives: plaintext
 * equal to what was sent (--rx), or that many bytes plus each record's framing (without --rx).
 *
 * The key, IV, salt and record sequence are fixed, public test values: the tests scan the
 * trace for them (tests/lib/ctlib/secretscan.py).
 *
 * Exit status: 0 done; 1 wrong data or a failed transfer; 2 the kernel refused kTLS set-up (the
 * failed call and errno on stderr: ENOENT from TCP_ULP when the tls module is not loaded); with
 * --keep-going a failed TCP_ULP is not fatal and TLS_TX is still asked for (as OpenSSL 3.0 does).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

/* The fixed test secrets (tests/ktls/ scans traces for them). */
static const unsigned char test_key[32] = "KTLS-TEST-KEY-0123456789abcdef!!";
static const unsigned char test_iv[12] = "KTLS-TESTIV!";
static const unsigned char test_salt[4] = "SALT";
static const unsigned char test_seq[8] = "RECSEQ01";

struct opts {
	int tls13;
	const char *cipher;
	size_t bytes;
	const char *via, *rx_via;
	int rx, alert, keep_going, bad_len;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: ktls_pair [--tls12|--tls13] [--cipher aes-128-gcm|aes-256-gcm|aes-128-ccm|"
		"chacha20-poly1305] [--bytes N] [--via send|write|sendmsg|writev|sendfile|splice] "
		"[--rx [--rx-via recv|read|recvmsg|readv]] [--alert] [--keep-going] [--bad-len]\n");
	exit(64);
}

/* The crypto_info for the cipher, in buf; returns its length (0: unknown cipher). */
static size_t crypto_info(const struct opts *o, unsigned char *buf)
{
	struct tls_crypto_info h = { .version = o->tls13 ? TLS_1_3_VERSION : TLS_1_2_VERSION };
	size_t ivlen = 8, keylen, saltlen = 4;

	if (!strcmp(o->cipher, "aes-128-gcm"))
		h.cipher_type = TLS_CIPHER_AES_GCM_128, keylen = 16;
	else if (!strcmp(o->cipher, "aes-256-gcm"))
		h.cipher_type = TLS_CIPHER_AES_GCM_256, keylen = 32;
	else if (!strcmp(o->cipher, "aes-128-ccm"))
		h.cipher_type = TLS_CIPHER_AES_CCM_128, keylen = 16;
	else if (!strcmp(o->cipher, "chacha20-poly1305"))
		h.cipher_type = TLS_CIPHER_CHACHA20_POLY1305, keylen = 32, ivlen = 12, saltlen = 0;
	else
		return 0;
	size_t n = 0;
	memcpy(buf, &h, sizeof(h)), n += sizeof(h);
	memcpy(buf + n, test_iv, ivlen), n += ivlen;
	memcpy(buf + n, test_key, keylen), n += keylen;
	memcpy(buf + n, test_salt, saltlen), n += saltlen;
	memcpy(buf + n, test_seq, 8), n += 8;
	return n;
}

static int set_up(int fd, const struct opts *o, int opt, const char *who)
{
	unsigned char info[64];
	size_t len = crypto_info(o, info);

	if (!len)
		usage();
	if (setsockopt(fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) < 0) {
		fprintf(stderr, "ktls_pair: %s: setsockopt(TCP_ULP, \"tls\"): %s\n", who, strerror(errno));
		if (!o->keep_going)
			return -1;
	}
	if (setsockopt(fd, SOL_TLS, opt, info, (socklen_t)(len + (o->bad_len ? 1 : 0))) < 0) {
		fprintf(stderr, "ktls_pair: %s: setsockopt(SOL_TLS, %s): %s\n", who,
			opt == TLS_TX ? "TLS_TX" : "TLS_RX", strerror(errno));
		return -1;
	}
	return 0;
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 3);
}

/* Sends data through one call of kind via (looping on short sends); returns 0 or -1. */
static int send_all(int fd, const unsigned char *data, size_t n, const char *via)
{
	size_t done = 0;
	int file = -1, pipefd[2] = { -1, -1 };

	if (!strcmp(via, "sendfile")) {
		char path[] = "/tmp/ktls_pair.XXXXXX";
		file = mkstemp(path);
		if (file < 0 || unlink(path) < 0 || write(file, data, n) != (ssize_t)n)
			return -1;
	} else if (!strcmp(via, "splice") && pipe(pipefd) < 0) {
		return -1;
	}
	while (done < n) {
		ssize_t r;
		size_t left = n - done;
		if (!strcmp(via, "send")) {
			r = send(fd, data + done, left, 0);
		} else if (!strcmp(via, "write")) {
			r = write(fd, data + done, left);
		} else if (!strcmp(via, "sendmsg")) {
			struct iovec iov = { (void *)(data + done), left };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
			r = sendmsg(fd, &m, 0);
		} else if (!strcmp(via, "writev")) {
			struct iovec iov = { (void *)(data + done), left };
			r = writev(fd, &iov, 1);
		} else if (!strcmp(via, "sendfile")) {
			off_t off = (off_t)done;
			r = sendfile(fd, file, &off, left);
		} else if (!strcmp(via, "splice")) {
			size_t chunk = left < 16384 ? left : 16384;
			if (write(pipefd[1], data + done, chunk) != (ssize_t)chunk)
				return -1;
			r = splice(pipefd[0], NULL, fd, NULL, chunk, 0);
		} else {
			usage();
			return -1;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "ktls_pair: %s: %s\n", via, strerror(errno));
			return -1;
		}
		done += (size_t)r;
	}
	if (file >= 0)
		close(file);
	if (pipefd[0] >= 0)
		close(pipefd[0]), close(pipefd[1]);
	return 0;
}

/* One alert record (close_notify) sent as a control record. */
static int send_alert(int fd)
{
	unsigned char alert[2] = { 1, 0 }; /* warning, close_notify */
	union {
		char buf[CMSG_SPACE(1)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct iovec iov = { alert, sizeof(alert) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_TLS;
	c->cmsg_type = TLS_SET_RECORD_TYPE;
	c->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(c) = 21;
	return sendmsg(fd, &m, 0) == (ssize_t)sizeof(alert) ? 0 : -1;
}

static ssize_t recv_some(int fd, unsigned char *buf, size_t n, const char *via)
{
	if (!strcmp(via, "read"))
		return read(fd, buf, n);
	if (!strcmp(via, "readv")) {
		struct iovec iov = { buf, n };
		return readv(fd, &iov, 1);
	}
	if (!strcmp(via, "recvmsg")) {
		union {
			char buf[CMSG_SPACE(1)];
			struct cmsghdr align;
		} u;
		struct iovec iov = { buf, n };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf) };
		ssize_t r = recvmsg(fd, &m, 0);
		struct cmsghdr *c = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
		/* a record that is not application data (the alert) says so in a cmsg: not data */
		if (c && c->cmsg_level == SOL_TLS && c->cmsg_type == TLS_GET_RECORD_TYPE &&
		    *CMSG_DATA(c) != 23)
			return errno = EIO, -1;
		return r;
	}
	return recv(fd, buf, n, 0);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.tls13 = 1, .cipher = "aes-256-gcm", .bytes = 100000, .via = "send", .rx_via = "recv"
	};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tls12"))
			o.tls13 = 0;
		else if (!strcmp(argv[i], "--tls13"))
			o.tls13 = 1;
		else if (!strcmp(argv[i], "--cipher") && i + 1 < argc)
			o.cipher = argv[++i];
		else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			o.bytes = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--via") && i + 1 < argc)
			o.via = argv[++i];
		else if (!strcmp(argv[i], "--rx-via") && i + 1 < argc)
			o.rx_via = argv[++i];
		else if (!strcmp(argv[i], "--rx"))
			o.rx = 1;
		else if (!strcmp(argv[i], "--alert"))
			o.alert = 1;
		else if (!strcmp(argv[i], "--keep-going"))
			o.keep_going = 1;
		else if (!strcmp(argv[i], "--bad-len"))
			o.bad_len = 1;
		else
			usage();
	}
	int lsn = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (lsn < 0 || setsockopt(lsn, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lsn, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lsn, 1) < 0 ||
	    getsockname(lsn, (struct sockaddr *)&sa, &sl) < 0) {
		perror("ktls_pair: listen");
		return 1;
	}
	int tx = socket(AF_INET, SOCK_STREAM, 0);
	if (tx < 0 || connect(tx, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("ktls_pair: connect");
		return 1;
	}
	int rx = accept(lsn, NULL, NULL);
	if (rx < 0) {
		perror("ktls_pair: accept");
		return 1;
	}
	close(lsn);
	if (set_up(tx, &o, TLS_TX, "sender") < 0 || (o.rx && set_up(rx, &o, TLS_RX, "receiver") < 0))
		return 2;
	unsigned char *data = malloc(o.bytes ? o.bytes : 1), *got = malloc(o.bytes + 65536);
	if (!data || !got)
		return 1;
	fill(data, o.bytes);
	if (send_all(tx, data, o.bytes, o.via) < 0 || (o.alert && send_alert(tx) < 0))
		return 1;
	shutdown(tx, SHUT_WR);
	size_t n = 0;
	for (;;) {
		ssize_t r = recv_some(rx, got + n, o.bytes + 65536 - n, o.rx ? o.rx_via : "recv");
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && o.rx && o.alert && errno == EIO && n == o.bytes)
			break; /* recv/read refuse a control record: the alert that follows the data */
		if (r <= 0 || n + (size_t)r > o.bytes + 65536) {
			if (r < 0)
				fprintf(stderr, "ktls_pair: receive: %s\n", strerror(errno));
			break;
		}
		n += (size_t)r;
	}
	if (o.rx) {
		if (n != o.bytes || memcmp(got, data, o.bytes)) {
			fprintf(stderr, "ktls_pair: received %zu bytes, not the %zu sent\n", n, o.bytes);
			return 1;
		}
		printf("sent %zu bytes with kTLS %s %s, received and decrypted %zu bytes\n", o.bytes,
		       o.tls13 ? "TLS1.3" : "TLS1.2", o.cipher, n);
	} else {
		printf("sent %zu bytes with kTLS %s %s, %zu bytes on the wire\n", o.bytes,
		       o.tls13 ? "TLS1.3" : "TLS1.2", o.cipher, n);
	}
	free(data);
	free(got);
	close(tx);
	close(rx);
	return 0;
}
