#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace doctor --libcrypto` on OpenSSL 3.5's libcrypto: run on this host's glibc it cannot
load it (3.5 needs GLIBC_2.38) and says so as info, with the way to measure it; run through
3.5's own loader it measures version 3.5 at AES-NI speed, its providers (default, base, legacy
from OPENSSL_MODULES) load, and it fails with software AES under the OPENSSL_ia32cap mask."""
import ctlib
from ctlib import check
import osslver


def test():
    t = osslver.tree("3.5")
    p = ctlib.run([ctlib.CRYPTRACE, "doctor", "--json", "--libcrypto", t.libcrypto], env=t.env())
    lc = ctlib.doctor_checks(ctlib.parse_json(p.stdout.decode(), "doctor --json"))["libcrypto"]
    print(f"host glibc: [{lc['status']}] {lc['title']}: {lc['evidence'][:300]}")
    if "GLIBC_" in lc["evidence"]:
        check(lc["status"] == "info" and "--library-path" in lc["evidence"],
              f"3.5 on the host's glibc: info with the loader to use ({lc['status']})")
    else:
        print("note: this host's glibc loads 3.5's libcrypto: nothing to say about the loader")
    doc, checks = osslver.doctor(t)
    prov = {k: c["status"] for k, c in checks.items() if k.startswith("provider:")}
    check(all(prov.get(f"provider:{n}") == "ok" for n in ("default", "base", "legacy")),
          f"3.5: default, base and legacy providers load ({prov})")
    osslver.doctor(t, masked_env=True)


ctlib.main(test)
