/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c - libFuzzer target over the trace reader and the reporter's loader: every input is
 * walked record by record with ct_reader_next (as any consumer would), then loaded as a trace
 * file into a report model, merged, and printed as JSON and text to /dev/null. Built with
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
	    rp_view_apply(&m, &view, msg, sizeof(msg))) {
		rp_print_json(&m, sink);
		rp_print_text(&m, sink);
	}
	rp_model_free(&m);
	return 0;
}
