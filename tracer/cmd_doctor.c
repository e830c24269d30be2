/* SPDX-License-Identifier: MIT */
/*
 * cmd_doctor.c - `cryptrace doctor`: answers "is this machine's crypto set up right?" in a few
 * seconds. Runs the probes in order, each adding checks to the checklist (doctor.h): the CPU
 * (doctor_cpu.c); libcrypto, engines and providers (doctor_libcrypto.c); AF_ALG and /dev/crypto
 * (doctor_kernel.c); the kernel against in-process AES (doctor_crossover.c); where configured,
 * the always-on mode's set-up (doctor_fleet.c). Then prints the
 * list (doctor_checklist.c) and fails when a check failed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"
#include "commands.h"
#include "tracer.h"

int command_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "libcrypto", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false;
	const char *libcrypto = NULL;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'L':
			if (access(optarg, R_OK) != 0) {
				fprintf(stderr, "cryptrace doctor: --libcrypto %s: %s\n", optarg,
					strerror(errno));
				return CT_EXIT_USAGE;
			}
			libcrypto = optarg;
			break;
		case 'h':
			ct_usage_doctor(stdout);
			return 0;
		default:
			return ct_option_error("doctor", c, argv);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cryptrace doctor: unexpected argument '%s'\n", argv[optind]);
		return CT_EXIT_USAGE;
	}

	struct dr_report r = { .libcrypto_given = libcrypto };

	dr_probe_cpu(&r);
	dr_probe_libcrypto(&r);
	dr_probe_afalg(&r);
	dr_probe_cryptodev(&r);
	dr_probe_crossover(&r);
	dr_probe_fleet(&r);

	if (json)
		dr_print_json(&r, stdout);
	else
		dr_print_text(&r, stdout);

	int status = 0;

	for (size_t i = 0; i < r.nchecks; i++)
		if (r.checks[i].status == DR_FAIL)
			status = 1;
	for (int i = 0; i < r.nrecs; i++)
		free(r.recs[i]);
	free(r.checks);
	return status;
}
