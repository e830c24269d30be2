// SPDX-License-Identifier: MIT
// cxx_callsite.cpp - a C++ program whose EVP work starts in named C++ functions: vault::Sealer's
// two seal() overloads in a shared library (exported: dladdr names them) and a function template
// in an anonymous namespace here (not exported: the reporter names it from this file's symbol
// table). Reads a 32-byte key and a 16-byte IV as hex from stdin (so that they appear on no
// command line) and prints what it did as `expect` lines, like the examples.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <openssl/evp.h>

#include "cxx_vault.h"

namespace {

template <int Bits>
__attribute__((noinline)) std::size_t unseal(const std::vector<unsigned char> &in,
					     const unsigned char *key, const unsigned char *iv,
					     std::vector<unsigned char> &out)
{
	static_assert(Bits == 256, "aes-256-cbc only");
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, fin = 0;

	out.resize(in.size());
	if (!ctx || !EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, key, iv) ||
	    !EVP_DecryptUpdate(ctx, out.data(), &n, in.data(), (int)in.size()) ||
	    !EVP_DecryptFinal_ex(ctx, out.data() + n, &fin))
		std::exit(2);
	out.resize((std::size_t)(n + fin));
	EVP_CIPHER_CTX_free(ctx);
	return 1;
}

bool read_hex(unsigned char *buf, std::size_t n)
{
	for (std::size_t i = 0; i < n; i++) {
		unsigned v;
		if (std::scanf("%2x", &v) != 1)
			return false;
		buf[i] = (unsigned char)v;
	}
	return true;
}

} // namespace

int main()
{
	unsigned char key[32], iv[16];
	if (!read_hex(key, sizeof(key)) || !read_hex(iv, sizeof(iv))) {
		std::fprintf(stderr, "cxx_callsite: give a 32-byte key and a 16-byte IV in hex on stdin\n");
		return 2;
	}
	std::vector<unsigned char> plain(65536 + 100), sealed, ctr, back;
	for (std::size_t i = 0; i < plain.size(); i++)
		plain[i] = (unsigned char)(i * 7 + 3);

	vault::Sealer s(key, iv);
	std::size_t cbc_calls = s.seal(plain, sealed);
	std::size_t ctr_calls = s.seal(plain.data(), 1000, ctr);
	std::size_t dec_calls = unseal<256>(sealed, key, iv, back);
	if (back != plain) {
		std::fprintf(stderr, "cxx_callsite: decryption does not give the plaintext back\n");
		return 1;
	}
	std::printf("expect api=evp cipher=aes-256-cbc dir=encrypt calls=%zu bytes=%zu\n", cbc_calls,
		    plain.size());
	std::printf("expect api=evp cipher=aes-256-ctr dir=encrypt calls=%zu bytes=1000\n", ctr_calls);
	std::printf("expect api=evp cipher=aes-256-cbc dir=decrypt calls=%zu bytes=%zu\n", dec_calls,
		    sealed.size());
	return 0;
}
