/* SPDX-License-Identifier: MIT */
/* elf_note.c - the GNU build id in a run of ELF notes (elf_note.h). */
#include "elf_note.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

/* A note header's word, in the byte order of the file the notes come from. */
static uint32_t note_word(const uint8_t *p, bool msb)
{
	return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

bool ct_elf_build_id_msb(const uint8_t *p, size_t len, bool msb, char *hex, size_t cap)
{
	enum { NHDR = 12 }; /* namesz, descsz, type: three words in both classes */
	while (len >= NHDR) {
		uint32_t n_namesz = note_word(p, msb), n_descsz = note_word(p + 4, msb),
			 n_type = note_word(p + 8, msb);
		size_t namesz = ((size_t)n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)n_descsz + 3) & ~(size_t)3;
		if (namesz > len - NHDR || descsz > len - NHDR - namesz)
			return false;
		if (n_type == NT_GNU_BUILD_ID && n_namesz == 4 && !memcmp(p + NHDR, "GNU", 4)) {
			const uint8_t *d = p + NHDR + namesz;
			size_t k = 0;
			for (uint32_t j = 0; j < n_descsz && k + 2 < cap; j++, k += 2)
				snprintf(hex + k, 3, "%02x", d[j]);
			if (cap)
				hex[k] = 0;
			return true;
		}
		p += NHDR + namesz + descsz;
		len -= NHDR + namesz + descsz;
	}
	return false;
}

bool ct_elf_build_id(const uint8_t *p, size_t len, char *hex, size_t cap)
{
	return ct_elf_build_id_msb(p, len, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, hex, cap);
}
