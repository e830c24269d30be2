#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tree built with musl-gcc (tests/port/musl-build.sh, cross/x86_64-linux-musl.ini) into
CT_PORT_WORK, checked natively on this x86-64 host:
 1. the musl build's unit tests pass;
 2. `openssl speed -seconds 1 -evp aes-128-cbc` of Debian's OpenSSL built for musl, traced by the
    musl launcher and preload, prints its results and exits 0 as it does untraced; its trace,
    reported by this build's reporter and by the musl one, shows the EVP AES-128-CBC encrypt
    path, exit status 0, a call site that reaches the program's own frames through libcrypto's
    (the unwinder works), and no warning or error;
 3. exit_main (musl-built) records the status main returns (3: no on_exit in musl, main's value
    comes through the __libc_start_main hook) and the one it gives exit (4); the glibc build's
    exit_main records the same.
Exit 77 when musl-gcc, its loader, cmake or dpkg-source is missing here."""
import os
import re
import shutil

import ctlib
from ctlib import check

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def musl_build():
    """Builds (or updates) the musl tree; returns (build dir, musl OpenSSL prefix)."""
    for tool, pkg in (("musl-gcc", "musl-tools"), ("cmake", "cmake"), ("dpkg-source", "dpkg-dev")):
        if not shutil.which(tool):
            ctlib.skip(f"{tool} not found (apt-get install {pkg}): the musl build needs it")
    if not os.path.exists("/lib/ld-musl-x86_64.so.1"):
        ctlib.skip("/lib/ld-musl-x86_64.so.1 missing (apt-get install musl): musl programs cannot run")
    work = os.environ["CT_PORT_WORK"]
    p = ctlib.run([os.path.join(SRC, "tests/port/musl-build.sh"), work], text=True, timeout=3000)
    print(p.stderr.strip()[-2000:])
    check(p.returncode == 0, f"tests/port/musl-build.sh {work} built the tree with musl-gcc")
    build = p.stdout.strip().splitlines()[-1]
    ini = open(os.path.join(work, "musl.ini")).read()
    openssl = re.search(r"^musl_openssl = '(.*)'$", ini, re.M).group(1)
    launcher = os.path.join(build, "tracer", "cryptrace")
    interp = open(launcher, "rb").read(4096)
    check(b"/lib/ld-musl-x86_64.so.1" in interp, f"{launcher} is a musl program")
    return build, openssl


def unit_tests(build):
    p = ctlib.run(["meson", "test", "-C", build, "--suite", "unit", "--no-rebuild",
                   "--print-errorlogs"], text=True, timeout=1200)
    summary = "\n".join(l for l in p.stdout.splitlines() if re.match(r"^(Ok|Fail|Skipped|Timeout):", l))
    print(summary)
    ok = re.search(r"^Ok:\s+(\d+)", p.stdout, re.M)
    check(p.returncode == 0 and ok and int(ok.group(1)) >= 20,
          f"the musl build's unit tests pass natively ({summary.split(chr(10))[0] if summary else p.stdout[-500:]})")


def report_both(out, musl_cryptrace, tag):
    """The trace reported by this build's reporter and by the musl one: both JSON documents."""
    native = ctlib.report_ok([out])
    p = ctlib.run([musl_cryptrace, "report", "--json", out], text=True)
    check(p.returncode == 0, f"{tag}: the musl reporter read the trace ({p.stderr.strip()[:300]})")
    musl = ctlib.parse_json(p.stdout, "musl report --json")
    return (("native reporter", native), ("musl reporter", musl))


def speed(build, openssl):
    openssl_bin = os.path.join(openssl, "bin", "openssl")
    argv = [openssl_bin, "speed", "-seconds", "1", "-evp", "aes-128-cbc"]
    bare = ctlib.run(argv, text=True)
    check(bare.returncode == 0, f"musl openssl speed runs untraced ({bare.stderr.strip()[:200]})")
    out = ctlib.tmpdir("musl-speed")
    musl_cryptrace = os.path.join(build, "tracer", "cryptrace")
    p = ctlib.run([musl_cryptrace, "run", "-q", "-o", out, "--"] + argv, text=True)
    check(p.returncode == 0, f"traced by the musl launcher, openssl speed exits 0 ({p.stderr.strip()[-300:]})")
    check(re.search(r"^AES-128-CBC\s+\d", p.stdout, re.M | re.I) is not None,
          "traced, it prints its results table as it does untraced")
    for who, doc in report_both(out, musl_cryptrace, "speed"):
        procs = ctlib.processes(doc)
        check(len(procs) == 1 and procs[0]["status"] == "complete" and procs[0]["exit_status"] == 0,
              f"{who}: one complete process, exit status 0 ({[(x['status'], x['exit_status']) for x in procs]})")
        evp = ctlib.paths(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")
        check(len(evp) == 1 and evp[0]["calls"] > 1000 and evp[0]["bytes"] > 1 << 20,
              f"{who}: the EVP AES-128-CBC encrypt path, with its calls and bytes "
              f"({ctlib.describe_paths(doc)})")
        frames = evp[0]["callsite"].split("\n")
        program = [f for f in frames if f.startswith("openssl!") or f.startswith("openssl+")]
        check(len(frames) >= 2 and program,
              f"{who}: a call site unwound through libcrypto to the program's frames ({frames})")
        ctlib.check_clean(doc, f"{who} speed")
        check(not doc["findings"], f"{who}: no findings on a clean run ({ctlib.kinds(doc)})")


def exit_status(exe, launcher, tag):
    for how, status in (("return", 3), ("exit", 4)):
        out = ctlib.tmpdir(f"exit-{how}")
        p = ctlib.run([launcher, "run", "-q", "-o", out, "--", exe, how, str(status)], text=True)
        check(p.returncode == status, f"{tag}: exit_main {how} {status} exits {status} traced ({p.returncode})")
        doc = ctlib.report_ok([out])
        procs = ctlib.processes(doc)
        check(len(procs) == 1 and procs[0]["exit_status"] == status and procs[0]["end_reason"] == "exit",
              f"{tag}: the trace records exit status {status} when the program {how}s "
              f"({[(x['exit_status'], x['end_reason']) for x in procs]})")
        check(ctlib.paths(doc, api="evp", cipher="aes-128-cbc"), f"{tag}: exit_main's EVP work is traced")


def test():
    build, openssl = musl_build()
    unit_tests(build)
    speed(build, openssl)
    exit_status(os.path.join(build, "tests", "port", "exit_main"), os.path.join(build, "tracer", "cryptrace"),
                "musl")
    exit_status(os.environ["CT_PORT_EXIT_MAIN"], ctlib.CRYPTRACE, "glibc")


ctlib.main(test)
