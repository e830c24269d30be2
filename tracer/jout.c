/* SPDX-License-Identifier: MIT */
/*
 * jout.c - the little JSON the launcher's own subcommands (compare, doctor) print: a quoted,
 * escaped string and a number that is null when unknown. The reporter has its own writer; this
 * one stays here so the launcher's commands need nothing from report/ to print JSON.
 */
#include <math.h>
#include <stdio.h>

#include "tracer.h"

void ct_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void ct_json_num(FILE *out, double v, bool known)
{
	if (!known || isnan(v) || isinf(v))
		fputs("null", out);
	else
		fprintf(out, "%.6g", v);
}
