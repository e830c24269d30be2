/* SPDX-License-Identifier: MIT */
/*
 * usage.c - the help texts of the `cryptrace` command and its subcommands, kept together and
 * apart from the logic so that they are easy to keep in step with docs/cryptrace.1.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ct_config.h"
#include "route_spec.h"
#include "tracer.h"

int ct_usage_error(const char *command, const char *fmt, const char *arg)
{
	fprintf(stderr, "cryptrace%s%s: ", command ? " " : "", command ? command : "");
	fprintf(stderr, fmt, arg);
	if (command)
		fprintf(stderr, " (try: cryptrace help %s)\n", command);
	else
		fputs(" (try: cryptrace --help)\n", stderr);
	return CT_EXIT_USAGE;
}

int ct_option_error(const char *command, int c, char **argv)
{
	if (c == ':')
		return ct_usage_error(command, "option '%s' needs an argument", argv[optind - 1]);
	return ct_usage_error(command, "unknown option '%s'", argv[optind - 1]);
}

bool ct_route_spec_ok(const char *command, const char *spec)
{
	struct ct_route_table table;
	char err[200];
	if (strlen(spec) >= CT_ROUTE_SPEC_MAX) {
		fprintf(stderr, "cryptrace %s: the route spec is longer than %d bytes\n", command,
			CT_ROUTE_SPEC_MAX - 1);
		return false;
	}
	if (ct_route_parse(spec, &table, err, sizeof(err)) != 0) {
		fprintf(stderr, "cryptrace %s: %s (see docs/routes.md)\n", command, err);
		return false;
	}
	return true;
}

void ct_version(FILE *out)
{
	fprintf(out, "cryptrace %s\n", CT_VERSION);
}

void ct_usage_main(FILE *out)
{
	fputs("usage: cryptrace <command> [options]\n"
	      "\n"
	      "Shows where a program's AES work runs (OpenSSL EVP, low-level AES_*, engines,\n"
	      "providers, /dev/crypto, AF_ALG) and what it costs, without recompiling it.\n"
	      "\n"
	      "commands:\n"
	      "  run [-o DIR] [--] CMD...   run CMD with the tracer preloaded, then summarize\n"
	      "  compare [--routes R,..] -- CMD...\n"
	      "                             run CMD under several routes, side by side\n"
	      "  doctor [--json] [--libcrypto PATH]\n"
	      "                             check this machine's crypto set-up (CPU, libcrypto,\n"
	      "                             engines, providers, AF_ALG, /dev/crypto)\n"
	      "  prune [--dry-run]          keep the always-on spool under its size and age caps\n"
	      "  report [--json] FILE|DIR   read trace files and print per-path figures\n"
	      "  export --textfile-dir DIR TRACEDIR...\n"
	      "                             write node_exporter's textfile (Prometheus metrics)\n"
	      "  serve --listen ADDR:PORT TRACEDIR...\n"
	      "                             serve the same metrics on /metrics for a scrape\n"
	      "  attach [-o DIR] [--duration S] [--route SPEC] PID...\n"
	      "                             trace running processes, without restarting them\n"
	      "  help [COMMAND]             detailed help for a command\n"
	      "\n"
	      "options:\n"
	      "  -h, --help                 this text\n"
	      "  -V, --version              print the version\n"
	      "\n"
	      "See cryptrace(1).\n",
	      out);
}

void ct_usage_prune(FILE *out)
{
	fputs("usage: cryptrace prune [--config FILE] [--dry-run]\n"
	      "\n"
	      "Keeps the always-on spool (docs/fleet.md) under the caps of its configuration\n"
	      "(/etc/cryptrace.conf, CRYPTRACE_CONFIG or --config): removes the trace files\n"
	      "older than max_age, then the oldest ones until the spool holds at most\n"
	      "max_spool_bytes. Run as root from a timer; every user's directory is opened\n"
	      "without following links and checked to be that user's, and files are removed\n"
	      "relative to it, never through a path.\n"
	      "\n"
	      "options:\n"
	      "  --config FILE        the configuration file to read\n"
	      "  -n, --dry-run        list what would be removed, remove nothing\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: 0 done; 1 no spool configured or the spool cannot be read;\n"
	      "2 usage error.\n",
	      out);
}

void ct_usage_run(FILE *out)
{
	fputs("usage: cryptrace run [options] [--] CMD [ARG...]\n"
	      "\n"
	      "Runs CMD with libcryptrace.so preloaded (children, threads and exec'd programs\n"
	      "included), waits for it, prints a short per-path summary on stderr and exits\n"
	      "with CMD's exit status (128+N when CMD was killed by signal N). A statically\n"
	      "linked CMD cannot be preloaded: its trace file is written by cryptrace itself,\n"
	      "so the report says why nothing was seen.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output DIR     write trace files into DIR (created 0700; an existing\n"
	      "                       directory is fine); default ./cryptrace-YYYYmmdd-HHMMSS\n"
	      "  --route SPEC         where cipher work should run (CRYPTRACE_ROUTE), e.g.\n"
	      "                       'aes-*-cbc=afalg>=4096,cpu'; checked before running:\n"
	      "                       SPEC := RULE[,RULE...]\n"
	      "                       RULE := GLOB[:enc|dec]=TARGET[COND] | TARGET[COND]\n"
	      "                       TARGET := native|cpu|afalg|cryptodev (cpu: the CPU's\n"
	      "                       AES instructions; on x86 also named aesni)\n"
	      "                       COND := >=SIZE | <SIZE  (SIZE: N, Nk, Nm); docs/routes.md\n"
	      "  --mode stats|calls   stats: aggregated counters (default); calls: also keep\n"
	      "                       individual operations for timelines\n"
	      "  --max-ops-rate N     calls mode: keep at most N operations per second per\n"
	      "                       process in the timeline (default 250k, ~5 MB/s of\n"
	      "                       trace; k and M suffixes; 0 keeps all): above it a\n"
	      "                       weighted random sample; counts stay exact\n"
	      "                       (CRYPTRACE_MAX_OPS_RATE)\n"
	      "  -f, --follow         follow children (always on; accepted like strace -f)\n"
	      "  --no-argv            record the executable only, not its arguments\n"
	      "                       (CRYPTRACE_ARGV=0); by default argv is recorded with\n"
	      "                       passwords, keys and tokens replaced by <redacted>\n"
	      "  --no-profile         do not sample the processes' CPU (by default a 250 Hz\n"
	      "                       user-space profile names the crypto code they run,\n"
	      "                       hooked or not: perf events, no signal, nothing changed)\n"
	      "  -q, --quiet          no summary or notes at the end\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: CMD's own; 127 CMD not found; 126 CMD not executable; 2 usage error\n"
	      "or unusable output directory (nothing was run).\n",
	      out);
}

void ct_usage_compare(FILE *out)
{
	fputs("usage: cryptrace compare [options] [--] CMD [ARG...]\n"
	      "\n"
	      "Runs CMD once per route per round, interleaved (R1 R2 R1 R2 ...), each run\n"
	      "traced into DIR/<route>/<round>/ (CMD's stdout and stderr go to files there,\n"
	      "stdin is /dev/null), then prints a table per figure - wall and CPU throughput,\n"
	      "calls, the median ratio to the first route with min-max over rounds - with a\n"
	      "row per path (cipher and direction) and a column per route (4 per table; more\n"
	      "continue in further tables). A route that changes CMD's exit status (or, with\n"
	      "--check-output, its stdout) is an error.\n"
	      "\n"
	      "options:\n"
	      "  --routes R1,R2,...   routes to compare; the first is the reference. A name:\n"
	      "                       native (no route), cpu (aes-*=cpu; on x86 also aesni),\n"
	      "                       afalg (aes-*=afalg), cryptodev (aes-*=cryptodev); a\n"
	      "                       word with '=' is a spec. Default: native, then the\n"
	      "                       CPU's (aesni on x86, cpu elsewhere), afalg and\n"
	      "                       cryptodev where they work on this machine\n"
	      "  --route SPEC         add one route given as a full spec (may hold commas)\n"
	      "  -n, --repeat N       rounds (default 3)\n"
	      "  --check-output       CMD's stdout must be byte-identical under every route\n"
	      "  --by-size            also tables with a row per request-size bucket of the\n"
	      "                       busiest path\n"
	      "  --json               print JSON instead of the table\n"
	      "  -o, --output DIR     where the runs go (default ./cryptrace-compare-<time>)\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: 0 the routes agree; 1 a route changed the exit status or output;\n"
	      "2 usage error; 127/126 CMD not found / not executable; 130 interrupted.\n",
	      out);
}

void ct_usage_doctor(FILE *out)
{
	fputs("usage: cryptrace doctor [--json] [--libcrypto PATH]\n"
	      "\n"
	      "Checks in a few seconds how this machine runs AES, one ok/warn/fail line with\n"
	      "its evidence per item: CPU model and crypto flags (and a VM hiding aes), each\n"
	      "libcrypto found (version, path, cycles/byte of EVP aes-128-ctr and -cbc against\n"
	      "cryptrace's own code on the CPU's AES instructions, measured in a child\n"
	      "process), OPENSSL_ia32cap or OPENSSL_armcap,\n"
	      "engines and providers (loaded in that child; failures with reasons), AF_ALG and\n"
	      "the kernel driver per AES mode, /dev/crypto sessions per cipher and key size,\n"
	      "and where a kernel path exists the request size from which it beats in-process\n"
	      "AES. Where an always-on configuration exists (/etc/cryptrace.conf or\n"
	      "CRYPTRACE_CONFIG), also its set-up: the file parses and only root can change it,\n"
	      "the spool root is root's and 1733, /etc/ld.so.preload names an existing library\n"
	      "(docs/fleet.md). Ends with recommendations.\n"
	      "\n"
	      "options:\n"
	      "  --json               print JSON instead of the checklist\n"
	      "  --libcrypto PATH     measure and check this libcrypto (another release's,\n"
	      "                       an application's own copy) instead of the one\n"
	      "                       `openssl` loads; one built for a newer glibc needs the\n"
	      "                       doctor run through that glibc's loader\n"
	      "                       (docs/openssl-versions.md)\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: 0 no check failed; 1 some check failed; 2 usage error.\n",
	      out);
}

void ct_usage_report(FILE *out)
{
	fputs("usage: cryptrace report [options] FILE|DIR...\n"
	      "Reads cryptrace trace files (a DIR: every *.ctrace file in it), merges the\n"
	      "processes and prints per-path figures, throughput by request size, events and\n"
	      "findings.\n"
	      "  --text            human-readable report (default)\n"
	      "  --json            one JSON object for scripts (see docs/report.md)\n"
	      "  --folded          folded stacks (call site -> path) for flamegraph.pl\n"
	      "  --folded-weight bytes|time|samples  what a --folded line weighs (default bytes;\n"
	      "                    samples: the CPU profile's sampled call stacks)\n"
	      "  -o FILE           write the report to FILE instead of stdout\n"
	      "  --pid N           only the process with this pid\n"
	      "  --cipher GLOB     only paths whose cipher matches, e.g. 'aes-*-cbc'\n"
	      "  --api NAME        only paths of this API: evp, aes, gcrypt, gnutls, tls,\n"
	      "                    cryptodev, afalg, ktls\n"
	      "  --min-size N      only requests of at least N bytes (by size bucket)\n"
	      "  --max-size N      only requests of at most N bytes (by size bucket)\n"
	      "  --html FILE       a self-contained HTML report with charts (docs/reports.md)\n"
	      "  --perfetto FILE   Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)\n"
	      "  --resolution DUR  --perfetto: per thread and path, consecutive operations that\n"
	      "                    start within DUR (ns, us, ms or s: 10us) of a slice's first\n"
	      "                    are one slice; auto (default): the finest that keeps the\n"
	      "                    file under 100 MB; 0ns: every operation its own slice\n"
	      "  --csv[=FILE]      one CSV row per path and request-size bucket (to stdout, or\n"
	      "                    to -o FILE without =FILE)\n"
	      "  --openmetrics     Prometheus metrics in the OpenMetrics text format: counters\n"
	      "                    per api, impl, cipher, direction and executable, findings,\n"
	      "                    the CPU's AES, the reader's health (docs/metrics.md)\n"
	      "  --prometheus      the same in the Prometheus text format 0.0.4 (what\n"
	      "                    node_exporter's textfile collector and promtool read)\n"
	      "  --diff A B        compare two traces, directories or comma-separated sets,\n"
	      "                    path by path (text, or --json); the filters but --pid apply\n"
	      "                    to both sides\n"
	      "  --path N|GLOB     only path N of the report, or the paths whose\n"
	      "                    'api/impl/cipher/dir' (or one of those parts) matches GLOB\n"
	      "  --since T, --until T  only this time window, T in seconds from the first\n"
	      "                    process start: per-call operations and events exactly, path\n"
	      "                    totals to the tracer's snapshots (flush interval; the\n"
	      "                    report says which)\n"
	      "  --no-symbols      leave call-site frames as recorded: by default a frame like\n"
	      "                    'prog+0x14ab' is named from the module's symbol table or\n"
	      "                    installed debug file, if its build id is the traced one\n"
	      "                    (C++ names are shown demangled either way; JSON keeps\n"
	      "                    them as recorded in callsite_mangled)\n"
	      "  -h, --help        this help\n"
	      "Exit status: 0 ok, 1 some input was damaged (what was read before is reported),\n"
	      "2 usage error or unreadable input.\n",
	      out);
}

void ct_usage_export(FILE *out)
{
	fputs("usage: cryptrace export --textfile-dir DIR [--state FILE] TRACEDIR...\n"
	      "\n"
	      "Reads the traces in TRACEDIR... and writes DIR/cryptrace.prom for node_exporter's\n"
	      "textfile collector (--collector.textfile.directory=DIR): the metrics of\n"
	      "`cryptrace report --prometheus`, written atomically (a temp file, then rename),\n"
	      "with counters that never go backwards when a process exits or its trace leaves\n"
	      "the directory. Run it every minute (contrib/systemd/). docs/metrics.md.\n"
	      "\n"
	      "options:\n"
	      "  --textfile-dir DIR  where cryptrace.prom goes (required)\n"
	      "  --state FILE      what finished and vanished traces contributed, kept between\n"
	      "                    runs (default "
	      "/var/lib/cryptrace/export.state"
	      "); its\n"
	      "                    lock is FILE.lock\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Exit status: 0 the file was written (damaged or foreign traces are counted in it\n"
	      "and named on stderr), 2 it was not: usage error, unreadable state, write error.\n",
	      out);
}

void ct_usage_serve(FILE *out)
{
	fputs("usage: cryptrace serve --listen ADDRESS:PORT [--allow-remote] [--state FILE] TRACEDIR...\n"
	      "\n"
	      "Serves GET /metrics for a direct Prometheus scrape: the metrics of the traces in\n"
	      "TRACEDIR..., read again on every scrape (OpenMetrics when the scraper asks for\n"
	      "it, else the text format 0.0.4). Counters never go backwards while it runs, as\n"
	      "with export (its state is kept in memory; with --state, across restarts too).\n"
	      "Read-only: GET and HEAD of /metrics\n"
	      "only, one request at a time, its head at most 8 KiB within 10 s. docs/metrics.md.\n"
	      "\n"
	      "options:\n"
	      "  --listen ADDR:PORT  where to listen: 127.0.0.1:9464, [::1]:9464; port 0 takes\n"
	      "                    a free one (the line on stderr says which)\n"
	      "  --allow-remote    listen on an address that is not loopback: the metrics name\n"
	      "                    this host's programs, so it is refused without this\n"
	      "  --state FILE      read the counters' state at start and save it after each\n"
	      "                    scrape: no reset when serve restarts (its own file, not\n"
	      "                    export's; a state in use is refused)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "It runs until killed. Exit status 2 when it cannot listen or read its state.\n",
	      out);
}

void ct_usage_attach(FILE *out)
{
	fputs("usage: cryptrace attach [-o DIR] [--duration S] [--mode stats|calls] [--route SPEC]\n"
	      "                        [--allow-seccomp] PID...\n"
	      "       cryptrace attach --detach PID...\n"
	      "\n"
	      "Traces processes that are already running: each is stopped for a few\n"
	      "milliseconds while libcryptrace.so is loaded into it and its modules' imports\n"
	      "of the traced functions (libssl's EVP_*, the kernel interfaces' system calls)\n"
	      "are pointed at the hooks; then it runs on, traced, until the duration ends or\n"
	      "Ctrl-C, when everything is put back and the trace is closed. The library\n"
	      "stays mapped, inert; a later attach reuses it. Read the traces with\n"
	      "`cryptrace report DIR`; the report says how long each attach stopped the\n"
	      "process.\n"
	      "\n"
	      "Refused, with one line and exit status 2, before anything changes: a process\n"
	      "that ptrace may not attach (Yama's ptrace_scope, another user, no\n"
	      "CAP_SYS_PTRACE), one already traced (a debugger), a statically linked one, one\n"
	      "with no crypto library and no /dev/crypto, one under a seccomp filter (unless\n"
	      "--allow-seccomp), and one started under cryptrace.\n"
	      "x86-64 and aarch64 so far.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output DIR     where the traces go (default: ./cryptrace-attach-<date>)\n"
	      "  -d, --duration S     detach after S seconds (default: at Ctrl-C)\n"
	      "  --mode stats|calls   aggregate counters (default) or per-call timeline\n"
	      "  --route SPEC         while attached, contexts set up (and AES_* keys) run where\n"
	      "                       SPEC says (docs/routes.md); after the detach new ones run\n"
	      "                       natively again, those still open stay correct\n"
	      "  --allow-seccomp      attach to a process under a seccomp filter all the same (a\n"
	      "                       filter that forbids open, mmap or clone kills it)\n"
	      "  --detach             end the attach of a cryptrace attach that is gone (killed)\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: 0 attached and detached, 1 an attach or detach failed, 2 refused.\n"
	      "See docs/attach.md.\n",
	      out);
}
