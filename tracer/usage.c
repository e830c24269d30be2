/* SPDX-License-Identifier: MIT */
/*
 * usage.c - the help texts of the `cryptrace` command, kept apart from the logic so that
 * main.c and run.c stay short. Keep them in step with docs/cryptrace.1.
 */
#include <stdio.h>

#include "ct_config.h"
#include "tracer.h"

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
	      "  report [--json] FILE|DIR   read trace files and print per-path figures\n"
	      "  help [run|report]          detailed help for a command\n"
	      "\n"
	      "options:\n"
	      "  -h, --help                 this text\n"
	      "  -V, --version              print the version\n"
	      "\n"
	      "See cryptrace(1).\n",
	      out);
}

void ct_usage_run(FILE *out)
{
	fputs("usage: cryptrace run [options] [--] CMD [ARG...]\n"
	      "\n"
	      "Runs CMD with libcryptrace.so preloaded (children, threads and exec'd programs\n"
	      "included), waits for it, prints a short per-path summary on stderr and exits with\n"
	      "CMD's exit status (128+N when CMD was killed by signal N).\n"
	      "\n"
	      "options:\n"
	      "  -o, --output DIR     write trace files into DIR (created 0700; an existing\n"
	      "                       directory is fine); default ./cryptrace-YYYYmmdd-HHMMSS\n"
	      "  --route SPEC         where cipher work should run (CRYPTRACE_ROUTE), e.g.\n"
	      "                       'aes-*-cbc=afalg>=4096,aesni'; checked before running:\n"
	      "                       SPEC := RULE[,RULE...]\n"
	      "                       RULE := GLOB[:enc|dec]=TARGET[COND] | TARGET[COND]\n"
	      "                       TARGET := native|aesni|afalg|cryptodev\n"
	      "                       COND := >=SIZE | <SIZE  (SIZE: N, Nk, Nm); docs/routes.md\n"
	      "  --mode stats|calls   stats: aggregated counters (default); calls: also keep\n"
	      "                       individual operations for timelines\n"
	      "  -f, --follow         follow children (always on; accepted like strace -f)\n"
	      "  -q, --quiet          no summary or notes at the end\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit status: CMD's own; 127 CMD not found; 126 CMD not executable; 2 usage error\n"
	      "or unusable output directory (nothing was run).\n",
	      out);
}
