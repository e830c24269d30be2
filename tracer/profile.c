/* SPDX-License-Identifier: MIT */
/*
 * profile.c - the launcher's sampling profile (profile.h says what it is for).
 *
 * perf_event_open with the software cpu-clock, user space only (exclude_kernel: allowed to an
 * unprivileged user at perf_event_paranoid 2; a VM has no hardware counters), one event per CPU
 * on the child's pid, inherited by its threads and children, enabled at its exec. Each event has
 * a ring buffer, which a thread of the launcher drains every DRAIN_MS: samples (ip, pid, time)
 * are resolved against each process's executable mappings, known from the MMAP2 records (and
 * /proc/PID/maps for mappings made before sampling began) and counted per (process image, file,
 * file offset). Nothing is done to the program: no signal, no ptrace, nothing in its memory.
 *
 * On x86-64 each sample also carries the user rip, rsp and rbp and a bounded copy of the stack
 * (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER): the drain thread unwinds it at once with the
 * files' .eh_frame (unwind.c) and counts the distinct stacks, as (file, offset) frames, per
 * image. The stack bytes live in the ring buffer and the scratch copy only, until the next
 * sample overwrites them: they are never written anywhere. Elsewhere, or when the kernel
 * refuses stack sampling, the profile is leaf-only and its PROFILE_STACKS record says why.
 *
 * After the run, each process image's counts are appended to its trace file (that pid's file
 * begun nearest the image's first sample) as PROFILE records: the reporter names and
 * classifies the code at those offsets (report/profile.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "codefile.h"
#include "elfimage.h"
#include "profile.h"
#include "tallies.h"
#include "trace_format.h"
#include "trace_stream.h"
#include "tracer.h"
#include "unwind_files.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define STACKS_SUPPORTED 1
#else
#define STACKS_SUPPORTED 0
#endif

#define RING_PAGES 64 /* per CPU: 256 KiB, seconds of samples at 10 kHz, drained every DRAIN_MS */
/* With stacks each sample is ~8 KiB: 64 pages hold 31, drained every DRAIN_MS up to 1 kHz (the
 * default 250 Hz fills 5 between drains); above, 128 pages (512 KiB + the control page: all of
 * what kernel.perf_event_mlock_kb, 516, lets an unprivileged user lock per CPU), drained when a
 * quarter full. */
#define RING_PAGES_STACKS_FAST 128
#define RING_PAGES_MIN 8
#define DRAIN_MS 20
/* The stack bytes each sample copies (a multiple of 8, CRYPTRACE_PROFILE_STACK overrides): the
 * frames of a crypto call are near the top (a SHA-256 block function called by HMAC from Python
 * is ~1 KiB deep); deep interpreter stacks are cut, their root frames missing. */
#define STACK_BYTES 8192
#define MAX_FRAMES 32
#define MAX_STACKS 65536 /* distinct stacks kept over all images; beyond, samples are counted */
#define MAX_CPUS 1024
#define MAX_ENTRIES_PER_MODULE 65536

struct ring {
	int fd;
	uint8_t *base; /* the control page, then RING_PAGES of data */
	size_t data_size;
};

struct map {
	uint64_t start, end, pgoff;
	uint32_t file; /* index into files */
};

struct image { /* a process between two execs */
	uint32_t pid;
	uint32_t gen;
	uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC of its first and last samples */
	uint64_t samples, unmapped;
	struct map *maps;
	size_t nmaps, cap;
	uint64_t stacks_dropped; /* samples whose stack did not fit the table */
	bool maps_read;          /* /proc/PID/maps read for this image */
	bool current;            /* the pid's live image */
};

struct stack {
	uint64_t hash;
	uint64_t n; /* 0: free slot */
	uint32_t image, depth;
	size_t first; /* its frames in stack_frames */
};

/* entries per PROFILE_TIME record: 16 bytes each, with the module's path, under CT_MAX_PAYLOAD */
#define TL_RECORD_ENTRIES 64512u

struct ct_profiler {
	struct ring rings[MAX_CPUS];
	unsigned nrings;
	unsigned period_us;
	unsigned ring_pages, drain_ms;
	unsigned stack_bytes; /* 0: leaf only (stacks_why says why) */
	char stacks_why[200];
	char **files;
	struct ct_file_cfi *cfi; /* per file: its unwind tables, opened at its first frame */
	size_t nfiles, files_cap;
	struct stack *stacks;
	size_t stacks_cap, nstacks;
	struct ct_unwind_frame *stack_frames;
	size_t nframes, frames_cap;
	struct image *images;
	size_t nimages, images_cap;
	struct tallies counts; /* bin 0: the whole run */
	struct timeline tl;
	uint64_t lost;
	pthread_t thread;
	bool thread_started;
	volatile int stop;
	int wake[2]; /* ct_profile_finish writes one byte: the drain thread stops now, not after its
		      * pause (up to DRAIN_MS: every run's end waited for it) */
	uint8_t scratch[65536];
};

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- what the samples are resolved against ----------------------------------------------- */

static uint32_t file_id(struct ct_profiler *p, const char *path)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i], path))
			return (uint32_t)i;
	if (p->nfiles == p->files_cap) {
		size_t cap = p->files_cap ? 2 * p->files_cap : 64;
		char **f = realloc(p->files, cap * sizeof(*f));
		if (!f)
			return UINT32_MAX;
		p->files = f;
		struct ct_file_cfi *c = realloc(p->cfi, cap * sizeof(*c));
		if (!c)
			return UINT32_MAX;
		p->cfi = c;
		p->files_cap = cap;
	}
	char *s = strdup(path);
	if (!s)
		return UINT32_MAX;
	p->files[p->nfiles] = s;
	memset(&p->cfi[p->nfiles], 0, sizeof(p->cfi[0]));
	return (uint32_t)p->nfiles++;
}

/* The live image of pid, made when first seen. */
static struct image *image_of(struct ct_profiler *p, uint32_t pid)
{
	for (size_t i = p->nimages; i-- > 0;)
		if (p->images[i].pid == pid && p->images[i].current)
			return &p->images[i];
	if (p->nimages == p->images_cap) {
		size_t cap = p->images_cap ? 2 * p->images_cap : 16;
		struct image *im = realloc(p->images, cap * sizeof(*im));
		if (!im)
			return NULL;
		p->images = im;
		p->images_cap = cap;
	}
	struct image *im = &p->images[p->nimages++];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->current = true;
	return im;
}

static void add_map(struct ct_profiler *p, struct image *im, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path)
{
	if (!len || path[0] != '/')
		return;
	uint32_t f = file_id(p, path);
	if (f == UINT32_MAX)
		return;
	/* a mapping over an older one replaces it */
	for (size_t i = 0; i < im->nmaps; i++) {
		struct map *m = &im->maps[i];
		if (m->start < start + len && start < m->end) {
			*m = (struct map){ start, start + len, pgoff, f };
			return;
		}
	}
	if (im->nmaps == im->cap) {
		size_t cap = im->cap ? 2 * im->cap : 32;
		struct map *mm = realloc(im->maps, cap * sizeof(*mm));
		if (!mm)
			return;
		im->maps = mm;
		im->cap = cap;
	}
	im->maps[im->nmaps++] = (struct map){ start, start + len, pgoff, f };
}

/* Mappings made before sampling began (the executable and the loader at exec, or all of them
 * for a process whose MMAP records were lost): read once per image while it runs. */
static void read_proc_maps(struct ct_profiler *p, struct image *im)
{
	char path[64], line[4352];
	im->maps_read = true;
	snprintf(path, sizeof(path), "/proc/%u/maps", im->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &name_at) < 4 ||
		    perms[2] != 'x' || !name_at)
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		add_map(p, im, start, end - start, off, name);
	}
	fclose(f);
}

static const struct map *find_map(const struct image *im, uint64_t ip)
{
	for (size_t i = 0; i < im->nmaps; i++)
		if (ip - im->maps[i].start < im->maps[i].end - im->maps[i].start)
			return &im->maps[i];
	return NULL;
}

/* ---- the call stacks --------------------------------------------------------------------- */

struct locate_ctx {
	struct ct_profiler *p;
	struct image *im;
};

static bool locate(void *arg, uint64_t ip, struct ct_unwind_where *w)
{
	struct locate_ctx *x = arg;
	const struct map *m = find_map(x->im, ip);
	if (!m && !x->im->maps_read) {
		read_proc_maps(x->p, x->im);
		m = find_map(x->im, ip);
	}
	if (!m)
		return false;
	w->file = m->file;
	w->off = ip - m->start + m->pgoff;
	w->t = ct_file_cfi_tables(&x->p->cfi[m->file], x->p->files[m->file]);
	w->vaddr = ct_file_cfi_vaddr(&x->p->cfi[m->file], w->off);
	if (w->vaddr == UINT64_MAX)
		w->t = NULL;
	return true;
}

static uint64_t hash_stack(uint32_t image, const struct ct_unwind_frame *f, unsigned n)
{
	uint64_t h = image * 0x9e3779b97f4a7c15ull + n;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ ct_tally_hash(image, f[i].file, f[i].off)) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

static bool same_frames(const struct ct_unwind_frame *a, const struct ct_unwind_frame *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].file != b[i].file || a[i].off != b[i].off)
			return false;
	return true;
}

static bool stacks_grow(struct ct_profiler *p)
{
	size_t cap = p->stacks_cap ? 2 * p->stacks_cap : 1024;
	struct stack *t = calloc(cap, sizeof(*t));
	if (!t)
		return false;
	for (size_t i = 0; i < p->stacks_cap; i++) {
		if (!p->stacks[i].n)
			continue;
		size_t j = p->stacks[i].hash & (cap - 1);
		while (t[j].n)
			j = (j + 1) & (cap - 1);
		t[j] = p->stacks[i];
	}
	free(p->stacks);
	p->stacks = t;
	p->stacks_cap = cap;
	return true;
}

static bool frames_reserve(struct ct_profiler *p, size_t more)
{
	if (p->nframes + more <= p->frames_cap)
		return true;
	size_t cap = p->frames_cap ? 2 * p->frames_cap : 4096;
	while (cap < p->nframes + more)
		cap *= 2;
	struct ct_unwind_frame *f = realloc(p->stack_frames, cap * sizeof(*f));
	if (!f)
		return false;
	p->stack_frames = f;
	p->frames_cap = cap;
	return true;
}

static void count_stack(struct ct_profiler *p, struct image *im, const struct ct_unwind_frame *f, unsigned n)
{
	uint32_t image = (uint32_t)(im - p->images);
	if (p->nstacks * 2 >= p->stacks_cap && p->nstacks < MAX_STACKS)
		stacks_grow(p); /* failing, the table stays as it is: new stacks are dropped below */
	if (!p->stacks_cap) {
		im->stacks_dropped++;
		return;
	}
	uint64_t h = hash_stack(image, f, n);
	size_t j = h & (p->stacks_cap - 1);
	for (; p->stacks[j].n; j = (j + 1) & (p->stacks_cap - 1)) {
		struct stack *s = &p->stacks[j];
		if (s->hash == h && s->image == image && s->depth == n &&
		    same_frames(&p->stack_frames[s->first], f, n)) {
			s->n++;
			return;
		}
	}
	/* the table stays at most half full, so the probe above always ends */
	if (p->nstacks >= MAX_STACKS || (p->nstacks + 1) * 2 > p->stacks_cap || !frames_reserve(p, n)) {
		im->stacks_dropped++;
		return;
	}
	memcpy(&p->stack_frames[p->nframes], f, n * sizeof(*f));
	p->stacks[j] = (struct stack){ .hash = h, .n = 1, .image = image, .depth = n, .first = p->nframes };
	p->nframes += n;
	p->nstacks++;
}

/* The regs and stack that follow TIME in a sample (x86-64: bp, sp, ip in perf_regs order);
 * false when the sample has none usable. */
static bool sample_stack(const struct ct_profiler *p, const uint8_t *r, size_t len,
			 struct ct_unwind_regs *regs, const uint8_t **stack, size_t *stack_len)
{
	size_t at = 32;
	uint64_t abi, size, dyn;
	if (!p->stack_bytes || len < at + 8)
		return false;
	memcpy(&abi, r + at, 8);
	at += 8;
	bool regs_ok = abi == PERF_SAMPLE_REGS_ABI_64; /* a 32-bit process's CFI numbers differ */
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if (len - at < 24)
			return false;
		memcpy(&regs->bp, r + at, 8);
		memcpy(&regs->sp, r + at + 8, 8);
		memcpy(&regs->ip, r + at + 16, 8);
		at += 24;
	}
	if (len - at < 8)
		return false;
	memcpy(&size, r + at, 8);
	at += 8;
	if (!size || size > len - at || len - at - size < 8)
		return false;
	memcpy(&dyn, r + at + size, 8);
	*stack = r + at;
	*stack_len = dyn < size ? dyn : size;
	return regs_ok;
}

/* ---- the timeline ------------------------------------------------------------------------ */

/* One image's timeline of one file into fd, in records of at most `room` entries. */
static bool tl_write(const struct ct_profiler *p, const struct timeline *t, uint32_t image, uint32_t file,
		     int fd, uint8_t *buf, size_t cap, uint64_t *offs, uint32_t *cnts, size_t room)
{
	uint32_t *bins = malloc(room * sizeof(*bins));
	if (!bins)
		return false;
	struct ct_profile_time rec = { .bin_us = (uint32_t)(t->bin_ns / 1000u),
				       .start_mono_ns = t->start_ns,
				       .module = ct_str_from(p->files[file]),
				       .left_out = t->left_out };
	bool ok = true;
	uint32_t k = 0;
	for (size_t i = 0; ok && i <= t->c.cap; i++) {
		const struct tally *c = i < t->c.cap ? &t->c.t[i] : NULL;
		if (c && c->n && c->image == image && c->file == file) {
			bins[k] = c->bin;
			offs[k] = c->off;
			cnts[k++] = c->n > UINT32_MAX ? UINT32_MAX : (uint32_t)c->n;
		}
		if (k && (k == room || i == t->c.cap)) {
			size_t n = ct_encode_profile_time(buf, cap, &rec, bins, offs, cnts, k);
			ok = n && ct_write_all(fd, buf, n);
			k = 0;
		}
	}
	free(bins);
	return ok;
}

/* ---- the records ------------------------------------------------------------------------- */

static void on_sample(struct ct_profiler *p, const uint8_t *r, size_t len)
{
	/* PERF_SAMPLE_IP | TID | TIME: u64 ip; u32 pid, tid; u64 time; then with stacks
	 * REGS_USER (u64 abi, u64 regs[3]) and STACK_USER (u64 size, bytes, u64 dyn_size) */
	if (len < sizeof(struct perf_event_header) + 24)
		return;
	uint64_t ip, t;
	uint32_t pid;
	memcpy(&ip, r + 8, 8);
	memcpy(&pid, r + 16, 4);
	memcpy(&t, r + 24, 8);
	struct image *im = image_of(p, pid);
	if (!im)
		return;
	if (!im->samples && !im->unmapped)
		im->first_ns = t;
	im->last_ns = t;
	const struct map *m = find_map(im, ip);
	if (!m && !im->maps_read) {
		read_proc_maps(p, im);
		m = find_map(im, ip);
	}
	if (!m) {
		im->unmapped++;
		return;
	}
	im->samples++;
	uint64_t off = ip - m->start + m->pgoff;
	ct_tallies_add(&p->counts, (uint32_t)(im - p->images), m->file, off, 0, SIZE_MAX);
	ct_timeline_add(&p->tl, (uint32_t)(im - p->images), m->file, off, t);
	struct ct_unwind_frame frames[MAX_FRAMES];
	struct ct_unwind_regs regs;
	const uint8_t *stack;
	size_t stack_len;
	unsigned n = 0;
	if (sample_stack(p, r, len, &regs, &stack, &stack_len) && regs.ip == ip) {
		struct locate_ctx x = { p, im };
		n = ct_unwind(&regs, stack, stack_len, locate, &x, frames, MAX_FRAMES);
	}
	if (!n) { /* leaf only */
		frames[0] = (struct ct_unwind_frame){ m->file, off };
		n = 1;
	}
	count_stack(p, im, frames, n);
}

static void on_record(struct ct_profiler *p, const uint8_t *r, size_t len)
{
	struct perf_event_header h;
	memcpy(&h, r, sizeof(h));
	uint32_t pid, ppid;
	struct image *im;
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		on_sample(p, r, len);
		break;
	case PERF_RECORD_MMAP2: {
		/* u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino, ino_generation; u32 prot,
		 * flags; char filename[] */
		if (len < 8 + 64 + 1)
			break;
		uint64_t addr, mlen, pgoff;
		uint32_t prot;
		memcpy(&pid, r + 8, 4);
		memcpy(&addr, r + 16, 8);
		memcpy(&mlen, r + 24, 8);
		memcpy(&pgoff, r + 32, 8);
		memcpy(&prot, r + 64, 4);
		const char *name = (const char *)r + 72;
		if (!(prot & 4 /* PROT_EXEC */) || !memchr(name, 0, len - 72))
			break;
		im = image_of(p, pid);
		if (im)
			add_map(p, im, addr, mlen, pgoff, name);
		break;
	}
	case PERF_RECORD_COMM:
		/* an exec: a new image, whose mappings come with it */
		if (!(h.misc & PERF_RECORD_MISC_COMM_EXEC) || len < 16)
			break;
		memcpy(&pid, r + 8, 4);
		im = image_of(p, pid);
		if (im && (im->samples || im->unmapped || im->nmaps)) {
			uint32_t gen = im->gen;
			im->current = false;
			im = image_of(p, pid);
			if (im)
				im->gen = gen + 1;
		}
		break;
	case PERF_RECORD_FORK: {
		/* u32 pid, ppid, tid, ptid: a new process has its parent's mappings */
		if (len < 24)
			break;
		uint32_t tid;
		memcpy(&pid, r + 8, 4);
		memcpy(&ppid, r + 12, 4);
		memcpy(&tid, r + 16, 4);
		if (pid == ppid || pid != tid)
			break; /* a thread */
		struct image *parent = image_of(p, ppid);
		size_t pi = parent ? (size_t)(parent - p->images) : 0;
		im = image_of(p, pid);
		if (!parent || !im)
			break;
		parent = &p->images[pi]; /* image_of may have moved the array */
		for (size_t i = 0; i < parent->nmaps; i++) {
			const struct map *m = &parent->maps[i];
			add_map(p, im, m->start, m->end - m->start, m->pgoff, p->files[m->file]);
		}
		im->maps_read = parent->maps_read;
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost;
		if (len >= 24) {
			memcpy(&lost, r + 16, 8);
			p->lost += lost;
		}
		break;
	}
	default:
		break;
	}
}

static void drain_ring(struct ct_profiler *p, struct ring *rg)
{
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)rg->base;
	const uint8_t *data = rg->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t at = tail % rg->data_size;
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(at + i) % rg->data_size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		const uint8_t *r = data + at;
		if (at + h.size > rg->data_size) { /* wraps: copy it out */
			size_t first = rg->data_size - at;
			memcpy(p->scratch, data + at, first);
			memcpy(p->scratch + first, data, h.size - first);
			r = p->scratch;
		}
		on_record(p, r, h.size);
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct ct_profiler *p)
{
	for (unsigned i = 0; i < p->nrings; i++)
		drain_ring(p, &p->rings[i]);
}

static void *drain_thread(void *arg)
{
	struct ct_profiler *p = arg;
	struct pollfd wake = { .fd = p->wake[0], .events = POLLIN };
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		drain_all(p);
		poll(&wake, 1, (int)p->drain_ms);
	}
	return NULL;
}

/* ---- attach ------------------------------------------------------------------------------ */

static void close_rings(struct ct_profiler *p)
{
	size_t len = (1 + p->ring_pages) * (size_t)sysconf(_SC_PAGESIZE);
	for (unsigned i = 0; i < p->nrings; i++) {
		munmap(p->rings[i].base, len);
		close(p->rings[i].fd);
	}
	p->nrings = 0;
}

static void profiler_free(struct ct_profiler *p)
{
	close_rings(p);
	for (int i = 0; i < 2; i++)
		if (p->wake[i] >= 0)
			close(p->wake[i]);
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i]);
		ct_file_cfi_close(&p->cfi[i]);
	}
	free(p->files);
	free(p->cfi);
	free(p->stacks);
	free(p->stack_frames);
	for (size_t i = 0; i < p->nimages; i++)
		free(p->images[i].maps);
	free(p->images);
	free(p->counts.t);
	free(p->tl.c.t);
	free(p);
}

static void refusal(char *why, size_t cap, int err)
{
	char paranoid[16] = "?";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (!fgets(paranoid, sizeof(paranoid), f))
			snprintf(paranoid, sizeof(paranoid), "?");
		paranoid[strcspn(paranoid, "\n")] = 0;
		fclose(f);
	}
	int level = atoi(paranoid);
	if ((err == EACCES || err == EPERM) && paranoid[0] != '?' && level <= 2)
		snprintf(why, cap,
			 "perf events refused (%s) although kernel.perf_event_paranoid is %s, which lets a "
			 "user sample their own processes: a seccomp policy (a container's) forbids "
			 "perf_event_open; allow it there to get the profile",
			 strerror(err), paranoid);
	else if (err == EACCES || err == EPERM)
		snprintf(why, cap,
			 "perf events refused (%s): kernel.perf_event_paranoid is %s; `sysctl "
			 "kernel.perf_event_paranoid=2` lets a user sample their own processes",
			 strerror(err), paranoid);
	else if (err == ENOSYS || err == ENOENT || err == EOPNOTSUPP)
		snprintf(why, cap, "perf events are not available here (%s)", strerror(err));
	else
		snprintf(why, cap, "perf_event_open failed: %s", strerror(err));
}

unsigned ct_profile_hz(void)
{
	const char *e = getenv("CRYPTRACE_PROFILE_HZ");
	char *end;
	unsigned long v = e && *e ? strtoul(e, &end, 10) : 0;
	return v >= 10 && v <= 10000 && e && !*end ? (unsigned)v : CT_PROFILE_HZ;
}

/* The stack bytes to sample: STACK_BYTES, or CRYPTRACE_PROFILE_STACK (0 turns stacks off, else
 * 512 to 32768, rounded to 8); 0 with *why saying why. */
static unsigned stack_bytes_wanted(char *why, size_t cap)
{
	if (!STACKS_SUPPORTED) {
		snprintf(why, cap,
			 "call stacks are sampled on x86-64 only: this profile has the sampled functions, "
			 "not their callers");
		return 0;
	}
	const char *e = getenv("CRYPTRACE_PROFILE_STACK");
	char *end;
	unsigned long v = e && *e ? strtoul(e, &end, 10) : STACK_BYTES;
	if (e && *e && (*end || (v && (v < 512 || v > 32768))))
		v = STACK_BYTES;
	if (!v)
		snprintf(why, cap, "CRYPTRACE_PROFILE_STACK=0: call stacks were not sampled");
	return (unsigned)(v & ~7ul);
}

#if STACKS_SUPPORTED
static void want_stacks(struct perf_event_attr *a, unsigned bytes)
{
	if (bytes) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = 1ull << PERF_REG_X86_BP | 1ull << PERF_REG_X86_SP |
				      1ull << PERF_REG_X86_IP;
		a->sample_stack_user = bytes;
	} else {
		a->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		a->sample_regs_user = 0;
		a->sample_stack_user = 0;
	}
}
#else
static void want_stacks(struct perf_event_attr *a, unsigned bytes)
{
	(void)a;
	(void)bytes;
}
#endif

struct ct_profiler *ct_profile_attach(pid_t pid, unsigned hz, char *why, size_t cap)
{
	struct ct_profiler *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	p->wake[0] = p->wake[1] = -1;
	if (!hz)
		hz = CT_PROFILE_HZ;
	p->period_us = 1000000u / hz;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = (uint64_t)p->period_us * 1000u;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	p->stack_bytes = stack_bytes_wanted(p->stacks_why, sizeof(p->stacks_why));
	want_stacks(&a, p->stack_bytes);
	p->ring_pages = p->stack_bytes && hz > 1000 ? RING_PAGES_STACKS_FAST : RING_PAGES;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);
	size_t len = (1 + p->ring_pages) * (size_t)page;
	int first_err = 0;
	bool mmap_refused = false;
	for (long cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		int fd = perf_event_open(&a, pid, (int)cpu);
		if (fd < 0 && p->stack_bytes && !p->nrings) {
			/* an older kernel, or a policy, may refuse the stack copy alone: leaf only */
			int err = errno;
			want_stacks(&a, 0);
			fd = perf_event_open(&a, pid, (int)cpu);
			if (fd >= 0) {
				snprintf(
					p->stacks_why, sizeof(p->stacks_why),
					"the kernel refused to sample call stacks (%s): this profile has the "
					"sampled functions, not their callers",
					strerror(err));
				p->stack_bytes = 0;
				p->ring_pages = RING_PAGES;
				len = (1 + p->ring_pages) * (size_t)page;
			} else {
				want_stacks(&a, p->stack_bytes);
				errno = err;
			}
		}
		if (fd < 0) {
			if (!first_err)
				first_err = errno;
			continue; /* an offline CPU */
		}
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		while (m == MAP_FAILED && errno == EPERM && !p->nrings && p->ring_pages > RING_PAGES_MIN) {
			/* over the user's locked-memory allowance (another perf session holds part of
			 * it): smaller rings, drained more often */
			p->ring_pages /= 2;
			len = (1 + p->ring_pages) * (size_t)page;
			m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		}
		if (m == MAP_FAILED) {
			if (!first_err) {
				first_err = errno;
				mmap_refused = errno == EPERM;
			}
			close(fd);
			continue;
		}
		p->rings[p->nrings++] = (struct ring){ fd, m, p->ring_pages * (size_t)page };
	}
	/* drained when a ring is a quarter full at the sampling rate (a sample with its stack is
	 * stack_bytes + ~100 bytes), every DRAIN_MS at most */
	p->drain_ms = DRAIN_MS;
	if (p->stack_bytes) {
		unsigned per_ring = (unsigned)(p->ring_pages * (size_t)page / (p->stack_bytes + 128));
		unsigned ms = per_ring / 4 * 1000u / hz;
		p->drain_ms = ms < 1 ? 1 : ms < DRAIN_MS ? ms : DRAIN_MS;
	}
	if (!p->nrings) {
		if (mmap_refused)
			snprintf(
				why, cap,
				"perf events opened, but their buffers exceed this user's locked-memory "
				"allowance (kernel.perf_event_mlock_kb and `ulimit -l`; another perf session "
				"may hold it): raise either to get the profile");
		else
			refusal(why, cap, first_err ? first_err : ENOSYS);
		profiler_free(p);
		return NULL;
	}
	if (pipe2(p->wake, O_CLOEXEC) != 0 || pthread_create(&p->thread, NULL, drain_thread, p) != 0) {
		snprintf(why, cap, "cannot start the profile's thread");
		profiler_free(p);
		return NULL;
	}
	p->thread_started = true;
	return p;
}

/* ---- writing ----------------------------------------------------------------------------- */

struct trace_file {
	char path[4096];
	uint64_t start_mono_ns;
	bool closed; /* it has an END: its writer is done with it (a daemon that outlived the
		      * command is still writing to its own) */
};

/* Whether the trace on fd is pid's (its first record is its HEADER, *start_mono_ns its start) and
 * has an END record (*closed). Streamed, per-call batches passed over unread. */
static bool trace_of_pid(int fd, uint32_t pid, uint64_t *start_mono_ns, bool *closed)
{
	static struct ct_record rec;
	struct ct_stream s;
	bool ok = false;
	*closed = false;
	if (ct_stream_open_fd(&s, fd, UINT64_MAX) == CT_READ_OK &&
	    ct_stream_next(&s, &rec, true) == CT_READ_OK && rec.type == CT_REC_HEADER &&
	    rec.u.header.pid == pid) {
		ok = true;
		*start_mono_ns = rec.u.header.start_mono_ns;
		while (ct_stream_next(&s, &rec, true) == CT_READ_OK)
			*closed |= rec.type == CT_REC_END;
	}
	ct_stream_close(&s);
	return ok;
}

/* The trace files of pid in outdir, with their start times. */
static size_t files_of(const char *outdir, uint32_t pid, struct trace_file *out, size_t cap)
{
	DIR *d = opendir(outdir);
	if (!d)
		return 0;
	char want[32];
	snprintf(want, sizeof(want), ".%u.ctrace", pid);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < cap) {
		const char *at = strstr(e->d_name, want);
		if (!at || (at[strlen(want)] && at[strlen(want)] != '.'))
			continue;
		snprintf(out[n].path, sizeof(out[n].path), "%s/%s", outdir, e->d_name);
		int fd = open(out[n].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (trace_of_pid(fd, pid, &out[n].start_mono_ns, &out[n].closed))
			n++;
		close(fd);
	}
	closedir(d);
	return n;
}

/* The largest file whose build id is read (the reporter reads no larger one either). */
#define MAX_ELF_BYTES (1024u << 20)

/* The file's GNU build id, "" when it has none: the reporter reads a file only when its id is
 * the one recorded (it may have been replaced since the run), and finds its debug file by it.
 * Its notes are found through the ELF headers (a file's first bytes are no run of notes). */
static void build_id_of(const char *path, char *hex, size_t cap)
{
	hex[0] = 0;
	struct rp_image im;
	if (rp_image_map(path, MAX_ELF_BYTES, &im) != RP_IMAGE_OK)
		return;
	struct rp_elf eh;
	if (rp_image_elf(&im, &eh))
		rp_image_build_id(&im, &eh, hex, cap);
	rp_image_unmap(&im);
}

/* The image's stacks as PROFILE_STACKS records, frames by module index (modidx, per file), as
 * many records as the payload limit needs; leaf only, one record saying why. */
static bool write_stacks(struct ct_profiler *p, uint32_t image, int fd, uint8_t *buf, size_t cap,
			 const uint32_t *modidx)
{
	enum { CHUNK = 2048 }; /* stacks per record: 2048 x (6 + 32 x 12) bytes stay under 1 MiB */
	const struct image *im = &p->images[image];
	struct ct_profile_stacks h = { .dropped = im->stacks_dropped };
	if (!p->stack_bytes) {
		h.flags = CT_STACKS_LEAF_ONLY;
		h.note = ct_str_from(p->stacks_why);
		size_t n = ct_encode_profile_stacks(buf, cap, &h, NULL, NULL, NULL, NULL, 0);
		return n && ct_write_all(fd, buf, n);
	}
	uint32_t *samples = malloc(CHUNK * sizeof(*samples)),
		 *mods = malloc(CHUNK * MAX_FRAMES * sizeof(*mods));
	uint16_t *depths = malloc(CHUNK * sizeof(*depths));
	uint64_t *offs = malloc(CHUNK * MAX_FRAMES * sizeof(*offs));
	bool ok = samples && mods && depths && offs;
	uint32_t k = 0;
	size_t f = 0;
	for (size_t i = 0; ok && i <= p->stacks_cap; i++) {
		const struct stack *st = i < p->stacks_cap ? &p->stacks[i] : NULL;
		if (st && (!st->n || st->image != image))
			continue;
		if (st) {
			samples[k] = st->n > UINT32_MAX ? UINT32_MAX : (uint32_t)st->n;
			depths[k] = (uint16_t)st->depth;
			for (uint32_t d = 0; d < st->depth; d++, f++) {
				const struct ct_unwind_frame *fr = &p->stack_frames[st->first + d];
				mods[f] = modidx[fr->file];
				offs[f] = fr->off;
			}
			k++;
		}
		if (k && (k == CHUNK || !st)) {
			size_t n = ct_encode_profile_stacks(buf, cap, &h, samples, depths, mods, offs, k);
			ok = n && ct_write_all(fd, buf, n);
			h.dropped = 0; /* said once */
			k = 0;
			f = 0;
		}
	}
	free(samples);
	free(mods);
	free(depths);
	free(offs);
	return ok;
}

/* One image's records into fd: totals, then each file's offsets (also of a file only its
 * stacks pass through, without offsets of its own), then the stacks. */
static bool write_image(struct ct_profiler *p, uint32_t image, int fd, uint8_t *buf, size_t cap,
			uint64_t *offs, uint32_t *cnts)
{
	const struct image *im = &p->images[image];
	struct ct_profile tot = {
		.period_us = p->period_us, .samples = im->samples, .lost = p->lost, .unmapped = im->unmapped
	};
	size_t n = ct_encode_profile(buf, cap, &tot, NULL, NULL, 0);
	uint32_t *modidx = calloc(p->nfiles + 1, sizeof(*modidx)), nmod = 0;
	if (!n || !modidx || !ct_write_all(fd, buf, n)) {
		free(modidx);
		return false;
	}
	for (size_t i = 0; i < p->stacks_cap; i++) /* UINT32_MAX: a file some stack passes through */
		for (uint32_t d = 0; p->stacks[i].n && p->stacks[i].image == image && d < p->stacks[i].depth;
		     d++)
			modidx[p->stack_frames[p->stacks[i].first + d].file] = UINT32_MAX;
	bool ok = true;
	for (uint32_t f = 0; ok && f < p->nfiles; f++) {
		uint32_t k = 0;
		uint64_t total = 0;
		for (size_t i = 0; i < p->counts.cap && k < MAX_ENTRIES_PER_MODULE; i++) {
			const struct tally *c = &p->counts.t[i];
			if (c->n && c->image == image && c->file == f) {
				offs[k] = c->off;
				cnts[k++] = c->n > UINT32_MAX ? UINT32_MAX : (uint32_t)c->n;
				total += c->n;
			}
		}
		if (!k && modidx[f] != UINT32_MAX)
			continue;
		modidx[f] = nmod++;
		char bid[64];
		build_id_of(p->files[f], bid, sizeof(bid));
		struct ct_profile m = { .period_us = p->period_us,
					.samples = total,
					.module = ct_str_from(p->files[f]),
					.build_id = ct_str_from(bid) };
		n = ct_encode_profile(buf, cap, &m, offs, cnts, k);
		ok = n && ct_write_all(fd, buf, n) &&
		     tl_write(p, &p->tl, image, f, fd, buf, cap, offs, cnts, TL_RECORD_ENTRIES);
	}
	ok = ok && write_stacks(p, image, fd, buf, cap, modidx);
	free(modidx);
	return ok;
}

unsigned ct_profile_finish(struct ct_profiler *p, const char *outdir, char *why, size_t cap)
{
	why[0] = 0;
	if (!p)
		return 0;
	if (p->thread_started) {
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
		ssize_t w = write(p->wake[1], "", 1);
		(void)w; /* without it, the thread stops at its next pause's end */
		pthread_join(p->thread, NULL);
	}
	drain_all(p);
	close_rings(p);
	size_t bufcap = CT_MAX_PAYLOAD + 64;
	uint8_t *buf = malloc(bufcap);
	uint64_t *offs = malloc(MAX_ENTRIES_PER_MODULE * sizeof(*offs));
	uint32_t *cnts = malloc(MAX_ENTRIES_PER_MODULE * sizeof(*cnts));
	struct trace_file *tf = malloc(64 * sizeof(*tf));
	unsigned written = 0, orphans = 0, running = 0;
	for (size_t i = 0; buf && offs && cnts && tf && i < p->nimages; i++) {
		const struct image *im = &p->images[i];
		if (!im->samples && !im->unmapped)
			continue;
		size_t nf = files_of(outdir, im->pid, tf, 64);
		/* the file its process wrote: the latest begun before the image's last sample (the
		 * preload begins it as the image starts, after the loader's first samples; an image
		 * exec'd by a forked child is not the child's, begun before), and of a file and its
		 * continuations (one start time: the process closed its descriptors, ssh's closefrom)
		 * the one it finished; else the file begun nearest its first sample */
		const struct trace_file *best = NULL;
		for (size_t k = 0; k < nf; k++)
			if (tf[k].start_mono_ns <= im->last_ns &&
			    (!best || tf[k].start_mono_ns > best->start_mono_ns ||
			     (tf[k].start_mono_ns == best->start_mono_ns && tf[k].closed && !best->closed)))
				best = &tf[k];
		uint64_t best_d = UINT64_MAX;
		bool late = !best; /* every file begun after its last sample */
		for (size_t k = 0; k < nf && late; k++) {
			uint64_t d = tf[k].start_mono_ns > im->first_ns ? tf[k].start_mono_ns - im->first_ns
									: im->first_ns - tf[k].start_mono_ns;
			if (d < best_d) {
				best = &tf[k];
				best_d = d;
			}
		}
		if (best && !best->closed) { /* its process still writes it: appending would interleave */
			running++;
			continue;
		}
		int fd = best ? open(best->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (fd < 0) {
			orphans++;
			continue;
		}
		if (write_image(p, (uint32_t)i, fd, buf, bufcap, offs, cnts))
			written++;
		close(fd);
	}
	if (orphans || running)
		snprintf(why, cap,
			 "%u process image(s) sampled without a trace file of their own, %u still running "
			 "(a daemon that outlived the command: its trace is still open): their samples are "
			 "not written",
			 orphans, running);
	free(buf);
	free(offs);
	free(cnts);
	free(tf);
	profiler_free(p);
	return written;
}

void ct_profile_note(const char *outdir, uint32_t pid, const char *why)
{
	struct trace_file *tf = malloc(64 * sizeof(*tf));
	if (!tf)
		return;
	size_t nf = files_of(outdir, pid, tf, 64);
	const struct trace_file *best = NULL;
	for (size_t k = 0; k < nf; k++)
		if (!best || tf[k].start_mono_ns > best->start_mono_ns)
			best = &tf[k];
	int fd = best && best->closed ? open(best->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (fd >= 0) {
		struct ct_event e = { .event_id = 0x7ffffff0u,
				      .kind = CT_EV_TRACE_WARNING,
				      .path_id = CT_NO_PATH,
				      .tid = pid,
				      .count = 1,
				      .call = ct_str_from("profile"),
				      .detail = ct_str_from(why) };
		uint8_t buf[2048];
		size_t n = ct_encode_event(buf, sizeof(buf), &e);
		if (n)
			ct_write_all(fd, buf, n);
		close(fd);
	}
	free(tf);
}
