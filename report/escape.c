/* SPDX-License-Identifier: MIT */
/*
 * escape.c - strings that come from traced programs (argv, call details, library names) are
 * untrusted: each output gets them escaped for its syntax, with control characters and bytes that
 * are not valid UTF-8 replaced, so a trace cannot inject markup, break a CSV row or a JSON string.
 */
#include "views.h"

#include <math.h>
#include <string.h>

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when it is invalid. */
static unsigned utf8_len(const unsigned char *p, size_t left)
{
	unsigned n;
	uint32_t cp;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n > left)
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	static const uint32_t min_cp[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Writes the valid UTF-8 sequence at p, or bad in place of an invalid byte; returns the bytes
 * consumed. */
static size_t put_utf8(FILE *f, const unsigned char *p, size_t left, const char *bad)
{
	unsigned n = utf8_len(p, left);
	if (n == 0) {
		fputs(bad, f);
		return 1;
	}
	fwrite(p, 1, n, f);
	return n;
}

void rp_html_str(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		case '\n':
			fputc('\n', f);
			break; /* call sites are one frame a line (in <pre>) */
		default:
			if (c < 0x20 || c == 0x7f) {
				fputc('?', f);
			} else if (c >= 0x80) {
				i += put_utf8(f, p + i, len - i, "&#xfffd;");
				continue;
			} else {
				fputc(c, f);
			}
		}
		i++;
	}
}

void rp_html_cstr(FILE *f, const char *s)
{
	rp_html_str(f, s ? s : "", s ? strlen(s) : 0);
}

void rp_json_str(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c >= 0x80) {
			i += put_utf8(f, p + i, len - i, "\\ufffd");
			continue;
		} else {
			fputc(c, f);
		}
		i++;
	}
	fputc('"', f);
}

/* OpenMetrics label values: backslash, quote and line feed escaped as the spec says; the other
 * control characters (which Prometheus's parsers take but a dashboard line cannot show) as '?',
 * bytes that are not UTF-8 (the format's encoding) as U+FFFD. */
void rp_om_label(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c < 0x20 || c == 0x7f) {
			fputc('?', f);
		} else if (c >= 0x80) {
			i += put_utf8(f, p + i, len - i, "\xef\xbf\xbd");
			continue;
		} else {
			fputc(c, f);
		}
		i++;
	}
}

void rp_csv_field(FILE *f, const char *s, size_t len)
{
	bool quote = false;
	for (size_t i = 0; i < len && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (!quote) {
		for (size_t i = 0; i < len; i++)
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
		return;
	}
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			fputc('"', f);
		fputc(s[i], f);
	}
	fputc('"', f);
}

void rp_json_num(FILE *f, double v, bool known)
{
	if (!known || !isfinite(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.17g", v);
}
