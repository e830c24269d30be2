/* SPDX-License-Identifier: MIT */
/*
 * emul.h - kernel crypto interfaces (/dev/crypto ioctls, AF_ALG sockets) served in-process by the
 * aesni backend when CRYPTRACE_ROUTE sends the cipher to "aesni" ("emulation"). The program keeps
 * real descriptors (/dev/null for the device, a socketpair end for each socket), so poll, close,
 * dup and fcntl behave; only the crypto requests are answered here instead of by the kernel.
 * The hook files keep tracing exactly as for the kernel: they call these instead of the real
 * syscall when a descriptor's state has an emulation attached (ct_kfd_state.emul).
 */
#ifndef CT_EMUL_H
#define CT_EMUL_H

#include <linux/aio_abi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "aesni.h"
#include "kfd.h"

/* ---- the cipher core (emul_cipher.c) ------------------------------------------------------- */

enum ct_emul_mode { CT_EM_NONE = 0, CT_EM_ECB, CT_EM_CBC, CT_EM_CTR, CT_EM_XTS, CT_EM_GCM };

struct ct_emul_key {
	uint8_t mode;    /* enum ct_emul_mode */
	uint32_t keylen; /* bytes, as the program gave it (XTS: both halves) */
	union {
		struct {
			struct ct_aes_key k1, k2; /* XTS: data key, tweak key */
		};
		struct ct_aes_gcm gcm; /* the key part only: copied per message */
	};
};

/* "cbc(aes)" -> CT_EM_CBC ...; CT_EM_NONE for anything else (the kernel would say ENOENT). */
enum ct_emul_mode ct_emul_mode_of_alg(const char *name);
/* CT_CRYPTO_AES_CBC -> CT_EM_CBC ...; CT_EM_NONE otherwise. */
enum ct_emul_mode ct_emul_mode_of_cdev(uint32_t cipher);
/* "cbc", "ctr", ... */
const char *ct_emul_mode_name(enum ct_emul_mode m);
/* Expands key for mode; -EINVAL for a length the kernel would refuse, -ENOSYS without AES-NI. */
int ct_emul_key_set(struct ct_emul_key *k, enum ct_emul_mode mode, const uint8_t *key, size_t len);
void ct_emul_key_wipe(struct ct_emul_key *k);
/* One skcipher request as the kernel does it: iv is updated for chaining (CBC: last ciphertext
 * block, CTR: the counter after ceil(len/16) blocks); in == out allowed. 0 or -EINVAL. */
int ct_emul_skcipher(const struct ct_emul_key *k, bool enc, uint8_t iv[16], const uint8_t *in, uint8_t *out,
		     size_t len);
/* One GCM message; encrypt writes taglen bytes to tag, decrypt checks them (-EBADMSG). */
int ct_emul_gcm(const struct ct_emul_key *k, bool enc, const uint8_t *iv, size_t ivlen, const uint8_t *aad,
		size_t aadlen, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t taglen);

/* Page-granular cold allocations (the hooks never call malloc). */
void *ct_emul_alloc(size_t size);
void ct_emul_free(void *p, size_t size);
/* The same when only the first `used` bytes were ever written (a large, mostly untouched buffer). */
void ct_emul_free_used(void *p, size_t size, size_t used);

/* ---- the route (emul_route.c) -------------------------------------------------------------- */

/* A route table with an aesni rule, and AES-NI on this CPU: kernel interfaces are intercepted.
 * When the table wants aesni but the CPU has none, one CT_EV_FALLBACK says so (false). */
bool ct_emul_enabled(void);
/* Non-zero on this thread: open("/dev/crypto") and socket(AF_ALG) get the kernel's descriptors,
 * never emulated ones. For the preload's own kernel routes (EVP -> afalg/cryptodev), which must
 * reach the real kernel: set it around their open/socket calls. */
extern __thread int ct_emul_bypass;
/* Does the route send this cipher ("aes-128-cbc") to aesni, in either direction, at any size? */
bool ct_emul_routed(const char *cipher);
/* The same for a kernel mode at the key length given (0: the smallest key of that mode). */
bool ct_emul_mode_routed(enum ct_emul_mode m, uint32_t keylen);
/* "aes-128-cbc" for (mode, key bytes). */
void ct_emul_cipher_name(enum ct_emul_mode m, uint32_t keylen, char *buf, size_t cap);

/* ---- /dev/crypto (emul_cdev.c) ------------------------------------------------------------- */

/* The descriptor that stands for an emulated /dev/crypto: open("/dev/null", O_RDWR | cloexec). */
int ct_emul_cdev_open(int flags);
/* st (a device or CRIOGET fd) is emulated; device_missing: no kernel device behind it. */
bool ct_emul_cdev_attach(struct ct_kfd_state *st, bool device_missing);
/* The ioctl if the emulation serves it (*served = true; returns its result, errno set), else
 * *served = false and the caller passes it to the kernel. */
int ct_emul_cdev_ioctl(struct ct_kfd_state *st, unsigned long request, void *arg, bool *served);
bool ct_emul_cdev_ours(const struct ct_kfd_state *st, uint32_t ses);

/* ---- AF_ALG (emul_afalg.c) ----------------------------------------------------------------- */

/* A socketpair end standing for socket(AF_ALG, type, 0), entered in the fd table with its
 * emulation; -1 and errno on failure. */
int ct_emul_alg_socket(int type);
/* bind on an emulated tfm socket. A name the route does not send to aesni goes to the kernel:
 * a real AF_ALG socket replaces the descriptor (same number) and the emulation is dropped, so
 * every later call passes through; without AF_ALG that is ENOENT, as the kernel says for an
 * unknown algorithm. */
int ct_emul_alg_bind(int fd, struct ct_kfd_state *st, const struct sockaddr *addr, socklen_t len);
int ct_emul_alg_setsockopt(struct ct_kfd_state *st, int optname, const void *optval, socklen_t len);
/* The new op socket's descriptor (a socketpair end; flags: SOCK_CLOEXEC|SOCK_NONBLOCK) and its
 * peer's (kept open by the emulation: pass it to ct_emul_alg_attach_op, or close it). */
int ct_emul_alg_accept(struct ct_kfd_state *st, int flags, int *peer);
/* After the hooks entered the op fd in the table: attach its emulation (owns peer on success). */
bool ct_emul_alg_attach_op(struct ct_kfd_state *op, struct ct_kfd_state *tfm, int peer);
ssize_t ct_emul_alg_send(struct ct_kfd_state *st, const struct msghdr *msg, int flags);
/* fd and flags (MSG_*) only decide what a read with nothing queued says: EAGAIN when it may not
 * wait (MSG_DONTWAIT, an O_NONBLOCK fd), as the kernel does; EINVAL where the kernel would wait
 * for data that only this thread could send (fd -1: AIO, which never waits). */
ssize_t ct_emul_alg_recv(struct ct_kfd_state *st, const struct iovec *iov, size_t n, int fd, int flags);
/* splice(fd_in -> op socket): the data is read from fd_in (a pipe) into the request. */
ssize_t ct_emul_alg_splice_in(struct ct_kfd_state *st, int fd_in, size_t len, unsigned flags);
/* io_submit / io_getevents through syscall(): *served says whether the emulation answered. */
long ct_emul_aio_submit(unsigned long ctx, long nr, struct iocb **iocbpp, bool *served);
long ct_emul_aio_getevents(unsigned long ctx, long min_nr, long nr, struct io_event *events, bool *served);

/* Frees a device's sessions (emul_cdev.c). */
void ct_emul_cdev_release(void *emul);
/* The last reference to st is gone: free its emulation (ct_kfd_free calls it). */
void ct_emul_release(struct ct_kfd_state *st);

#endif
