#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kTLS on this host, where the kernel refuses it (no tls module: setsockopt(TCP_ULP, "tls")
fails with ENOENT; where it does not, the qemu guest test tests/vm/ktls.sh covers kTLS at work
and this one is skipped, saying so):
  - examples/kernel/ktls_pair asks for TCP_ULP then TLS_TX with four ciphers/versions (one with a
    wrong struct length): exit status and stderr identical bare and traced; each failure is an
    event with its errno, the exact decoded detail (version, cipher, optlen; never key bytes) and
    the call site in ktls_pair; the report says ktls-refused (nothing fell back: the program
    stopped), never session-failed or silent-fallback; no kTLS path.
  - openssl s_server -WWW asked for kTLS (OPENSSL_CONF with `Options = KTLS`) serving a 1 MiB
    file to openssl s_client (also asking for kTLS): the transfer works and the client's output
    and exit status are the same with and without cryptrace; both reports have the ENOENT and
    ENOPROTOOPT set-up failures (OpenSSL asks for TLS_TX even after TCP_ULP failed) and a
    silent-fallback finding whose fix says `modprobe tls`, counting the user-space aes-256-gcm
    encrypt path that carried the file.
The secrets scan covers ktls_pair's key, IV, salt and record sequence."""
import os
import subprocess

import ctlib
from ctlib import check
from ctlib import daemons

import ktls_common as kc

FILE_SIZE = 1 << 20


def ktls_pair_refused():
    pair = ctlib.built("CT_KERNEL_EXAMPLES", "ktls_pair")
    for args, tx_detail in kc.TX_CASES:
        argv = [pair, "--keep-going"] + args
        bare = ctlib.run(argv)
        check(bare.returncode == 2, f"{args}: ktls_pair exits 2 when the kernel refuses kTLS "
              f"(exit {bare.returncode}: {bare.stderr.decode(errors='replace').strip()})")
        p, doc, _ = ctlib.traced("ktls-pair", argv)
        check(p.returncode == bare.returncode and p.stderr == bare.stderr and p.stdout == bare.stdout,
              f"{args}: same exit status and output traced ({p.returncode}, {p.stderr!r})")
        ev = kc.ktls_events(doc)
        ulp = [e for e in ev if e["detail"] == kc.ULP_DETAIL]
        check(len(ulp) == 1 and ulp[0]["errno_name"] == "ENOENT" and ulp[0]["ret"] == -1 and
              ulp[0]["kind"] == "call-failed" and "ktls_pair!set_up" in ulp[0]["callsite"],
              f"{args}: TCP_ULP refused with ENOENT, at ktls_pair's set_up: {ulp}")
        tx = [e for e in ev if e["detail"].startswith("level=SOL_TLS")]
        check(len(tx) == 1 and tx[0]["detail"] == tx_detail and tx[0]["errno_name"] == "ENOPROTOOPT",
              f"{args}: TLS_TX refused with ENOPROTOOPT, decoded as {tx_detail!r}: {tx}")
        kinds = ctlib.kinds(doc)
        check("ktls-refused" in kinds and "silent-fallback" not in kinds and
              "session-failed" not in kinds,
              f"{args}: ktls-refused, and neither silent-fallback nor session-failed: {kinds}")
        f = kc.finding_of(doc, "ktls-refused")[0]
        check("modprobe tls" in f["fix"] and "ENOENT" in f["evidence"],
              f"{args}: the finding's fix loads the tls module: {f['fix']}")
        check(not ctlib.paths(doc, api="ktls"), f"{args}: no kTLS path when kTLS was refused")
    # Without --keep-going the program stops at TCP_ULP: one event.
    p, doc, _ = ctlib.traced("ktls-pair-stop", [pair])
    ev = kc.ktls_events(doc)
    check(p.returncode == 2 and len(ev) == 1 and ev[0]["detail"] == kc.ULP_DETAIL,
          f"ktls_pair without --keep-going: only the TCP_ULP failure ({ev})")


def bare_server(argv, cwd, env):
    """argv (an s_server) without cryptrace, once it prints ACCEPT; the rest of its output is
    left in its pipe for communicate()."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    seen = b""
    while b"ACCEPT" not in seen:
        line = p.stdout.readline()
        if not line:
            p.kill()
            raise ctlib.Failure(f"s_server did not start: {seen!r}")
        seen += line
    p.seen = seen
    return p


def s_server_refused():
    openssl = ctlib.need_program("openssl")
    tmp = ctlib.tmpdir("ktls-ossl")
    key, cert = ctlib.throwaway_cert(tmp)
    conf = kc.openssl_conf(tmp)
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, FILE_SIZE)
    env = dict(os.environ, OPENSSL_CONF=conf)
    request = b"GET /file.bin HTTP/1.0\r\n\r\n"
    results = {}
    for mode in ("bare", "traced"):
        port = ctlib.free_port()
        server_argv = [openssl, "s_server", "-WWW", "-naccept", "1", "-accept", f"127.0.0.1:{port}",
                       "-cert", cert, "-key", key]
        client_argv = [openssl, "s_client", "-connect", f"127.0.0.1:{port}", "-quiet", "-ign_eof"]
        sdir, cdir = ctlib.tmpdir("ktls-s_server"), ctlib.tmpdir("ktls-s_client")
        if mode == "bare":
            server = bare_server(server_argv, tmp, env)
            try:
                client = ctlib.run(client_argv, env=env, cwd=tmp, input_bytes=request)
                sout, _ = server.communicate(timeout=60)
                sout = server.seen + sout
            finally:
                server.kill()
            results[mode] = (client, server.returncode, sout)
        else:
            server = daemons.Daemon(server_argv, sdir, "ACCEPT", cwd=tmp, env=env)
            try:
                client = ctlib.run_traced(client_argv, cdir, env=env, cwd=tmp, input_bytes=request)
                sout = server.wait().encode()
            finally:
                server.stop()
            results[mode] = (client, server.p.returncode, sout, sdir, cdir)
    bare, traced = results["bare"][0], results["traced"][0]
    check(results["bare"][1] == 0 and results["traced"][1] == 0 and
          results["bare"][2] == results["traced"][2],
          f"s_server exits 0 with the same output bare and traced ({results['bare'][1]}, "
          f"{results['traced'][1]}: {results['bare'][2][-200:]!r} / {results['traced'][2][-200:]!r})")
    with open(src, "rb") as f:
        body = f.read()
    check(bare.returncode == 0 and bare.stdout.endswith(body),
          f"s_client fetched the file bare (exit {bare.returncode}, {len(bare.stdout)} B)")
    check(traced.returncode == bare.returncode and traced.stdout == bare.stdout,
          f"s_client's output and exit status are the same traced ({traced.returncode}, "
          f"{len(traced.stdout)} B)")
    sdir, cdir = results["traced"][3:]
    for side, d in (("s_server", sdir), ("s_client", cdir)):
        doc = ctlib.report_ok([d])
        ev = kc.ktls_events(doc)
        ulp = [e for e in ev if e["detail"] == kc.ULP_DETAIL and e["errno_name"] == "ENOENT"]
        tx = [e for e in ev if e["detail"] == kc.TX_CASES[0][1] and e["errno_name"] == "ENOPROTOOPT"]
        check(ulp and tx and "libcrypto" in ulp[0]["callsite"],
              f"{side}: TCP_ULP ENOENT and TLS_TX ENOPROTOOPT (TLS1.3 aes-256-gcm) recorded, at "
              f"libcrypto's socket BIO: {ev}")
        fb = kc.finding_of(doc, "silent-fallback")
        check(len(fb) == 1 and "modprobe tls" in fb[0]["fix"] and "ENOENT" in fb[0]["evidence"] and
              "aes-256-gcm encrypt" in fb[0]["message"],
              f"{side}: silent-fallback with the refusal and `modprobe tls`: {fb}")
        check("session-failed" not in ctlib.kinds(doc), f"{side}: no session-failed for kTLS")
        check(not ctlib.paths(doc, api="ktls"), f"{side}: no kTLS path")
        if side == "s_server":
            sent = sum(p["bytes"] for p in ctlib.paths(doc, api="evp", cipher="aes-256-gcm",
                                                       dir="encrypt"))
            check(sent >= FILE_SIZE and str(sent) in fb[0]["evidence"],
                  f"s_server: the file ({FILE_SIZE} B) went through user-space aes-256-gcm "
                  f"({sent} B), as the finding says")


def test():
    kc.register_secrets()
    pair = ctlib.built("CT_KERNEL_EXAMPLES", "ktls_pair")
    probe = ctlib.run([pair, "--bytes", "16"])
    if probe.returncode == 0:
        ctlib.skip("this kernel takes kTLS (the tls module is loaded): the refused set-up cannot "
                   "be shown here; tests/vm/ktls.sh covers kTLS at work")
    ktls_pair_refused()
    s_server_refused()


if __name__ == "__main__":
    ctlib.main(test)
