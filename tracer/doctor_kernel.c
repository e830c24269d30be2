/* SPDX-License-Identifier: MIT */
/*
 * doctor_kernel.c - the doctor's kernel checks: whether AF_ALG works (and the errno when not),
 * which driver the kernel picks per AES mode (from /proc/crypto after binding an AF_ALG socket,
 * which instantiates the template) with its priority and class, whether aesni-intel or an ARM
 * "-ce" driver is loaded, whether /dev/crypto exists and which driver serves each cipher and key
 * size (CIOCGSESSION + CIOCGSESSINFO). Where a kernel path exists, doctor_crossover.c measures
 * it against the in-process AES.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cryptodev_abi.h"
#include "doctor.h"
#include "errno_name.h"
#include "proc_crypto.h"
#include "trace_format.h"
#include "tracer.h"

static const struct {
	const char *mode; /* our name */
	const char *alg;  /* the kernel's */
	const char *type; /* AF_ALG type */
} kernel_modes[] = {
	{ "cbc", "cbc(aes)", "skcipher" }, { "ctr", "ctr(aes)", "skcipher" },
	{ "ecb", "ecb(aes)", "skcipher" }, { "xts", "xts(aes)", "skcipher" },
	{ "gcm", "gcm(aes)", "aead" },
};

static bool module_loaded(const char *modules, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = modules; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return true;
	return false;
}

void dr_probe_afalg(struct dr_report *r)
{
	size_t plen = 0, mlen = 0;
	bool arm = r->cpu_flags & CT_CPU_ARM_AES;
	bool cpu_aes = r->cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES);
	struct dr_check *c;

	char *text = ct_read_file("/proc/crypto", &plen);
	char hw[200] = "";

	/* Without AF_ALG, what programs lose is the kernel's hardware AES, if it has one (its
	 * drivers register their full names at boot: cbc(aes) -> cbc-aes-caam). Its software and
	 * CPU-instruction drivers run on this same CPU, a system call per request away: no loss. */
	for (size_t i = 0; !r->afalg_ok && text && i < sizeof(kernel_modes) / sizeof(kernel_modes[0]); i++) {
		struct ct_kdrv d;
		size_t len = strlen(hw);

		if (ct_proc_crypto_resolve(text, plen, kernel_modes[i].alg, kernel_modes[i].type, &d) &&
		    d.cls == CT_KDRV_HW)
			snprintf(hw + len, sizeof(hw) - len, "%s%s: %s", len ? ", " : "", kernel_modes[i].alg,
				 d.driver);
	}
	if (r->afalg_ok) {
		c = dr_add(r, "afalg", DR_OK, "AF_ALG is available",
			   "socket(AF_ALG, SOCK_SEQPACKET) succeeded");
	} else {
		c = dr_add(r, "afalg", hw[0] ? DR_WARN : DR_INFO, "AF_ALG is not available",
			   "socket(AF_ALG, SOCK_SEQPACKET) fails with %s (%s)%s%s%s",
			   ct_strerrorname(r->afalg_errno) ?: "?", strerror(r->afalg_errno),
			   r->afalg_errno == EAFNOSUPPORT
				   ? ": this kernel has no AF_ALG (or a "
				     "sandbox refuses it); kernel crypto is out of reach from user space"
				   : "",
			   hw[0] ? "; the kernel has hardware AES that only AF_ALG or /dev/crypto can "
				   "give programs: "
				 : "; nothing is lost: /proc/crypto lists no hardware AES "
				   "driver, and the kernel's other AES drivers run on this same CPU",
			   hw);
		if (r->afalg_errno == EAFNOSUPPORT)
			dr_recommend(r,
				     "AF_ALG is off in this kernel (EAFNOSUPPORT): the afalg engine "
				     "and the afalg route cannot work here");
		if (hw[0])
			dr_recommend(r,
				     "load af_alg and algif_skcipher (modprobe), or let the sandbox "
				     "allow AF_ALG sockets, to reach the kernel's hardware AES (%s)",
				     hw);
	}
	dr_value(c, "hardware_aes", false, "%s", hw);
	dr_value(c, "available", true, "%s", r->afalg_ok ? "true" : "false");
	dr_value(c, "errno", false, "%s", r->afalg_ok ? "" : ct_strerrorname(r->afalg_errno) ?: "");

	/* Binding instantiates cbc(aes) & co., so /proc/crypto lists them afterwards. */
	int bind_err[sizeof(kernel_modes) / sizeof(kernel_modes[0])] = { 0 };

	for (size_t i = 0; r->afalg_ok && i < sizeof(kernel_modes) / sizeof(kernel_modes[0]); i++) {
		int fd = ct_afalg_bind(kernel_modes[i].type, kernel_modes[i].alg);

		if (fd >= 0)
			close(fd);
		else
			bind_err[i] = -fd;
	}

	if (r->afalg_ok) { /* the binds above instantiated the templates: read again */
		free(text);
		text = ct_read_file("/proc/crypto", &plen);
	}
	char *modules = ct_read_file("/proc/modules", &mlen);
	bool accel_loaded = false;
	const char *accel = arm ? "aes-ce / -ce drivers" : "aesni-intel";

	if (modules && module_loaded(modules, arm ? "aes_ce_blk" : "aesni_intel"))
		accel_loaded = true;
	if (text && strstr(text, arm ? "-ce\n" : "aesni"))
		accel_loaded = true; /* built in, or listed by driver name */
	/* Programs reach the kernel's AES through AF_ALG or /dev/crypto only: with neither, which
	 * driver the kernel has matters to its own users (dm-crypt, IPsec), not to any program. */
	int cdev_err = 0;

	r->kernel_offers_nothing = !r->afalg_ok && !ct_cryptodev_usable(&cdev_err);
	bool moot = !accel_loaded && r->kernel_offers_nothing;

	c = dr_add(r, "kernel:accel",
		   accel_loaded ? DR_OK
		   : moot       ? DR_INFO
		   : cpu_aes    ? DR_WARN
				: DR_INFO,
		   "", "%s%s",
		   accel_loaded ? "its drivers are listed in /proc/crypto or /proc/modules"
				: "no such driver in /proc/crypto or module in /proc/modules",
		   !text ? " (/proc/crypto unreadable)" : "");
	if (moot)
		snprintf(c->evidence + strlen(c->evidence), sizeof(c->evidence) - strlen(c->evidence),
			 "; the kernel offers no AF_ALG (socket fails with %s) and there is no "
			 "/dev/crypto (%s), so no program can reach the kernel's AES: whether %s is "
			 "loaded only matters to the kernel's own users (dm-crypt, IPsec)",
			 ct_strerrorname(r->afalg_errno) ?: "?", ct_strerrorname(cdev_err) ?: "?", accel);
	snprintf(c->title, sizeof(c->title), "%s %s loaded in the kernel%s", accel,
		 accel_loaded ? "is" : "is not", moot ? " (moot: no AF_ALG here)" : "");
	dr_value(c, "moot", true, "%s", moot ? "true" : "false");
	dr_value(c, "loaded", true, "%s", accel_loaded ? "true" : "false");
	if (!accel_loaded && cpu_aes && r->afalg_ok)
		dr_recommend(r, "modprobe %s: the kernel's AES runs in generic C code without it",
			     arm ? "aes-ce-blk" : "aesni-intel");

	for (size_t i = 0; i < sizeof(kernel_modes) / sizeof(kernel_modes[0]); i++) {
		struct ct_kdrv d;
		char id[48];
		bool found = text && ct_proc_crypto_resolve(text, plen, kernel_modes[i].alg,
							    kernel_modes[i].type, &d);

		snprintf(id, sizeof(id), "kernel:%s", kernel_modes[i].alg);
		if (!found) {
			/* Without AF_ALG nothing instantiates the template: not listed is normal. */
			c = dr_add(r, id, DR_INFO, "", "%s",
				   bind_err[i] ? "AF_ALG bind failed"
					       : "not instantiated: no entry in /proc/crypto");
			if (bind_err[i])
				snprintf(c->evidence, sizeof(c->evidence),
					 "AF_ALG bind(%s, %s) fails "
					 "with %s",
					 kernel_modes[i].type, kernel_modes[i].alg,
					 ct_strerrorname(bind_err[i]) ?: "?");
			snprintf(c->title, sizeof(c->title), "%s: no kernel driver listed",
				 kernel_modes[i].alg);
			dr_value(c, "driver", false, "%s", "");
			continue;
		}
		/* Without AF_ALG only the kernel's own users (dm-crypt, IPsec) get this driver. */
		enum dr_status st = d.cls == CT_KDRV_SW && cpu_aes && r->afalg_ok ? DR_WARN
				    : d.cls == CT_KDRV_SW                         ? DR_INFO
										  : DR_OK;

		c = dr_add(r, id, st, "", "driver %s, module %s, priority %d, type %s", d.driver, d.module,
			   d.priority, d.type);
		snprintf(c->title, sizeof(c->title), "%s: the kernel picks %s (%s)", kernel_modes[i].alg,
			 d.driver,
			 d.cls == CT_KDRV_SW    ? "generic software"
			 : d.cls == CT_KDRV_CPU ? "CPU instructions"
			 : d.cls == CT_KDRV_HW  ? "hardware"
						: "unknown class");
		dr_value(c, "driver", false, "%s", d.driver);
		dr_value(c, "module", false, "%s", d.module);
		dr_value(c, "priority", true, "%d", d.priority);
		dr_value(c, "class", false, "%s", ct_kdrv_class_name(d.cls));
		if (!strcmp(kernel_modes[i].mode, "cbc") && r->afalg_ok)
			dr_value(c, "afalg", true, "%s", "true");
	}
	free(text);
	free(modules);
}

/* ---- /dev/crypto -------------------------------------------------------------------------- */

void dr_probe_cryptodev(struct dr_report *r)
{
	int fd = open(CT_CDEV_PATH, O_RDWR | O_CLOEXEC);
	struct dr_check *c;

	if (fd < 0) {
		int e = errno;

		c = dr_add(r, "cryptodev", DR_INFO,
			   e == ENOENT ? "/dev/crypto is absent" : "/dev/crypto cannot be opened",
			   "open(\"/dev/crypto\") fails with %s%s", ct_strerrorname(e) ?: "?",
			   e == ENOENT ? ": no cryptodev-linux module; the devcrypto engine and the "
					 "cryptodev route have nothing to talk to"
				       : "");
		dr_value(c, "present", true, "%s", e == ENOENT ? "false" : "true");
		dr_value(c, "errno", false, "%s", ct_strerrorname(e) ?: "");
		return;
	}
	r->cryptodev_ok = true;
	c = dr_add(r, "cryptodev", DR_OK, "/dev/crypto is present", "open(\"/dev/crypto\") succeeded");
	dr_value(c, "present", true, "true");

	static const struct {
		const char *name;
		uint32_t cipher;
		uint32_t keylen;
	} sessions[] = {
		{ "aes-128-cbc", CT_CRYPTO_AES_CBC, 16 }, { "aes-192-cbc", CT_CRYPTO_AES_CBC, 24 },
		{ "aes-256-cbc", CT_CRYPTO_AES_CBC, 32 }, { "aes-128-ctr", CT_CRYPTO_AES_CTR, 16 },
		{ "aes-256-ctr", CT_CRYPTO_AES_CTR, 32 }, { "aes-128-ecb", CT_CRYPTO_AES_ECB, 16 },
		{ "aes-256-ecb", CT_CRYPTO_AES_ECB, 32 }, { "aes-128-xts", CT_CRYPTO_AES_XTS, 32 },
		{ "aes-256-xts", CT_CRYPTO_AES_XTS, 64 }, { "aes-128-gcm", CT_CRYPTO_AES_GCM, 16 },
		{ "aes-256-gcm", CT_CRYPTO_AES_GCM, 32 },
	};
	static uint8_t key[64] = { 1 }; /* not all zero: XTS refuses equal halves */

	for (int i = 32; i < 64; i++)
		key[i] = 2;
	for (size_t i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++) {
		struct ct_cdev_session_op s = {
			.cipher = sessions[i].cipher,
			.keylen = sessions[i].keylen,
			.key = key,
		};
		char id[48];

		snprintf(id, sizeof(id), "cryptodev:%s", sessions[i].name);
		if (ioctl(fd, CT_CIOCGSESSION, &s) != 0) {
			int e = errno;

			/* this cryptodev serves other ciphers: a fact about its drivers */
			c = dr_add(r, id, DR_INFO, "", "CIOCGSESSION(cipher=%u keylen=%u) fails with %s",
				   sessions[i].cipher, sessions[i].keylen, ct_strerrorname(e) ?: "?");
			snprintf(c->title, sizeof(c->title), "/dev/crypto %s: no session", sessions[i].name);
			dr_value(c, "session", true, "false");
			continue;
		}

		struct ct_cdev_session_info_op info = { .ses = s.ses };
		bool have_info = ioctl(fd, CT_CIOCGSESSINFO, &info) == 0;
		const char *drv = have_info ? info.cipher_info.cra_driver_name : "";
		enum ct_kdrv_class cls = have_info ? ct_kdrv_classify(drv, "") : CT_KDRV_UNKNOWN;

		if (have_info && (info.flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY))
			cls = CT_KDRV_HW;
		c = dr_add(r, id, cls == CT_KDRV_SW ? DR_WARN : DR_OK, "",
			   "CIOCGSESSION ok; CIOCGSESSINFO: %s%s%s", have_info ? drv : "fails",
			   have_info ? ", class " : "", have_info ? ct_kdrv_class_name(cls) : "");
		snprintf(c->title, sizeof(c->title), "/dev/crypto %s: driver %s", sessions[i].name,
			 drv[0] ? drv : "unknown");
		dr_value(c, "session", true, "true");
		dr_value(c, "driver", false, "%s", drv);
		dr_value(c, "class", false, "%s", ct_kdrv_class_name(cls));
		ioctl(fd, CT_CIOCFSESSION, &s.ses);
	}
	close(fd);
}
