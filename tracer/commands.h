/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands of `cryptrace`, one file each (cmd_<name>.c), listed once in
 * main.c's table. Each takes the arguments from its own name on (argv[0] is "run", "report" ...)
 * and returns the exit status; none calls exit().
 */
#ifndef CT_COMMANDS_H
#define CT_COMMANDS_H

/* `cryptrace run [options] [--] CMD...`: CMD's own exit status, or a launcher's (tracer.h). */
int command_run(int argc, char **argv);
/* `cryptrace compare [options] [--] CMD...`: 0 the routes agree, 1 a route changed CMD's exit
 * status or output. */
int command_compare(int argc, char **argv);
/* `cryptrace doctor [--json]`: 0 no check failed, 1 some did. */
int command_doctor(int argc, char **argv);
int command_prune(int argc, char **argv);
/* `cryptrace report [options] FILE|DIR...`: 0 ok, 1 some input was damaged (everything before
 * the damage is still reported, with a one-line warning on stderr), 2 usage errors,
 * unreadable or foreign input, or a write error. */
int command_report(int argc, char **argv);
/* `cryptrace export --textfile-dir DIR TRACEDIR...`: 0 the .prom file was written, 2 it was not
 * (usage, state or write error). */
int command_export(int argc, char **argv);
/* `cryptrace serve --listen ADDR:PORT TRACEDIR...`: serves /metrics until killed; 2 when it
 * cannot listen (usage, a non-loopback address without --allow-remote, bind). */
int command_serve(int argc, char **argv);
/* `cryptrace attach [options] PID...`: 0 every process was attached and detached, 1 some
 * attach or detach failed (said on stderr), 2 a refusal (nothing changed in any process). */
int command_attach(int argc, char **argv);

#endif
