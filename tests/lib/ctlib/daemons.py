# SPDX-License-Identifier: MIT
"""ctlib.daemons - real daemons on loopback (sshd, openssl s_server) started under `cryptrace
run`, waited for by their own "listening" line (a probe connection would be a client of its
own) and stopped by the test; their clients (scp, curl); the checks of each side's bulk path in
`cryptrace report --json`. Used by the e2e and real suites."""
import os
import select
import shutil
import signal
import subprocess
import time

from .harness import CRYPTRACE, MIB, Failure, check, secret, skip, tmpdir
from .programs import asan_runtime, free_port, need_program, run, run_traced
from .reports import report_ok

COPY_BYTES = 64 * MIB
# Generous bounds so a stuck daemon fails the test instead of hanging it; never a speed check.
START_TIMEOUT = 30
STOP_TIMEOUT = 60


def random_file(path, size):
    """size random bytes at path; a sample of them is registered as a secret (ctlib.secret)."""
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, MIB)
            chunk = os.urandom(n)
            if left == size or left <= n:  # the first and the last MiB
                secret(f"{os.path.basename(path)} @{size - left}", chunk)
            f.write(chunk)
            left -= n


def need_openssl_curl():
    """(openssl, curl) for the TLS tests; skips (77, saying why) in the sanitizer pass (curl hangs
    with the ASan runtime in LD_PRELOAD, even with no cryptrace loaded: `curl -V`), where either
    is missing, and where curl does not use OpenSSL."""
    if asan_runtime():
        skip("sanitizer pass: curl hangs with the ASan runtime in LD_PRELOAD, even with no "
                   "cryptrace loaded (`curl -V`); the normal pass runs this test")
    openssl = need_program("openssl")
    curl = need_program("curl")
    v = run([curl, "-V"]).stdout.decode(errors="replace")
    if "OpenSSL/" not in v.splitlines()[0]:
        skip(f"this curl does not use OpenSSL: {v.splitlines()[0]}")
    return openssl, curl


def need_sshd(client="scp"):
    """Skips (77, saying why) where sshd cannot run traced here: not root, a sanitizer pass (the
    ASan runtime's syscalls inside sshd's seccomp sandbox get the pre-auth child killed), or a
    program missing."""
    if os.geteuid() != 0:
        skip("sshd needs root (privilege separation, the user's login) here")
    if asan_runtime():
        skip("sanitizer pass: the ASan runtime's own syscalls inside sshd's seccomp "
                   "sandbox get the pre-auth child killed; the normal pass runs this test")
    for prog in ("/usr/sbin/sshd", client, "ssh-keygen", "cmp"):
        if not (os.access(prog, os.X_OK) if prog.startswith("/") else shutil.which(prog)):
            skip(f"{prog} is not installed")


def ssh_setup(tmp, sftp="internal-sftp"):
    """A throwaway sshd config in tmp: ed25519 host and user keys (hostkey, userkey), root login
    by key only, no PAM, the sftp subsystem `sftp` (internal-sftp runs inside sshd: no shell, so
    no login scripts). Returns the config's path."""
    keygen = need_program("ssh-keygen")
    for name in ("hostkey", "userkey"):
        p = run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(tmp, name)])
        check(p.returncode == 0, f"ssh-keygen {name}")
    shutil.copy(os.path.join(tmp, "userkey.pub"), os.path.join(tmp, "authorized_keys"))
    cfg = os.path.join(tmp, "sshd_config")
    with open(cfg, "w") as f:
        f.write(f"""HostKey {tmp}/hostkey
UsePAM no
StrictModes no
PidFile {tmp}/sshd.pid
AuthorizedKeysFile {tmp}/authorized_keys
PermitRootLogin prohibit-password
Subsystem sftp {sftp}
LogLevel VERBOSE
""")
    # sshd's privilege separation chroots the pre-auth child here; Debian creates it at boot
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    return cfg


def same_file(a, b):
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


class Daemon:
    """A daemon under `cryptrace run -q -o outdir`; started() waits until `ready` shows up in its
    stdout or stderr."""

    def __init__(self, argv, outdir, ready, cwd=None, env=None):
        self.outdir = outdir
        self.lines = []
        cmd = [CRYPTRACE, "run", "-q", "-o", outdir, "--"] + list(argv)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                                  env=env, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        buf = b""
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.p.stdout], [], [], 0.5)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 4096)
                if not chunk:
                    break
                buf += chunk
                if ready.encode() in buf:
                    self.lines.append(buf.decode(errors="replace"))
                    return
            if self.p.poll() is not None:
                break
        self.stop()
        raise Failure(f"{argv[0]} did not start (no {ready!r}): {buf.decode(errors='replace')[-800:]}")

    def output(self):
        return "".join(self.lines)

    def wait(self, timeout=STOP_TIMEOUT):
        """Waits for the daemon (and the launcher) to end by itself; returns its output."""
        try:
            out, _ = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise Failure(f"daemon still running after {timeout} s")
        self.lines.append(out.decode(errors="replace"))
        return self.output()

    def stop(self, pid=None):
        """SIGTERM to pid (the daemon itself, so it exits through its own handler and its trace
        is closed cleanly), else to the whole session; then waits."""
        if self.p.poll() is None:
            try:
                if pid:
                    os.kill(pid, signal.SIGTERM)
                else:
                    os.killpg(self.p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            out, _ = self.p.communicate(timeout=STOP_TIMEOUT)
            self.lines.append(out.decode(errors="replace") if out else "")
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.communicate()
        return self.output()


def s_server_curl(tmp, cert, key, name, curl_opts, src, server_opts=()):
    """src (a file in tmp) fetched over TLS by curl from `openssl s_server -WWW -naccept 1` on
    loopback, both under the launcher: curl exits 0 and the copy is identical. Returns the
    server's and the client's reports."""
    openssl, curl = need_program("openssl"), need_program("curl")
    tag = name.replace(" ", "-").replace(".", "")
    sdir, cdir = tmpdir(f"s_server-{tag}"), tmpdir(f"curl-{tag}")
    out = os.path.join(tmp, f"got-{tag}.bin")
    port = free_port()
    server = Daemon([openssl, "s_server", "-WWW", "-naccept", "1", "-accept", f"127.0.0.1:{port}",
                     "-cert", cert, "-key", key] + list(server_opts), sdir, "ACCEPT", cwd=tmp)
    try:
        p = run_traced([curl, "-sS", "-k", "-o", out] + list(curl_opts) +
                       [f"https://127.0.0.1:{port}/{os.path.basename(src)}"], cdir)
        check(p.returncode == 0, f"{name}: curl exited 0 under cryptrace "
              f"({p.stderr.decode(errors='replace').strip()[-300:]})")
        server.wait()
    finally:
        server.stop()
    check(same_file(src, out), f"{name}: the fetched file is identical")
    return report_ok([sdir]), report_ok([cdir])


def side_paths(doc, cipher, direction):
    """Per-process paths of one cipher and direction, with their process."""
    out = []
    for proc in doc.get("processes", []):
        if proc.get("superseded"):
            continue
        for p in proc.get("paths", []):
            if p.get("cipher") == cipher and p.get("dir") == direction:
                out.append((proc, p))
    return out


def check_side(doc, side, cipher, direction, modules, purpose, lo=COPY_BYTES,
               hi=COPY_BYTES * 1.01 + MIB):
    """The side's bulk path: bytes within bounds, call site in one of modules, crypto shares
    present. Returns the process that carried it."""
    rows = side_paths(doc, cipher, direction)
    total = sum(p.get("bytes", 0) for _, p in rows)
    desc = "; ".join(f"pid {pr['pid']} ({pr.get('role')}) {p['bytes']} B" for pr, p in rows)
    check(lo <= total <= hi,
          f"{side}: {cipher} {direction} bytes {total} within [{lo}, {int(hi)}] ({desc or 'none'})")
    proc, bulk = max(rows, key=lambda r: r[1].get("bytes", 0))
    cb = bulk.get("created_by") or {}
    check(cb.get("module") in modules,
          f"{side}: {cipher} contexts created by {cb.get('frame')} (module {cb.get('module')}, "
          f"expected one of {sorted(modules)})")
    check(cb.get("purpose") == purpose, f"{side}: purpose {cb.get('purpose')!r} == {purpose!r}")
    check(bulk.get("wall_share") is not None and bulk["wall_share"] > 0,
          f"{side}: {cipher} share of pid {proc['pid']}'s wall time known: {bulk.get('wall_share')}")
    check(proc.get("crypto_wall_share") is not None and proc.get("crypto_cpu_share") is not None,
          f"{side}: process crypto shares wall={proc.get('crypto_wall_share')} "
          f"cpu={proc.get('crypto_cpu_share')} ({proc.get('role')})")
    check(proc.get("crypto_throughput_bps") and proc["crypto_throughput_bps"] > 0,
          f"{side}: crypto throughput {proc.get('crypto_throughput_bps')} B/s")
    return proc


def check_creators(doc, side, cipher, direction, modules, purpose):
    """The merged path's context set-ups: counted (>= 1), the busiest call site in one of
    modules, and the purpose the usage patterns give (e.g. "TLS 1.3 records")."""
    rows = [p for p in doc.get("paths", []) if p.get("cipher") == cipher and
            p.get("dir") == direction]
    check(rows, f"{side}: a merged {cipher} {direction} path")
    bulk = max(rows, key=lambda p: p.get("bytes", 0))
    cr = bulk.get("creators") or {}
    sites = cr.get("sites") or []
    check(cr.get("setups", 0) >= 1 and sites,
          f"{side}: {cipher} {direction} context set-ups counted ({cr})")
    top = sites[0]
    check(top.get("module") in modules and top.get("setups", 0) >= 1,
          f"{side}: busiest creator {top.get('frame')} x{top.get('setups')} in {sorted(modules)}")
    check(top.get("purpose") == purpose,
          f"{side}: {cipher} purpose {top.get('purpose')!r} == {purpose!r} (usage {cr.get('usage')})")
    return cr

