#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sshd and scp, both under cryptrace, on loopback: a throwaway host key and user key, 64 MiB
uploaded with -c aes128-ctr, aes256-gcm@openssh.com and chacha20-poly1305@openssh.com, one
fresh sshd per cipher. Each side's report must show the AES path with the copy's bytes (client
encrypt, server decrypt: >= 64 MiB, <= 64 MiB * 1.01 + 1 MiB), contexts created by ssh/sshd,
the crypto share of the process's time; chacha20 must show up as a non-AES cipher path. The
copy is byte-identical, and no sshd process (the seccomp-sandboxed pre-auth child included)
dies of a signal."""
import os

import ctlib
from ctlib import check, daemons

CIPHERS = [
    # ssh -c name, libcrypto cipher name, expected on the bulk path
    ("aes128-ctr", "aes-128-ctr"),
    ("aes256-gcm@openssh.com", "aes-256-gcm"),
    ("chacha20-poly1305@openssh.com", None),
]


def setup(tmp):
    sftp = next((p for p in ("/usr/lib/openssh/sftp-server", "/usr/libexec/sftp-server")
                 if os.path.exists(p)), "internal-sftp")
    return daemons.ssh_setup(tmp, sftp)


def one(tmp, cfg, src, ssh_cipher, cipher):
    tag = ssh_cipher.split("@")[0]
    sdir, cdir = ctlib.tmpdir(f"sshd-{tag}"), ctlib.tmpdir(f"scp-{tag}")
    dst = os.path.join(tmp, f"dst-{tag}.bin")
    port = ctlib.free_port()
    sshd = daemons.Daemon(["/usr/sbin/sshd", "-D", "-e", "-p", str(port), "-o",
                          "ListenAddress=127.0.0.1", "-f", cfg], sdir, "Server listening on")
    try:
        p = ctlib.run_traced(["scp", "-q", "-c", ssh_cipher, "-o", "BatchMode=yes", "-o",
                              "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                              "-i", os.path.join(tmp, "userkey"), "-P", str(port), src,
                              f"root@127.0.0.1:{dst}"], cdir)
        check(p.returncode == 0, f"scp -c {ssh_cipher} exited 0 under cryptrace "
              f"({p.stderr.decode(errors='replace').strip()[-300:]})")
    finally:
        try:
            with open(os.path.join(tmp, "sshd.pid")) as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            pid = 0  # no pid file: stop() signals the launcher's whole session instead
        log = sshd.stop(pid)
    check(daemons.same_file(src, dst), f"{ssh_cipher}: the copied file is byte-identical")
    for word in ("seccomp", "killed by signal", "terminated by signal", "SIGSYS",
                 "Bad system call"):
        check(word not in log, f"{ssh_cipher}: sshd log has no {word!r}")
    client = ctlib.report_ok([cdir])
    server = ctlib.report_ok([sdir])
    for pr in server["processes"]:
        check(pr.get("end_reason") != "signal",
              f"sshd pid {pr['pid']} ({pr.get('role')}) ended by {pr.get('end_reason')} "
              f"{pr.get('exit_status')}")
    roles = {pr.get("role") for pr in server["processes"] if not pr.get("superseded")}
    print(f"server roles: {sorted(r for r in roles if r)}")
    check(any(r and "pre-auth" in r for r in roles), "the pre-auth child has its own trace")
    if cipher:
        cproc = daemons.check_side(client, "client", cipher, "encrypt", {"ssh"}, "SSH transport")
        sproc = daemons.check_side(server, "server", cipher, "decrypt", {"sshd"}, "SSH transport")
        check("ssh client" in cproc.get("role", ""), f"client role {cproc.get('role')!r}")
        check(sproc.get("role", "").startswith("sshd"), f"server role {sproc.get('role')!r}")
        # every context set-up counted at its call site (ssh's cipher_init, once per direction
        # and key exchange)
        daemons.check_creators(client, "client", cipher, "encrypt", {"ssh"}, "SSH transport")
        daemons.check_creators(server, "server", cipher, "decrypt", {"sshd"}, "SSH transport")
        check_folded(cdir, cipher, "ssh")
        return
    # chacha20-poly1305: OpenSSH drives libcrypto's ChaCha20 stream through EVP (or, built
    # without it, its own code, which cryptrace cannot see: that must fail this test loudly)
    for side, doc in (("client", client), ("server", server)):
        big = [p for p in doc["paths"] if not p["cipher"].startswith("aes") and
               p["bytes"] >= daemons.COPY_BYTES]
        desc = ctlib.describe_paths(doc)
        check(big, f"{side}: chacha20-poly1305 shows as a non-AES path with >= 64 MiB:\n{desc}")
        check(all("chacha" in p["cipher"] for p in big), f"{side}: it is named chacha20: "
              f"{[p['cipher'] for p in big]}")
        cb = big[0].get("created_by") or {}
        check(cb.get("module") in ("ssh", "sshd"), f"{side}: created by {cb.get('frame')}")


def check_folded(tdir, cipher, module):
    """--folded on the real trace: flamegraph.pl lines "frame;frame;...;path weight", the bulk
    path's stack ending in it, rooted in the ssh binary, weighing its bytes."""
    p = ctlib.run([ctlib.CRYPTRACE, "report", "--folded", tdir])
    check(p.returncode == 0, f"report --folded exits 0 ({p.stderr.decode(errors='replace')[:200]})")
    lines = [l for l in p.stdout.decode(errors="replace").splitlines() if l.strip()]
    check(lines and all(l.rsplit(" ", 1)[-1].isdigit() for l in lines),
          f"--folded prints 'stack weight' lines ({lines[:3]})")
    bulk = [l for l in lines if cipher in l.rsplit(" ", 1)[0].split(";")[-1]]
    check(bulk, f"--folded has a stack ending in the {cipher} path ({lines[:5]})")
    top = max(bulk, key=lambda l: int(l.rsplit(" ", 1)[-1]))
    frames = top.rsplit(" ", 1)[0].split(";")
    check(any(f.startswith(module) for f in frames), f"--folded stack passes through {module}: {top}")
    check(int(top.rsplit(" ", 1)[-1]) >= daemons.COPY_BYTES,
          f"--folded weighs the bulk stack by its bytes (>= 64 MiB): {top}")


def test():
    daemons.need_sshd()
    tmp = ctlib.tmpdir("e2e-ssh")
    os.chmod(tmp, 0o755)
    cfg = setup(tmp)
    src = os.path.join(tmp, "src.bin")
    daemons.random_file(src, daemons.COPY_BYTES)
    for ssh_cipher, cipher in CIPHERS:
        print(f"--- scp -c {ssh_cipher}")
        one(tmp, cfg, src, ssh_cipher, cipher)


ctlib.main(test)
