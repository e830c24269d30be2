# SPDX-License-Identifier: MIT
"""reallib - helpers for the `real` suite: packaged programs nobody here wrote (stunnel4,
OpenSSH, python3, borg, openvpn, gpg, qpdf, wget, cryptsetup, age, python3-cryptography), each
run for a second or two under the launcher of this build, once clean and, where it uses
OpenSSL, once under an OPENSSL_ia32cap mask. Every case checks the paths (calls and bytes from
the program's own numbers where it prints them) and the findings; a clean run must raise no
warning and no error. Builds on tests/integration/ctlib.py and tests/e2e/e2elib.py (same
environment, same exit codes: 0 pass, 1 fail, 77 skip with the reason)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import e2elib  # noqa: E402,F401  (makes tests/integration importable)
import ctlib  # noqa: E402
from ctlib import Failure, check  # noqa: E402,F401

# AES-NI (bit 57) and PCLMULQDQ (bit 33) masked out of libcrypto's capabilities.
MASK = "~0x200000200000000"
SEVERE = ("warning", "error")
MIB = 1 << 20


cpu_has_aes = ctlib.cpu_has_aes


def masked_env(base=None):
    env = dict(base if base is not None else os.environ)
    env["OPENSSL_ia32cap"] = MASK
    return env


def traced(tag, argv, env=None, extra=(), cwd=None, input_bytes=None):
    """Runs argv under `cryptrace run -q -o DIR`; returns (CompletedProcess, report JSON, DIR)."""
    out = ctlib.tmpdir(f"real-{tag}")
    p = ctlib.run_traced(argv, out, env=env, extra=extra, cwd=cwd, input_bytes=input_bytes)
    doc = ctlib.report_ok([out])
    print(f"{tag}: exit {p.returncode}, findings "
          f"{[(f['kind'], f['severity']) for f in doc['findings']]}")
    return p, doc, out


def report(out):
    doc = ctlib.report_ok([out])
    return doc


def kinds(doc):
    return [f["kind"] for f in doc["findings"]]


def finding(doc, kind):
    """The one finding of kind (fails when there is none or more than one)."""
    fs = [f for f in doc["findings"] if f["kind"] == kind]
    check(len(fs) == 1, f"one {kind} finding ({kinds(doc)})")
    return fs[0]


def check_clean(doc, tag):
    """A clean run of a real program raises no warning and no error."""
    bad = [(f["kind"], f["message"][:160]) for f in doc["findings"] if f["severity"] in SEVERE]
    check(not bad, f"{tag}: no warning or error on a clean run ({bad})")


def check_complete(doc, tag):
    """Every process's trace is complete, except sshd's sandboxed pre-auth child: it sets
    RLIMIT_FSIZE to 0 before its end, so the preload cannot write its END (and says so by
    leaving the trace incomplete rather than writing past the limit)."""
    bad = [(p["pid"], p.get("role"), p["status"]) for p in doc["processes"]
           if p["status"] != "complete" and not p.get("superseded") and
           "pre-auth" not in (p.get("role") or "")]
    check(not bad, f"{tag}: every trace complete ({bad})")


def check_masked(doc, tag, procs_min=1):
    """Under the mask: software-aes naming it, one finding for the cause however many processes
    are affected, listing them when there are several."""
    sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
    check(len(sw) == 1, f"{tag} masked: one software-aes finding for the one cause "
                        f"({len(sw)}: {[f.get('pid') for f in sw]})")
    f = sw[0]
    check(MASK in f["message"], f"{tag} masked: software-aes names the mask: {f['message'][:200]}")
    if procs_min > 1:
        check("processes (" in f["message"],
              f"{tag} masked: software-aes lists the processes: {f['message'][-300:]}")
    return f


def paths(doc, **want):
    return ctlib.paths(doc, **want)


def totals(doc, **want):
    return ctlib.totals(doc, **want)


def describe(doc):
    return ctlib.describe_paths(doc)


def need(name):
    return ctlib.need_program(name)


def run_cases(cases):
    """Runs each (name, fn) case; a case returns False when its premise does not hold here
    (it printed why). Skips the whole test (77) when no case ran."""
    ran = 0
    for name, fn in cases:
        print(f"== {name}")
        if fn() is not False:
            ran += 1
    if not ran:
        ctlib.skip("no case could run here")
