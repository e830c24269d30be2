/* SPDX-License-Identifier: MIT */
/*
 * emul_afalg.c - AF_ALG sockets served in-process. socket() gives a socketpair end (the peer is
 * kept open, so the descriptor is a live socket: poll, fcntl, dup and close work on it), bind
 * picks the mode, setsockopt(SOL_ALG) sets the key on the tfm (ops read it at each request, as op
 * sockets share the kernel's tfm), accept gives another socketpair end. Data follows
 * algif_skcipher / algif_aead: sends (with ALG_SET_OP/IV/ASSOCLEN and MSG_MORE) queue bytes, a
 * read processes them (whole blocks while more is announced), the IV chains. OpenSSL's afalg
 * engine reads with io_submit(IOCB_CMD_PREAD): served at submit time, its eventfd is signalled
 * (IOCB_FLAG_RESFD) and io_getevents returns the completion.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core.h"
#include "emul.h"
#include "kernel/kernel_decode.h"

#define TX_MAX (1u << 20) /* queued bytes per op socket; the kernel's limit is the socket buffer */

struct ct_emul_alg {
	int peer_fd;    /* the other end of our socketpair */
	ino_t peer_ino; /* its inode: a program that closed it (closefrom) may have reused the number */
	int sock_type;  /* as the program asked (socket: SOCK_SEQPACKET...; for the kernel swap) */
	bool is_op;
	/* tfm */
	enum ct_emul_mode mode;
	bool keyed;
	uint32_t authsize;
	struct ct_emul_key key;
	/* op */
	struct ct_emul_alg *tfm;
	bool enc, more, init;
	uint8_t iv[16];
	uint32_t assoclen;
	uint8_t *tx;
	size_t tx_len;
	size_t tx_high; /* the most ever queued: what free has to wipe */
};

static int fail(int e)
{
	errno = e;
	return -1;
}

static ino_t fd_ino(int fd)
{
	struct stat sb;
	return fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode) ? sb.st_ino : 0;
}

static struct ct_emul_alg *new_emul(int type, int *fd_out)
{
	int sv[2];
	int flags = type & (SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (CT_REAL(socketpair)(AF_UNIX, SOCK_SEQPACKET | flags, 0, sv) < 0)
		return NULL;
	struct ct_emul_alg *e = ct_emul_alloc(sizeof(*e));
	if (!e) {
		CT_REAL(close)(sv[0]);
		CT_REAL(close)(sv[1]);
		errno = ENOMEM;
		return NULL;
	}
	e->peer_fd = sv[1];
	e->peer_ino = fd_ino(sv[1]);
	e->sock_type = type;
	*fd_out = sv[0];
	return e;
}

static void free_emul(struct ct_emul_alg *e)
{
	if (!e)
		return;
	/* Close our peer only if the number is still it: never another file the program opened. */
	if (e->peer_fd >= 0 && e->peer_ino && fd_ino(e->peer_fd) == e->peer_ino)
		CT_REAL(close)(e->peer_fd);
	if (e->tx)
		ct_emul_free_used(e->tx, TX_MAX, e->tx_high);
	ct_emul_free(e, sizeof(*e));
}

int ct_emul_alg_socket(int type)
{
	int fd;
	struct ct_emul_alg *e = new_emul(type, &fd);

	if (!e)
		return -1;
	struct ct_kfd_state *st = ct_kfd_new(fd, CT_KFD_ALG_TFM);
	if (!st) {
		free_emul(e);
		CT_REAL(close)(fd);
		return fail(ENFILE);
	}
	st->emul = e;
	return fd;
}

int ct_emul_alg_bind(int fd, struct ct_kfd_state *st, const struct sockaddr *addr, socklen_t len)
{
	struct ct_emul_alg *e = st->emul;
	struct ct_alg_addr a;

	if (!addr)
		return fail(EFAULT);
	if (e->mode != CT_EM_NONE)
		return fail(EINVAL); /* bound already */
	/* The kernel wants family, type, feat and mask (2 + 14 + 4 + 4 bytes) before any name. */
	if (len < 24)
		return fail(EINVAL);
	ct_alg_decode_addr(addr, len, &a);
	enum ct_emul_mode m = ct_emul_mode_of_alg(a.name);
	bool aead = !strcmp(a.type, "aead"), sk = !strcmp(a.type, "skcipher");
	if (m != CT_EM_NONE && ((m == CT_EM_GCM && aead) || (m != CT_EM_GCM && sk)) &&
	    ct_emul_mode_routed(m, 0)) {
		e->mode = m;
		e->authsize = 16; /* gcm(aes)'s maximum, the kernel's default */
		return 0;
	}
	/* Not ours: the kernel's, on the same descriptor number. */
	int real = CT_REAL(socket)(AF_ALG, e->sock_type, 0);
	if (real < 0)
		return fail(ENOENT);
	int r = CT_REAL(dup3)(real, fd, e->sock_type & SOCK_CLOEXEC ? O_CLOEXEC : 0);
	CT_REAL(close)(real);
	if (r < 0)
		return -1;
	st->emul = NULL;
	free_emul(e);
	return CT_REAL(bind)(fd, addr, len);
}

int ct_emul_alg_setsockopt(struct ct_kfd_state *st, int optname, const void *optval, socklen_t len)
{
	struct ct_emul_alg *e = st->emul;

	if (e->is_op)
		return fail(EOPNOTSUPP); /* an op socket has no setsockopt, as in the kernel */
	switch (optname) {
	case CT_ALG_SET_KEY: {
		uint8_t key[64];
		if (e->mode == CT_EM_NONE)
			return fail(ENOPROTOOPT);
		if (len > sizeof(key))
			return fail(EINVAL);
		if (!optval)
			return fail(EFAULT);
		memcpy(key, optval, len);
		struct ct_emul_key nk;
		int r = ct_emul_key_set(&nk, e->mode, key, len);
		explicit_bzero(key, sizeof(key));
		if (r)
			return fail(-r);
		e->key = nk;
		e->keyed = true;
		ct_emul_key_wipe(&nk);
		return 0;
	}
	case CT_ALG_SET_AEAD_AUTHSIZE:
		if (e->mode != CT_EM_GCM)
			return fail(ENOPROTOOPT);
		if (len != 4 && len != 8 && (len < 12 || len > 16))
			return fail(EINVAL);
		e->authsize = len;
		return 0;
	default:
		return fail(ENOPROTOOPT);
	}
}

int ct_emul_alg_accept(struct ct_kfd_state *st, int flags, int *peer)
{
	struct ct_emul_alg *e = st->emul;
	int sv[2];

	if (e->mode == CT_EM_NONE)
		return fail(EINVAL); /* not bound */
	if (CT_REAL(socketpair)(AF_UNIX, SOCK_SEQPACKET | (flags & (SOCK_CLOEXEC | SOCK_NONBLOCK)), 0, sv) <
	    0)
		return -1;
	*peer = sv[1];
	return sv[0];
}

bool ct_emul_alg_attach_op(struct ct_kfd_state *opst, struct ct_kfd_state *tfm, int peer)
{
	struct ct_emul_alg *op = ct_emul_alloc(sizeof(*op));

	if (!op)
		return false;
	op->tx = ct_emul_alloc(TX_MAX); /* MAP_PRIVATE anonymous: pages cost only once touched */
	if (!op->tx) {
		ct_emul_free(op, sizeof(*op));
		return false;
	}
	op->peer_fd = peer;
	op->peer_ino = fd_ino(peer);
	op->is_op = true;
	op->tfm = tfm->emul;
	op->mode = op->tfm->mode;
	op->enc = true;
	opst->emul = op;
	return true;
}

/* ---- data path ----------------------------------------------------------------------------- */

static size_t ivsize(enum ct_emul_mode m)
{
	return m == CT_EM_ECB ? 0 : m == CT_EM_GCM ? 12 : 16;
}

/* Control messages first (a bad one fails the whole send, as in af_alg_sendmsg). */
static int take_cmsgs(struct ct_emul_alg *e, const struct msghdr *msg)
{
	if (!msg || !msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return 0;
	bool init = false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level != SOL_ALG)
			continue;
		size_t dlen = c->cmsg_len - CMSG_LEN(0);
		const uint8_t *d = CMSG_DATA(c);
		if (c->cmsg_type == CT_ALG_SET_OP) {
			uint32_t op;
			if (dlen < 4)
				return -EINVAL;
			memcpy(&op, d, 4);
			if (op > 1)
				return -EINVAL;
			e->enc = op == 1; /* ALG_OP_ENCRYPT = 1, ALG_OP_DECRYPT = 0 */
			init = true;
		} else if (c->cmsg_type == CT_ALG_SET_IV) {
			uint32_t n;
			if (dlen < 4)
				return -EINVAL;
			memcpy(&n, d, 4);
			if (n != ivsize(e->mode) || dlen < 4 + n)
				return -EINVAL;
			memcpy(e->iv, d + 4, n);
		} else if (c->cmsg_type == CT_ALG_SET_AEAD_ASSOCLEN) {
			if (dlen < 4)
				return -EINVAL;
			memcpy(&e->assoclen, d, 4);
		} else {
			return -EINVAL;
		}
	}
	(void)init;
	return 0;
}

ssize_t ct_emul_alg_send(struct ct_kfd_state *st, const struct msghdr *msg, int flags)
{
	struct ct_emul_alg *e = st->emul;

	if (!e->is_op)
		return fail(ENOTCONN);
	if (!e->tfm->keyed)
		return fail(ENOKEY);
	if (e->init && !e->more && e->tx_len)
		return fail(EINVAL); /* the previous request was complete but not read */
	int r = take_cmsgs(e, msg);
	if (r)
		return fail(-r);
	e->init = true;
	size_t done = 0;
	for (size_t i = 0; msg && i < (size_t)msg->msg_iovlen; i++) {
		size_t n = msg->msg_iov[i].iov_len, room = TX_MAX - e->tx_len;
		if (n > room)
			n = room;
		if (n && !msg->msg_iov[i].iov_base)
			return done ? (ssize_t)done : fail(EFAULT);
		memcpy(e->tx + e->tx_len, msg->msg_iov[i].iov_base, n);
		e->tx_len += n;
		if (e->tx_len > e->tx_high)
			e->tx_high = e->tx_len;
		done += n;
		if (n < msg->msg_iov[i].iov_len)
			break;
	}
	if (e->tx_len > e->tx_high)
		e->tx_high = e->tx_len;
	e->more = flags & MSG_MORE;
	return (ssize_t)done;
}

ssize_t ct_emul_alg_splice_in(struct ct_kfd_state *st, int fd_in, size_t len, unsigned flags)
{
	struct ct_emul_alg *e = st->emul;

	if (!e->is_op)
		return fail(ENOTCONN);
	if (!e->tfm->keyed)
		return fail(ENOKEY);
	if (len > TX_MAX - e->tx_len)
		len = TX_MAX - e->tx_len;
	/* Like splice from a pipe: what the pipe holds, up to len, in one read (a pipe read returns
	 * all it has); it waits only while the pipe is empty, and not with SPLICE_F_NONBLOCK. */
	if (flags & 2 /* SPLICE_F_NONBLOCK */) {
		struct pollfd p = { .fd = fd_in, .events = POLLIN };
		if (poll(&p, 1, 0) == 0)
			return fail(EAGAIN);
	}
	ssize_t n = len ? CT_REAL(read)(fd_in, e->tx + e->tx_len, len) : 0;
	if (n <= 0)
		return n;
	size_t done = (size_t)n;
	e->tx_len += done;
	if (e->tx_len > e->tx_high)
		e->tx_high = e->tx_len;
	e->init = true;
	e->more = flags & 4 /* SPLICE_F_MORE */;
	return (ssize_t)done;
}

/* Copies src into the iovecs. */
static void scatter(const struct iovec *iov, size_t n, const uint8_t *src, size_t len)
{
	for (size_t i = 0; i < n && len; i++) {
		size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;
		memcpy(iov[i].iov_base, src, k);
		src += k;
		len -= k;
	}
}

static size_t iov_room(const struct iovec *iov, size_t n)
{
	size_t sum = 0;
	for (size_t i = 0; iov && i < n; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			break;
		sum += iov[i].iov_len;
	}
	return sum;
}

static void consume(struct ct_emul_alg *e, size_t n)
{
	memmove(e->tx, e->tx + n, e->tx_len - n);
	e->tx_len -= n;
}

static ssize_t recv_aead(struct ct_emul_alg *e, const struct iovec *iov, size_t n, size_t room)
{
	size_t as = e->tfm->authsize, used = e->tx_len, aad = e->assoclen;

	if (e->more)
		return fail(EINVAL); /* an AEAD request needs all of its data */
	if (used < aad + (e->enc ? 0 : as))
		return fail(EINVAL);
	size_t clen = used - aad - (e->enc ? 0 : as), outlen = aad + clen + (e->enc ? as : 0);
	if (room < outlen || outlen > TX_MAX)
		return fail(EINVAL);
	/* In place in the queue (no allocation, no syscall): AAD || data || tag. */
	uint8_t *buf = e->tx, tag[16];
	if (!e->enc)
		memcpy(tag, buf + aad + clen, as);
	int r = ct_emul_gcm(&e->tfm->key, e->enc, e->iv, 12, buf, aad, buf + aad, buf + aad, clen, tag, as);
	if (!r && e->enc) {
		memcpy(buf + aad + clen, tag, as);
		if (outlen > e->tx_high)
			e->tx_high = outlen;
	}
	if (!r)
		scatter(iov, n, buf, outlen);
	explicit_bzero(tag, sizeof(tag));
	e->tx_len = 0;
	e->init = false;
	return r ? fail(-r) : (ssize_t)outlen;
}

/* Nothing is queued: the kernel waits for data, unless the caller may not wait. Waiting here
 * would hang a program whose own thread is the only sender, so that case fails at once. */
static ssize_t recv_nothing_queued(const struct ct_emul_alg *e, int fd, int flags)
{
	if (e->more || (flags & MSG_DONTWAIT) ||
	    (fd >= 0 && CT_REAL(fcntl) && (CT_REAL(fcntl)(fd, F_GETFL) & O_NONBLOCK)))
		return fail(EAGAIN);
	return fail(EINVAL);
}

ssize_t ct_emul_alg_recv(struct ct_kfd_state *st, const struct iovec *iov, size_t n, int fd, int flags)
{
	struct ct_emul_alg *e = st->emul;

	if (!e->is_op)
		return fail(ENOTCONN);
	if (!e->tfm->keyed)
		return fail(ENOKEY);
	if (!e->tx_len)
		return recv_nothing_queued(e, fd, flags);
	size_t room = iov_room(iov, n);
	if (e->mode == CT_EM_GCM)
		return recv_aead(e, iov, n, room);
	size_t len = e->tx_len < room ? e->tx_len : room;
	/* Whole blocks while more data may follow (or the reader took less than was queued). */
	if (e->mode != CT_EM_XTS && (e->more || len < e->tx_len))
		len &= ~(size_t)(CT_AES_BLOCK - 1);
	if (!len)
		return fail(EINVAL);
	int r;
	if (n == 1) {
		r = ct_emul_skcipher(&e->tfm->key, e->enc, e->iv, e->tx, iov[0].iov_base, len);
	} else {
		r = ct_emul_skcipher(&e->tfm->key, e->enc, e->iv, e->tx, e->tx, len);
		if (!r)
			scatter(iov, n, e->tx, len);
	}
	if (r)
		return fail(-r);
	consume(e, len);
	if (!e->tx_len)
		e->init = false;
	return (ssize_t)len;
}

/* ---- AIO ----------------------------------------------------------------------------------- */

#define AIO_DONE 256u
static struct {
	unsigned long ctx;
	struct io_event ev;
} aio_done[AIO_DONE];
static unsigned aio_count;
static atomic_flag aio_lock = ATOMIC_FLAG_INIT;

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&aio_lock, memory_order_acquire))
		;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&aio_lock, memory_order_release);
}

static struct ct_kfd_state *emul_op(int fd)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);
	return st && st->kind == CT_KFD_ALG_OP && st->emul ? st : NULL;
}

long ct_emul_aio_submit(unsigned long ctx, long nr, struct iocb **iocbpp, bool *served)
{
	*served = false;
	if (nr <= 0 || !iocbpp || !iocbpp[0] || !emul_op((int)iocbpp[0]->aio_fildes))
		return 0;
	*served = true;
	long i = 0;
	for (; i < nr; i++) {
		struct iocb *cb = iocbpp[i];
		struct ct_kfd_state *st = cb ? emul_op((int)cb->aio_fildes) : NULL;
		if (!st)
			break; /* a short submit: the rest goes to the kernel on the next call */
		if (cb->aio_lio_opcode != IOCB_CMD_PREAD && cb->aio_lio_opcode != IOCB_CMD_PREADV)
			return i ? i : fail(EINVAL);
		lock();
		bool full = aio_count == AIO_DONE;
		unlock();
		if (full)
			return i ? i : fail(EAGAIN);
		struct iovec one = { .iov_base = (void *)(uintptr_t)cb->aio_buf, .iov_len = cb->aio_nbytes };
		const struct iovec *iov = &one;
		size_t niov = 1;
		if (cb->aio_lio_opcode == IOCB_CMD_PREADV) {
			iov = (const struct iovec *)(uintptr_t)cb->aio_buf;
			niov = cb->aio_nbytes;
		}
		ssize_t r = ct_emul_alg_recv(st, iov, niov, -1, 0);
		struct io_event ev = { .data = cb->aio_data,
				       .obj = (uint64_t)(uintptr_t)cb,
				       .res = r < 0 ? -errno : r };
		lock();
		aio_done[aio_count].ctx = ctx;
		aio_done[aio_count].ev = ev;
		aio_count++;
		unlock();
		if (cb->aio_flags & IOCB_FLAG_RESFD) {
			uint64_t one_ev = 1; /* what the kernel adds to the eventfd at completion */
			(void)!CT_REAL(write)((int)cb->aio_resfd, &one_ev, sizeof(one_ev));
		}
	}
	return i;
}

long ct_emul_aio_getevents(unsigned long ctx, long min_nr, long nr, struct io_event *events, bool *served)
{
	(void)min_nr;
	long got = 0;

	*served = false;
	if (nr <= 0 || !events)
		return 0;
	lock();
	for (unsigned i = 0; i < aio_count && got < nr;) {
		if (aio_done[i].ctx != ctx) {
			i++;
			continue;
		}
		events[got++] = aio_done[i].ev;
		aio_done[i] = aio_done[--aio_count]; /* order across requests is not kept, as in AIO */
	}
	unlock();
	*served = got > 0;
	return got;
}

void ct_emul_release(struct ct_kfd_state *st)
{
	void *p = st->emul;

	st->emul = NULL;
	if (!p)
		return;
	if (st->kind == CT_KFD_CDEV || st->kind == CT_KFD_CDEV_CLONE)
		ct_emul_cdev_release(p);
	else
		free_emul(p);
}
