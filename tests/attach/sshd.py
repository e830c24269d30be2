#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach` on sshd started without cryptrace (issue 23). sshd re-executes itself for
each connection, so the listener's attach would see no connection's work: the connection's own
process ("sshd: root@notty", which does its packets' crypto) is attached once the login is done,
before any data is sent; then 8 MiB go through `ssh -c aes256-gcm@openssh.com ... 'cat > FILE'`
and arrive intact, the attach is ended while the session is still open, and the session ends
cleanly (ssh exits 0). The trace counts the data's AES-GCM decryption: the file's bytes and the
packets' own (SSH_MSG_CHANNEL_DATA headers, padding: at most 1 % and 64 KiB more), no byte of it
twice. And scp (issue 23's "sshd with scp"): a ControlMaster connection is made, its process
("sshd: root") attached, and `scp -o ControlPath` copies the file through it: counted the same
way, intact."""
import os
import subprocess
import time

import ctlib
from ctlib import attach, check, daemons
from ctlib.programs import free_port, need_program

FILE_BYTES = 8 * ctlib.MIB


def session_process(listener, title=b"sshd: root@notty"):
    """The connection's process once its login is done (its title: "sshd: root@notty" with a
    command, "sshd: root" for a connection with no session yet), a child of the listener."""
    deadline = time.monotonic() + attach.START_TIMEOUT
    while time.monotonic() < deadline:
        with open(f"/proc/{listener}/task/{listener}/children") as f:
            kids = [int(x) for x in f.read().split()]
        for k in kids:
            try:
                with open(f"/proc/{k}/cmdline", "rb") as f:
                    if f.read().split(b"\0")[0].rstrip() == title:
                        return k
            except OSError:
                pass
        time.sleep(0.1)
    raise ctlib.Failure(f"no {title.decode()} process for the connection")


def test():
    attach.need_attach()
    daemons.need_sshd("ssh")
    ssh = need_program("ssh")
    tmp = ctlib.tmpdir("attach-sshd")
    cfg = daemons.ssh_setup(tmp)
    src, dst = os.path.join(tmp, "file.bin"), os.path.join(tmp, "copy.bin")
    daemons.random_file(src, FILE_BYTES)
    port = free_port()
    server = attach.Plain(["/usr/sbin/sshd", "-D", "-e", "-f", cfg, "-p", str(port), "-o",
                           "ListenAddress=127.0.0.1"], "Server listening")
    out = ctlib.tmpdir("attach-sshd-out")
    client = None
    try:
        client = subprocess.Popen([ssh, "-i", os.path.join(tmp, "userkey"), "-c",
                                   "aes256-gcm@openssh.com", "-o", "StrictHostKeyChecking=no",
                                   "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                                   "-p", str(port), "root@127.0.0.1", f"cat > {dst}"],
                                  stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        session = session_process(server.pid)
        a = attach.Attach([session], out)
        with open(src, "rb") as f:
            client.stdin.write(f.read())
        client.stdin.flush()
        deadline = time.monotonic() + attach.STOP_TIMEOUT
        while time.monotonic() < deadline and (not os.path.exists(dst) or
                                               os.path.getsize(dst) < FILE_BYTES):
            time.sleep(0.1)
        rc, err = a.end()
        client.stdin.close()
        crc = client.wait(timeout=attach.STOP_TIMEOUT)
    finally:
        if client and client.poll() is None:
            client.kill()
        server.stop()
    check(rc == 0 and f"detached from {session}" in err,
          f"the session's process attached and detached ({rc}: {err.strip()[-300:]})")
    check(crc == 0 and attach.sha256(dst) == attach.sha256(src),
          f"ssh exited 0 ({crc}) and the file arrived intact")
    doc = ctlib.report_ok([out])
    got = attach.evp_gcm_paths(doc, session)
    calls, nbytes = got.get(("aes-256-gcm", "decrypt"), (0, 0))
    check(FILE_BYTES <= nbytes <= FILE_BYTES * 1.01 + 64 * 1024,
          f"the session's process decrypted the file's {FILE_BYTES} bytes and its packets' own, "
          f"once ({calls} calls, {nbytes} bytes)")
    proc = doc["processes"][0]
    check(proc["end_reason"] == "detach", f"its trace ends with the detach ({proc['end_reason']})")
    scp_through_master(ssh, tmp, cfg, src)


def scp_through_master(ssh, tmp, cfg, src):
    """scp: its connection is made before the attach (a ControlMaster, `ssh -M -N`, whose
    process is "sshd: root"), the copy goes through it while attached (scp -o ControlPath: its
    SFTP channel in the same connection), and the copy's bytes are counted once."""
    scp = need_program("scp")
    port = free_port()
    server = attach.Plain(["/usr/sbin/sshd", "-D", "-e", "-f", cfg, "-p", str(port), "-o",
                           "ListenAddress=127.0.0.1"], "Server listening")
    out = ctlib.tmpdir("attach-scp-out")
    dst = os.path.join(tmp, "scp-copy.bin")
    ctl = os.path.join(tmp, "ctl")
    opts = ["-o", f"ControlPath={ctl}", "-o", "StrictHostKeyChecking=no", "-o",
            "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes"]
    try:
        master = ctlib.run([ssh, "-i", os.path.join(tmp, "userkey"), "-c", "aes256-gcm@openssh.com",
                            "-M", "-N", "-f", "-p", str(port)] + opts + ["root@127.0.0.1"])
        check(master.returncode == 0, f"the ssh master connection is up ({master.returncode})")
        session = session_process(server.pid, b"sshd: root")
        a = attach.Attach([session], out)
        copy = ctlib.run([scp, "-P", str(port)] + opts + [src, f"root@127.0.0.1:{dst}"])
        rc, err = a.end()
        ctlib.run([ssh, "-O", "exit", "-p", str(port)] + opts + ["root@127.0.0.1"])
    finally:
        server.stop()
    check(rc == 0 and f"detached from {session}" in err,
          f"scp: the connection's process attached and detached ({rc}: {err.strip()[-300:]})")
    check(copy.returncode == 0 and attach.sha256(dst) == attach.sha256(src),
          f"scp exited 0 ({copy.returncode}) and the file arrived intact")
    got = attach.evp_gcm_paths(ctlib.report_ok([out]), session)
    calls, nbytes = got.get(("aes-256-gcm", "decrypt"), (0, 0))
    check(FILE_BYTES <= nbytes <= FILE_BYTES * 1.01 + 64 * 1024,
          f"scp: the connection's process decrypted the file's {FILE_BYTES} bytes and its "
          f"packets' own, once ({calls} calls, {nbytes} bytes)")


ctlib.main(test)
