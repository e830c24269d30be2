/* SPDX-License-Identifier: MIT */
/*
 * ktls_decode.c - kernel TLS (kTLS) set-up decoding: setsockopt(SOL_TCP, TCP_ULP, "tls") and
 * setsockopt(SOL_TLS, TLS_TX / TLS_RX, struct tls12_crypto_info_*). Only the 4-byte header
 * (struct tls_crypto_info: version and cipher type) is ever read; the IV, key, salt and record
 * sequence that follow it are counted by the struct's length, never touched.
 */
#include <string.h>

#include "kbuf.h"
#include "kernel_decode.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

static const struct ct_kname tls_opts[] = {
	{ CT_TLS_TX, "TLS_TX" },
	{ CT_TLS_RX, "TLS_RX" },
	{ CT_TLS_TX_ZEROCOPY_RO, "TLS_TX_ZEROCOPY_RO" },
	{ CT_TLS_RX_EXPECT_NO_PAD, "TLS_RX_EXPECT_NO_PAD" },
};

/* linux/tls.h: the cipher types, their OpenSSL names and the exact optlen the kernel takes
 * (header 4 + iv + key + salt + rec_seq 8). */
static const struct ktls_cipher {
	uint16_t type;
	const char *kname, *openssl;
	uint16_t key_bits, struct_len;
} tls_ciphers[] = {
	{ 51, "AES_GCM_128", "aes-128-gcm", 128, 4 + 8 + 16 + 4 + 8 },
	{ 52, "AES_GCM_256", "aes-256-gcm", 256, 4 + 8 + 32 + 4 + 8 },
	{ 53, "AES_CCM_128", "aes-128-ccm", 128, 4 + 8 + 16 + 4 + 8 },
	{ 54, "CHACHA20_POLY1305", "chacha20-poly1305", 256, 4 + 12 + 32 + 0 + 8 },
	{ 55, "SM4_GCM", "sm4-gcm", 128, 4 + 8 + 16 + 4 + 8 },
	{ 56, "SM4_CCM", "sm4-ccm", 128, 4 + 8 + 16 + 4 + 8 },
	{ 57, "ARIA_GCM_128", "aria-128-gcm", 128, 4 + 8 + 16 + 4 + 8 },
	{ 58, "ARIA_GCM_256", "aria-256-gcm", 256, 4 + 8 + 32 + 4 + 8 },
};

const char *ct_ktls_opt_name(int optname)
{
	return optname < 0 ? NULL : ct_kname_find(tls_opts, N(tls_opts), (uint32_t)optname);
}

const char *ct_ktls_proto_name(uint16_t version)
{
	return version == 0x0303 ? "TLS1.2" : version == 0x0304 ? "TLS1.3" : NULL;
}

bool ct_ktls_decode_info(const void *optval, size_t optlen, struct ct_ktls_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!optval || optlen < 4)
		return false;
	const uint8_t *p = optval;
	uint16_t version, type;
	memcpy(&version, p, 2); /* host order, as the kernel reads the __u16 fields */
	memcpy(&type, p + 2, 2);
	out->version = version;
	out->cipher_type = type;
	out->proto = ct_ktls_proto_name(version);
	for (size_t i = 0; i < N(tls_ciphers); i++) {
		if (tls_ciphers[i].type != type)
			continue;
		out->kname = tls_ciphers[i].kname;
		out->cipher = tls_ciphers[i].openssl;
		out->key_bits = tls_ciphers[i].key_bits;
		out->struct_len = tls_ciphers[i].struct_len;
	}
	return true;
}

size_t ct_ktls_fmt_ulp(char *buf, size_t cap, const void *optval, size_t optlen)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	char name[16];
	size_t n = 0;

	/* The ULP name is a short public string ("tls"): copy its printable prefix only. */
	for (const char *s = optval; s && n < optlen && n < sizeof(name) - 1 && s[n] > 0x20 && s[n] < 0x7f;
	     n++)
		name[n] = s[n];
	name[n] = 0;
	ct_kbuf_add(&b, "level=SOL_TCP optname=TCP_ULP ulp=%s", optval ? (n ? name : "\"\"") : "NULL");
	return b.len;
}

size_t ct_ktls_fmt_sockopt(char *buf, size_t cap, int optname, const void *optval, size_t optlen)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	const char *opt = ct_ktls_opt_name(optname);

	if (opt)
		ct_kbuf_add(&b, "level=SOL_TLS optname=%s", opt);
	else
		ct_kbuf_add(&b, "level=SOL_TLS optname=%d", optname);
	if (optname == CT_TLS_TX || optname == CT_TLS_RX) {
		struct ct_ktls_info ki;
		if (!ct_ktls_decode_info(optval, optlen, &ki)) {
			ct_kbuf_add(&b, " crypto_info=%s", optval ? "short" : "NULL");
		} else {
			if (ki.proto)
				ct_kbuf_add(&b, " version=%s", ki.proto);
			else
				ct_kbuf_add(&b, " version=0x%04x", ki.version);
			if (ki.kname)
				ct_kbuf_add(&b, " cipher=%s (%s)", ki.kname, ki.cipher);
			else
				ct_kbuf_add(&b, " cipher_type=%u (unknown)", ki.cipher_type);
			if (ki.struct_len && optlen != ki.struct_len)
				ct_kbuf_add(&b, " optlen=%zu (expected %u)", optlen, ki.struct_len);
			else
				ct_kbuf_add(&b, " optlen=%zu", optlen);
		}
	} else {
		ct_kbuf_add(&b, " optlen=%zu", optlen);
	}
	return b.len;
}

bool ct_ktls_record_type(const struct msghdr *msg, uint8_t *type)
{
	if (!msg || !msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_len < CMSG_LEN(1) ||
		    (size_t)((char *)c - (char *)msg->msg_control) + c->cmsg_len > msg->msg_controllen)
			return false;
		if (c->cmsg_level == CT_SOL_TLS &&
		    (c->cmsg_type == CT_TLS_SET_RECORD_TYPE || c->cmsg_type == CT_TLS_GET_RECORD_TYPE)) {
			*type = *(const uint8_t *)CMSG_DATA(c);
			return true;
		}
	}
	return false;
}

const char *ct_ktls_record_type_name(uint8_t type)
{
	switch (type) {
	case 20:
		return "change_cipher_spec";
	case 21:
		return "alert";
	case 22:
		return "handshake";
	case 23:
		return "application_data";
	default:
		return NULL;
	}
}
