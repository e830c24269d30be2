#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace doctor --libcrypto` on OpenSSL 1.1.1w's libcrypto: its version and AES-NI speed;
software AES (a failed check, exit 1) under the OPENSSL_ia32cap mask; its engines from
OPENSSL_ENGINES (1.1's engines-1.1 directory, as libcrypto reads it), none of 3.x's providers;
the `openssl speed` recommendation in 1.1's terms (without -evp it times AES_*)."""
import ctlib
from ctlib import check
import osslver


def test():
    t = osslver.tree("1.1.1")
    doc, checks = osslver.doctor(t)
    eng = {k: c for k, c in checks.items() if k.startswith("engine:")}
    print({k: (c["status"], c["title"]) for k, c in eng.items()})
    check("engine:padlock" in eng and "no padlock.so" not in eng["engine:padlock"]["evidence"],
          f"1.1.1: padlock.so of engines-1.1 found ({eng.get('engine:padlock')})")
    check(not [k for k in checks if k.startswith("provider:")],
          f"1.1.1: no provider checks (1.1 has none): {sorted(checks)}")
    bad = [(k, c["title"]) for k, c in eng.items() if c["status"] in ("warn", "fail")]
    check(not bad, f"1.1.1: no engine warning on this host ({bad})")
    recs = " ".join(doc.get("recommendations", []))
    check("OpenSSL 1.1.1w's speed times the low-level AES_* functions" in recs,
          f"1.1.1: the speed recommendation in 1.1's terms ({recs[:300]})")
    osslver.doctor(t, masked_env=True)


ctlib.main(test)
