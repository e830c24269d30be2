# SPDX-License-Identifier: MIT
"""ctlib.attach - `cryptrace attach` on processes started without cryptrace (suite `attach`,
docs/attach.md): the premises (skips, saying why), programs started plainly and waited for by
their own ready line, an attach running in the background until it is told to end, and the
figures a test compares (TLS downloads by curl, VmRSS)."""
import hashlib
import os
import platform
import re
import select
import signal
import subprocess
import time

from .harness import CRYPTRACE, Failure, check, skip

START_TIMEOUT = 30
STOP_TIMEOUT = 120


def need_attach():
    """Skips (77, saying why) where attach cannot run here: the sanitizer pass (an ASan-built
    libcryptrace.so cannot be dlopen'ed into a program without the ASan runtime), another
    architecture than x86-64 and aarch64 (attach_arch_none.c refuses there), or no permission to ptrace our own children."""
    if os.environ.get("CT_ASAN") == "1" or os.environ.get("CT_TSAN") == "1":
        skip("sanitizer pass: a sanitizer-built libcryptrace.so cannot be loaded into a program "
             "started without the sanitizer runtime; the normal pass runs this test")
    if platform.machine() not in ("x86_64", "aarch64"):
        skip(f"attach is implemented for x86-64 and aarch64 only so far (this is "
             f"{platform.machine()})")
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            scope = int(f.read())
    except OSError:
        scope = 0
    if scope >= 3 or (scope >= 2 and os.geteuid() != 0):
        skip(f"kernel.yama.ptrace_scope is {scope}: this user may not attach")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(curl, port, src, dst):
    """src (a file the server serves by its base name) downloaded over TLS 1.3 into dst by curl;
    True when curl succeeded and the copy is intact."""
    p = subprocess.run([curl, "-sS", "-k", "--tlsv1.3", "-o", dst,
                        f"https://127.0.0.1:{port}/{os.path.basename(src)}"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STOP_TIMEOUT)
    return p.returncode == 0 and sha256(dst) == sha256(src)


def tls_setup(tag, size):
    """What a TLS server test starts from (skips without openssl or curl): (openssl, curl, a
    scratch directory, a random file of size bytes in it named file.bin, key, certificate)."""
    from . import daemons, harness, programs
    openssl, curl = daemons.need_openssl_curl()
    tmp = harness.tmpdir(tag)
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, size)
    key, cert = programs.throwaway_cert(tmp)
    return openssl, curl, tmp, src, key, cert


def vmrss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure(f"no VmRSS for {pid}")


def read_until(stream, ready, what, proc, timeout=START_TIMEOUT):
    """Reads stream (a pipe) until ready shows up; returns what was read."""
    deadline = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < deadline:
        r, _, _ = select.select([stream], [], [], 0.2)
        if r:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
            if ready.encode() in buf:
                return buf.decode(errors="replace")
        elif proc.poll() is not None:
            break
    ended = proc.poll()
    if ended is None:
        how = f"within {timeout} s"
    else:
        how = f"before it ended ({f'killed by signal {-ended}' if ended < 0 else f'exit {ended}'})"
    raise Failure(f"{what}: no {ready!r} {how}: {buf.decode(errors='replace')[-600:]}")


def attached_between_lines(argv, out, done, what):
    """A program that prints "ready", waits for a line on stdin, works, prints a line matching
    the regex done and waits for another line: started plainly, attached (into out) once
    ready, sent its first line; the attach ended (checked: exit 0, detached) once done shows,
    then the second line sent and its exit checked (0). Returns (done's match, its pid)."""
    from .programs import bare_env
    prog = Plain(argv, "ready", stdin=subprocess.PIPE, env=bare_env())
    try:
        a = Attach([prog.pid], out)
        prog.p.stdin.write(b"\n")
        prog.p.stdin.flush()
        line = ""
        while not re.search(done, line):
            line += read_until(prog.p.stdout, "\n", what, prog.p)
        rc, err = a.end()
        check(rc == 0 and f"detached from {prog.pid}" in err,
              f"{what}: cryptrace attach ended 0 and detached ({rc}: {err.strip()[-300:]})")
        prog.p.stdin.write(b"\n")
        prog.p.stdin.flush()
        check(prog.p.wait(timeout=60) == 0, f"{what} ended normally")
    finally:
        prog.stop()
    return re.search(done, line), prog.pid


class Plain:
    """A program started without cryptrace (its own session), ready once `ready` is in its
    stdout or stderr."""

    def __init__(self, argv, ready, cwd=None, stdin=None, env=None):
        self.p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                  start_new_session=True)
        self.pid = self.p.pid
        self.out = read_until(self.p.stdout, ready, argv[0], self.p)

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
        if self.p.stdin and self.p.stdin.closed:
            self.p.stdin = None
        try:
            out, _ = self.p.communicate(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, _ = self.p.communicate()
        self.out += (out or b"").decode(errors="replace")
        return self.p.returncode


class Attach:
    """`cryptrace attach -o outdir [extra] PID...` in the background, attached once its
    "tracing into" line is out; end() sends SIGINT and returns (exit status, stderr)."""

    def __init__(self, pids, outdir, extra=()):
        argv = [CRYPTRACE, "attach", "-o", outdir] + list(extra) + [str(p) for p in pids]
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            self.err = read_until(self.p.stderr, "tracing into", "cryptrace attach", self.p)
        except Failure:
            ended = self.p.poll()  # before the kill: its own exit status, or a signal's
            self.p.kill()
            rest = self.p.communicate()[1].decode(errors="replace")
            how = "still running" if ended is None else (
                f"killed by signal {-ended}" if ended < 0 else f"exit {ended}")
            raise Failure(f"cryptrace attach did not attach ({how}): {rest.strip()[-600:]}")

    def end(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            _, rest = self.p.communicate(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, rest = self.p.communicate()
            raise Failure(f"cryptrace attach did not end within {STOP_TIMEOUT} s of SIGINT")
        self.err += rest.decode(errors="replace")
        return self.p.returncode, self.err


def refused(argv, env=None):
    """Runs `cryptrace attach ...` that must refuse: exit 2, one line on stderr. Returns it."""
    return refused_as(lambda a: a, argv, env)


def refused_as(wrap, argv, env=None):
    """refused(), the command line passed through wrap (another user's, say)."""
    p = subprocess.run(wrap([CRYPTRACE, "attach"] + list(argv)), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, timeout=STOP_TIMEOUT)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and not p.stdout,
          f"cryptrace attach {' '.join(argv)}: exit 2 with one line "
          f"(exit {p.returncode}: {p.stderr.strip()[:300]!r})")
    return lines[0]


def evp_gcm_paths(doc, pid=None):
    """{(cipher, dir): (calls, bytes)} of a report's AES-GCM EVP paths (one process's, or all)."""
    got = {}
    for proc in doc["processes"]:
        if pid is not None and proc["pid"] != pid:
            continue
        for p in proc.get("paths", []):
            if p["api"] == "evp" and p["cipher"].endswith("-gcm"):
                k = (p["cipher"], p["dir"])
                c, b = got.get(k, (0, 0))
                got[k] = (c + p["calls"], b + p["bytes"])
    return got
