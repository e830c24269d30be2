/* SPDX-License-Identifier: MIT */
/*
 * test_demangle.c - C++ and Rust names in call-site frames (report/demangle.c): the names real
 * programs produce (Debian's node, member functions, lambdas, templates in an anonymous
 * namespace, GCC's .cold clones, rustc's legacy hash) read without their parameter lists,
 * what is not mangled stays as it is, and a model's call sites are rewritten with the recorded
 * form kept for JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "tracegen.h"

static const char *dm(const char *sym)
{
	static char out[512];
	if (!rp_demangle_symbol(sym, strlen(sym), out, sizeof(out)))
		return NULL;
	return out;
}

static void symbols(void **state)
{
	(void)state;
#ifndef CT_HAVE_CXA_DEMANGLE
	skip();
#endif
	/* Debian 12's libnode.so.108, as the issue shows it */
	assert_string_equal(dm("_ZN4node6crypto10CipherBase10CommonInitEPKcPK13evp_cipher_stPKhiS8_ij"),
			    "node::crypto::CipherBase::CommonInit");
	assert_string_equal(dm("_ZNK5vault6Sealer4sealEv"), "vault::Sealer::seal");
	assert_string_equal(dm("_ZNKR5vault6Sealer4sizeEv"), "vault::Sealer::size");
	assert_string_equal(dm("_ZZ4mainENKUliE_clEi"), "main::{lambda(int)#1}::operator()");
	assert_string_equal(dm("_ZN12_GLOBAL__N_16unsealILi256EEEmPKhm"),
			    "(anonymous namespace)::unseal<256>");
	assert_string_equal(dm("_ZN5vault6Sealer4sealEPKhm.cold"), "vault::Sealer::seal");
	assert_string_equal(dm("_ZN5vault6Sealer4sealEPKhm.isra.0.cold"), "vault::Sealer::seal");
	/* a parameter of function type: the parentheses balance backwards */
	assert_string_equal(dm("_Z5applyPFviEi"), "apply");
	assert_string_equal(dm("_ZNSt6vectorIhSaIhEE9push_backERKh"),
			    "std::vector<unsigned char, std::allocator<unsigned char> >::push_back");
	/* templates: no return type, as c++filt -p reads them */
	assert_string_equal(dm("_ZN3foo1AIiE3barILi2EEEvv"), "foo::A<int>::bar<2>");
	assert_string_equal(dm("_ZlsIcERSt13basic_ostreamIT_St11char_traitsIS1_EES5_RKN3foo1AIiEE"),
			    "operator<< <char>");
	assert_string_equal(dm("_Z4getfIiEPFviET_"), "getf<int>");
	assert_string_equal(dm("_ZN3foo1AIiEcviEv"), "foo::A<int>::operator int");
	assert_string_equal(dm("_ZN3foo1AIiEnwEm"), "foo::A<int>::operator new");
	/* special names keep what they say */
	assert_string_equal(dm("_ZThn16_N5vault6Sealer4sealEv"), "non-virtual thunk to vault::Sealer::seal");
	assert_string_equal(dm("_ZTSN9__gnu_cxx13stdio_filebufIcSt11char_traitsIcEEE"),
			    "typeinfo name for __gnu_cxx::stdio_filebuf<char, std::char_traits<char> >");
	assert_string_equal(dm("_ZGTtNKSt11logic_error4whatEv"),
			    "transaction clone for std::logic_error::what");
	/* rustc's legacy mangling: the C++ grammar plus a hash */
	assert_string_equal(dm("_ZN7openssl4symm7Crypter3new17h0123456789abcdefE"),
			    "openssl::symm::Crypter::new");
	/* not mangled, or not valid */
	assert_null(dm("EVP_EncryptInit_ex"));
	assert_null(dm("_Z"));
	assert_null(dm("_Zgarbage"));
	/* no room: false, not a cut name */
	char small[8];
	assert_false(rp_demangle_symbol("_ZNK5vault6Sealer4sealEv", 24, small, sizeof(small)));
}

static void model_call_sites(void **state)
{
	(void)state;
#ifndef CT_HAVE_CXA_DEMANGLE
	skip();
#endif
	static const char argv[] = "node";
	static const char cs[] =
		"libcrypto.so.3!EVP_CipherInit_ex+0x2a\n"
		"libnode.so.108!_ZN4node6crypto10CipherBase10CommonInitEPKcPK13"
		"evp_cipher_stPKhiS8_ij+0x87\n"
		"libnode.so.108+0x9a1c\n"
		"libstdc++.so.6+0x1234";
	static const char plain[] = "ssh!cipher_init+0x1c\nssh+0x632ac";
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(77, argv, sizeof(argv) - 1);
	tg_header(&g, &h);
	struct ct_path_def p = { .path_id = 1,
				 .api = CT_API_EVP,
				 .dir = CT_DIR_ENCRYPT,
				 .key_bits = 256,
				 .entry = CT_ENTRY_EVP_UPDATE,
				 .impl = ct_str_from("provider:default"),
				 .cipher = ct_str_from("aes-256-cbc"),
				 .requested = ct_str_from(""),
				 .callsite = ct_str_from(cs) };
	tg_path(&g, &p);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_CALL_FAILED,
			      .err = 22,
			      .ret = 0,
			      .path_id = CT_NO_PATH,
			      .tid = 77,
			      .count = 1,
			      .call = ct_str_from("EVP_CipherInit_ex"),
			      .detail = ct_str_from(""),
			      .callsite = ct_str_from(plain) };
	tg_event(&g, &e);
	struct rp_model m;
	char msg[200];
	rp_model_init(&m);
	assert_int_equal(rp_load_buffer(&m, "t", g.buf, g.len, msg, sizeof(msg)), 0);
	rp_demangle(&m);
	struct ct_str shown = m.procs[0].paths[0].def.callsite;
	char text[600];
	snprintf(text, sizeof(text), "%.*s", (int)shown.len, shown.p);
	assert_string_equal(text,
			    "libcrypto.so.3!EVP_CipherInit_ex+0x2a\n"
			    "libnode.so.108!node::crypto::CipherBase::CommonInit+0x87\n"
			    "libnode.so.108+0x9a1c\n"
			    "libstdc++.so.6+0x1234");
	struct ct_str rec = rp_callsite_mangled(&m, shown);
	assert_int_equal(rec.len, strlen(cs));
	assert_memory_equal(rec.p, cs, rec.len);
	/* nothing to demangle: the same string, and "as recorded" is itself */
	struct ct_str ev = m.procs[0].events[0].ev.callsite;
	assert_int_equal(ev.len, strlen(plain));
	assert_memory_equal(ev.p, plain, ev.len);
	assert_ptr_equal(rp_callsite_mangled(&m, ev).p, ev.p);
	/* a second pass finds nothing more */
	rp_demangle(&m);
	assert_ptr_equal(m.procs[0].paths[0].def.callsite.p, shown.p);
	rp_model_free(&m);
	tg_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbols),
		cmocka_unit_test(model_call_sites),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
