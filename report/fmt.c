/* SPDX-License-Identifier: MIT */
/* fmt.c - humanized numbers for the text report: bytes, durations, counts, errno names. */
#include "model.h"

#include <math.h>
#include <string.h>

#include "kernel/errno_name.h"

char *rp_fmt_bytes(char *buf, size_t cap, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;
	while (bytes >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%.0f B", bytes);
	else
		snprintf(buf, cap,
			 bytes < 10    ? "%.2f %s"
			 : bytes < 100 ? "%.1f %s"
				       : "%.0f %s",
			 bytes, unit[u]);
	return buf;
}

char *rp_fmt_ns(char *buf, size_t cap, double ns)
{
	if (ns < 0 || isnan(ns))
		snprintf(buf, cap, "-");
	else if (ns < 1e3)
		snprintf(buf, cap, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, cap, ns < 1e4 ? "%.2fus" : ns < 1e5 ? "%.1fus" : "%.0fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, cap, ns < 1e7 ? "%.2fms" : ns < 1e8 ? "%.1fms" : "%.0fms", ns / 1e6);
	else
		snprintf(buf, cap, ns < 1e10 ? "%.3fs" : ns < 1e11 ? "%.2fs" : "%.1fs", ns / 1e9);
	return buf;
}

char *rp_fmt_count(char *buf, size_t cap, double n)
{
	if (n < 1e6)
		snprintf(buf, cap, "%.0f", n);
	else if (n < 1e9)
		snprintf(buf, cap, "%.2fM", n / 1e6);
	else
		snprintf(buf, cap, "%.2fG", n / 1e9);
	return buf;
}

const char *rp_errno_name(int err, char *buf, size_t cap)
{
	if (err == 0)
		return "-";
	const char *n = err > 0 ? ct_strerrorname(err) : NULL;
	if (n)
		return n;
	snprintf(buf, cap, "errno %d", err);
	return buf;
}
