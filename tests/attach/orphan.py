#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A `cryptrace attach` killed with SIGKILL (docs/attach.md): the process stays attached and
tracing, a new attach is refused (exit 2: attached already), `cryptrace attach --detach PID`
ends it (exit 0; the trace ends with the detach), a second --detach is refused (exit 2: not
attached), and the server serves on, intact, throughout."""
import os
import signal

import ctlib
from ctlib import attach, check
from ctlib.programs import free_port



def test():
    attach.need_attach()
    openssl, curl, tmp, src, key, cert = attach.tls_setup("attach-orphan", 1 << 20)
    port = free_port()
    server = attach.Plain([openssl, "s_server", "-WWW", "-accept", f"127.0.0.1:{port}", "-cert",
                           cert, "-key", key], "ACCEPT", cwd=tmp)
    out = ctlib.tmpdir("attach-orphan-out")
    try:
        a = attach.Attach([server.pid], out)
        a.p.send_signal(signal.SIGKILL)
        a.p.wait()
        check(attach.fetch(curl, port, src, os.path.join(tmp, "a.bin")),
              "the server serves, intact, with its attach's tracer killed")
        line = attach.refused([str(server.pid)])
        check("attached by another cryptrace attach already" in line, f"a new attach: {line!r}")
        p = ctlib.run([ctlib.CRYPTRACE, "attach", "--detach", str(server.pid)], text=True)
        check(p.returncode == 0 and f"detached from {server.pid}" in p.stderr,
              f"--detach ends it ({p.returncode}: {p.stderr.strip()[-200:]})")
        line = attach.refused(["--detach", str(server.pid)])
        check("is not attached" in line, f"a second --detach: {line!r}")
        check(attach.fetch(curl, port, src, os.path.join(tmp, "b.bin")), "the server serves on, intact")
    finally:
        server.stop()
    doc = ctlib.report_ok([out])
    proc = doc["processes"][0]
    check(proc["end_reason"] == "detach" and proc["status"] == "complete",
          f"the trace ends with the detach ({proc['status']}, {proc['end_reason']})")
    calls = sum(v[0] for v in attach.evp_gcm_paths(doc).values())
    check(calls > 0, f"the download while orphaned was traced ({calls} AES-GCM calls)")


ctlib.main(test)
