/* SPDX-License-Identifier: MIT */
/*
 * main.c - `cryptrace` entry point: dispatches to the subcommands (run, compare, doctor, report,
 * help) and handles the global options. Each subcommand lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "tracer.h"
#include "report.h"

static int report_main(int argc, char **argv)
{
	return ct_report_main(argc, argv);
}

static int help_main(int argc, char **argv)
{
	if (argc < 2) {
		ct_usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run")) {
		ct_usage_run(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "compare")) {
		ct_usage_compare(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "doctor")) {
		ct_usage_doctor(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "report")) {
		char *rargv[] = { "report", "--help", NULL };

		return report_main(2, rargv);
	}
	fprintf(stderr, "cryptrace: no help for '%s' (try: cryptrace --help)\n", argv[1]);
	return CT_EXIT_USAGE;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("cryptrace: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try: cryptrace --help)\n", stderr);
	return CT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("missing command%s", "");

	const char *cmd = argv[1];

	if (!strcmp(cmd, "run"))
		return ct_run_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return ct_compare_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return ct_doctor_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "help"))
		return help_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		ct_usage_main(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		ct_version(stdout);
		return 0;
	}
	if (cmd[0] == '-')
		return usage_error("unknown option '%s'", cmd);
	return usage_error("unknown command '%s'", cmd);
}
