/* SPDX-License-Identifier: MIT */
/*
 * demangle.c - C++ (and Rust) names in call-site frames, in plain words. The preload records
 * what dladdr and the symbol tables say: "libnode.so.108!_ZN4node6crypto10CipherBase10Common
 * InitEPKcPK13evp_cipher_stPKhjS8_jj+0x5c". Every output of the report shows
 * "libnode.so.108!node::crypto::CipherBase::CommonInit+0x5c" instead; JSON keeps the call site as
 * it was before (callsite_mangled) for scripts that want the exact symbol.
 *
 * The names are demangled by the C++ ABI's own __cxa_demangle, from the C++ runtime the build
 * links (libstdc++, or libc++abi), not by code of ours: the mangling grammar is large and keeps
 * growing with the language. Like `c++filt -p` and perf, a frame shows the function without its
 * parameter list and, for a template, its return type (the mangled name in JSON still tells
 * overloads apart): a signature is often longer than a report line. Rust's legacy mangling is
 * the C++ one plus a "::h<16 hex>" hash, dropped too. Without a C++ runtime at build time the
 * frames stay as recorded.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HAVE_CXA_DEMANGLE
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

#define MAX_SYMBOL 2048

#ifdef CT_HAVE_CXA_DEMANGLE /* up to rp_demangle_symbol: the demangler's helpers */
static bool ends_with(const char *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	return n >= k && !memcmp(s + n - k, lit, k);
}

/* "ns::f(int, char const*) const [clone .cold]" -> "ns::f": the clone suffixes GCC gives split
 * functions, the qualifiers of a member, then the parameter list, balanced backwards (a
 * parameter may be a function type: "(void (*)(int))"). What is not a function stays whole. */
static size_t without_params(const char *d, size_t n)
{
	static const char *const quals[] = { " const", " volatile", " &&",
					     " &",     " noexcept", " transaction_safe" };
	for (;;) {
		size_t k = n;
		while (k > 8 && memcmp(d + k - 8, " [clone ", 8))
			k--;
		if (k <= 8 || d[n - 1] != ']')
			break;
		n = k - 8;
	}
	for (bool again = true; again;) {
		again = false;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++)
			if (ends_with(d, n, quals[q])) {
				n -= strlen(quals[q]);
				again = true;
			}
	}
	if (!n || d[n - 1] != ')')
		return n;
	int depth = 0;
	for (size_t i = n; i > 0; i--) {
		if (d[i - 1] == ')')
			depth++;
		else if (d[i - 1] == '(' && --depth == 0)
			return i - 1 ? i - 1 : n;
	}
	return n;
}

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A function template's name comes after its return type ("unsigned long ns::f<256>"): the
 * name starts after the last space outside brackets, or at the word "operator" (whose name may
 * hold spaces and brackets itself: "operator new", "operator<< <char>"). Ordinary functions
 * have no return type in their mangled name, so only names ending in '>' are looked at. */
static size_t return_type_length(const char *d, size_t n)
{
	if (!n || d[n - 1] != '>')
		return 0;
	size_t start = 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		if (depth == 0 && (i == 0 || !is_word(d[i - 1])) && n - i >= 8 &&
		    !memcmp(d + i, "operator", 8) && (n - i == 8 || !is_word(d[i + 8])))
			break;
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0)
			start = i + 1;
	}
	return start < n ? start : 0;
}

/* "crate::f::h0123456789abcdef" -> "crate::f" (rustc's legacy symbol hash) */
static size_t without_rust_hash(const char *d, size_t n)
{
	if (n < 20 || memcmp(d + n - 19, "::h", 3))
		return n;
	for (size_t i = n - 16; i < n; i++)
		if (!strchr("0123456789abcdef", d[i]))
			return n;
	return n - 19;
}

/* The function's name in the demangled d[0..n): its length, and where it starts. */
static size_t function_name(const char *d, size_t n, size_t *start)
{
	size_t skip = 0;
	n = without_rust_hash(d, without_params(d, n));
	/* a template returning a function pointer: "void (*f<int>(int))" -> "f<int>" */
	if (n > 3 && d[n - 1] == ')') {
		int depth = 0;
		size_t i = n;
		for (; i > 0; i--)
			if (d[i - 1] == ')')
				depth++;
			else if (d[i - 1] == '(' && --depth == 0)
				break;
		if (i > 0 && (d[i] == '*' || d[i] == '&')) {
			skip = i + 1;
			n = without_params(d + skip, n - 1 - skip);
		}
	}
	size_t ret = return_type_length(d + skip, n);
	*start = skip + ret;
	return n - ret;
}

/* What the ABI's special names say before the function (or the data: nothing to cut) they are
 * about, kept as they are. */
static const struct {
	const char *prefix;
	bool function;
} specials[] = {
	{ "non-virtual thunk to ", true },
	{ "virtual thunk to ", true },
	{ "covariant return thunk to ", true },
	{ "transaction clone for ", true },
	{ "non-transaction clone for ", true },
	{ "hidden alias for ", true },
	{ "TLS init function for ", false },
	{ "TLS wrapper function for ", false },
	{ "guard variable for ", false },
	{ "construction vtable for ", false },
	{ "vtable for ", false },
	{ "VTT for ", false },
	{ "typeinfo name for ", false },
	{ "typeinfo for ", false },
	{ "typeinfo fn for ", false },
};
#endif

bool rp_demangle_symbol(const char *sym, size_t len, char *out, size_t cap)
{
#ifdef CT_HAVE_CXA_DEMANGLE
	char name[MAX_SYMBOL];
	if (len < 3 || len >= sizeof(name) || sym[0] != '_' || sym[1] != 'Z')
		return false;
	memcpy(name, sym, len);
	name[len] = 0;
	int status = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return false;
	}
	size_t total = strlen(d), pre = 0, at = 0, n = 0;
	bool function = true;
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (!strncmp(d, specials[i].prefix, strlen(specials[i].prefix))) {
			pre = strlen(specials[i].prefix);
			function = specials[i].function;
			break;
		}
	if (function)
		n = function_name(d + pre, total - pre, &at);
	else
		n = total - pre;
	bool ok = n > 0 && pre + n < cap;
	if (ok) {
		memcpy(out, d, pre);
		memcpy(out + pre, d + pre + at, n);
		out[pre + n] = 0;
	}
	free(d);
	return ok;
#else
	(void)sym;
	(void)len;
	(void)out;
	(void)cap;
	return false;
#endif
}

/* "module!symbol+0xoff" with the symbol demangled into out; false when it is not mangled. */
static bool demangle_frame(void *ctx, struct ct_str f, char *out, size_t cap)
{
	(void)ctx;
	const char *bang = memchr(f.p, '!', f.len);
	if (!bang)
		return false;
	const char *sym = bang + 1, *end = f.p + f.len;
	const char *plus = end;
	for (const char *q = end; q > sym; q--)
		if (q[-1] == '+') {
			plus = q - 1;
			break;
		}
	char name[MAX_SYMBOL];
	if (!rp_demangle_symbol(sym, (size_t)(plus - sym), name, sizeof(name)))
		return false;
	int w = snprintf(out, cap, "%.*s%s%.*s", (int)(sym - f.p), f.p, name, (int)(end - plus), plus);
	return w > 0 && (size_t)w < cap;
}

static void demangle_in_place(struct rp_model *m, struct rp_proc *p, struct ct_str *cs)
{
	if (!cs->len)
		return;
	char *d = rp_callsite_rewrite(*cs, demangle_frame, NULL);
	if (!d)
		return;
	if (!rp_grow((void **)&m->mangled, &m->cap_mangled, m->nmangled, sizeof(*m->mangled)) ||
	    !rp_proc_own(p, d)) {
		free(d);
		return;
	}
	m->mangled[m->nmangled++] = (struct rp_mangled){ .shown = d, .recorded = *cs };
	*cs = ct_str_from(d);
}

void rp_demangle(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		for (size_t k = 0; k < p->npaths; k++)
			demangle_in_place(m, p, &p->paths[k].def.callsite);
		for (size_t k = 0; k < p->nevents; k++)
			demangle_in_place(m, p, &p->events[k].ev.callsite);
	}
}

struct ct_str rp_callsite_mangled(const struct rp_model *m, struct ct_str callsite)
{
	for (size_t i = 0; i < m->nmangled; i++)
		if (m->mangled[i].shown == callsite.p)
			return m->mangled[i].recorded;
	return callsite;
}
