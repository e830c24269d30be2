/* SPDX-License-Identifier: MIT */
/*
 * cdev_wire.c - decoding cryptodev struct images of either ABI (see cdev_wire.h). memcpy into a
 * local struct first: the image sits in a FUSE buffer with no alignment promise.
 */
#include <string.h>

#include "cdev_wire.h"

void cdev_decode_session(const void *raw, bool compat, struct session_req *r)
{
	if (compat) {
		struct session_op32 s;
		memcpy(&s, raw, sizeof(s));
		*r = (struct session_req){ .cipher = s.cipher,
					   .mac = s.mac,
					   .keylen = s.keylen,
					   .mackeylen = s.mackeylen,
					   .key = s.key,
					   .mackey = s.mackey };
	} else {
		struct ct_cdev_session_op s;
		memcpy(&s, raw, sizeof(s));
		*r = (struct session_req){ .cipher = s.cipher,
					   .mac = s.mac,
					   .keylen = s.keylen,
					   .mackeylen = s.mackeylen,
					   .key = (uintptr_t)s.key,
					   .mackey = (uintptr_t)s.mackey };
	}
}

void cdev_decode_crypt(const void *raw, bool compat, struct crypt_req *r)
{
	if (compat) {
		struct crypt_op32 c;
		memcpy(&c, raw, sizeof(c));
		*r = (struct crypt_req){ .ses = c.ses,
					 .len = c.len,
					 .op = c.op,
					 .flags = c.flags,
					 .src = c.src,
					 .dst = c.dst,
					 .iv = c.iv };
	} else {
		struct ct_cdev_crypt_op c;
		memcpy(&c, raw, sizeof(c));
		*r = (struct crypt_req){ .ses = c.ses,
					 .len = c.len,
					 .op = c.op,
					 .flags = c.flags,
					 .src = (uintptr_t)c.src,
					 .dst = (uintptr_t)c.dst,
					 .iv = (uintptr_t)c.iv };
	}
}

void cdev_decode_auth(const void *raw, bool compat, struct auth_req *r)
{
	if (compat) {
		struct crypt_auth_op32 a;
		memcpy(&a, raw, sizeof(a));
		*r = (struct auth_req){ .ses = a.ses,
					.len = a.len,
					.auth_len = a.auth_len,
					.tag_len = a.tag_len,
					.iv_len = a.iv_len,
					.op = a.op,
					.flags = a.flags,
					.auth_src = a.auth_src,
					.src = a.src,
					.dst = a.dst,
					.iv = a.iv };
	} else {
		struct ct_cdev_crypt_auth_op a;
		memcpy(&a, raw, sizeof(a));
		*r = (struct auth_req){ .ses = a.ses,
					.len = a.len,
					.auth_len = a.auth_len,
					.tag_len = a.tag_len,
					.iv_len = a.iv_len,
					.op = a.op,
					.flags = a.flags,
					.auth_src = (uintptr_t)a.auth_src,
					.src = (uintptr_t)a.src,
					.dst = (uintptr_t)a.dst,
					.iv = (uintptr_t)a.iv };
	}
}

void cdev_put_uptr(uint8_t *raw, size_t off, bool compat, uint64_t addr)
{
	if (compat) {
		uint32_t v = (uint32_t)addr;
		memcpy(raw + off, &v, sizeof(v));
	} else {
		uintptr_t v = (uintptr_t)addr;
		memcpy(raw + off, &v, sizeof(v));
	}
}
