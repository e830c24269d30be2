/* SPDX-License-Identifier: MIT */
/* elfimage.c - files named by a trace, mapped safely for the ELF readers (elfimage.h). */
#include "elfimage.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_note.h"

enum rp_image_state rp_image_map(const char *path, size_t cap, struct rp_image *im)
{
	memset(im, 0, sizeof(*im));
	/* stat first: never open anything but a regular file */
	struct stat st;
	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? RP_IMAGE_MISSING : RP_IMAGE_UNREADABLE;
	if (!S_ISREG(st.st_mode))
		return RP_IMAGE_UNREADABLE;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return RP_IMAGE_UNREADABLE;
	/* and the file opened is still one (it may have been replaced since the stat) */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return RP_IMAGE_UNREADABLE;
	}
	size_t len = (uint64_t)st.st_size > cap ? cap : (size_t)st.st_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return RP_IMAGE_UNREADABLE;
	*im = (struct rp_image){ .p = m, .len = len, .file_size = (uint64_t)st.st_size };
	return RP_IMAGE_OK;
}

void rp_image_unmap(struct rp_image *im)
{
	if (im->p)
		munmap((void *)im->p, im->len);
	memset(im, 0, sizeof(*im));
}

bool rp_image_in(const struct rp_image *im, uint64_t off, uint64_t len)
{
	return off <= im->len && len <= im->len - off;
}

/* n (1, 2, 4 or 8) bytes at p, in the file's byte order */
static uint64_t file_uint(const struct rp_elf *eh, const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[eh->msb ? i : n - 1 - i];
	return v;
}

uint32_t rp_elf_u32(const struct rp_elf *eh, const uint8_t *p)
{
	return (uint32_t)file_uint(eh, p, 4);
}

/* Field f of a structure at p whose layout is T32 or T64 by the file's class: the same names in
 * both, at other offsets and widths. */
#define FIELD(eh, p, T32, T64, f)                                                                            \
	((eh)->is64 ? file_uint(eh, (p) + offsetof(T64, f), sizeof(((T64 *)0)->f))                           \
		    : file_uint(eh, (p) + offsetof(T32, f), sizeof(((T32 *)0)->f)))

bool rp_image_elf(const struct rp_image *im, struct rp_elf *eh)
{
	memset(eh, 0, sizeof(*eh));
	if (im->len < EI_NIDENT || memcmp(im->p, ELFMAG, SELFMAG) ||
	    (im->p[EI_CLASS] != ELFCLASS64 && im->p[EI_CLASS] != ELFCLASS32) ||
	    (im->p[EI_DATA] != ELFDATA2LSB && im->p[EI_DATA] != ELFDATA2MSB))
		return false;
	eh->is64 = im->p[EI_CLASS] == ELFCLASS64;
	eh->msb = im->p[EI_DATA] == ELFDATA2MSB;
	if (im->len < (eh->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return false;
	const uint8_t *p = im->p;
	Elf64_Ehdr *h = &eh->h;
	memcpy(h->e_ident, p, EI_NIDENT);
#define EH(f) h->f = (__typeof__(h->f))FIELD(eh, p, Elf32_Ehdr, Elf64_Ehdr, f)
	EH(e_type);
	EH(e_machine);
	EH(e_version);
	EH(e_entry);
	EH(e_phoff);
	EH(e_shoff);
	EH(e_flags);
	EH(e_ehsize);
	EH(e_phentsize);
	EH(e_phnum);
	EH(e_shentsize);
	EH(e_shnum);
	EH(e_shstrndx);
#undef EH
	return true;
}

bool rp_image_shdr(const struct rp_image *im, const struct rp_elf *eh, unsigned i, Elf64_Shdr *sh)
{
	size_t size = eh->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint64_t at = eh->h.e_shoff + (uint64_t)i * eh->h.e_shentsize;
	if (eh->h.e_shentsize < size || i >= eh->h.e_shnum || !rp_image_in(im, at, size))
		return false;
	const uint8_t *p = im->p + at;
#define SH(f) sh->f = (__typeof__(sh->f))FIELD(eh, p, Elf32_Shdr, Elf64_Shdr, f)
	SH(sh_name);
	SH(sh_type);
	SH(sh_flags);
	SH(sh_addr);
	SH(sh_offset);
	SH(sh_size);
	SH(sh_link);
	SH(sh_info);
	SH(sh_addralign);
	SH(sh_entsize);
#undef SH
	return true;
}

bool rp_image_phdr(const struct rp_image *im, const struct rp_elf *eh, unsigned i, Elf64_Phdr *ph)
{
	size_t size = eh->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t at = eh->h.e_phoff + (uint64_t)i * eh->h.e_phentsize;
	if (eh->h.e_phentsize < size || i >= eh->h.e_phnum || !rp_image_in(im, at, size))
		return false;
	const uint8_t *p = im->p + at;
#define PH(f) ph->f = (__typeof__(ph->f))FIELD(eh, p, Elf32_Phdr, Elf64_Phdr, f)
	PH(p_type);
	PH(p_flags);
	PH(p_offset);
	PH(p_vaddr);
	PH(p_paddr);
	PH(p_filesz);
	PH(p_memsz);
	PH(p_align);
#undef PH
	return true;
}

size_t rp_elf_sym_size(const struct rp_elf *eh)
{
	return eh->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
}

bool rp_image_sym(const struct rp_image *im, const struct rp_elf *eh, uint64_t off, Elf64_Sym *y)
{
	if (!rp_image_in(im, off, rp_elf_sym_size(eh)))
		return false;
	const uint8_t *p = im->p + off;
#define SYM(f) y->f = (__typeof__(y->f))FIELD(eh, p, Elf32_Sym, Elf64_Sym, f)
	SYM(st_name);
	SYM(st_info);
	SYM(st_other);
	SYM(st_shndx);
	SYM(st_value);
	SYM(st_size);
#undef SYM
	return true;
}

bool rp_image_build_id(const struct rp_image *im, const struct rp_elf *eh, char *hex, size_t cap)
{
	if (cap)
		hex[0] = 0;
	Elf64_Shdr sh;
	for (unsigned i = 0; i < eh->h.e_shnum; i++)
		if (rp_image_shdr(im, eh, i, &sh) && sh.sh_type == SHT_NOTE &&
		    rp_image_in(im, sh.sh_offset, sh.sh_size) &&
		    ct_elf_build_id_msb(im->p + sh.sh_offset, sh.sh_size, eh->msb, hex, cap))
			return true;
	Elf64_Phdr ph;
	for (unsigned i = 0; i < eh->h.e_phnum && rp_image_phdr(im, eh, i, &ph); i++)
		if (ph.p_type == PT_NOTE && rp_image_in(im, ph.p_offset, ph.p_filesz) &&
		    ct_elf_build_id_msb(im->p + ph.p_offset, ph.p_filesz, eh->msb, hex, cap))
			return true;
	return false;
}
