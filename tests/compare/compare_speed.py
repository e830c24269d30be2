# SPDX-License-Identifier: MIT
"""compare-speed: the issue's must-show.

`cryptrace compare --routes native,aesni -- openssl speed -seconds 1 -evp aes-128-ctr`
- with OPENSSL_ia32cap="~0x200000200000000" (libcrypto's AES-NI masked): the aesni route must be
  at least 2x the native route (the median per-round ratio of wall throughput);
- without the mask: the two are close (median ratio within 0.5..4 with VAES, 0.5..2.5 without;
  why that width: see the comment in test()).
If `aes-*=aesni` does not change the implementation in the trace, the test fails: routes are part
of this tree.
"""
import os

import ctlib
from ctlib import check

SPEED = ["openssl", "speed", "-seconds", "1", "-evp", "aes-128-ctr"]


def compare(env, tag, rounds="2"):
    out = os.path.join(ctlib.tmpdir(tag), "cmp")
    p = ctlib.run([ctlib.CRYPTRACE, "compare", "--routes", "native,aesni", "-n", rounds, "--json",
                   "-o", out, "--"] + SPEED, env=env, text=True)
    rc, so, se = p.returncode, p.stdout, p.stderr
    check(rc == 0, f"{tag}: compare exits 0 ({rc}: {se.strip()[-300:]})")
    doc = ctlib.parse_json(so, "compare --json")
    nat = ctlib.compare_cell(doc, "aes-128-ctr", "encrypt", "native")
    aes = ctlib.compare_cell(doc, "aes-128-ctr", "encrypt", "aesni")
    check(nat and aes and nat["present"] and aes["present"],
          f"{tag}: aes-128-ctr encrypt traced under both routes")
    return doc, nat, aes, out


def test():
    if "aes" not in open("/proc/cpuinfo").read().split():
        ctlib.skip("this CPU has no AES-NI: the aesni route cannot serve anything")
    doc, nat, aes, out = compare(ctlib.masked_env(), "masked")
    inactive = any(r["routes_inactive"] for route in doc["routes"] for r in route["runs"])
    check(aes["routed"], "aes-*=aesni changed the implementation in the trace (impl "
          f"{aes['impl']!r}{'; the preload says routes are not active' if inactive else ''})")
    check(not nat["routed"], "the native route routes nothing")
    r = aes["ratio"]
    print(f"masked: native {nat['wall_bps']['median'] / 1e6:.0f} MB/s ({nat['impl']}), aesni "
          f"{aes['wall_bps']['median'] / 1e6:.0f} MB/s ({aes['impl']}), ratio {r['median']:.2f} "
          f"({r['min']:.2f}-{r['max']:.2f})")
    check(r["median"] >= 2.0, f"with the mask the aesni route is several times faster "
                               f"(median ratio {r['median']:.2f} >= 2)")

    # unmasked: both routes run AES-NI, so they are close. How close depends on the CPU: with
    # VAES the aesni route does two blocks per 256-bit register and OpenSSL 3.0's CTR does not
    # (1.65 and 2.42-2.68 measured here, docs/doctor.md); without VAES the instructions are the
    # same and only the aesni route's shorter path at small sizes differs. The bound is loose on
    # purpose: one round on a machine shared with other builds; 0.5 allows the native run to be
    # the lucky one, and the upper bound (4 with VAES, 2.5 without) stays far below the masked
    # case (12.9-32 here), so it still tells "both AES-NI" from "one in software".
    doc, nat, aes, out = compare(None, "clean", rounds="1")
    r = aes["ratio"]
    print(f"unmasked: native {nat['wall_bps']['median'] / 1e6:.0f} MB/s, aesni "
          f"{aes['wall_bps']['median'] / 1e6:.0f} MB/s, ratio {r['median']:.2f} "
          f"({r['min']:.2f}-{r['max']:.2f})")
    check(aes["routed"], "without the mask the aesni route still routes aes-128-ctr")
    vaes = "vaes" in open("/proc/cpuinfo").read().split()
    hi = 4.0 if vaes else 2.5
    check(0.5 <= r["median"] <= hi, f"without the mask the two are close: median ratio "
                                     f"{r['median']:.2f} within 0.5..{hi} ({'' if vaes else 'no '}"
                                     "VAES here)")
    # the text table's layout does not depend on the sizes: one size keeps this run short
    p = ctlib.run([ctlib.CRYPTRACE, "compare", "--routes", "native,aesni", "-n", "1", "-o",
                   os.path.join(ctlib.tmpdir("text"), "cmp"), "--", "openssl", "speed", "-seconds",
                   "1", "-bytes", "1024", "-evp", "aes-128-ctr"], text=True)
    rc, so, se = p.returncode, p.stdout, p.stderr
    check(rc == 0, f"text compare exits 0 ({rc}: {se.strip()[-300:]})")
    ctlib.fits_80(so, "compare text")


ctlib.main(test)
