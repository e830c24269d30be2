/* SPDX-License-Identifier: MIT */
/*
 * profile.c - what the sampled code is. The launcher's PROFILE records (tracer/profile.c) give,
 * per process and file, sample counts by file offset; here each offset is put in its function
 * and the function is classified by its machine code, because Debian's libcrypto, libgnutls and
 * libgcrypt are stripped of their internal names (the nearest exported name would lie):
 *
 *  - the function's bounds: its symbol (.symtab, else .dynsym) when one covers the offset, else
 *    its FDE in .eh_frame (every function compilers and OpenSSL's perlasm emit has one), found
 *    through .eh_frame_hdr's sorted table;
 *  - its instructions, matched by their encodings (no disassembler: the byte sequences below do
 *    not occur by chance more than once in a function of ordinary code, and a class needs two):
 *    AESENC/AESDEC and their VEX/EVEX forms (the vector length says AES-NI, VAES-256 or -512),
 *    PCLMULQDQ/VPCLMULQDQ, the SHA-NI rounds;
 *  - the constants it addresses (RIP-relative): the AES S-box or T-tables (table AES, no AES-NI),
 *    vpaes's constants (SSSE3 AES: OpenSSL's, GnuTLS's and libgcrypt's), the SHA-256 and SHA-512
 *    round constants, ChaCha20's "expand 32-byte k".
 *
 * Only regular files are read, mapped read-only, every offset checked; a file whose build id
 * differs from the one recorded is not used (it was replaced since the run).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_note.h"
#include "elfimage.h"

#define MAX_ELF_BYTES (1024u << 20)

/* ---- the file ---------------------------------------------------------------------------- */

struct elf {
	struct rp_image im;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	unsigned phnum;
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strtab;
	size_t strtab_len;
	/* .eh_frame_hdr's table, and the sections it points into */
	const uint8_t *hdr_table;
	uint32_t hdr_count;
	uint64_t hdr_vaddr;
	uint64_t eh_vaddr, eh_off, eh_size;
	/* the PLT (.plt, .plt.sec, .plt.got): one FDE covers it, and it is calls on their way */
	uint64_t plt_lo, plt_hi;
	/* constants found in the file (vaddr, 0: none) */
	uint64_t aes_sbox, aes_te, aes_te_asm, vpaes, k256, k512, chacha;
};

/* The vaddr of file offset off, through the PT_LOAD that holds it (UINT64_MAX: none). */
static uint64_t off_to_vaddr(const struct elf *e, uint64_t off)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && off - p->p_offset < p->p_filesz)
			return p->p_vaddr + (off - p->p_offset);
	}
	return UINT64_MAX;
}

static uint64_t vaddr_to_off(const struct elf *e, uint64_t va)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && va - p->p_vaddr < p->p_filesz)
			return p->p_offset + (va - p->p_vaddr);
	}
	return UINT64_MAX;
}

static int32_t le32s(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The vaddr of the first occurrence of sig in the file's loaded bytes, or 0. */
static uint64_t find_const(const struct elf *e, const uint8_t *sig, size_t n)
{
	const uint8_t *p = e->im.p, *end = p + e->im.len;
	while ((p = memmem(p, (size_t)(end - p), sig, n)) != NULL) {
		uint64_t va = off_to_vaddr(e, (uint64_t)(p - e->im.p));
		if (va != UINT64_MAX)
			return va ? va : 1;
		p++;
	}
	return 0;
}

static void find_consts(struct elf *e)
{
	static const uint8_t sbox[] = { 0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5,
					0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76 };
	/* Te0 as 32-bit words, little-endian, as C tables and OpenSSL's aes-x86_64 lay it out */
	static const uint8_t te0[] = { 0xa5, 0x63, 0x63, 0xc6, 0x84, 0x7c, 0x7c, 0xf8 };
	static const uint8_t te0_asm[] = { 0xc6, 0x63, 0x63, 0xa5, 0xc6, 0x63, 0x63, 0xa5 };
	/* vpaes: .Lk_mc_forward (0x0407060500030201, 0x0C0F0E0D080B0A09) */
	static const uint8_t vpaes[] = { 0x01, 0x02, 0x03, 0x00, 0x05, 0x06, 0x07, 0x04,
					 0x09, 0x0a, 0x0b, 0x08, 0x0d, 0x0e, 0x0f, 0x0c };
	/* SHA-256 K[0..3] and SHA-512 K[0] as little-endian words */
	static const uint8_t k256[] = { 0x98, 0x2f, 0x8a, 0x42, 0x91, 0x44, 0x37, 0x71,
					0xcf, 0xfb, 0xc0, 0xb5, 0xa5, 0xdb, 0xb5, 0xe9 };
	static const uint8_t k512[] = { 0x22, 0xae, 0x28, 0xd7, 0x98, 0x2f, 0x8a, 0x42 };
	static const char chacha[] = "expand 32-byte k";
	e->aes_sbox = find_const(e, sbox, sizeof(sbox));
	e->aes_te = find_const(e, te0, sizeof(te0));
	e->aes_te_asm = find_const(e, te0_asm, sizeof(te0_asm));
	e->vpaes = find_const(e, vpaes, sizeof(vpaes));
	e->k256 = find_const(e, k256, sizeof(k256));
	e->k512 = find_const(e, k512, sizeof(k512));
	e->chacha = find_const(e, (const uint8_t *)chacha, 16);
}

static void index_symbols(struct elf *e)
{
	const Elf64_Ehdr *eh = e->eh;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return;
	Elf64_Shdr sh, link, best_sym = { 0 }, names;
	bool have_sym = false, have_names = rp_image_shdr(&e->im, eh, eh->e_shstrndx, &names) &&
					    rp_image_in(&e->im, names.sh_offset, names.sh_size);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (!rp_image_shdr(&e->im, eh, i, &sh))
			continue;
		const char *nm = have_names && sh.sh_name < names.sh_size
					 ? (const char *)e->im.p + names.sh_offset + sh.sh_name
					 : "";
		if (nm[0] && memchr(nm, 0, names.sh_size - sh.sh_name) && !strncmp(nm, ".plt", 4)) {
			if (!e->plt_lo || sh.sh_addr < e->plt_lo)
				e->plt_lo = sh.sh_addr;
			if (sh.sh_addr + sh.sh_size > e->plt_hi)
				e->plt_hi = sh.sh_addr + sh.sh_size;
		}
		if ((sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !have_sym)) &&
		    sh.sh_entsize == sizeof(Elf64_Sym)) {
			best_sym = sh;
			have_sym = sh.sh_type == SHT_SYMTAB || !have_sym;
		}
	}
	if (have_sym && rp_image_in(&e->im, best_sym.sh_offset, best_sym.sh_size) &&
	    rp_image_shdr(&e->im, eh, best_sym.sh_link, &link) &&
	    rp_image_in(&e->im, link.sh_offset, link.sh_size)) {
		e->syms = (const Elf64_Sym *)(e->im.p + best_sym.sh_offset);
		e->nsyms = best_sym.sh_size / sizeof(Elf64_Sym);
		e->strtab = (const char *)e->im.p + link.sh_offset;
		e->strtab_len = link.sh_size;
	}
}

/* .eh_frame_hdr: version 1, the table encoded datarel|sdata4 (what every linker writes). */
static void index_eh_frame(struct elf *e)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type != PT_GNU_EH_FRAME || !rp_image_in(&e->im, p->p_offset, p->p_filesz) ||
		    p->p_filesz < 12)
			continue;
		const uint8_t *h = e->im.p + p->p_offset;
		if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
			return;
		uint64_t eh_ptr = p->p_vaddr + 4 + (int64_t)le32s(h + 4);
		uint32_t count = (uint32_t)le32s(h + 8);
		if ((uint64_t)count * 8 > p->p_filesz - 12)
			return;
		e->hdr_table = h + 12;
		e->hdr_count = count;
		e->hdr_vaddr = p->p_vaddr;
		e->eh_vaddr = eh_ptr;
		e->eh_off = vaddr_to_off(e, eh_ptr);
		return;
	}
}

static bool elf_open(struct elf *e, const char *path, struct ct_str want_id)
{
	memset(e, 0, sizeof(*e));
	if (rp_image_map(path, MAX_ELF_BYTES, &e->im) != RP_IMAGE_OK)
		return false;
	e->eh = rp_image_elf64(&e->im);
	if (!e->eh || e->eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !rp_image_in(&e->im, e->eh->e_phoff, (uint64_t)e->eh->e_phnum * sizeof(Elf64_Phdr))) {
		rp_image_unmap(&e->im);
		return false;
	}
	e->ph = (const Elf64_Phdr *)(e->im.p + e->eh->e_phoff);
	e->phnum = e->eh->e_phnum;
	if (want_id.len) {
		char id[80] = "";
		for (unsigned i = 0; i < e->phnum; i++)
			if (e->ph[i].p_type == PT_NOTE &&
			    rp_image_in(&e->im, e->ph[i].p_offset, e->ph[i].p_filesz) &&
			    ct_elf_build_id(e->im.p + e->ph[i].p_offset, e->ph[i].p_filesz, id, sizeof(id)))
				break;
		if (strlen(id) != want_id.len || memcmp(id, want_id.p, want_id.len) != 0) {
			rp_image_unmap(&e->im);
			return false;
		}
	}
	index_symbols(e);
	index_eh_frame(e);
	find_consts(e);
	return true;
}

/* ---- functions --------------------------------------------------------------------------- */

/* [*start, *end) of the function holding vaddr, and its name when a symbol covers it. */
static bool function_at(const struct elf *e, uint64_t va, uint64_t *start, uint64_t *end, const char **name)
{
	*name = NULL;
	for (size_t i = 0; i < e->nsyms; i++) {
		const Elf64_Sym *y = &e->syms[i];
		if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF || !y->st_size ||
		    va - y->st_value >= y->st_size || y->st_name >= e->strtab_len ||
		    !memchr(e->strtab + y->st_name, 0, e->strtab_len - y->st_name))
			continue;
		*start = y->st_value;
		*end = y->st_value + y->st_size;
		*name = e->strtab + y->st_name;
		return true;
	}
	if (!e->hdr_table || e->eh_off == UINT64_MAX)
		return false;
	/* the last table entry whose start is <= va */
	uint32_t lo = 0, hi = e->hdr_count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e->hdr_vaddr + (int64_t)le32s(e->hdr_table + 8 * (size_t)mid) <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	const uint8_t *ent = e->hdr_table + 8 * (size_t)(lo - 1);
	uint64_t fn = e->hdr_vaddr + (int64_t)le32s(ent), fde = e->hdr_vaddr + (int64_t)le32s(ent + 4);
	uint64_t fde_off = vaddr_to_off(e, fde);
	/* FDE: u32 length, u32 CIE pointer, pc_begin and pc_range as sdata4 (pcrel begin) */
	if (fde_off == UINT64_MAX || !rp_image_in(&e->im, fde_off, 16))
		return false;
	const uint8_t *f = e->im.p + fde_off;
	uint64_t begin = fde + 8 + (int64_t)le32s(f + 8);
	uint32_t range = (uint32_t)le32s(f + 12);
	if (le32s(f) == -1 || begin != fn || va - fn >= range)
		return false;
	*start = fn;
	*end = fn + range;
	return true;
}

/* What a function's code does, from its bytes [p, p + n) at vaddr va. */
struct code_class {
	unsigned aes_legacy, aes_vex128, aes_vex256, aes_evex512, clmul, vclmul, sha256ni, sha1ni, pshufb;
	unsigned ref_tables, ref_vpaes, ref_k256, ref_k512, ref_chacha;
};

static bool refs(uint64_t target, uint64_t table, uint64_t len)
{
	return table && target - table < len;
}

static void scan(const struct elf *e, const uint8_t *p, size_t n, uint64_t va, struct code_class *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i + 4 < n; i++) {
		uint8_t b0 = p[i], b1 = p[i + 1], b2 = p[i + 2], b3 = p[i + 3];
		/* legacy SSE, 66 [REX] 0F ..: 0F 38 DB..DF (AESIMC, AESENC[LAST], AESDEC[LAST]),
		 * 0F 3A DF, 0F 3A 44 (PCLMULQDQ), 0F 38 00 (PSHUFB) */
		if (b0 == 0x66) {
			size_t j = i + 1 + (b1 >= 0x40 && b1 <= 0x4f);
			if (j + 2 < n && p[j] == 0x0f) {
				uint8_t m = p[j + 1], op = p[j + 2];
				if (m == 0x38 && op >= 0xdb && op <= 0xdf)
					c->aes_legacy++;
				if (m == 0x38 && op == 0x00) /* vpaes's S-box lookups */
					c->pshufb++;
				if (m == 0x3a && op == 0xdf)
					c->aes_legacy++;
				if (m == 0x3a && op == 0x44)
					c->clmul++;
			}
		}
		/* SHA-NI (no prefix): 0F 38 CB/CC/CD (SHA-256), 0F 38 C8/C9/CA and 0F 3A CC (SHA-1) */
		if (b0 == 0x0f && b1 == 0x38 && b2 >= 0xcb && b2 <= 0xcd && (!i || p[i - 1] != 0x66))
			c->sha256ni++;
		if (b0 == 0x0f && ((b1 == 0x38 && b2 >= 0xc8 && b2 <= 0xca) || (b1 == 0x3a && b2 == 0xcc)) &&
		    (!i || p[i - 1] != 0x66))
			c->sha1ni++;
		/* VEX3: C4 [map] [W vvvv L pp] op: map 0F38 (AES) or 0F3A (PCLMUL), pp 66 */
		if (b0 == 0xc4 && (b2 & 0x03) == 0x01) {
			bool wide = b2 & 0x04;
			if ((b1 & 0x1f) == 0x02 && b3 >= 0xdc && b3 <= 0xdf)
				wide ? c->aes_vex256++ : c->aes_vex128++;
			if ((b1 & 0x1f) == 0x03 && b3 == 0x44)
				wide ? c->vclmul++ : c->clmul++;
		}
		/* EVEX: 62 P0 P1 P2 op, P0's map in its low 3 bits, P1 = W vvvv 1 pp with pp 66,
		 * vector length in P2 bits 6:5 */
		if (b0 == 0x62 && i + 5 < n && (b2 & 0x07) == 0x05) {
			uint8_t op = p[i + 4];
			unsigned ll = (b3 >> 5) & 3;
			if ((b1 & 0x07) == 0x02 && op >= 0xdc && op <= 0xdf)
				ll == 2 ? c->aes_evex512++ : ll == 1 ? c->aes_vex256++ : c->aes_vex128++;
			if ((b1 & 0x07) == 0x03 && op == 0x44)
				ll ? c->vclmul++ : c->clmul++;
		}
		/* a RIP-relative disp32 ending here: the address it names */
		uint64_t target = va + i + 4 + (int64_t)le32s(p + i);
		c->ref_tables += refs(target, e->aes_sbox, 256) || refs(target, e->aes_te, 4096) ||
				 refs(target, e->aes_te_asm, 8192);
		c->ref_vpaes += refs(target, e->vpaes, 0x180);
		c->ref_k256 += refs(target, e->k256, 256);
		c->ref_k512 += refs(target, e->k512, 640);
		c->ref_chacha += refs(target, e->chacha, 64);
	}
}

/* The category and implementation of a function's code; false when it is none we know. */
static bool classify(const struct code_class *c, char *cat, size_t ccap, char *impl, size_t icap)
{
	unsigned aes = c->aes_legacy + c->aes_vex128 + c->aes_vex256 + c->aes_evex512;
	const char *clmul = c->vclmul >= 2 ? " + VPCLMULQDQ" : c->clmul >= 2 ? " + PCLMULQDQ" : "";
	if (aes >= 2) {
		const char *lvl = c->aes_evex512 >= 2  ? "VAES-512"
				  : c->aes_vex256 >= 2 ? "VAES-256"
				  : c->aes_vex128 >= 2 ? "AES-NI (AVX)"
						       : "AES-NI";
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "%s%s", lvl, clmul);
		return true;
	}
	/* vpaes: its constants, looked up by byte shuffles (a byte-swap mask alone is not it) */
	if (c->ref_vpaes >= 1 && c->pshufb >= 8) {
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "vpaes (SSSE3, no AES-NI)");
		return true;
	}
	if (c->ref_tables >= 2) {
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "tables (no AES-NI)");
		return true;
	}
	if (c->clmul + c->vclmul >= 2) {
		snprintf(cat, ccap, "GHASH");
		snprintf(impl, icap, "%s", c->vclmul >= 2 ? "VPCLMULQDQ" : "PCLMULQDQ");
		return true;
	}
	if (c->sha256ni >= 2 || c->ref_k256) {
		snprintf(cat, ccap, "SHA-256");
		snprintf(impl, icap, "%s", c->sha256ni >= 2 ? "SHA-NI" : "no SHA-NI");
		return true;
	}
	if (c->ref_k512) {
		snprintf(cat, ccap, "SHA-512");
		snprintf(impl, icap, "generic or SIMD");
		return true;
	}
	if (c->sha1ni >= 2) {
		snprintf(cat, ccap, "SHA-1");
		snprintf(impl, icap, "SHA-NI");
		return true;
	}
	if (c->ref_chacha) {
		snprintf(cat, ccap, "ChaCha20");
		snprintf(impl, icap, "%s", "");
		return true;
	}
	return false;
}

/* A function its instructions did not name, named by its symbol (profile_symbols.def). */
static bool classify_by_name(const char *module, const char *name, char *cat, size_t ccap, char *impl,
			     size_t icap)
{
	static const struct {
		const char *module, *symbol;
		bool prefix;
		const char *category, *impl;
	} known[] = {
#define PROFILE_SYMBOL(m, s, p, c, i) { m, s, p, c, i },
#include "profile_symbols.def"
#undef PROFILE_SYMBOL
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t n = strlen(known[i].symbol);
		if (strncmp(module, known[i].module, strlen(known[i].module)) ||
		    (known[i].prefix ? strncmp(name, known[i].symbol, n) : strcmp(name, known[i].symbol)))
			continue;
		snprintf(cat, ccap, "%s", known[i].category);
		snprintf(impl, icap, "%s", known[i].impl);
		return true;
	}
	return false;
}

/* ---- per process ------------------------------------------------------------------------- */

static struct rp_profile_item *item_for(struct rp_profile *pr, size_t *cap, const struct rp_profile_item *key)
{
	for (size_t i = 0; i < pr->nitems; i++) {
		struct rp_profile_item *it = &pr->items[i];
		if (!strcmp(it->category, key->category) && !strcmp(it->impl, key->impl) &&
		    !strcmp(it->module, key->module) && !strcmp(it->function, key->function))
			return it;
	}
	if (!rp_grow((void **)&pr->items, cap, pr->nitems, sizeof(*pr->items)))
		return NULL;
	struct rp_profile_item *it = &pr->items[pr->nitems++];
	*it = *key;
	it->samples = 0;
	return it;
}

static int by_samples(const void *a, const void *b)
{
	const struct rp_profile_item *x = a, *y = b;
	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->function, y->function);
}

static void classify_module(struct rp_profile *pr, size_t *cap, const struct ct_profile *mod)
{
	char path[4096];
	snprintf(path, sizeof(path), "%.*s", (int)mod->module.len, mod->module.p);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	struct elf e;
	bool open = elf_open(&e, path, mod->build_id);
	/* the functions classified so far (a function holds many sampled offsets) */
	struct done {
		uint64_t start, end;
		struct rp_profile_item key;
	} *done = NULL;
	size_t ndone = 0, cap_done = 0;
	for (uint32_t i = 0; i < mod->count; i++) {
		uint64_t off;
		uint32_t n;
		ct_profile_entry_at(mod, i, &off, &n);
		struct rp_profile_item key = { .samples = 0 };
		snprintf(key.module, sizeof(key.module), "%.63s", base);
		uint64_t va = open ? off_to_vaddr(&e, off) : UINT64_MAX, start, end;
		const char *name = NULL;
		const struct done *d = NULL;
		for (size_t k = 0; k < ndone && !d && va != UINT64_MAX; k++)
			if (va - done[k].start < done[k].end - done[k].start)
				d = &done[k];
		if (d) {
			key = d->key;
		} else if (va != UINT64_MAX && va - e.plt_lo < e.plt_hi - e.plt_lo) {
			snprintf(key.function, sizeof(key.function), "(PLT)");
		} else if (va != UINT64_MAX && function_at(&e, va, &start, &end, &name)) {
			uint64_t so = vaddr_to_off(&e, start);
			struct code_class c;
			if (so != UINT64_MAX && end > start && rp_image_in(&e.im, so, end - start))
				scan(&e, e.im.p + so, end - start, start, &c);
			else
				memset(&c, 0, sizeof(c));
			if (!classify(&c, key.category, sizeof(key.category), key.impl, sizeof(key.impl)) &&
			    name)
				classify_by_name(base, name, key.category, sizeof(key.category), key.impl,
						 sizeof(key.impl));
			if (name)
				snprintf(key.function, sizeof(key.function), "%s", name);
			else
				snprintf(key.function, sizeof(key.function), "+0x%llx",
					 (unsigned long long)start);
			if (rp_grow((void **)&done, &cap_done, ndone, sizeof(*done)))
				done[ndone++] = (struct done){ start, end, key };
		} else {
			snprintf(key.function, sizeof(key.function), "%s",
				 open ? "?" : "(file not readable)");
		}
		struct rp_profile_item *it = item_for(pr, cap, &key);
		if (it)
			it->samples += n;
	}
	free(done);
	if (open)
		rp_image_unmap(&e.im);
}

void rp_profile_classify(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_profile *pr = &m->procs[i].prof;
		if (!pr->has || pr->items)
			continue;
		size_t cap = 0;
		for (size_t k = 0; k < pr->nmods; k++)
			classify_module(pr, &cap, &pr->mods[k]);
		if (pr->nitems)
			qsort(pr->items, pr->nitems, sizeof(*pr->items), by_samples);
		pr->crypto_samples = 0;
		for (size_t k = 0; k < pr->nitems; k++)
			if (pr->items[k].category[0])
				pr->crypto_samples += pr->items[k].samples;
	}
}
