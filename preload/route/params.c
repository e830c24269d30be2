/* SPDX-License-Identifier: MIT */
/*
 * params.c - OSSL_PARAM helpers with OpenSSL's own conversion rules (see params.h), so the
 * provider answers EVP exactly as the default provider would without calling into libcrypto.
 */
#include <string.h>

#include "params.h"

OSSL_PARAM *ct_param_find(OSSL_PARAM *params, const char *key)
{
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		if (ct_param_is(p->key, key))
			return p;
	}
	return NULL;
}

const OSSL_PARAM *ct_param_find_const(const OSSL_PARAM *params, const char *key)
{
	return ct_param_find((OSSL_PARAM *)params, key);
}

int ct_param_set_uint(OSSL_PARAM *p, uint64_t v)
{
	if (p->data_type != OSSL_PARAM_UNSIGNED_INTEGER && p->data_type != OSSL_PARAM_INTEGER)
		return 0;
	if (!p->data) {
		p->return_size = p->data_size ? p->data_size : sizeof(uint64_t);
		return 1;
	}
	bool is_signed = p->data_type == OSSL_PARAM_INTEGER;
	if (p->data_size == sizeof(uint32_t)) {
		if (v > (is_signed ? (uint64_t)INT32_MAX : UINT32_MAX))
			return 0;
		uint32_t v32 = (uint32_t)v;
		memcpy(p->data, &v32, sizeof(v32));
	} else if (p->data_size == sizeof(uint64_t)) {
		if (is_signed && v > (uint64_t)INT64_MAX)
			return 0;
		memcpy(p->data, &v, sizeof(v));
	} else {
		return 0;
	}
	p->return_size = p->data_size;
	return 1;
}

int ct_param_set_int(OSSL_PARAM *p, int64_t v)
{
	if (v >= 0)
		return ct_param_set_uint(p, (uint64_t)v);
	if (p->data_type != OSSL_PARAM_INTEGER)
		return 0;
	if (!p->data) {
		p->return_size = p->data_size ? p->data_size : sizeof(int64_t);
		return 1;
	}
	if (p->data_size == sizeof(int32_t)) {
		if (v < INT32_MIN)
			return 0;
		int32_t v32 = (int32_t)v;
		memcpy(p->data, &v32, sizeof(v32));
	} else if (p->data_size == sizeof(int64_t)) {
		memcpy(p->data, &v, sizeof(v));
	} else {
		return 0;
	}
	p->return_size = p->data_size;
	return 1;
}

int ct_param_get_uint(const OSSL_PARAM *p, uint64_t *v)
{
	if (!p->data)
		return 0;
	if (p->data_type == OSSL_PARAM_UNSIGNED_INTEGER) {
		if (p->data_size == sizeof(uint32_t)) {
			uint32_t v32;
			memcpy(&v32, p->data, sizeof(v32));
			*v = v32;
			return 1;
		}
		if (p->data_size == sizeof(uint64_t)) {
			memcpy(v, p->data, sizeof(*v));
			return 1;
		}
		return 0;
	}
	if (p->data_type == OSSL_PARAM_INTEGER) {
		int64_t s;
		if (p->data_size == sizeof(int32_t)) {
			int32_t s32;
			memcpy(&s32, p->data, sizeof(s32));
			s = s32;
		} else if (p->data_size == sizeof(int64_t)) {
			memcpy(&s, p->data, sizeof(s));
		} else {
			return 0;
		}
		if (s < 0)
			return 0;
		*v = (uint64_t)s;
		return 1;
	}
	return 0;
}

int ct_param_set_octets(OSSL_PARAM *p, const void *src, size_t len)
{
	if (p->data_type == OSSL_PARAM_OCTET_PTR) {
		p->return_size = len;
		if (p->data)
			*(const void **)p->data = src;
		return 1;
	}
	if (p->data_type != OSSL_PARAM_OCTET_STRING)
		return 0;
	p->return_size = len;
	if (!p->data)
		return 1;
	if (p->data_size < len)
		return 0;
	memcpy(p->data, src, len);
	return 1;
}

int ct_param_get_octets(const OSSL_PARAM *p, void *dst, size_t max, size_t *len)
{
	if (p->data_type != OSSL_PARAM_OCTET_STRING || (!p->data && p->data_size))
		return 0;
	if (p->data_size > max)
		return 0;
	if (p->data_size)
		memcpy(dst, p->data, p->data_size);
	*len = p->data_size;
	return 1;
}
