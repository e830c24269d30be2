/* SPDX-License-Identifier: MIT */
/*
 * calib.c - the AES-NI bound measured inside the traced process, for a bare LD_PRELOAD run.
 *
 * `cryptrace run` measures the bound before the program starts and passes it in
 * (CRYPTRACE_AESNI_CPB, the header's aesni_cpb_milli). A program started with LD_PRELOAD alone
 * (a daemon's unit file, /etc/ld.so.preload) has none, and the reporter would judge "software
 * AES" against a fixed 5 cycles/byte. So the flusher measures it here, with these limits:
 *
 *  - once per process (a fork inherits it: same machine), and only once the process has an
 *    in-process AES path: a program that does no AES never pays;
 *  - at a flush, which already runs on the flushing thread with every hook blocked and its lock
 *    held; never on the hot path. The cost: 8 warm-up and 24 x 4 timed runs of our AES-128-CTR
 *    over 8 KiB, about 0.8 MB, some 50-150 us on an AES-NI core;
 *  - in a static buffer, not 8 KiB of a traced thread's stack (threads may have small stacks);
 *  - never in a seccomp-sandboxed process (/proc/self/status Seccomp not 0, or unreadable): a
 *    sandbox is a process that asked to do as little as possible, and a sandbox entered later is
 *    seen at the next flush (the answer "no" is final: seccomp cannot be left);
 *  - only with the TSC as the trace's clock (the bound is in TSC cycles), rdtsc allowed
 *    (PR_GET_TSC), and AES-NI in this CPU.
 * The result goes into the PROC record (the header was written at start).
 */
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "aesni.h"
#include "internal.h"
#include "calib.h"
#include "signals.h"

#define CALIB_TRIALS 24

static uint8_t calib_buf[CT_AESNI_CALIB_BYTES] __attribute__((aligned(64)));
static uint32_t measured_milli;
static bool decided; /* measured, or judged not allowed for good */

/* Seccomp mode from /proc/self/status; -1 when it cannot be read (then assume a sandbox). */
static int seccomp_mode(void)
{
	int mode, filters;
	return ct_seccomp_state(&mode, &filters) ? mode : -1;
}

/* An AES path served by this process's own code (EVP or AES_*), whatever its implementation. */
static bool has_inprocess_aes_path(void)
{
	struct ct_path_def def;
	for (uint32_t id = 0, n = ct_path_count(); id < n; id++)
		if (ct_path_def_get(id, &def) && (def.api == CT_API_EVP || def.api == CT_API_AES) &&
		    def.cipher.len >= 3 && !memcmp(def.cipher.p, "aes", 3))
			return true;
	return false;
}

uint32_t ct_calib_at_flush(void)
{
	if (decided)
		return measured_milli;
	if (ct_config_aesni_cpb() || !ct_clk.use_tsc || !ct_aesni_available()) {
		decided = true; /* the header has the launcher's bound, or none can be measured */
		return 0;
	}
	if (!has_inprocess_aes_path())
		return 0; /* not yet: ask again at the next flush */
	int mode = seccomp_mode();
	if (mode != 0) {
		decided = true;
		ct_log(2, "calib: not measuring the AES-NI bound in a seccomp-sandboxed process (%d)", mode);
		return 0;
	}
	int tsc = 0;
	if (prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0 && tsc != PR_TSC_ENABLE) {
		decided = true;
		return 0;
	}
	double cpb = ct_aesni_cpb_measure(calib_buf, CALIB_TRIALS);
	memset(calib_buf, 0, sizeof(calib_buf));
	measured_milli = cpb > 0 ? (uint32_t)(cpb * 1000.0 + 0.5) : 0;
	decided = true;
	ct_log(2, "calib: AES-NI bound measured in-process: %u milli-cycles/byte", measured_milli);
	return measured_milli;
}
