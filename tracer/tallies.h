/* SPDX-License-Identifier: MIT */
/*
 * tallies.h - the profile's sample counts: an open-addressed table of samples by (process image,
 * file, file offset, time bin), kept at most half full. The profile's counts are one (every
 * sample in bin 0); its timeline is another, whose bins widen as the table fills, so that a run
 * of any length fits in a few MiB. Split from profile.c so that the widening can be tested alone
 * (tests/unit/test_tallies.c).
 */
#ifndef CT_TALLIES_H
#define CT_TALLIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tally {
	uint32_t image, file;
	uint64_t off;
	uint32_t bin;
	uint64_t n; /* 0: free slot */
};

struct tallies {
	struct tally *t;
	size_t cap, used;
};

/* Bins start at TL_BIN_NS; when the table holds TL_MAX_ENTRIES (image, file, offset, bin) counts
 * the bins are widened two-fold and merged, up to TL_BIN_MAX_NS, past which samples are left out
 * of the timeline (still counted in the profile): a few MiB whatever the run's length. 10 ms
 * shows a TLS handshake apart from the transfer; 128 Ki entries hold a minute of 2 CPUs busy at
 * 1 kHz with every sample at its own offset, hours of a hot loop. */
#define TL_BIN_NS 10000000ull
#define TL_BIN_MAX_NS 60000000000ull
#define TL_MAX_ENTRIES (1u << 17)

struct timeline {
	uint64_t start_ns; /* CLOCK_MONOTONIC of bin 0: the first sample's */
	uint64_t bin_ns;
	struct tallies c;
	uint64_t left_out; /* samples past the widest bins' room */
};

/* A (image, file, offset) key's hash (the stacks table hashes frames with it too). */
uint64_t ct_tally_hash(uint32_t image, uint32_t file, uint64_t off);

/* Rebuilds the table at cap slots with bins 2^shift times wider (merging what falls together);
 * false when out of memory (the table is unchanged). */
bool ct_tallies_rebuild(struct tallies *ts, size_t cap, unsigned shift);

/* One more sample for the key; false when the table would need more than max_cap slots (or
 * memory ran out): the sample is not counted. */
bool ct_tallies_add(struct tallies *ts, uint32_t image, uint32_t file, uint64_t off, uint32_t bin,
		    size_t max_cap);

/* One more sample at time ns (CLOCK_MONOTONIC) in the timeline; widens its bins when it is full,
 * counts the sample in left_out when even the widest bins have no room. */
void ct_timeline_add(struct timeline *t, uint32_t image, uint32_t file, uint64_t off, uint64_t ns);

#endif
