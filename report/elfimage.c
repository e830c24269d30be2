/* SPDX-License-Identifier: MIT */
/* elfimage.c - files named by a trace, mapped safely for the ELF readers (elfimage.h). */
#include "elfimage.h"

#include <errno.h>
#include <fcntl.h>
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

const Elf64_Ehdr *rp_image_elf64(const struct rp_image *im)
{
	if (im->len < sizeof(Elf64_Ehdr) || memcmp(im->p, ELFMAG, SELFMAG) || im->p[EI_CLASS] != ELFCLASS64 ||
	    im->p[EI_DATA] != ELFDATA2LSB)
		return NULL;
	return (const Elf64_Ehdr *)(const void *)im->p;
}

bool rp_image_shdr(const struct rp_image *im, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh)
{
	if (eh->e_shentsize < sizeof(Elf64_Shdr) || i >= eh->e_shnum ||
	    !rp_image_in(im, eh->e_shoff + (uint64_t)i * eh->e_shentsize, sizeof(*sh)))
		return false;
	memcpy(sh, im->p + eh->e_shoff + (uint64_t)i * eh->e_shentsize, sizeof(*sh));
	return true;
}

bool rp_image_build_id(const struct rp_image *im, const Elf64_Ehdr *eh, char *hex, size_t cap)
{
	if (cap)
		hex[0] = 0;
	Elf64_Shdr sh;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (rp_image_shdr(im, eh, i, &sh) && sh.sh_type == SHT_NOTE &&
		    rp_image_in(im, sh.sh_offset, sh.sh_size) &&
		    ct_elf_build_id(im->p + sh.sh_offset, sh.sh_size, hex, cap))
			return true;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return false;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t at = eh->e_phoff + (uint64_t)i * sizeof(ph);
		if (!rp_image_in(im, at, sizeof(ph)))
			return false;
		memcpy(&ph, im->p + at, sizeof(ph));
		if (ph.p_type == PT_NOTE && rp_image_in(im, ph.p_offset, ph.p_filesz) &&
		    ct_elf_build_id(im->p + ph.p_offset, ph.p_filesz, hex, cap))
			return true;
	}
	return false;
}
