#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The checks of tests/vm/ktls.sh, on what the two guests wrote back: ktls.sh's header says what
they assert. Usage: ktls_check.py SCRATCH FILE [wget]"""
import json
import os
import sys

import ctlib
from ctlib import check

IO_WAIT = 1 << 5
scratch, src = sys.argv[1], sys.argv[2]
with_wget = len(sys.argv) > 3 and sys.argv[3] == "wget"
out, notls = os.path.join(scratch, "out"), os.path.join(scratch, "out-notls")
FILE = open(src, "rb").read()


def status(text, name):
    for line in text.splitlines():
        if line.startswith(name + "="):
            return int(line.split("=", 1)[1])
    raise ctlib.Failure(f"no {name} in the guest's output")


def doc(where, name):
    return json.load(open(os.path.join(where, name + ".json")))


def ktls(d, direction, control=False):
    """The kTLS paths of one direction: data (proto TLS1.x) or control records."""
    return [p for p in d["paths"] if p["api"] == "ktls" and p["dir"] == direction and
            p["proto"].endswith(" control") == control]


def one(d, direction, control=False):
    ps = ktls(d, direction, control)
    check(len(ps) == 1, f"one kTLS {direction}{' control' if control else ''} path: "
          f"{[(p['impl'], p['cipher'], p['proto'], p['bytes']) for p in ps]}")
    return ps[0]


def bad_findings(d):
    return [(f["kind"], f["severity"]) for f in d["findings"] if f["severity"] in ("warning", "error")]


def check_path(p, cipher, proto, nbytes, what):
    check(p["impl"] == "kernel:tls-sw" and p["cipher"] == cipher and p["proto"] == proto and
          p["bytes"] == nbytes and p["entry"] == "kTLS socket I/O" and p["flags"] & IO_WAIT and
          p["errors"] == 0,
          f"{what}: kernel:tls-sw {cipher} {proto}, exactly {nbytes} B, IO_WAIT "
          f"({p['impl']} {p['cipher']} {p['proto']} {p['bytes']} B flags {p['flags']:#x}, "
          f"{p['calls']} calls, wall {p['wall_ns']} ns user {p['user_ns']} sys {p['sys_ns']})")


def test():
    g = open(os.path.join(scratch, "guest-tls.out")).read()
    # ktls_pair: (name, cipher, proto, bytes, rx, alert)
    cases = [("send", "aes-256-gcm", "TLS1.3", 100000, True, False),
             ("sendfile", "aes-128-gcm", "TLS1.2", 100000, True, True),
             ("splice", "aes-256-gcm", "TLS1.3", 100000, False, True),
             ("writev", "aes-128-gcm", "TLS1.3", 65536, True, False),
             ("write", "aes-256-gcm", "TLS1.2", 1000, True, False)]
    for name, cipher, proto, nbytes, rx, alert in cases:
        bare_out = open(os.path.join(out, f"{name}-bare.out"), "rb").read()
        traced_out = open(os.path.join(out, f"{name}-traced.out"), "rb").read()
        check(status(g, f"{name}-bare-status") == 0 and status(g, f"{name}-traced-status") == 0 and
              bare_out == traced_out, f"ktls_pair {name}: exit 0 and the same output bare and traced "
              f"({traced_out!r})")
        d = doc(out, name)
        enc = one(d, "encrypt")
        check_path(enc, cipher, proto, nbytes, f"ktls_pair {name} TX")
        check(enc["key_bits"] == int(cipher[4:7]), f"{name}: key bits {enc['key_bits']}")
        setup = sum(p["session"]["setup_calls"] for p in ktls(d, "encrypt") + ktls(d, "decrypt"))
        check(setup >= 1, f"{name}: the set-up (TCP_ULP + SOL_TLS) is timed on a kTLS path ({setup})")
        if rx:
            check_path(one(d, "decrypt"), cipher, proto, nbytes, f"ktls_pair {name} RX")
        else:
            check(not ktls(d, "decrypt"), f"{name}: no kTLS RX path without TLS_RX")
        if alert:
            c = one(d, "encrypt", control=True)
            check(c["bytes"] == 2 and c["calls"] == 1 and c["proto"] == proto + " control",
                  f"{name}: the alert is one 2-byte control record ({c['calls']}, {c['bytes']})")
            if rx:
                c = one(d, "decrypt", control=True)
                check(c["bytes"] == 2, f"{name}: the alert received on the control path ({c['bytes']})")
        else:
            check(not ktls(d, "encrypt", control=True), f"{name}: no control path without an alert")
        kinds = ctlib.kinds(d)
        check(not bad_findings(d) and (("ktls-tx-only" in kinds) == (not rx)),
              f"{name}: no warning, ktls-tx-only exactly when RX was not set up: {kinds}")
        ev = [e for e in d["events"] if e["kind"] == "session" and e["call"] == "setsockopt"]
        want = f"optname=TLS_TX version={proto}"
        check(any(want in e["detail"] and "impl=kernel:tls-sw" in e["detail"] for e in ev),
              f"{name}: the TLS_TX set-up event says {want!r} and kernel:tls-sw: "
              f"{[e['detail'] for e in ev]}")
    # A cipher the guest kernel cannot serve (no ccm module): refused at TLS_TX with ENOENT.
    check(status(g, "ccm-bare-status") == 2 and status(g, "ccm-traced-status") == 2,
          "ktls_pair aes-128-ccm exits 2 (refused) bare and traced")
    d = doc(out, "ccm")
    ev = [e for e in d["events"] if e["call"] == "setsockopt" and e["kind"] == "call-failed"]
    check(len(ev) == 1 and ev[0]["errno_name"] == "ENOENT" and ev[0]["detail"] ==
          "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_CCM_128 (aes-128-ccm) optlen=40",
          f"ccm: TLS_TX refused with ENOENT, decoded: {ev}")
    f = [f for f in d["findings"] if f["kind"] == "ktls-refused"]
    check(f and "modprobe ccm" in f[0]["fix"], f"ccm: ktls-refused, the fix loads ccm: {f}")

    # A crypto_info one byte too long: EINVAL, the length said.
    check(status(g, "badlen-bare-status") == 2 and status(g, "badlen-traced-status") == 2,
          "ktls_pair --bad-len exits 2 (refused) bare and traced")
    d = doc(out, "badlen")
    ev = [e for e in d["events"] if e["call"] == "setsockopt" and e["kind"] == "call-failed"]
    check(len(ev) == 1 and ev[0]["errno_name"] == "EINVAL" and ev[0]["detail"] ==
          "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_GCM_256 (aes-256-gcm) optlen=57 "
          "(expected 56)", f"badlen: TLS_TX refused with EINVAL, the wrong length said: {ev}")
    f = [f for f in d["findings"] if f["kind"] == "ktls-refused"]
    check(f and "newer kernel" in f[0]["fix"], f"badlen: ktls-refused with the EINVAL fix: {f}")

    # openssl s_server -> s_client, kTLS on.
    bare_got = open(os.path.join(out, "bare-got"), "rb").read()
    for name, server_rx in (("tls13", False), ("tls12", True)):
        got = open(os.path.join(out, f"{name}-got"), "rb").read()
        check(status(g, f"{name}-client-status") == 0 and status(g, f"{name}-server-status") == 0 and
              got.endswith(FILE) and got == bare_got,
              f"openssl {name}: both exit 0, the client got the file ({len(got)} B), the same as "
              f"without cryptrace ({len(bare_got)} B)")
        proto = "TLS1.3" if name == "tls13" else "TLS1.2"
        s, c = doc(out, f"{name}-server"), doc(out, f"{name}-client")
        check_path(one(s, "encrypt"), "aes-256-gcm", proto, len(got),
                   f"s_server {name} (the {len(FILE)} B file + {len(got) - len(FILE)} B HTTP header)")
        check_path(one(c, "encrypt"), "aes-256-gcm", proto, 26, f"s_client {name} (the GET request)")
        if server_rx:
            check_path(one(s, "decrypt"), "aes-256-gcm", proto, 26, f"s_server {name} RX (the request)")
            check_path(one(c, "decrypt"), "aes-256-gcm", proto, len(got), f"s_client {name} RX")
        else:
            check(not ktls(s, "decrypt") and "ktls-tx-only" in ctlib.kinds(s) and
                  "ktls-tx-only" in ctlib.kinds(c),
                  f"{name}: OpenSSL 3.0 sets up TX only, said as ktls-tx-only (info)")
        for side, d in (("server", s), ("client", c)):
            check(not bad_findings(d), f"{name} {side}: no warning or error: {bad_findings(d)}")
    sendfile = [p for p in doc(out, "tls12-server")["paths"] if p["api"] == "ktls"]
    print("s_server -sendfile kTLS paths:", [(p["dir"], p["proto"], p["calls"], p["bytes"]) for p in sendfile])

    if with_wget:
        check(status(g, "wget-status") == 0 and open(os.path.join(out, "wget-got"), "rb").read() == FILE,
              "wget (GnuTLS, ktls = true) fetched the file")
        d = doc(out, "wget")
        ps = [(p["api"], p["dir"], p["proto"], p["bytes"]) for p in d["paths"] if p["api"] == "ktls"]
        asked = [e["detail"] for e in d["events"] if e["call"] == "setsockopt"]
        print("wget's kTLS set-up calls:", asked, "paths:", ps)
        if asked or ps:
            dec = ktls(d, "decrypt")
            check(dec and sum(p["bytes"] for p in dec) >= len(FILE),
                  f"wget: GnuTLS's kTLS decrypt path carries the file: {ps}")
        else:
            # GnuTLS 3.7.9 turns kTLS on only for a session on its own socket I/O (no custom
            # push/pull functions); /proc/net/tls_stat in the guest output agrees.
            print("wget (GnuTLS 3.7.9, ktls = true) asked for no kTLS: no setsockopt TCP_ULP/SOL_TLS")
    else:
        print("wget is not on this host: GnuTLS's kTLS not run")

    # No tls module: refused, fallback said.
    g2 = open(os.path.join(scratch, "guest.out")).read()
    got = open(os.path.join(notls, "refused-got"), "rb").read()
    check(status(g2, "refused-client-status") == 0 and got.endswith(FILE),
          "without the tls module the transfer still works")
    for side in ("server", "client"):
        d = doc(notls, f"refused-{side}")
        ev = [e for e in d["events"] if e["call"] == "setsockopt" and e["errno_name"] == "ENOENT" and
              e["detail"] == "level=SOL_TCP optname=TCP_ULP ulp=tls"]
        fb = [f for f in d["findings"] if f["kind"] == "silent-fallback"]
        check(ev and fb and "modprobe tls" in fb[0]["fix"] and not ktls(d, "encrypt"),
              f"no tls module, {side}: TCP_ULP ENOENT and silent-fallback with `modprobe tls`: "
              f"{[f['kind'] for f in d['findings']]}")


ctlib.verdict(test)
