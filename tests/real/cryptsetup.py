#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptsetup benchmark -c aes-xts-plain64` does its AES in the kernel through AF_ALG. Where the
kernel refuses the socket (this kind of host: EAFNOSUPPORT), the benchmark fails; under
cryptrace it must fail the same way (same exit status, same message), and the report must say
kernel-refused: the program asked the kernel for AES and was refused, why, and what to do
(including --route 'aes-*=aesni'), instead of "no cipher work was done ... Nothing to fix".
With that route, cryptrace serves AF_ALG in-process: the benchmark works (exit 0, MiB/s for both
directions) and the report shows AF_ALG paths served by route:aesni, with no warning."""
import ctlib
from ctlib import check

ARGS = ["benchmark", "-c", "aes-xts-plain64"]


def test():
    cryptsetup = ctlib.need_program("cryptsetup")

    def refused():
        why = ctlib.afalg_refused()
        if not why:
            print("skip refused case: this kernel accepts AF_ALG sockets")
            return False
        bare = ctlib.run([cryptsetup] + ARGS)
        p, doc, _ = ctlib.traced("cryptsetup", [cryptsetup] + ARGS)
        check(p.returncode == bare.returncode != 0,
              f"the benchmark fails the same way traced ({p.returncode} == {bare.returncode})")
        check(p.stderr == bare.stderr, f"same message ({p.stderr[-120:]!r})")
        f = ctlib.finding(doc, "kernel-refused")
        check(f["severity"] == "warning", f"kernel-refused is a warning ({f['severity']})")
        check("AF_ALG" in f["message"] and f"refused with {why}" in f["message"],
              f"says the kernel refused the AF_ALG socket with {why}: {f['message'][:250]}")
        if why == "EAFNOSUPPORT":
            check("algif_skcipher" in f["message"] and "sandbox" in f["message"],
                  f"says why: no af_alg/algif modules, or a sandbox: {f['message'][:400]}")
        check("--route 'aes-*=aesni'" in f["fix"] and "modprobe" in f["fix"],
              f"says what to do: {f['fix']}")
        ni = ctlib.finding(doc, "nothing-intercepted")
        check("Nothing to fix" not in ni["fix"] and "kernel-refused" in ni["message"],
              f"nothing-intercepted points at the refusal: {ni['message'][:200]} / {ni['fix']}")

    def routed():
        p, doc, _ = ctlib.traced("cryptsetup-routed", [cryptsetup] + ARGS,
                                   extra=["--route", "aes-*=aesni"])
        out = p.stdout.decode(errors="replace")
        check(p.returncode == 0 and "aes-xts" in out and out.count("MiB/s") >= 2,
              f"the routed benchmark works: exit {p.returncode}\n{out[-300:]}")
        for direction in ("encrypt", "decrypt"):
            rows = [x for x in doc["paths"] if x["api"] == "afalg" and x["impl"] == "route:aesni"
                    and x["cipher"].endswith("-xts") and x["dir"] == direction]
            check(rows and sum(x["bytes"] for x in rows) > 0,
                  f"AF_ALG {direction} served by route:aesni\n{ctlib.describe_paths(doc)}")
        ctlib.check_complete(doc, "routed")
        ctlib.check_clean(doc, "routed")

    ctlib.run_cases([("AF_ALG refused", refused), ("routed aesni", routed)])


ctlib.main(test)
