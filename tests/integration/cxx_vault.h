// SPDX-License-Identifier: MIT
// cxx_vault.h - a small C++ library that encrypts with OpenSSL's EVP API from named member
// functions (two overloads), for the demangle test: its call sites are C++ symbols.
#ifndef CT_CXX_VAULT_H
#define CT_CXX_VAULT_H

#include <cstddef>
#include <vector>

namespace vault
{

class Sealer
{
      public:
	Sealer(const unsigned char *key, const unsigned char *iv);
	// aes-256-cbc over the whole vector, in chunks: how many update calls it made
	std::size_t seal(const std::vector<unsigned char> &in, std::vector<unsigned char> &out);
	// aes-256-ctr over n bytes, in one update call
	std::size_t seal(const unsigned char *in, std::size_t n, std::vector<unsigned char> &out);

      private:
	unsigned char key_[32], iv_[16];
};

} // namespace vault

#endif
