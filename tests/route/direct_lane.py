#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The route's direct lane (docs/routes.md, preload/route/lane.h) on real programs: a routed
context's EVP calls served by our provider without libcrypto's EVP in between must leave every
program's result as it was, and must be taken where it applies.

- TLS 1.3 and TLS 1.2 AES-GCM downloads between `openssl s_server -WWW` and curl, one side routed
  and traced, the other native and untraced (so a tag the lane got wrong fails the transfer, not
  only our side): with the lane and without it (CRYPTRACE_ROUTE_DIRECT=0) the file arrives
  intact, the routed side's GCM bytes are on route:aesni, and the lane served calls, at least
  one per record, in TLS 1.3 (a re-init, AAD, data, final and tag per record) and in TLS 1.2 (the
  AEAD_TLS1_AAD ctrl and EVP_Cipher per record, on a context set up once, whose lane the
  handshake's freed contexts void: found again through the provider); without it, none.
- `openssl speed -evp aes-128-gcm` (3.0's loop: AEAD_SET_IVLEN, a re-init with key and IV, the
  data, the final): four lane calls per message; none with CRYPTRACE_ROUTE_DIRECT=0; a value that
  is neither 0 nor 1 leaves the lane on with a trace warning that names it.
- Contexts set up once (bench/msg_cost's tls12 and ssh shapes) after another routed context was
  freed, which voids every lane: every call of every message on the lane again.
The speed and set-up-once parts run in the sanitizer pass too; the TLS part does not (curl hangs
under the ASan runtime)."""
import os
import subprocess
import time

import ctlib
from ctlib import check, daemons

ROUTE = "aes-*=aesni"
SIZE = 4 << 20
RECORD = 16384
CASES = [
    ("TLS 1.3 AES-128-GCM", ["--tlsv1.3", "--tls13-ciphers", "TLS_AES_128_GCM_SHA256"], "aes-128-gcm", True),
    ("TLS 1.3 AES-256-GCM", ["--tlsv1.3", "--tls13-ciphers", "TLS_AES_256_GCM_SHA384"], "aes-256-gcm", True),
    ("TLS 1.2 AES-128-GCM", ["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-RSA-AES128-GCM-SHA256"],
     "aes-128-gcm", True),
]


def lane_env(direct):
    env = ctlib.bare_env()
    env["CRYPTRACE_ROUTE_DIRECT"] = direct
    return env


def direct_calls(doc):
    return sum(p.get("route_direct_calls", 0) for p in doc.get("processes", []))


def routed_bytes(doc, cipher, direction):
    return sum(p.get("bytes", 0) for p in doc.get("paths", [])
               if p.get("impl") == "route:aesni" and p.get("cipher") == cipher
               and p.get("dir") == direction)


def transfer(tmp, cert, key, src, curl_opts, routed, direct, tag):
    """src fetched by curl from s_server; the side `routed` ("client" or "server") runs under
    `cryptrace run --route`, the other natively. Returns the routed side's report."""
    openssl, curl = ctlib.need_program("openssl"), ctlib.need_program("curl")
    out = ctlib.tmpdir(f"lane-{tag}")
    got = os.path.join(tmp, f"got-{tag}.bin")
    port = ctlib.free_port()
    server_argv = [openssl, "s_server", "-WWW", "-naccept", "1", "-accept", f"127.0.0.1:{port}",
                   "-cert", cert, "-key", key]
    curl_argv = [curl, "-sS", "-k", "-o", got] + curl_opts + [f"https://127.0.0.1:{port}/{os.path.basename(src)}"]
    if routed == "server":
        server = daemons.Daemon(server_argv[:1] + server_argv[1:], out, "ACCEPT", cwd=tmp,
                                env=dict(lane_env(direct), CRYPTRACE_ROUTE=ROUTE))
        try:
            p = ctlib.run(curl_argv)
            server.wait()
        finally:
            server.stop()
    else:
        server = subprocess.Popen(server_argv, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and b"ACCEPT" not in server.stdout.readline():
                pass
            p = ctlib.run_traced(curl_argv, out, extra=("--route", ROUTE), env=lane_env(direct))
            server.wait(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    check(p.returncode == 0, f"{tag}: curl exits 0 ({p.stderr.decode(errors='replace').strip()[-200:]})")
    check(daemons.same_file(src, got), f"{tag}: the fetched file is identical")
    return ctlib.report_ok([out])


def tls(tmp):
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, SIZE)
    records = SIZE // RECORD
    for name, curl_opts, cipher, laned in CASES:
        for routed, direction in (("client", "decrypt"), ("server", "encrypt")):
            for direct in ("1", "0"):
                tag = f"{name.replace(' ', '-')}-{routed}-direct{direct}"
                doc = transfer(tmp, cert, key, src, curl_opts, routed, direct, tag)
                moved = routed_bytes(doc, cipher, direction)
                check(moved >= SIZE, f"{tag}: the {routed}'s {cipher} {direction} ran on the route "
                      f"({moved} B)")
                n = direct_calls(doc)
                if direct == "0":
                    check(n == 0, f"{tag}: CRYPTRACE_ROUTE_DIRECT=0: no call took the lane ({n})")
                elif laned:
                    check(n >= records, f"{tag}: the lane served {n} calls for {records}+ records")


def speed():
    openssl = ctlib.need_program("openssl")
    for direct, lane_on in (("1", True), ("0", False), ("yes", True)):
        out = ctlib.tmpdir(f"lane-speed-{direct}")
        p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "1024", "-evp", "aes-128-gcm"],
                             out, extra=("--route", ROUTE), env=lane_env(direct))
        check(p.returncode == 0, f"speed, CRYPTRACE_ROUTE_DIRECT={direct}: exits 0")
        msgs = ctlib.speed_count(p.stderr.decode(errors="replace"), "AES-128-GCM")
        doc = ctlib.report_ok([out])
        n = direct_calls(doc)
        if lane_on:
            # per message: the ctrl, the re-init, the update and the final; the first message's
            # ctrl and re-init run through EVP (the lane is learnt at the first real init)
            check(n >= 4 * msgs - 8, f"speed, CRYPTRACE_ROUTE_DIRECT={direct}: {n} lane calls for "
                  f"{msgs} messages (4 each)")
        else:
            check(n == 0, f"speed, CRYPTRACE_ROUTE_DIRECT=0: no lane calls ({n})")
        warned = [e for e in doc.get("events", []) if "CRYPTRACE_ROUTE_DIRECT" in e.get("detail", "")]
        check(bool(warned) == (direct == "yes"), f"speed, CRYPTRACE_ROUTE_DIRECT={direct}: "
              + ("a trace warning names the bad value" if direct == "yes" else "no warning"))


def set_up_once():
    """Contexts set up once and then used for every record (TLS 1.2, SSH: no re-init to learn a
    lane from) after another routed context was freed (a server's other connection), which voids
    every lane: bench/msg_cost's tls12 and ssh shapes, whose every call per message takes the lane
    again (the provider asked for the context, route/lane.h)."""
    prog = os.path.join(os.environ.get("CT_BUILD_ROOT", ""), "bench", "msg_cost")
    if not os.access(prog, os.X_OK):
        ctlib.skip(f"{prog} is not built")
    msgs = 2000
    for shape, direction, per_msg in (("tls12", "enc", 2), ("tls12", "dec", 2), ("ssh", "enc", 5)):
        tag = f"set up once, {shape} {direction}"
        out = ctlib.tmpdir(f"lane-once-{shape}-{direction}")
        p = ctlib.run_traced([prog, "16", str(msgs), "1", shape, direction], out, extra=("--route", ROUTE),
                             env=lane_env("1"))
        check(p.returncode == 0, f"{tag}: msg_cost exits 0 ({p.stderr.decode(errors='replace')[-200:]})")
        n = direct_calls(ctlib.report_ok([out]))
        check(n >= per_msg * msgs, f"{tag}: the lane served {n} calls for {msgs} messages ({per_msg} each)")


def test():
    if not ctlib.cpu_has_aes():
        ctlib.skip("no AES instructions on this CPU: the aesni route does not run here")
    speed()
    set_up_once()
    if ctlib.asan_runtime():
        print("note: the TLS part is left to the normal pass: curl hangs with the ASan runtime "
              "in LD_PRELOAD, even with no cryptrace loaded (`curl -V`)")
        return
    daemons.need_openssl_curl()
    ctlib.need_program("cmp")
    tls(ctlib.tmpdir("lane-tls"))


if __name__ == "__main__":
    ctlib.main(test)
