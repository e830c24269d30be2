# SPDX-License-Identifier: MIT
"""doctor-host: `cryptrace doctor` on this host, and with OPENSSL_ia32cap masking AES-NI.

Must show here: AF_ALG unavailable with its errno (EAFNOSUPPORT on these hosts), /dev/crypto
absent, the libcrypto `openssl` loads running AES at AES-NI speed, the afalg engine failing to
load with the reason; with the mask exported: libcrypto flagged as software AES, the mask named,
exit 1. `--json` parses, the text fits 80 columns. Facts are cross-checked against this host
(python's own socket(AF_ALG), ldd openssl, /proc/cpuinfo), so each check can fail.

A warning is for something the reader should change here (issue 14, item 11): on a clean host
every [warn] or [fail] must be one of the kinds the reader can act on, each with the
recommendation that says how; an engine for hardware or a kernel interface this machine does
not have (padlock without a VIA/Zhaoxin PadLock unit, afalg without AF_ALG, devcrypto without
/dev/crypto) and AF_ALG missing where the kernel has no hardware AES are [info].
"""
import os
import re
import shutil
import subprocess

import ctlib
from ctlib import check


# The warnings a reader can act on here, and what the recommendation that says how holds.
ACTIONABLE = {
    "ia32cap": ("unset OPENSSL_ia32cap",),
    "libcrypto": ("built with its assembler", "unset OPENSSL_ia32cap"),
    "kernel:accel": ("modprobe",),
    "kernel:cbc(aes)": ("modprobe",), "kernel:ctr(aes)": ("modprobe",),
    "kernel:ecb(aes)": ("modprobe",), "kernel:xts(aes)": ("modprobe",),
    "kernel:gcm(aes)": ("modprobe",),
    "afalg": ("load af_alg",),
}


def cpu_vendor():
    for line in open("/proc/cpuinfo"):
        if line.startswith("vendor_id"):
            return line.split(":", 1)[1].strip()
    return ""


def only_actionable_warnings(doc):
    """Every warn/fail check is one the reader can act on here, with its recommendation."""
    for c in doc["checks"]:
        if c["status"] not in ("warn", "fail"):
            continue
        want = ACTIONABLE.get(c["id"], ())
        check(any(w in r for w in want for r in doc["recommendations"]),
              f"[{c['status']}] {c['id']} is something to change here, and a recommendation "
              f"says how ({c['title']}: {c['evidence'][:160]})")
    print(f"warnings here: {[(c['id'], c['status']) for c in doc['checks'] if c['status'] in ('warn', 'fail')]}")


def test():
    openssl = shutil.which("openssl")
    if not openssl:
        ctlib.skip("openssl is not installed")
    cpu_aes = "aes" in open("/proc/cpuinfo").read().split()

    p = ctlib.cryptrace("doctor", "--json", text=True)
    rc, so = p.returncode, p.stdout
    doc = ctlib.parse_json(so, "doctor --json")
    c = ctlib.doctor_checks(doc)
    for cid in ("cpu", "ia32cap", "libcrypto", "engine:afalg", "provider:default", "afalg",
                "kernel:cbc(aes)", "cryptodev", "crossover"):
        check(cid in c, f"doctor has a {cid} check")
    check(all(x["status"] in ("ok", "info", "warn", "fail") for x in doc["checks"]),
          "every check is ok/info/warn/fail")
    check(("aes" in c["cpu"]["values"]["flags"].split()) == cpu_aes,
          f"cpu flags agree with /proc/cpuinfo on aes ({c['cpu']['values']['flags']})")

    name = ctlib.afalg_refused()
    a = c["afalg"]
    if name is None:
        check(a["values"]["available"] is True, "AF_ALG works here and the doctor says so")
    else:
        check(a["values"]["available"] is False and a["values"]["errno"] == name,
              f"AF_ALG unavailable with {name}, as socket(AF_ALG) says here "
              f"({a['values']})")
        if name == "EAFNOSUPPORT":
            check(any("AF_ALG is off" in r for r in doc["recommendations"]),
                  "a recommendation says AF_ALG is off in this kernel")

    cd = c["cryptodev"]
    check(cd["values"]["present"] == os.path.exists("/dev/crypto"),
          f"/dev/crypto {'present' if os.path.exists('/dev/crypto') else 'absent'}, "
          f"as the doctor says ({cd['title']})")

    # With neither AF_ALG nor /dev/crypto no program reaches the kernel's AES: whether its AES-NI
    # driver is loaded is moot (info), not a warning.
    acc = c["kernel:accel"]
    if name is not None and not os.path.exists("/dev/crypto"):
        check(acc["values"]["moot"] is True and acc["status"] in ("info", "ok"),
              f"no AF_ALG, no /dev/crypto: the kernel driver question is moot ({acc['status']}: "
              f"{acc['title']})")
        if acc["values"]["loaded"] is False:
            check("offers no AF_ALG" in acc["evidence"] and "moot" in acc["title"],
                  f"and says why: {acc['evidence']}")
        check(not any("modprobe" in r for r in doc["recommendations"]),
              "no modprobe recommendation where no program could use it")
    else:
        check(acc["values"]["moot"] is False, "a kernel path exists: the driver matters")

    # `openssl speed` without -evp: what it times depends on the version (OpenSSL 3: EVP_Cipher
    # on the provider's code; 1.1 and older: AES_*, no AES-NI). Which is ours, from openssl itself:
    ver = subprocess.run([openssl, "version"], stdout=subprocess.PIPE, text=True).stdout
    speed = [r for r in doc["recommendations"] if "openssl speed -evp" in r]
    check(len(speed) == 1, f"one openssl speed recommendation ({speed})")
    m = re.match(r"OpenSSL (\d+)\.", ver)
    if m and int(m.group(1)) >= 3:
        check("EVP_Cipher()" in speed[0] and "AES_*" not in speed[0] and
              ver.split()[1] in speed[0],
              f"{ver.split()[0]} {ver.split()[1]}: without -evp it is EVP_Cipher at provider speed: "
              f"{speed[0]}")
    elif m:
        check("AES_*" in speed[0] and "EVP_Cipher" not in speed[0],
              f"{ver.strip()}: without -evp it is the low-level AES_*: {speed[0]}")

    lib = c["libcrypto"]
    check(lib["values"]["path"] == ctlib.openssl_libcrypto(),
          f"the libcrypto is the one ldd openssl names ({lib['values']['path']})")
    print(f"libcrypto: ctr {lib['values']['ctr_cpb']} cycles/byte, cbc "
          f"{lib['values']['cbc_cpb']}, AES-NI bound {lib['values']['aesni_bound_cpb']}")
    if cpu_aes:
        check(lib["values"]["software_aes"] is False and lib["status"] == "ok",
              f"libcrypto runs AES at AES-NI speed ({lib['title']})")

    eng = c["engine:afalg"]
    if name is not None:
        check(eng["values"]["loads"] is False and eng["values"]["reason"],
              f"the afalg engine fails to load, with OpenSSL's reason: {eng['values']['reason']}")
        check(name in eng["evidence"],
              f"the afalg engine's evidence names socket(AF_ALG)'s errno: {eng['evidence']}")
    if name is not None:
        check(eng["status"] == "info" and "no AF_ALG" in eng["title"],
              f"without AF_ALG the afalg engine is a fact, not a warning: [{eng['status']}] "
              f"{eng['title']}")
        if not a["values"]["hardware_aes"]:
            check(a["status"] == "info" and "nothing is lost" in a["evidence"],
                  f"AF_ALG missing, no hardware AES in the kernel: [{a['status']}] "
                  f"{a['evidence'][-110:]}")
        else:
            check(a["status"] == "warn", f"AF_ALG missing, hardware AES {a['values']['hardware_aes']}")
    pad = c.get("engine:padlock")
    vendor = cpu_vendor()
    if pad and not pad["values"]["loads"] and vendor not in ("CentaurHauls", "Shanghai"):
        check(pad["status"] == "info" and "no PadLock CPU" in pad["title"] and
              vendor in pad["evidence"],
              f"padlock on a {vendor} CPU: [{pad['status']}] {pad['title']} ({pad['evidence'][-80:]})")
    elif pad:
        print(f"padlock here: [{pad['status']}] {pad['title']} (vendor {vendor})")
    only_actionable_warnings(doc)
    check(rc == 0, f"no check failed on this host (exit {rc})")
    check(c["provider:default"]["values"]["loads"] is True, "the default provider loads")
    check(c["ia32cap"]["status"] == "ok", "OPENSSL_ia32cap unset: ok")

    # The same, masked: the child measuring libcrypto inherits the mask.
    p = ctlib.cryptrace("doctor", "--json", env=ctlib.masked_env(), text=True)
    rc, so = p.returncode, p.stdout
    doc = ctlib.parse_json(so, "doctor --json (masked)")
    c = ctlib.doctor_checks(doc)
    check(rc == 1, f"masked: doctor exits 1 (a check failed), got {rc}")
    check(c["ia32cap"]["status"] == "fail" and c["ia32cap"]["values"]["value"] == ctlib.MASK
          and c["ia32cap"]["values"]["masks_aesni"] is True,
          f"masked: the ia32cap check fails and names the mask ({c['ia32cap']['evidence']})")
    lib = c["libcrypto"]
    check(lib["values"]["software_aes"] is True and ctlib.MASK in lib["evidence"],
          f"masked: libcrypto flagged as software AES, naming the mask ({lib['evidence']})")
    print(f"masked libcrypto: ctr {lib['values']['ctr_cpb']} cycles/byte")
    check(any("unset OPENSSL_ia32cap" in r for r in doc["recommendations"]),
          "masked: a recommendation says unset OPENSSL_ia32cap")

    only_actionable_warnings(doc)

    so = ctlib.cryptrace("doctor", text=True).stdout
    ctlib.fits_80(so, "doctor text")
    check(re.search(r"^\[(ok  |warn|fail|info)\] ", so, re.M) is not None,
          "the text is a checklist of [ok]/[warn]/[fail]/[info] lines")
    check("recommendations:" in so, "the text ends with recommendations")
    rc = ctlib.cryptrace("doctor", "--bogus").returncode
    check(rc == 2, f"an unknown option is a usage error (got {rc})")


ctlib.main(test)
