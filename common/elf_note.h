/* SPDX-License-Identifier: MIT */
/*
 * elf_note.h - the GNU build id in a run of ELF notes: the same bytes whether the preload reads
 * a module's PT_NOTE segments in memory or the reporter reads its .note sections from the file,
 * so both name a module's build alike.
 */
#ifndef CT_ELF_NOTE_H
#define CT_ELF_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Finds NT_GNU_BUILD_ID among the notes in [p, p + len) (any alignment; nothing is read outside
 * it) and writes it as lower-case hex into hex (cut to cap - 1 digits). False when there is none
 * (hex is then left alone). */
bool ct_elf_build_id(const uint8_t *p, size_t len, char *hex, size_t cap);
/* The same in a file of either byte order (msb: big-endian), read on any host: the reporter. */
bool ct_elf_build_id_msb(const uint8_t *p, size_t len, bool msb, char *hex, size_t cap);

#endif
