#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""port-ARCH: cryptrace cross-built for ARCH with Debian's cross compiler against a sysroot of the
target's own Debian packages (tests/port/cross-build.sh), then run as a user of that machine would:

- the unit tests of the cross build, under qemu-user (meson's exe_wrapper);
- the target's own `openssl speed -evp aes-128-cbc` (Debian's arm64/i386/mipsel openssl and
  libssl3), at 16 B and 8 KiB, run by the target's launcher with the target's preload: the path has
  exactly the calls openssl counts and exactly calls x size bytes;
- the trace read by the host's reporter and by the target's own, with the same figures: the format
  is the same on every architecture (fixed-width little-endian records);
- on i386, tests/port/time64.sh (a _TIME_BITS=64 program's kernel-interface calls reach the hooks)
  and tests/port/cbc-partial.sh (the route's AES_cbc_encrypt is bit-exact with the i386 libcrypto);
- the trace states the target's tick counter (its header's timing line);
- the target's doctor: on arm64, the CPU's AES and PMULL from HWCAP, no x86 wording;
- CT_PORT_PART=truth (port-truth-ARCH, run alone): the report's rate at 8 KiB agrees with
  openssl's own (-elapsed) within the bound the report states (ctlib.truth; under qemu both clocks
  run in the same emulated process, so the ratio still holds, though the speeds are not the
  target's).

arm64 and mipsel run under qemu-user through binfmt_misc (registered here if it is not yet, with
qemu-user-static's own entries), so the launcher can exec the target's openssl as on the real
machine. i386 runs natively (an x86-64 kernel with IA32 emulation runs 32-bit programs) through
the sysroot's loader; on a kernel built without it, under qemu-i386 as the others (its binfmt_misc
entry registered here: qemu-user-static ships none for i386 on amd64). qemu-i386 7.2 gives the
main thread another thread's TLS after a signal handler returns (tests/port/tls_after_signal.c
probes it): there the traced runs go without the preload's flusher thread (CRYPTRACE_FLUSHER=0),
the one other thread such a run has."""
import errno
import json
import os
import re
import shutil
import subprocess
import sys

import ctlib
from ctlib import check
from errno_mips import check_refused_afalg
from ctlib.truth import judge_truth

ARCHES = {
    # Debian arch: (gcc triplet, multiarch dir, qemu-user name or None for native, loader)
    "arm64": ("aarch64-linux-gnu", "aarch64-linux-gnu", "aarch64", "lib/ld-linux-aarch64.so.1"),
    "i386": ("i686-linux-gnu", "i386-linux-gnu", None, "lib/ld-linux.so.2"),
    "mipsel": ("mipsel-linux-gnu", "mipsel-linux-gnu", "mipsel", "lib/ld.so.1"),
}
BINFMT = "/proc/sys/fs/binfmt_misc"
# i386 runs natively on an x86-64 kernel with IA32 emulation. Some kernels are built without it
# (a firecracker VM's 6.18 was): then i386 runs under qemu-i386 like the other arches. Debian's
# qemu-user-static has no binfmt entry for i386 on amd64 (it counts as native), so this is the
# standard one: 32-bit little-endian ELF executables of machine 3 (EM_386).
I386_BINFMT = (r":qemu-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00"
               r":\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"
               r":/usr/bin/qemu-i386-static:F")
LOADED = 0.9  # openssl's CPU time over its lifetime below this: the machine made it wait


def binfmt_entry(qemu_name):
    """binfmt_misc's entry for qemu-NAME: "enabled", "disabled", or None when there is none."""
    try:
        with open(os.path.join(BINFMT, "qemu-" + qemu_name)) as f:
            return f.readline().strip()
    except OSError:
        return None


def binfmt_ready(qemu_name):
    """True when the kernel hands ARCH's ELF files to qemu-user (registering qemu-user-static's
    entry if needed, as its package does on a machine running systemd-binfmt)."""
    entry = os.path.join(BINFMT, "qemu-" + qemu_name)
    state = binfmt_entry(qemu_name)
    if state is not None:
        return state == "enabled"
    if not os.path.exists(os.path.join(BINFMT, "register")):
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", BINFMT],
                       stderr=subprocess.DEVNULL)
    conf = f"/usr/lib/binfmt.d/qemu-{qemu_name}.conf"
    if not os.path.exists(os.path.join(BINFMT, "register")):
        return False
    if os.path.exists(conf):
        with open(conf) as f:
            line = f.read().strip()
    elif qemu_name == "i386" and os.path.exists("/usr/bin/qemu-i386-static"):
        line = I386_BINFMT
    else:
        return False
    try:
        with open(os.path.join(BINFMT, "register"), "w") as f:
            f.write(line)
    except OSError as e:
        print(f"binfmt: cannot register {conf}: {e}")
        return False
    return os.path.exists(entry)


def runs_natively(program):
    """False when the kernel refuses the target's executables (ENOEXEC: an x86-64 kernel without
    IA32 emulation, for i386). The program's own exit status does not matter here."""
    try:
        subprocess.run([program, "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    except OSError as e:
        if e.errno == errno.ENOEXEC:
            return False
        raise
    return True


def totals(doc):
    """(calls, bytes) of the EVP aes-128-cbc encrypt path(s) of a report."""
    return ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")


def truth(arch, launcher, openssl, env):
    """The report's rate at 8 KiB against openssl's own, within the bound the report states. A
    test of its own (port-truth-ARCH) that meson runs alone, as the truth suite is: its bound is
    about the measurement, not about a neighbour test's load."""
    def rate_round(elapsed=True):
        """openssl's -elapsed rate is the truth; a round in which the machine made openssl wait for
        a CPU (its CPU time under LOADED of its lifetime: the port tests run in parallel, each a
        qemu) is run again against openssl's CPU-time rate, as tests/truth does."""
        out = ctlib.tmpdir(f"port-{arch}-truth")
        argv = launcher + ["run", "-q", "-o", out, "--"] + openssl + [
            "speed"] + (["-elapsed"] if elapsed else []) + [
            "-seconds", "1", "-bytes", "8192", "-evp", "aes-128-cbc"]
        p = ctlib.run(argv, env=env, text=True)
        m = re.search(r"(\d+) AES-128-CBC's in ([0-9.]+)s", p.stderr)
        check(p.returncode == 0 and m, f"{arch} openssl speed ran ({p.stderr[-200:]!r})") \
            if not (p.returncode == 0 and m) else None
        doc = ctlib.report_ok([out])
        pr = doc["processes"][0]
        busy = ((pr.get("utime_ns") or 0) + (pr.get("stime_ns") or 0)) / (pr.get("wall_ns") or 1)
        if elapsed and busy < LOADED:
            print(f"{arch}: openssl had the CPU {busy:.0%} of its run (loaded machine): this round "
                  "compares with openssl's CPU-time rate")
            return rate_round(elapsed=False)
        truth = int(m.group(1)) * 8192 / float(m.group(2))
        path = max(ctlib.paths(doc, api="evp"), key=lambda x: x["bytes"])
        got = path["bytes"] * 1e9 / ((path["wall_ns"] or 0) + (path["pause_ns"] or 0) or 1)
        return got / truth, (f"report {got / 1e6:.1f} MB/s, openssl {truth / 1e6:.1f} MB/s"
                             f"{'' if elapsed else ' (CPU time)'}")

    judge_truth(f"{arch} 8 KiB aes-128-cbc rate", rate_round)


def tls_survives_signals(triplet, work, env):
    """Whether the main thread of an i386 program keeps its own TLS after a signal handler once
    it has a second thread (tests/port/tls_after_signal.c, built and run here as the target's
    programs are). A probe that cannot be built or run says nothing: True."""
    exe = os.path.join(work, "tls_after_signal-" + triplet)
    src = os.path.join(ctlib.SRC_ROOT, "tests", "port", "tls_after_signal.c")
    b = ctlib.run([triplet + "-gcc", "-O2", "-pthread", "-o", exe, src], text=True)
    if b.returncode != 0:
        print(f"tls_after_signal: not built ({b.stderr[-200:]!r}); assuming TLS survives signals")
        return True
    p = ctlib.run([exe], env=env, text=True, timeout=60)
    print(f"tls_after_signal: {p.stdout.strip()} (exit {p.returncode})")
    return p.returncode != 1


def test():
    arch = os.environ.get("CT_PORT_ARCH", "")
    work = os.environ.get("CT_PORT_WORK", "")
    if arch not in ARCHES or not work:
        raise ctlib.Failure(f"CT_PORT_ARCH ({arch!r}) and CT_PORT_WORK ({work!r}) must be set by meson")
    triplet, multiarch, qemu_name, loader = ARCHES[arch]
    if not shutil.which(triplet + "-gcc"):
        ctlib.skip(f"{triplet}-gcc is missing (apt-get install gcc-{triplet}; tests/setup-deps.sh does)")
    if qemu_name and not shutil.which(f"qemu-{qemu_name}-static"):
        ctlib.skip(f"qemu-{qemu_name}-static is missing (apt-get install qemu-user-static)")

    p = ctlib.run([os.path.join(ctlib.SRC_ROOT, "tests/port/cross-build.sh"), arch, work], text=True,
                  timeout=1800)
    sys.stdout.write(p.stderr[-3000:])
    check(p.returncode == 0, f"the tree cross-builds for {arch} ({triplet}-gcc, -Wall -Wextra)")
    build = p.stdout.strip().splitlines()[-1]
    sysroot = os.path.join(work, "sysroot-" + arch)
    probe = os.path.join(build, "tests", "unit", "test_format")
    if not qemu_name and (binfmt_entry(arch) == "enabled" or not runs_natively(probe)):
        # The kernel cannot run them itself (or an earlier run found so and registered qemu for
        # them): run them under qemu-user, as arm64's are.
        qemu_name = arch
        print(f"this kernel does not run {arch} programs itself: running them under "
              f"qemu-{qemu_name}-static")
        if not shutil.which(f"qemu-{qemu_name}-static"):
            ctlib.skip(f"this kernel cannot run {arch} programs and qemu-{qemu_name}-static is "
                       "missing (apt-get install qemu-user-static)")
        if not binfmt_ready(qemu_name):
            ctlib.skip(f"this kernel cannot run {arch} programs and binfmt_misc cannot hand them "
                       f"to qemu-{qemu_name} here (needs root and a mountable binfmt_misc)")

    part = os.environ.get("CT_PORT_PART", "")
    if part != "truth":
        # Under qemu-user a test runs 10-40x slower (i386's stream test: 2.7 s alone, 106 s with
        # meson's MALLOC_PERTURB_ filling every large buffer): five times meson's own timeouts.
        slow = ["--timeout-multiplier", "5"] if qemu_name else []
        p = ctlib.run(["meson", "test", "-C", build, "--suite", "unit", "--num-processes", "2",
                       "--print-errorlogs"] + slow, text=True, timeout=1800)
        summary = [l for l in p.stdout.splitlines() if l.startswith(("Ok:", "Fail:", "Skipped:", "Timeout:"))]
        print("\n".join(l for l in p.stdout.splitlines() if " FAIL " in l or " SKIP " in l))
        check(p.returncode == 0, f"{arch} unit tests pass under {'qemu-' + qemu_name if qemu_name else 'the native kernel'}: {summary}")

    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if qemu_name:
        if not binfmt_ready(qemu_name):
            ctlib.skip(f"binfmt_misc cannot hand {arch} programs to qemu-{qemu_name} here (needs root "
                       "and a mountable binfmt_misc): the launcher could not exec the target's openssl")
        env["QEMU_LD_PREFIX"] = sysroot
        wrap = []
    else:
        libpath = ":".join(os.path.join(sysroot, d, multiarch) for d in ("lib", "usr/lib"))
        wrap = [os.path.join(sysroot, loader), "--library-path", libpath]
        # Run through the loader, /proc/self/exe is the loader: name the library explicitly.
        env["CRYPTRACE_LIB"] = os.path.join(build, "preload", "libcryptrace.so")
    launcher = wrap + [os.path.join(build, "tracer", "cryptrace")]
    openssl = wrap + [os.path.join(sysroot, "usr/bin/openssl")]
    if arch == "i386" and qemu_name and not tls_survives_signals(triplet, work, env):
        # qemu-i386's own fault (tests/port/tls_after_signal.c): after openssl speed's SIGALRM
        # handler the main thread reaches the flusher thread's TLS, and the call in flight then
        # goes uncounted (1 run in ~10). One thread has no other TLS to reach.
        print("qemu-i386 gives the main thread another thread's TLS after a signal handler: the "
              "traced runs below go without the flusher thread (CRYPTRACE_FLUSHER=0)")
        env["CRYPTRACE_FLUSHER"] = "0"
    if part == "truth":
        truth(arch, launcher, openssl, env)
        return

    for size in (16, 8192):
        out = ctlib.tmpdir(f"port-{arch}-{size}")
        argv = launcher + ["run", "-q", "-o", out, "--"] + openssl + [
            "speed", "-seconds", "1", "-bytes", str(size), "-evp", "aes-128-cbc"]
        p = ctlib.run(argv, env=env, text=True)
        check(p.returncode == 0, f"{arch} openssl speed {size} B exits 0 under the {arch} launcher "
              f"(stderr: {p.stderr[-400:]!r})")
        n = ctlib.speed_count(p.stderr, "AES-128-CBC")
        host_doc = ctlib.report_ok([out])
        print(ctlib.describe_paths(host_doc))
        calls, nbytes = totals(host_doc)
        check(n > 0 and calls == n, f"{arch} {size} B: host report's calls {calls} == openssl's count {n}")
        check(nbytes == n * size, f"{arch} {size} B: bytes {nbytes} == {n} x {size}")

        p = ctlib.run(launcher + ["report", "--json", out], env=env, text=True)
        check(p.returncode == 0, f"the {arch} reporter reads its own trace (exit {p.returncode}: {p.stderr[-300:]!r})")
        target_doc = json.loads(p.stdout)
        check(totals(target_doc) == (calls, nbytes),
              f"{arch} {size} B: the {arch} reporter says {totals(target_doc)}, the host's {(calls, nbytes)}")
        timing = [pr.get("timing", "") for pr in ctlib.processes(host_doc)]
        check(all(timing), f"{arch}: the trace states its clock: {timing}")


    # The doctor on the target: its own CPU's AES facts, no x86 wording where it does not apply,
    # and on arm64 (AES + PMULL under qemu's -cpu max) nothing to warn about.
    p = ctlib.run(launcher + ["doctor", "--json"], env=env, text=True)
    check(p.returncode == 0, f"{arch} doctor --json exits 0 ({p.stderr[-300:]!r})")
    checks = {c["id"]: c for c in json.loads(p.stdout)["checks"]}
    text = ctlib.run(launcher + ["doctor"], env=env, text=True).stdout
    print(text)
    if arch == "arm64":
        bad = [(k, c["status"]) for k, c in checks.items() if c["status"] not in ("ok", "info")]
        check(checks.get("cpu", {}).get("status") == "ok" and not bad,
              f"arm64 doctor: CPU AES ok from HWCAP, no warning or failure ({bad})")
        check("AES-NI" not in text and "ia32cap" not in text,
              "arm64 doctor: no AES-NI or OPENSSL_ia32cap wording")
        check("ARMv8 CE" in text, "arm64 doctor: libcrypto measured against the ARMv8 CE bound")

    if arch == "mipsel":
        check_refused_afalg(build, sysroot)  # MIPS's errno numbers named right by the host

    if arch == "i386":
        # 32-bit glibc's _TIME_BITS=64 entry points, and the route's AES_cbc_encrypt on a partial
        # last block as OpenSSL's i386 assembly does it: both need the build above, run natively.
        for script in ("time64.sh", "cbc-partial.sh"):
            p = ctlib.run([os.path.join(ctlib.SRC_ROOT, "tests/port", script), work], text=True)
            sys.stdout.write(p.stdout[-2500:] + p.stderr[-1500:])
            if p.returncode == ctlib.SKIP:
                print(f"{script}: skipped, as it says above")
                continue
            check(p.returncode == 0, f"tests/port/{script} passes (exit {p.returncode})")


ctlib.main(test)
