#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace serve --listen 127.0.0.1:0`: /metrics in the text format 0.0.4 (promtool check
metrics is silent) and, when the Accept header asks for it as Prometheus does, OpenMetrics (the
strict parser accepts it); the same counters as `report --openmetrics`; a counter kept when the
trace is rotated away; read-only and bounded: POST 405, another path 404, a request head over
8 KiB 431, a non-loopback address refused without --allow-remote. With --state FILE: a restart
after the trace is rotated away keeps the counter (no reset), and a second serve on the same
state is refused."""
import os
import socket
import subprocess
import urllib.error
import urllib.request

import ctlib
from ctlib import check
from ctlib import metrics

OM_ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


def get(url, accept=None, method="GET"):
    req = urllib.request.Request(url, method=method, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def bytes_sum(samples):
    return sum(metrics.sums(samples, "cryptrace_cipher_bytes_total", "impl").values())


def test():
    promtool = metrics.need_tools()
    openssl = ctlib.need_program("openssl")
    tmp = ctlib.tmpdir("serve")
    spool = os.path.join(tmp, "spool")
    p = ctlib.run_traced([openssl, "enc", "-aes-256-cbc", "-K", "55" * 32, "-iv", "66" * 16,
                          "-in", "/bin/ls", "-out", "/dev/null"], spool)
    check(p.returncode == 0, "openssl enc ran under cryptrace")
    want = bytes_sum(metrics.parse(ctlib.cryptrace_ok("report", "--openmetrics", spool).stdout, "openmetrics"))

    try:  # refused at once; a serve that listened would run until killed
        p = ctlib.run([ctlib.CRYPTRACE, "serve", "--listen", "0.0.0.0:0", spool], text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise ctlib.Failure("serve --listen 0.0.0.0:0 without --allow-remote listened")
    check(p.returncode == 2 and "not a loopback address" in p.stderr and p.stderr.count("\n") == 1,
          "0.0.0.0 without --allow-remote: refused, one line, exit 2")

    state = os.path.join(tmp, "serve.state")
    srv, url = start_serve(spool, "--state", state)
    try:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        status, ctype, body = get(url)
        check(status == 200 and ctype.startswith("text/plain; version=0.0.4"), f"GET /metrics: 200, {ctype}")
        metrics.promtool_check(promtool, body, "serve's text format")
        check(bytes_sum(metrics.parse(body, "text")) == want, f"the bytes of report --openmetrics ({want})")
        status, ctype, body = get(url, OM_ACCEPT)
        check(status == 200 and ctype.startswith("application/openmetrics-text"), f"Prometheus's Accept: {ctype}")
        check(bytes_sum(metrics.parse(body, "openmetrics")) == want, "OpenMetrics, the same bytes")

        for t in ctlib.traces(spool):
            os.rename(t, os.path.join(tmp, os.path.basename(t)))
        status, _, body = get(url)
        check(status == 200 and bytes_sum(metrics.parse(body, "text")) == want,
              "the trace rotated away: the counter is kept")

        check(get(url, method="POST")[0] == 405, "POST: 405")
        check(get(url.replace("/metrics", "/etc/passwd"))[0] == 404, "another path: 404")
        status, _, body = get(url, method="HEAD")
        check(status == 200 and body == b"", "HEAD: 200, no body")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n")
            reply = s.recv(200)
        check(reply.startswith(b"HTTP/1.1 431 "), f"a request head over 8 KiB: 431 ({reply[:40]!r})")
        check(get(url)[0] == 200, "and it serves on")
        check(srv.poll() is None, "serve still runs")
        p = ctlib.run([ctlib.CRYPTRACE, "serve", "--listen", "127.0.0.1:0", "--state", state, spool],
                      text=True, timeout=30)
        check(p.returncode == 2 and "in use by another cryptrace export or serve" in p.stderr and
              p.stderr.count("\n") == 1, f"a second serve on the same state: refused, one line, exit 2 ({p.stderr.strip()})")
    finally:
        srv.terminate()
        srv.wait(timeout=30)
    # restarted with its state, the trace long gone from the spool: the counter is where it was
    check(not ctlib.traces(spool), "the spool is empty")
    srv, url = start_serve(spool, "--state", state)
    try:
        status, _, body = get(url)
        check(status == 200 and bytes_sum(metrics.parse(body, "text")) == want,
              "restarted with --state after the rotation: the counter is kept, no reset")
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def start_serve(spool, *opts):
    srv = subprocess.Popen([ctlib.CRYPTRACE, "serve", "--listen", "127.0.0.1:0", *opts, spool],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = srv.stderr.readline()
    if not line.startswith("cryptrace serve: listening on http://127.0.0.1:"):
        srv.kill()
        raise ctlib.Failure(f"serve did not say where it listens: {line.strip()}")
    print(f"ok: serve says where: {line.strip()}")
    return srv, line.split()[-1]


ctlib.main(test)
