# SPDX-License-Identifier: MIT
"""ctlib - shared helpers for the integration tests: where the build put things, running a
command with and without cryptrace, reading `cryptrace report --json`, and summing paths.

Every test is a script run by meson with these environment variables (tests/integration/
meson.build sets them): CRYPTRACE (the launcher), CT_LIB (libcryptrace.so in the build tree),
CT_EXAMPLES (the built examples folder). Exit 0 pass, 1 fail, 77 skip (with the reason printed).
A test that passes has its trace files scanned for secrets before its temporary directories go
(ctsecrets.py): the keys, IVs and plaintexts it registered with secret() and the fixed ones of
the examples and test programs; a hit fails it.
"""
import atexit
import errno
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

import ctsecrets

SKIP = 77

# The launcher must find the library the way users' builds do (next to itself), not by a hint.
os.environ.pop("CRYPTRACE_LIB", None)

CRYPTRACE = os.environ.get("CRYPTRACE", "")
CT_LIB = os.environ.get("CT_LIB", "")
CT_EXAMPLES = os.environ.get("CT_EXAMPLES", "")

# Generous upper bounds so a hung program fails the test instead of hanging meson; never used
# to judge speed.
RUN_TIMEOUT = 600


class Failure(Exception):
    pass


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"ok: {what}")


def main(fn):
    """Runs fn() and turns Failure into exit 1 with a readable message."""
    for name, value in (("CRYPTRACE", CRYPTRACE), ("CT_LIB", CT_LIB)):
        if not value:
            print(f"FAIL: {name} is not set (run this through meson test)")
            sys.exit(1)
    if not os.path.exists(CT_LIB):
        print(f"FAIL: {CT_LIB} was not built")
        sys.exit(1)
    try:
        fn()
    except Failure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
    sys.exit(1 if ctsecrets.check_dirs(_tmpdirs) else 0)


def secret(name, data):
    """Registers a key, IV or plaintext (bytes) this test uses: no trace file may hold it."""
    ctsecrets.register(name, data)


def plaintext(size, name="plaintext"):
    """size random bytes, registered as a secret (sampled when long)."""
    data = os.urandom(size)
    secret(f"{name} ({size} B)", data)
    return data


def afalg_refused():
    """The errno name socket(AF_ALG) fails with here (EAFNOSUPPORT on this kind of host), or None
    when the kernel accepts it."""
    try:
        socket.socket(38, socket.SOCK_SEQPACKET, 0).close()  # AF_ALG
        return None
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def cpu_has_aes():
    """This CPU advertises AES instructions (x86 "aes"; arm64 "aes" in Features)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith(("flags", "Features")) and " aes " in line + " "
                       for line in f)
    except OSError:
        return False


def need_program(name):
    path = shutil.which(name)
    if not path:
        skip(f"{name} is not installed")
    return path


_tmpdirs = []


def _cleanup():
    if os.environ.get("CT_KEEP_TMP"):
        print(f"kept: {' '.join(_tmpdirs)}")
        return
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def tmpdir(tag):
    """A fresh directory, removed when the test ends (set CT_KEEP_TMP=1 to keep them)."""
    d = tempfile.mkdtemp(prefix=f"ct-{tag}-")
    _tmpdirs.append(d)
    return d


def run(argv, env=None, stdin=None, cwd=None, input_bytes=None):
    """Runs argv; returns CompletedProcess with bytes stdout/stderr."""
    return subprocess.run(argv, env=env, stdin=stdin, cwd=cwd, input=input_bytes,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)


def run_traced(argv, outdir, quiet=True, extra=(), env=None, **kw):
    """`cryptrace run [-q] -o outdir [extra] -- argv`."""
    cmd = [CRYPTRACE, "run"] + (["-q"] if quiet else []) + ["-o", outdir] + list(extra)
    return run(cmd + ["--"] + list(argv), env=env, **kw)


def asan_runtime():
    """The libasan the preload was built against, when CT_ASAN=1 (the sanitizer CI pass), else
    None: an ASan-built preload inside a non-ASan program needs the runtime loaded first."""
    if os.environ.get("CT_ASAN") != "1":
        return None
    out = subprocess.run(["ldd", CT_LIB], stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():  # "libasan.so.8 => /path (..)" or, preloaded, "/path (..)"
        if "libasan" in line:
            return line.split("=>")[-1].split()[0]
    return None


def preload_env(outdir):
    """The bare-preload environment: LD_PRELOAD ([libasan] libcryptrace.so) + CRYPTRACE_OUT,
    no launcher."""
    env = dict(os.environ)
    asan = asan_runtime()
    env["LD_PRELOAD"] = f"{asan} {CT_LIB}" if asan else CT_LIB
    if asan:
        env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
    env["CRYPTRACE_OUT"] = outdir
    return env


def traces(outdir):
    return sorted(os.path.join(outdir, f) for f in os.listdir(outdir)
                  if re.search(r"\.ctrace(\.\d+)?$", f))


def report(paths, *opts):
    """Runs `cryptrace report --json`; returns (exit code, parsed JSON or None, stderr text)."""
    p = run([CRYPTRACE, "report", "--json"] + list(opts) + list(paths))
    try:
        doc = json.loads(p.stdout.decode()) if p.stdout.strip() else None
    except ValueError as e:
        raise Failure(f"report --json printed invalid JSON ({e}): {p.stdout[:300]!r}")
    return p.returncode, doc, p.stderr.decode(errors="replace")


def report_ok(paths):
    rc, doc, err = report(paths)
    if rc != 0 or doc is None:
        raise Failure(f"cryptrace report exited {rc}: {err.strip()}")
    return doc


def select(doc, **want):
    """The report's paths whose fields equal every given value."""
    return [p for p in doc.get("paths", []) if all(p.get(k) == v for k, v in want.items())]


def totals(doc, **want):
    """(calls, bytes) summed over the matching paths."""
    sel = select(doc, **want)
    return sum(p.get("calls", 0) for p in sel), sum(p.get("bytes", 0) for p in sel)


def describe_paths(doc):
    rows = []
    for p in doc.get("paths", []):
        rows.append("  {api} {impl} {cipher} {dir} entry={entry} calls={calls} bytes={bytes}"
                    .format(**{k: p.get(k) for k in
                               ("api", "impl", "cipher", "dir", "entry", "calls", "bytes")}))
    return "\n".join(rows) or "  (no paths)"


def parse_expect(text):
    """Lines `expect api=.. cipher=.. dir=.. calls=N bytes=N` printed by the examples."""
    out = []
    for line in text.splitlines():
        if not line.startswith("expect "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        out.append((f["api"], f["cipher"], f["dir"], int(f["calls"]), int(f["bytes"])))
    if not out:
        raise Failure(f"no expect lines in the example's output: {text[:200]!r}")
    return out


def example(name):
    path = os.path.join(CT_EXAMPLES, name)
    if not os.access(path, os.X_OK):
        raise Failure(f"example {path} was not built")
    return path


def speed_count(stderr_text, name):
    """N from openssl speed's `... N <name>'s in 1.00s`."""
    m = re.search(r"(\d+) " + re.escape(name) + r"'s in", stderr_text)
    if not m:
        raise Failure(f"no count for {name} in openssl speed output: {stderr_text[:300]!r}")
    return int(m.group(1))
