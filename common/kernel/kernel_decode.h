/* SPDX-License-Identifier: MIT */
/*
 * kernel_decode.h - pure decoders for the kernel crypto interfaces cryptrace traces: cryptodev
 * ioctls (cryptodev_abi.h) and AF_ALG sockets. They turn constants into names through {value,
 * name} tables (unknown values print raw) and build the `detail` strings of trace events.
 *
 * Nothing here hooks, allocates, keeps state or does I/O: the preload calls these from hooks and
 * the unit tests drive them with hand-built structs. Key bytes, IVs and data are never read:
 * only their lengths. Every formatter writes at most cap bytes, always NUL-terminates when
 * cap > 0, and returns the length it wrote (truncation is silent).
 */
#ifndef CT_KERNEL_DECODE_H
#define CT_KERNEL_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cryptodev_abi.h"

/* ---- {value, name} tables ------------------------------------------------------------------ */

struct ct_kname {
	uint32_t value;
	const char *name;
};

/* The name of value in table t (n entries), or NULL. */
const char *ct_kname_find(const struct ct_kname *t, size_t n, uint32_t value);
/* The name, or the value in decimal written into buf (which is returned). */
const char *ct_kname_or_raw(char *buf, size_t cap, const struct ct_kname *t, size_t n, uint32_t value);

/* ---- cryptodev ----------------------------------------------------------------------------- */

const char *ct_cdev_alg_name(uint32_t alg);    /* "AES_CBC", "SHA1_HMAC"; NULL if unknown */
const char *ct_cdev_crk_name(uint32_t crk_op); /* "MOD_EXP" ...; NULL if unknown */
const char *ct_cdev_op_name(uint32_t op);      /* "encrypt", "decrypt"; NULL if unknown */
/* "CIOCGSESSION" etc. for any size encoding of a type-'c' request; NULL otherwise. */
const char *ct_cdev_ioctl_name(unsigned long request);
/* The ioctl number (enum ct_cdev_ioc_nr) of a type-'c' request, or -1. */
int ct_cdev_ioctl_nr(unsigned long request);
/* OpenSSL's name for a cryptodev cipher and key length in bytes ("aes-128-cbc"; XTS keys are
 * double length: 32 -> "aes-128-xts"). Returns false (and buf "") when there is none. */
bool ct_cdev_openssl_cipher(uint32_t alg, uint32_t keylen, char *buf, size_t cap);
/* Is alg a cipher (as opposed to a hash/mac or compression)? */
bool ct_cdev_alg_is_cipher(uint32_t alg);

/* Detail strings. ses is printed only when with_ses (it is an output of CIOCGSESSION). */
size_t ct_cdev_fmt_session(char *buf, size_t cap, const struct ct_cdev_session_op *s, bool with_ses);
size_t ct_cdev_fmt_sessinfo(char *buf, size_t cap, const struct ct_cdev_session_info_op *si);
size_t ct_cdev_fmt_crypt(char *buf, size_t cap, const struct ct_cdev_crypt_op *c);
size_t ct_cdev_fmt_auth(char *buf, size_t cap, const struct ct_cdev_crypt_auth_op *a);
/* CIOCKEY: "crk_op=MOD_EXP iparams=3 oparams=1 nbits=2048,17,2048,2048" (parameter sizes, never
 * their bytes). */
size_t ct_cdev_fmt_kop(char *buf, size_t cap, const struct ct_cdev_crypt_kop *k);
/* CIOCASYMFEAT's answer: "features=0x3 MOD_EXP|MOD_EXP_CRT" ("features=0x0 none"). */
size_t ct_cdev_fmt_asymfeat(char *buf, size_t cap, uint32_t features);
/* Dispatches on the ioctl number: "op=CIOCCRYPT ses=3 dir=encrypt len=4096 ...". arg is the
 * ioctl's third argument; NULL prints "arg=NULL". A request that is not type 'c' prints raw. */
size_t ct_cdev_fmt_ioctl(char *buf, size_t cap, unsigned long request, const void *arg);

/* ---- AF_ALG -------------------------------------------------------------------------------- */

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

/* SOL_ALG socket options and control-message types (linux/if_alg.h). */
enum ct_alg_opt {
	CT_ALG_SET_KEY = 1,
	CT_ALG_SET_IV = 2,
	CT_ALG_SET_OP = 3,
	CT_ALG_SET_AEAD_ASSOCLEN = 4,
	CT_ALG_SET_AEAD_AUTHSIZE = 5,
	CT_ALG_SET_DRBG_ENTROPY = 6,
	CT_ALG_SET_KEY_BY_KEY_SERIAL = 7,
};
#define CT_ALG_OP_DECRYPT 0
#define CT_ALG_OP_ENCRYPT 1

const char *ct_alg_opt_name(uint32_t opt); /* "ALG_SET_KEY"...; NULL if unknown */
const char *ct_alg_op_name(uint32_t op);   /* "encrypt", "decrypt"; NULL if unknown */
bool ct_alg_type_known(const char *type);  /* "skcipher", "aead", "hash", "rng" */

/* struct sockaddr_alg as the kernel reads it, decoded from what the caller passed: fields past
 * addrlen are reported missing, never read. */
struct ct_alg_addr {
	uint16_t family;
	bool has_type, has_feat, has_mask, has_name;
	char type[15]; /* NUL-terminated copy (the kernel's field is 14 bytes) */
	uint32_t feat, mask;
	char name[129]; /* the kernel field is 64 bytes (128 on kernels >= 6.x); always terminated */
};
/* Decodes addr/addrlen; returns false when addr is NULL or shorter than the family field. */
bool ct_alg_decode_addr(const void *addr, size_t addrlen, struct ct_alg_addr *out);
/* "family=AF_ALG type=skcipher name=cbc(aes)" (+ feat/mask when non-zero, "addrlen=N short"). */
size_t ct_alg_fmt_addr(char *buf, size_t cap, const void *addr, size_t addrlen);

/* "opt=ALG_SET_KEY keylen=16"; for ALG_SET_AEAD_AUTHSIZE the size is optlen ("authsize=16").
 * optval is never dereferenced except for the 4-byte key serial of ALG_SET_KEY_BY_KEY_SERIAL,
 * which is not secret (and only when optlen >= 4). */
size_t ct_alg_fmt_sockopt(char *buf, size_t cap, int level, int optname, const void *optval, size_t optlen);

/* What the SOL_ALG control messages of one sendmsg asked for. */
struct ct_alg_cmsgs {
	bool has_op, has_iv, has_assoclen;
	uint32_t op, ivlen, assoclen;
	unsigned unknown; /* SOL_ALG cmsgs of other types, and other levels */
};
/* Walks msg->msg_control within msg_controllen (bounds-checked; a truncated cmsg stops the walk). */
void ct_alg_parse_cmsgs(const struct msghdr *msg, struct ct_alg_cmsgs *out);
/* "op=encrypt ivlen=16 assoclen=13" (only what was present). */
size_t ct_alg_fmt_cmsgs(char *buf, size_t cap, const struct ct_alg_cmsgs *c);

/* OpenSSL's cipher name for a kernel algorithm name and key length in bytes: "cbc(aes)" + 16 ->
 * "aes-128-cbc", "xts(aes)" + 32 -> "aes-128-xts", "gcm(aes)", "ctr(aes)", "ecb(aes)",
 * "rfc4106(gcm(aes))" + 20 -> "aes-128-gcm". Returns false (buf "") when there is none. */
bool ct_alg_openssl_cipher(const char *kname, uint32_t keylen, char *buf, size_t cap);

/* ---- kTLS ---------------------------------------------------------------------------------- */

#ifndef SOL_TCP
#define SOL_TCP 6
#endif
#define CT_TCP_ULP 31  /* linux/tcp.h */
#define CT_SOL_TLS 282 /* linux/socket.h */
/* SOL_TLS options (linux/tls.h); the unit test checks them against the header. */
enum ct_tls_opt {
	CT_TLS_TX = 1,
	CT_TLS_RX = 2,
	CT_TLS_TX_ZEROCOPY_RO = 3,
	CT_TLS_RX_EXPECT_NO_PAD = 4,
};
#define CT_TLS_SET_RECORD_TYPE 1 /* cmsg type on sendmsg: a record that is not application data */
#define CT_TLS_GET_RECORD_TYPE 2 /* cmsg type on recvmsg */
#define CT_TLS_RECORD_APPLICATION_DATA 23

const char *ct_ktls_opt_name(int optname);        /* "TLS_TX"...; NULL if unknown */
const char *ct_ktls_proto_name(uint16_t version); /* 0x0304 -> "TLS1.3"; NULL if unknown */

/* struct tls_crypto_info's header, and what it names. Only its first 4 bytes are read. */
struct ct_ktls_info {
	uint16_t version, cipher_type;
	const char *proto;   /* "TLS1.2", "TLS1.3"; NULL for another version */
	const char *kname;   /* "AES_GCM_256" (TLS_CIPHER_ without its prefix); NULL if unknown */
	const char *cipher;  /* OpenSSL's name: "aes-256-gcm"; NULL if unknown */
	uint16_t key_bits;   /* 0 if unknown */
	uint16_t struct_len; /* the optlen the kernel takes for this cipher; 0 if unknown */
};
/* Decodes optval/optlen; false when optval is NULL or shorter than the header. */
bool ct_ktls_decode_info(const void *optval, size_t optlen, struct ct_ktls_info *out);
/* "level=SOL_TCP optname=TCP_ULP ulp=tls" */
size_t ct_ktls_fmt_ulp(char *buf, size_t cap, const void *optval, size_t optlen);
/* "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_GCM_256 (aes-256-gcm) optlen=56" */
size_t ct_ktls_fmt_sockopt(char *buf, size_t cap, int optname, const void *optval, size_t optlen);
/* The TLS record type of a sendmsg's TLS_SET_RECORD_TYPE (or a recvmsg's TLS_GET_RECORD_TYPE)
 * control message; false when there is none (application data). Bounds-checked. */
bool ct_ktls_record_type(const struct msghdr *msg, uint8_t *type);
const char *ct_ktls_record_type_name(uint8_t type); /* 21 -> "alert"; NULL if unknown */

/* ---- errno --------------------------------------------------------------------------------- */

#include "errno_name.h"

#endif
