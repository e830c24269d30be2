# SPDX-License-Identifier: MIT
"""ctlib.harness - how every Python test runs: it is a script meson starts with the build's
paths in the environment (CRYPTRACE: the launcher, CT_LIB: libcryptrace.so in the build tree,
CT_EXAMPLES: the built examples, and the suite's own CT_* variables); it checks with check(),
which prints `ok: ...` or raises Failure, and exits 0 pass, 1 fail, 77 skip (skip() prints why).
main() runs the test; when it passes, the trace files under its temporary directories are
scanned for the keys, IVs and plaintexts it registered with secret() and the known ones of the
examples and test programs (ctlib.secretscan): a hit fails it."""
import atexit
import os
import shutil
import sys
import tempfile

from . import secretscan

__all__ = ["CRYPTRACE", "CT_EXAMPLES", "CT_LIB", "MIB", "RUN_TIMEOUT", "SKIP", "SRC_ROOT",
           "Failure", "built", "check", "example", "main", "plaintext", "run_cases", "secret",
           "skip", "tmpdir", "verdict"]

SKIP = 77
MIB = 1 << 20

# What the developer's shell may hold must not steer the programs under test: the launcher has
# to find the library the way users' builds do (next to itself, not by CRYPTRACE_LIB), no route
# or other CRYPTRACE_* setting applies unless a test sets it, and no OPENSSL_ia32cap mask.
for _name in [k for k in os.environ if k.startswith("CRYPTRACE_") or k == "OPENSSL_ia32cap"]:
    del os.environ[_name]

CRYPTRACE = os.environ.get("CRYPTRACE", "")
CT_LIB = os.environ.get("CT_LIB", "")
CT_EXAMPLES = os.environ.get("CT_EXAMPLES", "")
# The source tree (tests/lib/ctlib/ is three levels down).
SRC_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                         ".."))

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
    """Runs fn() and turns Failure into exit 1 with a readable message; a passing test's trace
    files are then scanned for secrets."""
    for name, value in (("CRYPTRACE", CRYPTRACE), ("CT_LIB", CT_LIB)):
        if not value:
            print(f"FAIL: {name} is not set (run this through meson test)")
            sys.exit(1)
        if not os.path.exists(value):
            print(f"FAIL: {value} was not built")
            sys.exit(1)
    verdict(fn)
    sys.exit(1 if secretscan.check_dirs(_tmpdirs) else 0)


def verdict(fn):
    """Runs fn(); a Failure is printed as `FAIL: ...` and exits 1. main() for a test script;
    alone for checks with nothing to set up (the shell suites' Python, on PYTHONPATH=tests/lib)."""
    try:
        fn()
    except Failure as e:
        print(f"FAIL: {e}")
        sys.exit(1)


def run_cases(cases):
    """Runs each (name, fn) case; a case returns False when its premise does not hold here
    (it printed why). Skips the whole test (77) when no case ran."""
    ran = 0
    for name, fn in cases:
        print(f"== {name}")
        if fn() is not False:
            ran += 1
    if not ran:
        skip("no case could run here")


def secret(name, data):
    """Registers a key, IV or plaintext (bytes) this test uses: no trace file may hold it."""
    secretscan.register(name, data)


def plaintext(size, name="plaintext"):
    """size random bytes, registered as a secret (sampled when long)."""
    data = os.urandom(size)
    secret(f"{name} ({size} B)", data)
    return data


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


def built(var, name):
    """The program `name` in the build directory the environment variable var names (the
    suite's meson.build sets it); fails the test when it was not built."""
    path = os.path.join(os.environ.get(var, ""), name)
    if not os.access(path, os.X_OK):
        raise Failure(f"{path} was not built")
    return path


def example(name):
    """A program of examples/, as built."""
    return built("CT_EXAMPLES", name)
