#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSH, both sides under cryptrace: sshd on loopback (internal-sftp: no login shell) and scp
uploading 8 MiB with the default cipher (chacha20-poly1305), aes128-ctr and aes256-gcm. Each
side's bulk path carries the copy (>= 8 MiB, <= 1% + 1 MiB more) and is SSH transport; the
sshd listener's aes256-ctr contexts are private-key shielding, not transport; OpenSSH's
EVP_Cipher and UMAC AES_* calls (a packaged program's, costing nothing) raise no lowlevel-api;
no warning, no error. Under OPENSSL_ia32cap masking AES-NI with aes128-ctr: one software-aes
finding per side, the server's listing its processes. With the CPU profile at 4 kHz, a 1 KiB
copy with the default key exchange (sntrup761x25519-sha512, in ssh's own code, which no hook
sees): the ssh client's profile names sntrup761 and X25519 and puts the key exchange (the
"public key" group) at 20 % or more of its samples (about 85 % here)."""
import os

import ctlib
from ctlib import check, daemons

COPY = 8 * ctlib.MIB
CASES = [
    # scp -c (None: the default), the bulk path's libcrypto cipher or None for chacha20
    (None, None),
    ("aes128-ctr", "aes-128-ctr"),
    ("aes256-gcm@openssh.com", "aes-256-gcm"),
]
SHIELDING = "private-key shielding (OpenSSH keeps keys encrypted in memory)"


def copy(tmp, cfg, src, ssh_cipher, env, tag):
    sdir, cdir = ctlib.tmpdir(f"sshd-{tag}"), ctlib.tmpdir(f"scp-{tag}")
    dst = os.path.join(tmp, f"dst-{tag}.bin")
    port = ctlib.free_port()
    sshd = daemons.Daemon(["/usr/sbin/sshd", "-D", "-e", "-p", str(port), "-o",
                          "ListenAddress=127.0.0.1", "-f", cfg], sdir, "Server listening on",
                         env=env)
    try:
        opts = ["-c", ssh_cipher] if ssh_cipher else []
        p = ctlib.run_traced(["scp", "-q"] + opts + [
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
            "UserKnownHostsFile=/dev/null", "-i", os.path.join(tmp, "userkey"), "-P", str(port),
            src, f"root@127.0.0.1:{dst}"], cdir, env=env)
        check(p.returncode == 0, f"{tag}: scp exited 0 under cryptrace "
              f"({p.stderr.decode(errors='replace').strip()[-300:]})")
    finally:
        with open(os.path.join(tmp, "sshd.pid")) as f:
            log = sshd.stop(int(f.read().strip() or 0))
    check(daemons.same_file(src, dst), f"{tag}: the copy is byte-identical")
    check("killed by signal" not in log and "SIGSYS" not in log, f"{tag}: no sshd process died")
    return ctlib.report_ok([sdir]), ctlib.report_ok([cdir])


def check_bulk(doc, side, cipher, direction):
    if cipher:
        rows = [p for p in doc["paths"] if p["cipher"] == cipher and p["dir"] == direction]
    else:  # chacha20-poly1305: a stream cipher, always "encrypt"
        rows = [p for p in doc["paths"] if p["cipher"].startswith("chacha20")]
    total = sum(p["bytes"] for p in rows)
    check(COPY <= total <= COPY * 1.01 + ctlib.MIB,
          f"{side}: {cipher or 'chacha20'} carries the {COPY}-byte copy ({total})\n"
          f"{ctlib.describe_paths(doc)}")
    bulk = max(rows, key=lambda p: p["bytes"])
    sites = (bulk.get("creators") or {}).get("sites") or []
    check(sites and sites[0]["purpose"] in ("SSH transport", "SSH transport and private-key "
                                            "shielding"),
          f"{side}: the bulk contexts are SSH transport ({sites[:1]})")


def check_shielding(server, tag):
    """The listener does no transport: its aes-256-ctr contexts are key shielding."""
    listener = [pr for pr in server["processes"] if pr.get("role") == "sshd listener"]
    check(len(listener) == 1, f"{tag}: one sshd listener ({[p.get('role') for p in server['processes']]})")
    own = [p for p in listener[0]["paths"] if p["cipher"] == "aes-256-ctr" and
           (p.get("created_by") or {}).get("module") == "sshd" and
           "RAND" not in p["created_by"]["via"]]  # the DRBG's own contexts aside
    check(own, f"{tag}: the listener's own aes-256-ctr contexts (host-key shielding) are traced")
    for p in own:
        purpose = p["created_by"]["purpose"]
        check(purpose == SHIELDING, f"{tag}: listener aes-256-ctr {p['dir']} is {purpose!r}")
    carriers = [pr.get("role") for pr in server["processes"] if "carries the traffic" in
                (pr.get("role") or "")]
    check(len(carriers) == 1, f"{tag}: exactly one sshd process carries the traffic ({carriers})")


def test():
    daemons.need_sshd()
    tmp = ctlib.tmpdir("real-ssh")
    os.chmod(tmp, 0o755)
    cfg = daemons.ssh_setup(tmp)
    src = os.path.join(tmp, "src.bin")
    daemons.random_file(src, COPY)
    cases = []
    for ssh_cipher, cipher in CASES:
        tag = (ssh_cipher or "default").split("@")[0]

        def clean(ssh_cipher=ssh_cipher, cipher=cipher, tag=tag):
            server, client = copy(tmp, cfg, src, ssh_cipher, dict(os.environ), tag)
            for doc, side, direction in ((client, "client", "encrypt"),
                                         (server, "server", "decrypt")):
                ctlib.check_complete(doc, f"{tag} {side}")
                check_bulk(doc, f"{tag} {side}", cipher, direction)
                ctlib.check_clean(doc, f"{tag} {side}")
                check("lowlevel-api" not in ctlib.kinds(doc),
                      f"{tag} {side}: OpenSSH's own EVP_Cipher/AES_* calls are no finding "
                      f"({ctlib.kinds(doc)})")
            check_shielding(server, tag)
        cases.append((f"scp {tag}", clean))

    def masked():
        if not ctlib.cpu_has_aes():
            print("skip masked case: this CPU has no AES-NI")
            return False
        server, client = copy(tmp, cfg, src, "aes128-ctr", ctlib.masked_env(), "masked")
        f = ctlib.check_masked(client, "client")
        check("aes-128-ctr encrypt" in f["message"], f"client masked: names the bulk path: "
              f"{f['message'][:200]}")
        n = len([pr for pr in server["processes"] if pr.get("paths")])
        f = ctlib.check_masked(server, "server", procs_min=n)
        check("aes-128-ctr decrypt" in f["message"], f"server masked: names the bulk path: "
              f"{f['message'][:200]}")
    cases.append(("masked aes128-ctr", masked))

    def kex_profile():
        """The default key exchange runs in ssh's own code: the profile names it."""
        small = os.path.join(tmp, "small.bin")
        daemons.random_file(small, 1024)
        env = dict(os.environ, CRYPTRACE_PROFILE_HZ="4000")
        server, client = copy(tmp, cfg, small, None, env, "kex")
        why = ctlib.profile_refused(client)
        if why:
            print(f"skip the key-exchange profile: this machine takes no CPU profile ({why})")
            return False
        ssh = [pr for pr in client["processes"] if pr["exe"].endswith("/ssh") and pr.get("profile")]
        check(ssh, f"kex: the ssh client was profiled ({[pr['exe'] for pr in client['processes']]})")
        prof = ssh[0]["profile"]
        cats = {}
        for i in prof["items"]:
            cats[i["category"]] = cats.get(i["category"], 0) + i["samples"]
        share = {c: n / prof["samples"] for c, n in cats.items()}
        print(f"kex: ssh client {prof['samples']} samples; by category "
              f"{ {c: round(v, 3) for c, v in share.items()} }; groups {prof['group_samples']}")
        check(share.get("sntrup761", 0) >= 0.20,
              f"kex: sntrup761 is named in ssh and takes >= 20 % of the client's samples "
              f"({share.get('sntrup761', 0):.3f})")
        check(cats.get("X25519", 0) > 0, "kex: X25519 (ssh's Curve25519 ladder) is named")
        check(all(i["group"] == "public key" for i in prof["items"]
                  if i["category"] in ("sntrup761", "X25519")),
              "kex: both are in the public-key group")
        check(prof["group_samples"]["public key"] >= 0.20 * prof["samples"],
              f"kex: the key exchange's share of the client's samples is >= 20 % "
              f"({prof['group_samples']['public key']} of {prof['samples']})")
        # the server's key exchange runs in the sandboxed pre-auth child, whose trace ends
        # without its END record (its samples are left out): shown when it is there
        for pr in server["processes"]:
            sp = pr.get("profile") or {}
            if sp.get("group_samples", {}).get("public key"):
                print(f"kex: sshd {pr.get('role')}: public key {sp['group_samples']['public key']} "
                      f"of {sp['samples']} samples")
    cases.append(("key-exchange profile", kex_profile))
    ctlib.run_cases(cases)


ctlib.main(test)
