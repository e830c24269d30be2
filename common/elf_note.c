/* SPDX-License-Identifier: MIT */
/* elf_note.c - the GNU build id in a run of ELF notes (elf_note.h). */
#include "elf_note.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

bool ct_elf_build_id(const uint8_t *p, size_t len, char *hex, size_t cap)
{
	while (len >= sizeof(Elf64_Nhdr)) { /* Elf32_Nhdr is the same three words */
		Elf64_Nhdr n;
		memcpy(&n, p, sizeof(n));
		size_t namesz = ((size_t)n.n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)n.n_descsz + 3) & ~(size_t)3;
		if (namesz > len - sizeof(n) || descsz > len - sizeof(n) - namesz)
			return false;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && !memcmp(p + sizeof(n), "GNU", 4)) {
			const uint8_t *d = p + sizeof(n) + namesz;
			size_t k = 0;
			for (uint32_t j = 0; j < n.n_descsz && k + 2 < cap; j++, k += 2)
				snprintf(hex + k, 3, "%02x", d[j]);
			if (cap)
				hex[k] = 0;
			return true;
		}
		p += sizeof(n) + namesz + descsz;
		len -= sizeof(n) + namesz + descsz;
	}
	return false;
}
