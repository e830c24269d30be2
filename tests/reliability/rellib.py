# SPDX-License-Identifier: MIT
"""rellib - what the reliability tests share on top of tests/integration/ctlib.py: where the
scenario programs are, the preload environment (with libasan first when CT_ASAN=1, for an
ASan-built preload inside non-ASan programs), and comparing `expect` lines with a report."""
import os
import sys

sys.path.insert(0, os.environ.get("CT_INTEGRATION_DIR",
                                  os.path.join(os.path.dirname(__file__), "..", "integration")))
import ctlib  # noqa: E402
from ctlib import Failure, check  # noqa: E402,F401

REL_BIN = os.environ.get("CT_REL_BIN", "")
FAKE_CDEV = os.environ.get("CT_FAKE_CDEV", "")


def prog(name):
    path = os.path.join(REL_BIN, name)
    if not os.access(path, os.X_OK):
        raise Failure(f"{path} was not built")
    return path


def env_with(outdir=None, preload=(), **extra):
    """The bare-preload environment: LD_PRELOAD = [libasan] libcryptrace.so [preload...]."""
    env = dict(os.environ)
    libs = [ctlib.CT_LIB] + list(preload)
    asan = ctlib.asan_runtime()
    if asan:
        libs.insert(0, asan)
        env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
    env["LD_PRELOAD"] = " ".join(libs)
    if outdir:
        env["CRYPTRACE_OUT"] = outdir
    else:
        env.pop("CRYPTRACE_OUT", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def expect_lines(text):
    return ctlib.parse_expect(text)


def check_expect(doc, text, where=""):
    """Every `expect` line's calls and bytes equal the report's sum for that cipher and dir."""
    for api, cipher, direction, calls, nbytes in expect_lines(text):
        got = ctlib.totals(doc, api=api, cipher=cipher, dir=direction)
        check(got == (calls, nbytes),
              f"{where}{cipher} {direction}: report {got[0]} calls {got[1]} bytes, "
              f"program did {calls} calls {nbytes} bytes")


def procs(doc):
    return doc.get("processes", [])


def per_process(doc, **want):
    """{pid: (calls, bytes)} of the matching paths, per process (superseded files left out)."""
    rows = {}
    for q in procs(doc):
        if q.get("superseded"):
            continue
        for p in q.get("paths", []):
            if all(p.get(k) == v for k, v in want.items()):
                c, b = rows.get(q.get("pid"), (0, 0))
                rows[q.get("pid")] = (c + p.get("calls", 0), b + p.get("bytes", 0))
    return rows
