#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stunnel4 client and server, both under cryptrace, TLS 1.3 over loopback: 16 MiB written into
the client's plain port arrive at a sink behind the server. stunnel probes for OpenSSL's FIPS
provider at start (OSSL_PROVIDER_try_load name=fips); that is provider-absent (info), never
engine-failed or silent-fallback. Each side's bulk path carries the 16 MiB (client encrypt,
server decrypt, within 1% + 64 KiB of TLS records), created by libssl for TLS 1.3 records; no
warning, no error. Under OPENSSL_ia32cap masking AES-NI: software-aes naming the mask."""
import os
import socket
import threading

import ctlib
from ctlib import check, daemons

DATA = 16 * ctlib.MIB


def sink_server():
    """A plain TCP sink behind stunnel's server: counts what arrives, per connection."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    got = []

    def run():
        c, _ = s.accept()
        n = 0
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            n += len(d)
        c.close()
        got.append(n)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return s, t, got


def config(path, lines):
    with open(path, "w") as f:
        f.write("foreground = yes\npid =\ndebug = 5\n" + "\n".join(lines) + "\n")


def one(tmp, cert, key, env, tag):
    sink, thread, got = sink_server()
    sport, cport = ctlib.free_port(), ctlib.free_port()
    scfg, ccfg = os.path.join(tmp, f"srv-{tag}.conf"), os.path.join(tmp, f"cli-{tag}.conf")
    config(scfg, ["[s]", f"accept = 127.0.0.1:{sport}",
                  f"connect = 127.0.0.1:{sink.getsockname()[1]}", f"cert = {cert}", f"key = {key}",
                  "sslVersionMin = TLSv1.3"])
    config(ccfg, ["[c]", "client = yes", f"accept = 127.0.0.1:{cport}",
                  f"connect = 127.0.0.1:{sport}", "sslVersionMin = TLSv1.3"])
    sdir, cdir = ctlib.tmpdir(f"stunnel-srv-{tag}"), ctlib.tmpdir(f"stunnel-cli-{tag}")
    stunnel = ctlib.need_program("stunnel4")
    server = daemons.Daemon([stunnel, scfg], sdir, "Configuration successful", env=env)
    client = daemons.Daemon([stunnel, ccfg], cdir, "Configuration successful", env=env)
    try:
        payload = os.urandom(DATA)
        ctlib.secret(f"stunnel payload {tag}", payload[:4096])
        with socket.create_connection(("127.0.0.1", cport)) as c:
            c.sendall(payload)
            c.shutdown(socket.SHUT_WR)
            c.recv(1)
        thread.join(60)
    finally:
        client.stop()
        server.stop()
        sink.close()
    check(got == [DATA], f"{tag}: the sink received the {DATA} bytes ({got})")
    return ctlib.report_ok([sdir]), ctlib.report_ok([cdir])


def test():
    ctlib.need_program("stunnel4")
    tmp = ctlib.tmpdir("real-stunnel")
    key, cert = ctlib.throwaway_cert(tmp)

    def clean():
        srv, cli = one(tmp, cert, key, dict(os.environ), "clean")
        for doc, name, direction in ((srv, "server", "decrypt"), (cli, "client", "encrypt")):
            ctlib.check_complete(doc, name)
            ctlib.check_tls13_bulk(doc, name, direction, DATA)
            ctlib.check_clean(doc, name)
            k = ctlib.kinds(doc)
            check("engine-failed" not in k and "silent-fallback" not in k,
                  f"{name}: the FIPS probe is no failed offload ({k})")
            fips = [f for f in doc["findings"] if f["kind"] == "provider-absent"]
            check(len(fips) == 1 and "fips provider" in fips[0]["message"] and
                  fips[0]["severity"] == "info",
                  f"{name}: the FIPS probe said as provider-absent (info): {fips}")

    def masked():
        if not ctlib.cpu_has_aes():
            print("skip masked case: this CPU has no AES-NI")
            return False
        srv, cli = one(tmp, cert, key, ctlib.masked_env(), "masked")
        for doc, name in ((srv, "server"), (cli, "client")):
            ctlib.check_masked(doc, name)

    ctlib.run_cases([("clean", clean), ("masked", masked)])


ctlib.main(test)
