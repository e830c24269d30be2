/* SPDX-License-Identifier: MIT */
/*
 * main.c - `cryptrace` entry point: the global options (--help, --version) and the table of
 * subcommands, each in a file of its own (commands.h: cmd_run.c, cmd_compare.c, cmd_doctor.c,
 * cmd_prune.c, cmd_report.c, cmd_export.c, cmd_serve.c). `help` lives here because it reads the
 * table.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tracer.h"

static int command_help(int argc, char **argv);

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command's name */
	void (*usage)(FILE *out);          /* `cryptrace help NAME`; NULL: none */
} commands[] = {
	/* clang-format off */
	{ "run", command_run, ct_usage_run },
	{ "compare", command_compare, ct_usage_compare },
	{ "doctor", command_doctor, ct_usage_doctor },
	{ "prune", command_prune, ct_usage_prune },
	{ "report", command_report, ct_usage_report },
	{ "export", command_export, ct_usage_export },
	{ "serve", command_serve, ct_usage_serve },
	{ "attach", command_attach, ct_usage_attach },
	{ "help", command_help, NULL },
	/* clang-format on */
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int command_help(int argc, char **argv)
{
	if (argc < 2) {
		ct_usage_main(stdout);
		return 0;
	}

	const struct command *c = find_command(argv[1]);

	if (!c || !c->usage)
		return ct_usage_error(NULL, "no help for '%s'", argv[1]);
	c->usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return ct_usage_error(NULL, "missing command%s", "");

	const char *name = argv[1];
	const struct command *c = find_command(name);

	if (c)
		return c->run(argc - 1, argv + 1);
	if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
		ct_usage_main(stdout);
		return 0;
	}
	if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
		ct_version(stdout);
		return 0;
	}
	if (name[0] == '-')
		return ct_usage_error(NULL, "unknown option '%s'", name);
	return ct_usage_error(NULL, "unknown command '%s'", name);
}
