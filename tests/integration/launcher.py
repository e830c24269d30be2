#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace run` itself: exit status pass-through (3 -> 3, killed by a signal -> 128+sig),
a missing command -> 127 with one line, a bad option -> 2, an unwritable output directory -> 2
before anything runs, SIGTERM to the launcher reaches the command, LD_PRELOAD is prepended to
an existing value, CRYPTRACE_OUT is absolute, the default directory is private, static
and setuid binaries are called out, the AES-NI bound and the TSC's rate are passed, and the
help/version entry points work."""
import os
import signal
import stat
import subprocess
import time

import ctlib
from ctlib import check

CT = ctlib.CRYPTRACE


def lines(b):
    return [line for line in b.decode(errors="replace").splitlines() if line.strip()]


def exit_status():
    out = ctlib.tmpdir("launch")
    check(ctlib.run_traced(["sh", "-c", "exit 3"], out).returncode == 3, "exit 3 passes through")
    check(ctlib.run_traced(["sh", "-c", "exit 0"], out).returncode == 0, "exit 0 passes through")
    p = ctlib.run_traced(["sh", "-c", "kill -TERM $$"], out)
    check(p.returncode == 128 + signal.SIGTERM, f"killed by SIGTERM -> {p.returncode} == 143")
    p = ctlib.run_traced(["sh", "-c", "kill -KILL $$"], out)
    check(p.returncode == 128 + signal.SIGKILL, f"killed by SIGKILL -> {p.returncode} == 137")


def errors():
    out = ctlib.tmpdir("launch-err")
    p = ctlib.run_traced(["cryptrace-no-such-command-x"], out)
    check(p.returncode == 127, f"missing command -> 127 ({p.returncode})")
    check(len(lines(p.stderr)) == 1 and "not found" in p.stderr.decode(),
          f"missing command: one line: {p.stderr.decode().strip()}")
    noexec = os.path.join(out, "not-executable")
    open(noexec, "w").write("echo should not run\n")
    os.chmod(noexec, 0o644)
    p = ctlib.run_traced([noexec], out)
    check(p.returncode == 126 and len(lines(p.stderr)) == 1, "not executable -> 126, one line")
    for argv in ([CT, "run", "--no-such-option", "true"], [CT, "run"], [CT, "bogus"], [CT],
                 [CT, "--bogus"], [CT, "run", "--mode", "fast", "true"], [CT, "run", "-o"]):
        p = ctlib.run(argv)
        check(p.returncode == 2 and len(lines(p.stderr)) == 1,
              f"{' '.join(argv[1:]) or '(nothing)'} -> exit 2 with one line ({p.returncode})")

    p = ctlib.run([CT, "run", "-o", out, "--route", "aes-*-cbc=aesnii", "--", "true"])
    check(p.returncode == 2 and len(lines(p.stderr)) == 1 and b"route" in p.stderr,
          f"a bad --route -> exit 2 with one line: {p.stderr.decode().strip()[:120]}")

    marker = os.path.join(ctlib.tmpdir("marker"), "ran")
    for bad in ("/dev/null/sub", "/proc/cryptrace-cannot-be-here",
                "/proc/self/cryptrace-cannot-be-here"):
        p = ctlib.run([CT, "run", "-o", bad, "--", "sh", "-c", f"touch {marker}"])
        check(p.returncode == 2 and len(lines(p.stderr)) == 1,
              f"unwritable -o {bad} -> exit 2 with one line ({p.returncode})")
        check(not os.path.exists(marker), f"unwritable -o {bad}: the command did not run")


def environment():
    out = ctlib.tmpdir("launch-env")
    other = ctlib.system_library("libm.so.6")
    if not other:
        other = ctlib.CT_LIB  # any preloadable library will do
    env = dict(os.environ, LD_PRELOAD=other)
    rel = os.path.relpath(out, os.getcwd())
    p = ctlib.run([CT, "run", "-q", "-o", rel, "--", "sh", "-c",
                   'echo "$LD_PRELOAD"; echo "$CRYPTRACE_OUT"; echo "${CRYPTRACE_MODE-}"'],
                  env=env)
    got = p.stdout.decode().splitlines()
    check(p.returncode == 0 and len(got) == 3, "the child printed its environment")
    check(got[0].split(":")[0] == os.path.realpath(ctlib.CT_LIB) and other in got[0],
          f"LD_PRELOAD puts our library first and keeps the user's: {got[0]}")
    check(got[1] == os.path.realpath(out), f"CRYPTRACE_OUT is absolute: {got[1]}")
    p = ctlib.run([CT, "run", "-q", "--mode", "calls", "-o", out, "--", "sh", "-c",
                   'echo "$CRYPTRACE_MODE"'])
    check(p.stdout.decode().strip() == "calls", "--mode calls sets CRYPTRACE_MODE")
    spec = "aes-*-cbc=afalg>=4096,aesni"
    p = ctlib.run([CT, "run", "-q", "--route", spec, "-o", out, "--", "sh", "-c",
                   'echo "$CRYPTRACE_ROUTE"'])
    check(p.stdout.decode().strip() == spec, "--route passes the spec as CRYPTRACE_ROUTE")

    # The calibrated AES-NI bound travels to the preload and into every trace header.
    cpu_has_aes = "aes" in ctlib.cpu_flags()
    cal = ctlib.tmpdir("launch-cpb")
    p = ctlib.run([CT, "run", "-q", "-o", cal, "--", "sh", "-c",
                   'echo "${CRYPTRACE_AESNI_CPB-unset}"'])
    cpb = p.stdout.decode().strip()
    if cpu_has_aes:
        check(cpb.isdigit() and int(cpb) > 0, f"CRYPTRACE_AESNI_CPB is a positive bound ({cpb})")
        doc = ctlib.report_ok([cal])
        check(any(q.get("aesni_cpb_milli") == int(cpb) for q in doc.get("processes", [])),
              "the trace header carries the launcher's AES-NI bound")
    else:
        print("note: this CPU has no AES-NI: no bound to pass")

    tsc_rate()

    cwd = ctlib.tmpdir("launch-default")
    p = ctlib.run([CT, "run", "-q", "--", "true"], cwd=cwd)
    made = [d for d in os.listdir(cwd) if d.startswith("cryptrace-")]
    check(p.returncode == 0 and len(made) == 1, f"default output directory created: {made}")
    mode = stat.S_IMODE(os.stat(os.path.join(cwd, made[0])).st_mode)
    check(mode == 0o700, f"default output directory is mode 0700 ({oct(mode)})")

    # Not quiet: a summary and where the traces are; an existing, non-empty directory is fine
    # and only this run's traces are summarized.
    again = ctlib.tmpdir("launch-again")
    for n in (1, 2):
        p = ctlib.run([CT, "run", "-o", again, "--", "true"])
        check(p.returncode == 0 and os.path.realpath(again) in p.stderr.decode(),
              f"run {n}: without -q the launcher says where the traces are")
        check("1 trace file in" in p.stderr.decode(), f"run {n}: it counts this run's trace only")
    check(len(ctlib.traces(again)) == 2, "both runs' traces are in the shared directory")


def tsc_rate():
    """The launcher measures the TSC's rate once and every process it runs takes it
    (CRYPTRACE_TSC_HZ), where each measured it for 3 ms before; a bare preload measures its own,
    within 0.1 % of the launcher's (each within 0.02 % of the true rate, common/cpu.c); a bad
    value is said and measured instead."""
    if not {"constant_tsc", "nonstop_tsc"} <= ctlib.cpu_flags():
        print("note: no invariant TSC here (the clock is CLOCK_MONOTONIC): no rate to pass")
        return
    out = ctlib.tmpdir("launch-tsc")
    p = ctlib.run([CT, "run", "-q", "-o", out, "--", "sh", "-c",
                   'echo "${CRYPTRACE_TSC_HZ-unset}"; openssl version; openssl version'])
    hz = p.stdout.decode().splitlines()[0]
    check(p.returncode == 0 and hz.isdigit() and int(hz) > 10 ** 7,
          f"CRYPTRACE_TSC_HZ is a rate ({hz})")
    procs = [q for q in ctlib.report_ok([out]).get("processes", []) if q.get("tsc_hz")]
    check(len(procs) == 3 and all(q["tsc_hz"] == int(hz) and "(the launcher's measure)" in
                                  q["timing"] for q in procs),
          f"every process's header has the launcher's rate, and says so "
          f"({[(q['tsc_hz'], q['timing'][:60]) for q in procs]})")
    launcher_hz = int(hz)
    for tag, extra in (("bare", {}), ("bad", {"CRYPTRACE_TSC_HZ": "2.4GHz"})):
        bare = ctlib.tmpdir(f"launch-tsc-{tag}")
        env = ctlib.preload_env(bare)
        env.pop("CRYPTRACE_TSC_HZ", None)  # in case the tests themselves run under a launcher
        env.update(extra)
        rates = []
        for _ in range(3):
            check(ctlib.run(["openssl", "version"], env=env).returncode == 0, f"{tag}: openssl ran")
        doc = ctlib.report_ok([bare])
        for q in doc.get("processes", []):
            rates.append(q["tsc_hz"])
            check("launcher" not in q["timing"], f"{tag}: measured here, and says so ({q['timing'][:60]})")
        worst = max(abs(r / launcher_hz - 1) for r in rates) if rates else 1
        check(len(rates) == 3 and worst < 1e-3,
              f"{tag}: a bare preload's own measure is within 0.1 % of the launcher's "
              f"({[round(r / launcher_hz, 6) for r in rates]})")
        if extra:
            warned = [e for e in doc["events"] if e["call"] == "config" and
                      "CRYPTRACE_TSC_HZ" in e["detail"]]
            check(len(warned) == 1, f"{tag}: a bad CRYPTRACE_TSC_HZ is said once ({warned})")


def forwarding():
    out = ctlib.tmpdir("launch-sig")
    marker = os.path.join(out, "started")
    proc = subprocess.Popen([CT, "run", "-q", "-o", out, "--", "sh", "-c",
                             f"touch {marker}; exec sleep 300"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Wait until the command runs (a condition, not a timing assertion).
    for _ in range(3000):
        if os.path.exists(marker) or proc.poll() is not None:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    check(rc == 128 + signal.SIGTERM, f"SIGTERM to the launcher reached the command ({rc})")


def static_binary():
    busybox = "/bin/busybox"
    if not os.path.exists(busybox):
        print("note: no /bin/busybox (busybox-static), static check not run")
        return
    kind = subprocess.run(["file", "-L", busybox], stdout=subprocess.PIPE).stdout.decode()
    if "statically linked" not in kind and "static-pie" not in kind:
        print("note: /bin/busybox is not static here, static check not run")
        return
    p = ctlib.run([CT, "run", "-o", ctlib.tmpdir("static"), "--", busybox, "true"])
    check(p.returncode == 0, "a static program still runs")
    check("statically linked" in p.stderr.decode(),
          f"a static program is called out: {p.stderr.decode().strip()[:160]}")
    # A static shell that starts a dynamic program: that program is still traced.
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("static-child")
    p = ctlib.run([CT, "run", "-o", out, "--", busybox, "sh", "-c",
                   f"{openssl} enc -aes-128-cbc -K 00000000000000000000000000000000 -iv "
                   "00000000000000000000000000000000 -in /etc/hostname -out /dev/null"])
    check(p.returncode == 0 and "statically linked" in p.stderr.decode(),
          "a static shell is called out")
    calls, _ = ctlib.totals(ctlib.report_ok([out]), api="evp", cipher="aes-128-cbc")
    check(calls > 0, "the dynamic program a static shell started was traced")


def setuid_binary():
    """A set-user-ID program (owned by someone else) never gets LD_PRELOAD: say so plainly."""
    import pwd
    import shutil
    if os.geteuid() != 0:
        print("note: not root, setuid check not run")
        return
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        print("note: no user nobody, setuid check not run")
        return
    d = ctlib.tmpdir("setuid")
    os.chmod(d, 0o755)
    prog = os.path.join(d, "true-setuid")
    shutil.copy(ctlib.need_program("true"), prog)
    os.chown(prog, nobody.pw_uid, nobody.pw_gid)
    os.chmod(prog, 0o4755)
    p = ctlib.run([CT, "run", "-o", ctlib.tmpdir("setuid-out"), "--", prog])
    check(p.returncode == 0, "a setuid program still runs")
    check("setuid" in p.stderr.decode(),
          f"a setuid program is called out: {p.stderr.decode().strip()[:160]}")


def help_and_version():
    for argv in ([CT, "--help"], [CT, "-h"], [CT, "help"], [CT, "help", "run"],
                 [CT, "run", "--help"], [CT, "--version"]):
        p = ctlib.run(argv)
        check(p.returncode == 0 and p.stdout.strip(), f"{' '.join(argv[1:])} -> exit 0 and text")
    p = ctlib.run([CT, "help", "report"])
    check(p.returncode == 0 and b"report" in p.stdout + p.stderr, "help report -> exit 0")


def test():
    exit_status()
    errors()
    environment()
    forwarding()
    static_binary()
    setuid_binary()
    help_and_version()


ctlib.main(test)
