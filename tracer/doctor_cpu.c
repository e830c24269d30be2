/* SPDX-License-Identifier: MIT */
/*
 * doctor_cpu.c - the doctor's first check: the CPU's model and crypto instructions (AES-NI,
 * VAES, PCLMULQDQ ... or the ARM crypto extensions), and whether a VM hides them. The flags stay
 * in the report for the probes after it.
 */
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "doctor.h"
#include "trace_format.h"

static const struct {
	uint32_t bit;
	const char *name;
} cpu_flag_names[] = {
	{ CT_CPU_AES, "aes" },
	{ CT_CPU_VAES, "vaes" },
	{ CT_CPU_PCLMULQDQ, "pclmulqdq" },
	{ CT_CPU_VPCLMULQDQ, "vpclmulqdq" },
	{ CT_CPU_AVX2, "avx2" },
	{ CT_CPU_AVX512F, "avx512f" },
	{ CT_CPU_AVX512VL, "avx512vl" },
	{ CT_CPU_AVX512BW, "avx512bw" },
	{ CT_CPU_SHA, "sha" },
	{ CT_CPU_GFNI, "gfni" },
	{ CT_CPU_ARM_AES, "arm-aes" },
	{ CT_CPU_ARM_PMULL, "arm-pmull" },
};

void dr_probe_cpu(struct dr_report *r)
{
	char model[96], have[160] = "", lack[160] = "";
	uint32_t f = ct_cpu_features();
	bool arm = false;

#if defined(__aarch64__) || defined(__arm__)
	arm = true;
#endif
	r->cpu_flags = f;
	ct_cpu_model(model, sizeof(model));
	for (size_t i = 0; i < sizeof(cpu_flag_names) / sizeof(cpu_flag_names[0]); i++) {
		bool is_arm = cpu_flag_names[i].bit >= CT_CPU_ARM_AES;

		if (is_arm != arm)
			continue;
		char *to = (f & cpu_flag_names[i].bit) ? have : lack;
		size_t len = strlen(to);

		snprintf(to + len, sizeof(have) - len, "%s%s", len ? " " : "", cpu_flag_names[i].name);
	}

	bool aes = f & (CT_CPU_AES | CT_CPU_ARM_AES);
	bool vm = f & CT_CPU_HYPERVISOR;
	struct dr_check *c;

	if (aes)
		c = dr_add(r, "cpu", DR_OK, "CPU has AES instructions", "%s; has: %s%s%s%s", model, have,
			   lack[0] ? "; lacks: " : "", lack, vm ? "; running in a VM" : "");
	else if (vm)
		c = dr_add(r, "cpu", DR_FAIL, "CPU shows no AES instructions (in a VM)",
			   "%s; has: %s; lacks: %s; running in a VM; the VM's CPU model may hide aes", model,
			   have[0] ? have : "none", lack);
	else /* a fact about the hardware, not something to change here */
		c = dr_add(r, "cpu", DR_INFO, "CPU has no AES instructions",
			   "%s; has: %s; lacks: %s: AES runs in software everywhere", model,
			   have[0] ? have : "none", lack);
	dr_value(c, "model", false, "%s", model);
	dr_value(c, "flags", false, "%s", have);
	dr_value(c, "hypervisor", true, "%s", vm ? "true" : "false");
	if (!aes && vm)
		dr_recommend(r,
			     "the VM's CPU model hides %s: give the guest the host's CPU model "
			     "(qemu/libvirt: -cpu host or host-passthrough)",
			     arm ? "the AES instructions" : "AES-NI");
}
