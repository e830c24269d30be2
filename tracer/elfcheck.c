/* SPDX-License-Identifier: MIT */
/*
 * elfcheck.c - can LD_PRELOAD reach this command at all? A static binary has no dynamic loader
 * (no PT_INTERP program header), so the preload never runs in it and the launcher must say so
 * instead of printing an empty report. Also which machine an ELF file is for (the doctor skips
 * other architectures' libraries), and resolves a command name through $PATH like execvp.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"

/* Program headers beyond this are not plausible for a real executable: treat as malformed. */
#define CT_MAX_PHDRS 4096

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

static enum ct_elf_kind scan_phdrs(int fd, off_t phoff, unsigned phnum, unsigned phentsize, bool is64)
{
	size_t want = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);

	if (phnum == 0 || phnum > CT_MAX_PHDRS || phentsize < want)
		return phnum == 0 ? CT_ELF_STATIC : CT_ELF_UNKNOWN;
	for (unsigned i = 0; i < phnum; i++) {
		uint32_t type;
		off_t off = phoff + (off_t)i * phentsize;

		/* p_type is the first 32-bit field in both classes. */
		if (!read_at(fd, &type, sizeof(type), off))
			return CT_ELF_UNKNOWN;
		if (type == PT_INTERP)
			return CT_ELF_DYNAMIC;
	}
	return CT_ELF_STATIC;
}

enum ct_elf_kind ct_elf_classify(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return CT_ELF_UNKNOWN;

	unsigned char ident[EI_NIDENT];
	enum ct_elf_kind kind = CT_ELF_UNKNOWN;

	if (!read_at(fd, ident, sizeof(ident), 0) || memcmp(ident, ELFMAG, SELFMAG) != 0) {
		kind = read_at(fd, ident, 1, 0) ? CT_ELF_NOT_ELF : CT_ELF_UNKNOWN;
		goto out;
	}
	/* Only native-endian files can run here without an emulator; others are not our case. */
	if (ident[EI_DATA] != ELFDATA2LSB)
		goto out;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (read_at(fd, &eh, sizeof(eh), 0))
			kind = scan_phdrs(fd, (off_t)eh.e_phoff, eh.e_phnum, eh.e_phentsize, true);
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (read_at(fd, &eh, sizeof(eh), 0))
			kind = scan_phdrs(fd, (off_t)eh.e_phoff, eh.e_phnum, eh.e_phentsize, false);
	}
out:
	close(fd);
	return kind;
}

bool ct_elf_identify(const char *path, struct ct_elf_id *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char ident[EI_NIDENT + 4]; /* e_type and e_machine follow e_ident in both classes */
	bool ok = fd >= 0 && read_at(fd, ident, sizeof(ident), 0) && !memcmp(ident, ELFMAG, SELFMAG);

	if (fd >= 0)
		close(fd);
	if (!ok)
		return false;
	id->elf_class = ident[EI_CLASS];
	id->data = ident[EI_DATA];
	/* e_machine in the file's own byte order */
	const unsigned char *m = ident + EI_NIDENT + 2;

	id->machine = id->data == ELFDATA2MSB ? (uint16_t)(m[0] << 8 | m[1]) : (uint16_t)(m[1] << 8 | m[0]);
	return true;
}

bool ct_elf_same_arch(const struct ct_elf_id *a, const struct ct_elf_id *b)
{
	return a->elf_class == b->elf_class && a->data == b->data && a->machine == b->machine;
}

void ct_elf_arch_name(const struct ct_elf_id *id, char *buf, size_t cap)
{
	static const struct {
		uint16_t machine;
		const char *name;
	} names[] = {
		{ EM_X86_64, "x86-64" },   { EM_386, "i386" },    { EM_AARCH64, "aarch64" },
		{ EM_ARM, "arm" },         { EM_PPC64, "ppc64" }, { EM_PPC, "ppc" },
		{ EM_S390, "s390" },       { EM_RISCV, "riscv" }, { EM_MIPS, "mips" },
		{ EM_SPARCV9, "sparc64" }, { EM_IA_64, "ia64" },  { 258 /* EM_LOONGARCH */, "loongarch" },
	};
	const char *name = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].machine == id->machine)
			name = names[i].name;
	if (name)
		snprintf(buf, cap, "%s, %s-bit%s", name, id->elf_class == ELFCLASS64 ? "64" : "32",
			 id->data == ELFDATA2MSB ? " big-endian" : "");
	else
		snprintf(buf, cap, "ELF machine %u, %s-bit", id->machine,
			 id->elf_class == ELFCLASS64 ? "64" : "32");
}

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool ct_which(const char *cmd, char *buf, size_t cap)
{
	if (!*cmd)
		return false;
	if (strchr(cmd, '/')) {
		if (strlen(cmd) >= cap)
			return false;
		strcpy(buf, cmd);
		return true;
	}

	/* glibc's execvp default when PATH is unset. */
	const char *path = getenv("PATH");

	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dirlen = (int)(end - p);

		/* An empty PATH element means the current directory. */
		int n = dirlen ? snprintf(buf, cap, "%.*s/%s", dirlen, p, cmd)
			       : snprintf(buf, cap, "%s", cmd);

		if (n > 0 && (size_t)n < cap && is_executable_file(buf))
			return true;
		if (!*end)
			break;
		p = end;
	}
	return false;
}
