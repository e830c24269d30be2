/* SPDX-License-Identifier: MIT */
/*
 * elfimage.h - a file named by a trace (a traced executable, a call-site module), mapped for
 * reading as the reporter's ELF readers need it: regular files only (the path may come from
 * anywhere: a FIFO would block, a device may act on open), read-only, bounded, and every
 * offset checked against the mapping.
 */
#ifndef CT_REPORT_ELFIMAGE_H
#define CT_REPORT_ELFIMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_image {
	const uint8_t *p;
	size_t len; /* bytes mapped: the file, or its first cap bytes */
	uint64_t file_size;
};

enum rp_image_state {
	RP_IMAGE_OK = 0,
	RP_IMAGE_MISSING = 1,    /* no such file */
	RP_IMAGE_UNREADABLE = 2, /* not a regular file, empty, or it cannot be opened or mapped */
};

/* Maps at most cap bytes of path; on RP_IMAGE_OK the caller unmaps it. */
enum rp_image_state rp_image_map(const char *path, size_t cap, struct rp_image *im);
void rp_image_unmap(struct rp_image *im);

/* [off, off + len) lies inside the mapping. */
bool rp_image_in(const struct rp_image *im, uint64_t off, uint64_t len);

/* An ELF file's header, of either class (32- or 64-bit) and byte order, widened to the 64-bit
 * layout in host byte order (e_ident as in the file). The readers below decode the file's section
 * and program headers and symbols the same way: the reporter on x86-64 names call sites of i386,
 * mipsel and big-endian (mips, powerpc) programs alike. */
struct rp_elf {
	Elf64_Ehdr h;
	bool is64; /* ELFCLASS64 */
	bool msb;  /* ELFDATA2MSB: big-endian */
};

/* The image's ELF header; false when it is no ELF file (or its header is cut short). */
bool rp_image_elf(const struct rp_image *im, struct rp_elf *eh);

/* Section header i, program header i, and the symbol at file offset off, decoded; false when it
 * lies outside the mapping (or the entry size is too small to hold one). */
bool rp_image_shdr(const struct rp_image *im, const struct rp_elf *eh, unsigned i, Elf64_Shdr *sh);
bool rp_image_phdr(const struct rp_image *im, const struct rp_elf *eh, unsigned i, Elf64_Phdr *ph);
bool rp_image_sym(const struct rp_image *im, const struct rp_elf *eh, uint64_t off, Elf64_Sym *y);

/* The size of one symbol table entry in this file's class (the smallest sh_entsize accepted). */
size_t rp_elf_sym_size(const struct rp_elf *eh);

/* A 32-bit word at p, in the file's byte order (.eh_frame_hdr's tables). */
uint32_t rp_elf_u32(const struct rp_elf *eh, const uint8_t *p);

/* The image's GNU build id as lower-case hex (cut to cap - 1 digits), from its note sections,
 * else its PT_NOTE segments (a separate debug file keeps the sections); false when it has none
 * (hex is then ""). */
bool rp_image_build_id(const struct rp_image *im, const struct rp_elf *eh, char *hex, size_t cap);

#endif
