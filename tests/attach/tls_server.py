#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach` on `openssl s_server -WWW` started without cryptrace, serving a file over
TLS 1.3 (AES-256-GCM) to curl (issue 23):

  - attached while idle (after one download it did not see), the server's AES-GCM calls and
    bytes for N downloads equal exactly those of a control run of the same N downloads with the
    server under `cryptrace run` from its start (both directions: the records sealed and the
    requests opened);
  - every file arrives intact (sha256), the trace says it was attached, for how long the
    process stopped, and ends with a detach;
  - after the detach the server keeps serving (50 more downloads, intact), writes no trace and
    holds no fd of ours."""
import os
import re

import ctlib
from ctlib import attach, check, daemons
from ctlib.programs import free_port

FILE_BYTES = 4 * ctlib.MIB
DOWNLOADS = 8
AFTER = 50



def server_argv(openssl, port, cert, key):
    return [openssl, "s_server", "-WWW", "-accept", f"127.0.0.1:{port}", "-cert", cert,
            "-key", key, "-ciphersuites", "TLS_AES_256_GCM_SHA384"]


def control(openssl, curl, tmp, src, cert, key):
    out = ctlib.tmpdir("attach-control")
    port = free_port()
    server = daemons.Daemon(server_argv(openssl, port, cert, key), out, "ACCEPT", cwd=tmp)
    try:
        ok = all(attach.fetch(curl, port, src, os.path.join(tmp, f"c{i}.bin")) for i in range(DOWNLOADS))
    finally:
        server.stop()
    check(ok, f"control: {DOWNLOADS} downloads under `cryptrace run` intact")
    return attach.evp_gcm_paths(ctlib.report_ok([out]))


def test():
    attach.need_attach()
    openssl, curl, tmp, src, key, cert = attach.tls_setup("attach-tls", FILE_BYTES)
    want = control(openssl, curl, tmp, src, cert, key)
    check(want.get(("aes-256-gcm", "encrypt"), (0, 0))[1] >= DOWNLOADS * FILE_BYTES,
          f"control: the server sealed the files' bytes ({want})")

    port = free_port()
    server = attach.Plain(server_argv(openssl, port, cert, key), "ACCEPT", cwd=tmp)
    out = ctlib.tmpdir("attach-out")
    try:
        check(attach.fetch(curl, port, src, os.path.join(tmp, "before.bin")),
              "a download before the attach, intact")
        a = attach.Attach([server.pid], out)
        ok = all(attach.fetch(curl, port, src, os.path.join(tmp, f"a{i}.bin")) for i in range(DOWNLOADS))
        rc, err = a.end()
        check(ok, f"{DOWNLOADS} downloads while attached, intact")
        check(rc == 0 and f"detached from {server.pid}" in err,
              f"cryptrace attach ended 0 and detached ({rc}: {err.strip()[-300:]})")
        check(re.search(r"\n +\d+ +[\d.]+ [KM]iB .* evp provider:default aes-256-gcm encrypt\n", err),
              "cryptrace attach ends with the summary table of what it saw, as run does")
        moved = re.search(r"(\d+) import slots redirected", err)
        back = re.search(r"(\d+) import slots put back", err)
        check(moved and back and int(moved.group(1)) > 0 and moved.group(1) == back.group(1),
              f"every import slot redirected was put back ({moved and moved.group(1)}, "
              f"{back and back.group(1)})")
        files = sorted(os.listdir(out))
        after_ok = sum(attach.fetch(curl, port, src, os.path.join(tmp, f"p{i}.bin")) for i in range(AFTER))
        check(after_ok == AFTER, f"after the detach: {after_ok} of {AFTER} downloads intact")
        check(server.p.poll() is None, "the server still runs")
        check(sorted(os.listdir(out)) == files, f"no trace written after the detach ({files})")
        fds = [os.readlink(f"/proc/{server.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{server.pid}/fd")]
        check(not [f for f in fds if f.startswith(out)], "the server holds no fd of the trace")
    finally:
        server.stop()
    doc = ctlib.report_ok([out])
    got = attach.evp_gcm_paths(doc, server.pid)
    check(got == want, f"the attached server's AES-GCM calls and bytes equal the control run's: "
          f"{got} == {want}")
    proc = [p for p in doc["processes"] if p["pid"] == server.pid][0]
    check(proc["attached"] and proc["status"] == "complete" and proc["end_reason"] == "detach",
          f"the trace says attached and ends with the detach ({proc['status']}, {proc['end_reason']})")
    check(proc["attach_pause_ns"] > 0 and proc["attach_threads"] >= 1 and proc["attach_slots"] > 0,
          f"the trace says the attach stopped {proc['attach_threads']} thread(s) for "
          f"{proc['attach_pause_ns']} ns and redirected {proc['attach_slots']} slots")
    text = ctlib.run([ctlib.CRYPTRACE, "report", out], text=True).stdout
    check(f"pid {server.pid} was attached while it ran" in text,
          "the text report says the process was attached, and for how long it stopped")


ctlib.main(test)
