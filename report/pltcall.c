/* SPDX-License-Identifier: MIT */
/*
 * pltcall.c - the function a sampled call stack's caller frame called, named through the PLT.
 * A frame's return address follows its call instruction; when that call goes to another
 * library's function (`call f@plt`, or `call *f@GOTPCREL(%rip)` under -fno-plt), the dynamic
 * relocation of its GOT slot names f. This recovers a callee that left no frame of its own: a
 * function ending in a tail call (libcrypto's HMAC_Update jumps to EVP_DigestUpdate) is not on
 * the stack, but the call to it, in a caller without symbols (a stripped Cython module), is.
 */
#include "pltcall.h"

#include <stdio.h>
#include <string.h>

/* The dynamic symbol whose relocation targets the GOT slot at got (a vaddr). */
static bool got_symbol(const struct rp_codefile *e, uint64_t got, char *name, size_t cap)
{
	const struct rp_elf *eh = &e->eh;
	Elf64_Shdr rel, sym, str;
	for (unsigned i = 0; i < eh->h.e_shnum; i++) {
		if (!rp_image_shdr(&e->im, eh, i, &rel) || rel.sh_type != SHT_RELA ||
		    rel.sh_entsize != sizeof(Elf64_Rela) ||
		    !rp_image_in(&e->im, rel.sh_offset, rel.sh_size) ||
		    !rp_image_shdr(&e->im, eh, rel.sh_link, &sym) || sym.sh_type != SHT_DYNSYM ||
		    sym.sh_entsize != sizeof(Elf64_Sym) || !rp_image_in(&e->im, sym.sh_offset, sym.sh_size) ||
		    !rp_image_shdr(&e->im, eh, sym.sh_link, &str) ||
		    !rp_image_in(&e->im, str.sh_offset, str.sh_size))
			continue;
		const Elf64_Rela *r = (const Elf64_Rela *)(e->im.p + rel.sh_offset);
		for (size_t k = 0; k < rel.sh_size / sizeof(*r); k++) {
			uint64_t si = ELF64_R_SYM(r[k].r_info);
			if (r[k].r_offset != got || !si || si >= sym.sh_size / sizeof(Elf64_Sym))
				continue;
			const Elf64_Sym *y = (const Elf64_Sym *)(e->im.p + sym.sh_offset) + si;
			const char *s = (const char *)e->im.p + str.sh_offset;
			if (y->st_name >= str.sh_size || !memchr(s + y->st_name, 0, str.sh_size - y->st_name))
				return false;
			snprintf(name, cap, "%s", s + y->st_name);
			return true;
		}
	}
	return false;
}

/* The code bytes [va, va + n) of the file, or NULL. */
static const uint8_t *code_at(const struct rp_codefile *e, uint64_t va, size_t n)
{
	uint64_t off = rp_codefile_vaddr_to_off(e, va);
	return off != UINT64_MAX && rp_image_in(&e->im, off, n) ? e->im.p + off : NULL;
}

bool rp_plt_callee(const struct rp_codefile *e, uint64_t ret, char *name, size_t cap)
{
	const uint8_t *c;
	/* x86-64 calls, and its Elf64_Rela read in place: nothing else is decoded here */
	if (!e->eh.is64 || e->eh.msb || e->eh.h.e_machine != EM_X86_64)
		return false;
	if (ret >= 6 && (c = code_at(e, ret - 6, 6)) && c[0] == 0xff && c[1] == 0x15) /* -fno-plt */
		return got_symbol(e, ret + (uint64_t)(int64_t)rp_le32s(c + 2), name, cap);
	if (ret < 5 || !(c = code_at(e, ret - 5, 5)) || c[0] != 0xe8)
		return false;
	uint64_t plt = ret + (uint64_t)(int64_t)rp_le32s(c + 1);
	if (!rp_codefile_in_plt(e, plt) || !(c = code_at(e, plt, 16)))
		return false;
	/* a PLT entry: [endbr64] [bnd] jmp *slot(%rip) */
	size_t at = !memcmp(c, "\xf3\x0f\x1e\xfa", 4) ? 4 : 0;
	at += c[at] == 0xf2;
	if (c[at] != 0xff || c[at + 1] != 0x25)
		return false;
	return got_symbol(e, plt + at + 6 + (uint64_t)(int64_t)rp_le32s(c + at + 2), name, cap);
}
