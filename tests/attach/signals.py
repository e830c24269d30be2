#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A process ended by a signal while attached keeps its trace (docs/attach.md): `openssl s_server
-WWW`, started without cryptrace, is attached, serves a file, and gets SIGTERM: it dies by the
signal as it would have (exit status -15), and the trace ends with END reason signal, the
download's bytes in it. The fatal-signal handlers stand only while attached: /proc's SigCgt
mask shows them during the attach, and after a detach it is the bare process's again, to the
bit (the dispositions the program left at SIG_DFL are SIG_DFL again; glibc's own two, set once
a process has a second thread, aside)."""
import os
import signal

import ctlib
from ctlib import attach, check
from ctlib.programs import free_port

FILE_BYTES = 1 * ctlib.MIB


def caught_mask(pid):
    """SigCgt's standard signals (1-31); glibc's own 32 and 33 (SIGCANCEL, SIGSETXID: libc sets
    a handler once a process has a second thread, as our flusher thread is) are left out."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16) & 0x7fffffff
    raise ctlib.Failure(f"no SigCgt for {pid}")



def test():
    attach.need_attach()
    openssl, curl, tmp, src, key, cert = attach.tls_setup("attach-signals", FILE_BYTES)
    port = free_port()
    server = attach.Plain([openssl, "s_server", "-WWW", "-accept", f"127.0.0.1:{port}", "-cert",
                           cert, "-key", key], "ACCEPT", cwd=tmp)
    term = 1 << (signal.SIGTERM - 1)
    try:
        bare = caught_mask(server.pid)
        check(not bare & term, f"s_server leaves SIGTERM at SIG_DFL (SigCgt {bare:#x})")
        first = attach.Attach([server.pid], ctlib.tmpdir("attach-signals-1"))
        during = caught_mask(server.pid)
        rc, err = first.end()
        check(rc == 0, f"the first attach detached ({rc})")
        after = caught_mask(server.pid)
        check(during & term and during & bare == bare,
              f"while attached, SIGTERM is caught (SigCgt {during:#x}, bare {bare:#x})")
        check(after == bare, f"after the detach, SigCgt is the bare process's ({after:#x} == {bare:#x})")

        out = ctlib.tmpdir("attach-signals-2")
        second = attach.Attach([server.pid], out)
        check(attach.fetch(curl, port, src, os.path.join(tmp, "got.bin")), "a download while attached, intact")
        os.kill(server.pid, signal.SIGTERM)
        status = server.p.wait(timeout=60)
        rc, err = second.end()
        check(status == -signal.SIGTERM, f"the server died by SIGTERM, as without cryptrace ({status})")
        check("ended while attached" in err, f"cryptrace attach says so ({err.strip()[-200:]})")
    finally:
        server.stop()
    doc = ctlib.report_ok([out])
    proc = [p for p in doc["processes"] if p["pid"] == server.pid][0]
    sealed = attach.evp_gcm_paths(doc, server.pid)
    enc = sum(b for (c, d), (n, b) in sealed.items() if d == "encrypt")
    check(proc["status"] == "complete" and proc["end_reason"] == "signal",
          f"the trace ends by the signal ({proc['status']}, {proc['end_reason']})")
    check(enc >= FILE_BYTES, f"with the download's bytes ({enc} >= {FILE_BYTES})")


ctlib.main(test)
