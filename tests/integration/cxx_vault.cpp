// SPDX-License-Identifier: MIT
// cxx_vault.cpp - vault::Sealer: EVP encryption from exported C++ member functions, so that
// dladdr names their frames with mangled symbols ("libcxx_vault.so!_ZN5vault6Sealer4seal...").
#include "cxx_vault.h"

#include <cstring>
#include <stdexcept>

#include <openssl/evp.h>

namespace vault {

static const std::size_t chunk = 4096;

Sealer::Sealer(const unsigned char *key, const unsigned char *iv)
{
	std::memcpy(key_, key, sizeof(key_));
	std::memcpy(iv_, iv, sizeof(iv_));
}

__attribute__((noinline)) std::size_t Sealer::seal(const std::vector<unsigned char> &in,
						   std::vector<unsigned char> &out)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, fin = 0;
	std::size_t calls = 0, done = 0;

	out.resize(in.size() + 16);
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, key_, iv_))
		throw std::runtime_error("EVP_EncryptInit_ex");
	for (std::size_t at = 0; at < in.size(); at += chunk, calls++) {
		std::size_t len = in.size() - at < chunk ? in.size() - at : chunk;
		if (!EVP_EncryptUpdate(ctx, out.data() + done, &n, in.data() + at, (int)len))
			throw std::runtime_error("EVP_EncryptUpdate");
		done += (std::size_t)n;
	}
	if (!EVP_EncryptFinal_ex(ctx, out.data() + done, &fin))
		throw std::runtime_error("EVP_EncryptFinal_ex");
	out.resize(done + (std::size_t)fin);
	EVP_CIPHER_CTX_free(ctx);
	return calls;
}

__attribute__((noinline)) std::size_t Sealer::seal(const unsigned char *in, std::size_t n,
						   std::vector<unsigned char> &out)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int len = 0;

	out.resize(n);
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, key_, iv_) ||
	    !EVP_EncryptUpdate(ctx, out.data(), &len, in, (int)n))
		throw std::runtime_error("aes-256-ctr");
	EVP_CIPHER_CTX_free(ctx);
	return 1;
}

} // namespace vault
