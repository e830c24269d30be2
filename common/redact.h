/* SPDX-License-Identifier: MIT */
/*
 * redact.h - what of a command line goes into a trace. People type passwords, keys and tokens on
 * command lines (`openssl enc -pass pass:X -K HEX -iv HEX`, `sshpass -p X`, `curl -u user:X`,
 * `https://user:X@host/`, `mysql -pX`); a trace records argv and every report prints it. So each
 * value known to carry a secret is replaced by "<redacted>" before it is recorded, and the rest of
 * the command line is kept (what ran and how is what a report is read for).
 *
 * One rule for every place that records argv: the preload (the trace header), the launcher (the
 * trace of a static program) and the reporter (traces written before this rule existed). The
 * rule itself is in redact.c and, in prose, in docs/trace-format.md.
 *
 * Pure: no allocation, no I/O, no globals; the preload calls it once, at start.
 */
#ifndef CT_REDACT_H
#define CT_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#define CT_REDACTED "<redacted>"

/*
 * in: len bytes of NUL-separated arguments, argv[0] first (a trailing NUL is not needed).
 * Writes the form to record into out (the same layout, at most cap bytes; an argument that
 * does not fit whole is left out, with everything after it) and returns its length.
 * exe_only: argv[0] alone (`cryptrace run --no-argv`, CRYPTRACE_ARGV=0).
 * *redacted (may be NULL): how many values were replaced. Applying it to its own output
 * changes nothing and counts 0.
 */
size_t ct_argv_redact(const char *in, size_t len, bool exe_only, char *out, size_t cap, unsigned *redacted);

#endif
