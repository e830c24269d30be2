/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c - libFuzzer target over the trace reader and the reporter's loader: every input is
 * walked record by record with ct_reader_next (as any consumer would), then loaded as a trace
 * file into a report model (argv redacted, call sites demangled), merged, and printed as JSON
 * and text (and the profile's folded stacks) to /dev/null; then once more
 * with a --since/--until window from the input's last byte, printed as JSON, text, HTML, CSV. Built with
 * clang -fsanitize=fuzzer,address,undefined by tests/fuzz/run.sh; the corpus (small real traces
 * of the examples) is tests/fuzz/corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "trace_format.h"
#include "views.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink)
		sink = fopen("/dev/null", "w");

	struct ct_reader r;
	if (ct_reader_init(&r, data, size) == CT_READ_OK) {
		struct ct_record rec;
		for (unsigned n = 0; n < 1u << 20 && ct_reader_next(&r, &rec) == CT_READ_OK; n++)
			;
	}

	struct rp_model m;
	char msg[512];
	rp_model_init(&m);
	struct rp_view view = { 0 };
	if (rp_load_buffer(&m, "fuzz.ctrace", data, size, msg, sizeof(msg)) < 2 &&
	    (rp_demangle(&m), rp_view_apply(&m, &view, msg, sizeof(msg)))) {
		rp_print_json(&m, sink);
		rp_print_text(&m, sink);
		rp_print_folded(&m, RP_FOLD_SAMPLES, sink); /* the profile's stacks */
	}
	rp_model_free(&m);

	/* Again with a time window taken from the last byte, so the snapshot-difference cut
	 * (window.c reads the records once more) and the outputs that print it see damaged input */
	if (size) {
		uint8_t b = data[size - 1];
		struct rp_view w = { .has_since = b & 1,
				     .has_until = b & 2,
				     .since_s = ((b >> 2) & 7) * 0.125 };
		w.until_s = w.since_s + ((b >> 5) & 7) * 0.25;
		rp_model_init(&m);
		if (rp_load_buffer(&m, "fuzz.ctrace", data, size, msg, sizeof(msg)) < 2 &&
		    rp_view_apply(&m, &w, msg, sizeof(msg))) {
			rp_print_json(&m, sink);
			rp_print_text(&m, sink);
			rp_print_html(&m, &w, sink);
			rp_print_csv(&m, sink);
		}
		rp_model_free(&m);
	}
	return 0;
}
