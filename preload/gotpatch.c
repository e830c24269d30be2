/* SPDX-License-Identifier: MIT */
/*
 * gotpatch.c - the hooks of a library loaded late (`cryptrace attach`, attach.c). Loaded by
 * dlopen into a running process, our definitions are not in the symbol search order: the
 * program's, libssl's and every other module's calls were bound at start to libcrypto and libc.
 * So each module's import slots (GOT entries: the JUMP_SLOT relocations of its PLT and the
 * GLOB_DAT of -fno-plt code and function pointers) that name a function we hook are pointed at
 * our hook, and put back at detach.
 *
 * Our own slots are patched too: preloaded, our calls to the names we define (execv's to
 * execve, the writer's to close) bind to our definitions, which is what the code expects (their
 * guards pass them through); loaded RTLD_LOCAL they would bind to libc's.
 *
 * What is not patched, and why:
 *  - a module's imports of a function it defines itself (libcrypto's calls
 *    to its own EVP_* through its PLT, libc's to its own read): under LD_PRELOAD those would
 *    come to us nested inside an outer call, or be libcrypto's internal work, which an attach
 *    does not claim to see;
 *  - exit and main's start: a process we were loaded into late is past its start, and its exit
 *    status reaches END through the on_exit handler. The exec family and posix_spawn are
 *    patched, for the END before the image goes: in a late library they pass the environment
 *    on untouched (proc.c), so the new image runs untraced, as it must. The signal family,
 *    prctl, unshare, setns and pthread_exit are patched too: while attached the library has
 *    its fatal-signal handlers and its flusher thread, which they hide and move aside as under
 *    LD_PRELOAD (signals.c, hooks/signal.c).
 *
 * Modules loaded after the attach (a program's dlopen) were bound to the real functions: the
 * flusher thread looks every 100 ms whether the loader added one (dl_iterate_phdr's load count)
 * and, once the count has stayed the same for a look, patches its slots (ct_got_patch_new,
 * patch_modules: only modules the loader has finished relocating); the calls it makes before
 * that are not seen.
 * A dlopen hook would see them all, but the loader reads the caller of dlopen (its RUNPATH,
 * $ORIGIN, its namespace): called from a hook, the program's dlopen would search ours.
 *
 * The real function a hook calls (CT_REAL, ct_resolve) is the one the slot held: the first
 * bound slot seen for that name, else the global definition (a lazy slot still points into its
 * own PLT, which would bind the slot over our hook).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "gotpatch.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#define HAVE_GOTPATCH 1
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#define HAVE_GOTPATCH 1
#else
#define HAVE_GOTPATCH 0
#endif

#if HAVE_GOTPATCH

/* The hooks a late library redirects imports to: every exported hook of libcryptrace.map but
 * the life-cycle ones (see above). */
static const char *const patched_names[] = {
	/* clang-format off */
	/* EVP */
	"EVP_CipherInit", "EVP_CipherInit_ex", "EVP_CipherInit_ex2", "EVP_EncryptInit",
	"EVP_EncryptInit_ex", "EVP_EncryptInit_ex2", "EVP_DecryptInit", "EVP_DecryptInit_ex",
	"EVP_DecryptInit_ex2", "EVP_CipherUpdate", "EVP_EncryptUpdate", "EVP_DecryptUpdate",
	"EVP_Cipher", "EVP_CipherFinal", "EVP_CipherFinal_ex", "EVP_EncryptFinal",
	"EVP_EncryptFinal_ex", "EVP_DecryptFinal", "EVP_DecryptFinal_ex", "EVP_CIPHER_CTX_new",
	"EVP_CIPHER_CTX_free", "EVP_CIPHER_CTX_reset", "EVP_CIPHER_CTX_copy", "EVP_CIPHER_CTX_ctrl",
	"EVP_CIPHER_fetch",
	/* BoringSSL's AEAD API */
	"EVP_AEAD_CTX_init", "EVP_AEAD_CTX_init_with_direction", "EVP_AEAD_CTX_new",
	"EVP_AEAD_CTX_cleanup", "EVP_AEAD_CTX_free", "EVP_AEAD_CTX_seal", "EVP_AEAD_CTX_open",
	"EVP_AEAD_CTX_seal_scatter", "EVP_AEAD_CTX_open_gather",
	/* libgcrypt */
	"gcry_cipher_open", "gcry_cipher_close", "gcry_cipher_setkey", "gcry_cipher_setiv",
	"gcry_cipher_setctr", "gcry_cipher_encrypt", "gcry_cipher_decrypt",
	"gcry_cipher_authenticate", "gcry_cipher_gettag", "gcry_cipher_checktag", "gcry_cipher_ctl",
	/* GnuTLS */
	"gnutls_cipher_init", "gnutls_cipher_encrypt", "gnutls_cipher_encrypt2",
	"gnutls_cipher_encrypt3", "gnutls_cipher_decrypt", "gnutls_cipher_decrypt2",
	"gnutls_cipher_decrypt3", "gnutls_cipher_set_iv", "gnutls_cipher_add_auth",
	"gnutls_cipher_tag", "gnutls_cipher_deinit", "gnutls_aead_cipher_init",
	"gnutls_aead_cipher_encrypt", "gnutls_aead_cipher_decrypt", "gnutls_aead_cipher_encryptv",
	"gnutls_aead_cipher_encryptv2", "gnutls_aead_cipher_decryptv2", "gnutls_aead_cipher_deinit",
	"gnutls_record_send", "gnutls_record_send2", "gnutls_record_send_range",
	"gnutls_record_send_file", "gnutls_record_recv", "gnutls_record_recv_seq",
	"gnutls_record_recv_packet",
	/* low-level AES */
	"AES_set_encrypt_key", "AES_set_decrypt_key", "AES_encrypt", "AES_decrypt",
	"AES_ecb_encrypt", "AES_cbc_encrypt", "AES_cfb128_encrypt", "AES_cfb1_encrypt",
	"AES_cfb8_encrypt", "AES_ofb128_encrypt", "AES_ige_encrypt", "AES_bi_ige_encrypt",
	"AES_wrap_key", "AES_unwrap_key", "AES_ctr128_encrypt",
	/* engines and providers */
	"ENGINE_by_id", "ENGINE_init", "ENGINE_finish", "ENGINE_set_default",
	"ENGINE_set_default_ciphers", "ENGINE_set_default_string", "OSSL_PROVIDER_load",
	"OSSL_PROVIDER_try_load",
	/* the process's life: a fork child's own trace, END before an exec or an _exit */
	"fork", "_exit", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
	"fexecve", "posix_spawn", "posix_spawnp",
	/* the fatal-signal handlers and the flusher thread kept out of the program's way */
	"sigaction", "__sigaction", "signal", "bsd_signal", "ssignal", "sysv_signal",
	"__sysv_signal", "sigset", "prctl", "pthread_exit", "unshare", "setns",
	/* file size limits (a write past one kills) */
	"setrlimit", "setrlimit64", "prlimit", "prlimit64",
	/* kernel interfaces and fd bookkeeping */
	"open", "open64", "openat", "openat64", "__open_2", "__open64_2", "__openat_2",
	"__openat64_2", "ioctl", "socket", "bind", "setsockopt", "accept", "accept4", "send",
	"sendto", "sendmsg", "recv", "recvfrom", "recvmsg", "read", "write", "readv", "writev",
	"__read_chk", "__recv_chk", "__recvfrom_chk", "splice", "vmsplice", "sendfile",
	"sendfile64", "syscall", "close", "close_range", "closefrom", "dup", "dup2", "dup3",
	"fcntl", "fcntl64", "__ioctl_time64", "__fcntl_time64", "__setsockopt64", "__sendmsg64",
	"__recvmsg64",
	/* clang-format on */
};
#define N_NAMES (sizeof(patched_names) / sizeof(patched_names[0]))

struct slot {
	void **at;
	void *orig, *hook;
	uintptr_t module; /* the module's load bias, to find it again at restore */
};

/* slots, n_slots, the load counts and patching: the attach's thread and the flusher's */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t n_slots, cap_slots;
static bool patching;                               /* between patch_all and restore_all */
static unsigned long slots_patched;                 /* stores of a hook into a slot, ever */
static uintptr_t self_base;                         /* our own load bias: our slots are patched too */
static unsigned long long loads_seen, unloads_seen; /* dl_iterate_phdr's dlpi_adds, dlpi_subs */
static unsigned long long loads_last_look;          /* dlpi_adds at the flusher's last look */
static void *hooks[N_NAMES];                        /* our definition of each name (NULL: not built here) */
static void *_Atomic reals[N_NAMES];                /* what the first bound slot held */

/* Name -> index, by hash: a process's modules import thousands of names, and the process is
 * stopped while they are looked at (a linear search over our names took milliseconds). */
#define NAME_BUCKETS 1024               /* a power of two, several times N_NAMES */
static int16_t name_slot[NAME_BUCKETS]; /* index + 1; 0 empty */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void names_index(void)
{
	if (name_slot[name_hash(patched_names[0]) & (NAME_BUCKETS - 1)])
		return; /* made by an earlier attach */
	for (size_t i = 0; i < N_NAMES; i++) {
		uint32_t b = name_hash(patched_names[i]) & (NAME_BUCKETS - 1);
		while (name_slot[b])
			b = (b + 1) & (NAME_BUCKETS - 1);
		name_slot[b] = (int16_t)(i + 1);
	}
}

static int name_index(const char *name)
{
	for (uint32_t b = name_hash(name) & (NAME_BUCKETS - 1); name_slot[b];
	     b = (b + 1) & (NAME_BUCKETS - 1))
		if (!strcmp(patched_names[name_slot[b] - 1], name))
			return name_slot[b] - 1;
	return -1;
}

void *ct_got_real(const char *name)
{
	int i = n_slots ? name_index(name) : -1;
	return i < 0 ? NULL : atomic_load(&reals[i]);
}

/* Whether addr lies in one of the module's segments of type (PT_LOAD, PT_GNU_RELRO). */
static bool in_segment(const struct dl_phdr_info *info, uintptr_t addr, uint32_t type)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == type && addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
			return true;
	}
	return false;
}

static bool in_module(const struct dl_phdr_info *info, uintptr_t addr)
{
	return in_segment(info, addr, PT_LOAD);
}

/* Read-only after relocation: a store needs the page made writable for it. */
static bool in_relro(const struct dl_phdr_info *info, uintptr_t addr)
{
	return in_segment(info, addr, PT_GNU_RELRO);
}

/* Stores v in the slot at, making a read-only (RELRO) page writable for the store and
 * read-only again after it. */
static bool store_slot(void **at, void *v, bool relro)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pg = (void *)((uintptr_t)at & ~(uintptr_t)(page - 1));
	if (relro && mprotect(pg, (size_t)page, PROT_READ | PROT_WRITE) != 0)
		return false;
	__atomic_store_n(at, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect(pg, (size_t)page, PROT_READ);
	return true;
}

/* A dynamic section's address, relocated (glibc relocates them in place, musl does not). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

struct reloc_table {
	const ElfW(Rela) * rela;
	size_t n;
};

static bool add_slot(const struct slot *s)
{
	if (n_slots == cap_slots) {
		size_t cap = cap_slots ? cap_slots * 2 : 256;
		struct slot *p = realloc(slots, cap * sizeof(*p));
		if (!p)
			return false;
		slots = p;
		cap_slots = cap;
	}
	slots[n_slots++] = *s;
	return true;
}

/* The record of the slot at `at`, if one is kept: a program that loads and unloads a plugin
 * while attached often gets it at the same address again, and records of it must not pile up. */
static struct slot *slot_at(void **at)
{
	for (size_t i = 0; i < n_slots; i++)
		if (slots[i].at == at)
			return &slots[i];
	return NULL;
}

/* What the module's own lookup finds for name: the global scope, else the module's dependencies
 * (a libcrypto that python's _hashlib, or any plugin, loaded RTLD_LOCAL is in no global scope),
 * through the module's handle. RTLD_DEFAULT from here also searches our own scope: it may
 * answer our hook. */
static void *definition_for(const struct dl_phdr_info *info, void *handle, const char *name, const void *hook)
{
	void *global = dlsym(RTLD_DEFAULT, name);
	if (global && global != hook)
		return global;
	void *def = dlsym(handle, name);
	return in_module(info, (uintptr_t)def) ? NULL : def;
}

static void patch_table(const struct dl_phdr_info *info, void *handle, struct reloc_table t,
			const ElfW(Sym) * symtab, const char *strtab)
{
	for (size_t r = 0; r < t.n; r++) {
		unsigned type = (unsigned)ELF64_R_TYPE(t.rela[r].r_info);
		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(t.rela[r].r_info)];
		int i = name_index(strtab + sym->st_name);
		if (i < 0 || !hooks[i])
			continue;
		if (sym->st_shndx != SHN_UNDEF && info->dlpi_addr != self_base)
			continue; /* its own definition: an internal call (ours go to our hooks) */
		void **at = (void **)(info->dlpi_addr + t.rela[r].r_offset);
		void *cur = __atomic_load_n(at, __ATOMIC_ACQUIRE);
		if (cur == hooks[i])
			continue;
		/* a lazy slot still points into the module's own PLT: the real function is the one
		 * its binding would find */
		void *real = in_module(info, (uintptr_t)cur)
				     ? definition_for(info, handle, patched_names[i], hooks[i])
				     : cur;
		if (!real)
			continue;
		void *expected = NULL;
		atomic_compare_exchange_strong(&reals[i], &expected, real);
		struct slot s = { .at = at, .orig = cur, .hook = hooks[i], .module = info->dlpi_addr };
		struct slot *same = patching ? slot_at(at) : NULL;
		if (same) { /* a module loaded again where it was: one record, what the slot holds now */
			if (store_slot(at, hooks[i], in_relro(info, (uintptr_t)at))) {
				*same = s;
				slots_patched++;
			}
		} else if (add_slot(&s)) {
			if (store_slot(at, hooks[i], in_relro(info, (uintptr_t)at)))
				slots_patched++;
			else
				n_slots--;
		}
	}
}

static void patch_module(const struct dl_phdr_info *info, void *handle)
{
	const ElfW(Dyn) *dyn = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct reloc_table plt = { 0 }, data = { 0 };
	bool plt_is_rela = true;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)dyn_ptr(info, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const char *)dyn_ptr(info, d->d_un.d_ptr);
			break;
		case DT_JMPREL:
			plt.rela = (const ElfW(Rela) *)dyn_ptr(info, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			plt.n = d->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_PLTREL:
			plt_is_rela = d->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			data.rela = (const ElfW(Rela) *)dyn_ptr(info, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			data.n = d->d_un.d_val / sizeof(ElfW(Rela));
			break;
		default:
			break;
		}
	}
	if (!symtab || !strtab)
		return;
	if (plt.rela && plt_is_rela)
		patch_table(info, handle, plt, symtab, strtab);
	if (data.rela)
		patch_table(info, handle, data, symtab, strtab);
}

struct load_counts {
	unsigned long long adds, subs;
};

static int read_load_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct load_counts *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	return 1; /* the first module says it for all */
}

/*
 * The modules are patched outside dl_iterate_phdr, from a copy of its list, each one held open:
 *  - A module is in the list from its mapping on, before the loader has relocated it. A slot
 *    patched then is overwritten by its relocation (the calls are not seen), or holds a value
 *    not yet relocated (taken for the real function), or its RELRO page is made read-only under
 *    the loader's stores. dlopen(RTLD_NOLOAD) waits for the loader's lock, which a dlopen
 *    holds from its mapping to its end: the module it answers is relocated, and held, so that
 *    a dlclose meanwhile cannot unmap it. A module whose load failed is not answered.
 *  - The iteration's callback holds the loader's list lock; dlopen and dlsym take its load lock,
 *    which a dlopen in another thread holds while it waits for the list lock.
 */
struct module {
	struct dl_phdr_info info; /* dlpi_name: our copy */
	void *handle;
};

struct module_list {
	struct module *m;
	size_t n, cap;
	struct load_counts counts; /* as the list was read */
	bool failed;
};

static int copy_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_list *l = arg;
	if (l->n == 0)
		read_load_counts(info, size, &l->counts);
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct module *p = realloc(l->m, cap * sizeof(*p));
		if (!p) {
			l->failed = true;
			return 1;
		}
		l->m = p;
		l->cap = cap;
	}
	struct module *m = &l->m[l->n];
	memset(m, 0, sizeof(*m));
	m->info.dlpi_addr = info->dlpi_addr;
	m->info.dlpi_phdr = info->dlpi_phdr;
	m->info.dlpi_phnum = info->dlpi_phnum;
	m->info.dlpi_name = strdup(info->dlpi_name ? info->dlpi_name : "");
	if (!m->info.dlpi_name) {
		l->failed = true;
		return 1;
	}
	l->n++;
	return 0;
}

/* The module as the loader has it now, relocated and held open; NULL if it is gone (a failed or
 * closed load) or its name answers another module (one of another namespace, dlmopen). */
static void *hold_module(const struct dl_phdr_info *info)
{
	void *h = dlopen(info->dlpi_name[0] ? info->dlpi_name : NULL, RTLD_NOLOAD | RTLD_LAZY);
	struct link_map *map = NULL;
	if (h && (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map || map->l_addr != info->dlpi_addr)) {
		dlclose(h);
		h = NULL;
	}
	return h;
}

/* Patches every module of the list that the loader has finished loading; the caller holds
 * patch_lock. Returns false if the list could not be read (memory). */
static bool patch_modules(struct load_counts *counts)
{
	struct module_list l = { 0 };
	dl_iterate_phdr(copy_module, &l);
	for (size_t i = 0; i < l.n; i++) {
		struct module *m = &l.m[i];
		if (!l.failed && (m->handle = hold_module(&m->info)))
			patch_module(&m->info, m->handle);
	}
	for (size_t i = 0; i < l.n; i++) {
		if (l.m[i].handle)
			dlclose(l.m[i].handle);
		free((void *)l.m[i].info.dlpi_name);
	}
	free(l.m);
	*counts = l.counts;
	return !l.failed;
}

long ct_got_patch_all(void)
{
	Dl_info self;
	if (!dladdr((void *)ct_got_patch_all, &self))
		return -1;
	void *h = dlopen(self.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		return -1;
	struct link_map *self_map = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &self_map) == 0 && self_map)
		self_base = self_map->l_addr;
	names_index();
	for (size_t i = 0; i < N_NAMES; i++)
		hooks[i] = dlsym(h, patched_names[i]);
	dlclose(h);
	pthread_mutex_lock(&patch_lock);
	struct load_counts c = { 0 };
	n_slots = 0;
	patch_modules(&c);
	loads_seen = loads_last_look = c.adds; /* as the list was read: a module added since is
						* looked at next time */
	unloads_seen = c.subs;
	patching = true;
	long n = (long)n_slots;
	pthread_mutex_unlock(&patch_lock);
	return n;
}

/* A slot of a module gone since (dlclose) is forgotten: another module may be mapped there. */
static int mark_live(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	bool *live = arg;
	for (size_t i = 0; i < n_slots; i++)
		if (slots[i].at && slots[i].module == info->dlpi_addr &&
		    in_module(info, (uintptr_t)slots[i].at))
			live[i] = true;
	return 0;
}

static void forget_unloaded(void)
{
	bool *live = calloc(n_slots ? n_slots : 1, sizeof(*live));
	if (!live)
		return;
	dl_iterate_phdr(mark_live, live);
	size_t kept = 0; /* the records of gone modules dropped, so that they do not pile up */
	for (size_t i = 0; i < n_slots; i++)
		if (live[i])
			slots[kept++] = slots[i];
	n_slots = kept;
	free(live);
}

long ct_got_patch_new(void)
{
	pthread_mutex_lock(&patch_lock);
	long added = 0;
	struct load_counts c = { 0 };
	/* a module is patched once the loader has been quiet for one look (100 ms): the patch takes
	 * each module with dlopen, which waits while a dlopen runs, and a detach that stops the
	 * program inside its dlopen would wait for this thread (a program loading without pause
	 * gets its modules patched when it pauses) */
	bool quiet = dl_iterate_phdr(read_load_counts, &c) && c.adds == loads_last_look;
	loads_last_look = c.adds;
	if (patching && quiet && c.adds != loads_seen) {
		if (c.subs != unloads_seen)
			forget_unloaded();
		unsigned long before = slots_patched;
		/* slots that hold a hook already are passed; a list not read in full is read again
		 * next time */
		if (patch_modules(&c)) {
			loads_seen = c.adds;
			unloads_seen = c.subs;
		}
		added = (long)(slots_patched - before);
	}
	pthread_mutex_unlock(&patch_lock);
	if (added)
		ct_log(2, "attached: %ld import slots of a module loaded since point at the hooks", added);
	return added;
}

/* Slots are put back module by module, as the modules are now: a module unloaded since the
 * patch (dlclose) took its slots with it, and another may be mapped where it was. */
struct restore_arg {
	size_t restored;
};

static int restore_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct restore_arg *r = arg;
	for (size_t i = 0; i < n_slots; i++) {
		struct slot *s = &slots[i];
		if (!s->at || s->module != info->dlpi_addr || !in_module(info, (uintptr_t)s->at))
			continue;
		/* a slot someone else changed since (a lazy binding, another tool) is theirs now */
		if (__atomic_load_n(s->at, __ATOMIC_ACQUIRE) == s->hook &&
		    store_slot(s->at, s->orig, in_relro(info, (uintptr_t)s->at)))
			r->restored++;
		s->at = NULL;
	}
	return 0;
}

size_t ct_got_restore_all(void)
{
	struct restore_arg r = { 0 };
	pthread_mutex_lock(&patch_lock);
	dl_iterate_phdr(restore_module, &r);
	n_slots = 0;
	patching = false;
	pthread_mutex_unlock(&patch_lock);
	return r.restored;
}

#else /* no slot patching on this architecture yet: attach refuses to begin (-ENOTSUP) */

long ct_got_patch_all(void)
{
	return -1;
}

size_t ct_got_restore_all(void)
{
	return 0;
}

long ct_got_patch_new(void)
{
	return 0;
}

void *ct_got_real(const char *name)
{
	(void)name;
	return NULL;
}

#endif
