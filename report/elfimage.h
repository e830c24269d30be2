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

/* The ELF header of a 64-bit little-endian image, or NULL. */
const Elf64_Ehdr *rp_image_elf64(const struct rp_image *im);

/* Section header i, copied out; false when it lies outside the mapping (or shentsize is too
 * small to hold one). */
bool rp_image_shdr(const struct rp_image *im, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh);

/* The image's GNU build id as lower-case hex (cut to cap - 1 digits), from its note sections,
 * else its PT_NOTE segments (a separate debug file keeps the sections); false when it has none
 * (hex is then ""). */
bool rp_image_build_id(const struct rp_image *im, const Elf64_Ehdr *eh, char *hex, size_t cap);

#endif
