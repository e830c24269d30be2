#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`ls` and `python3 -c pass` under the preload: output and exit status unchanged, their own
/proc/self/maps shows the preload but no libcrypto (the preload must never load it), and the
report says plainly that no crypto calls were seen."""
import ctlib
from ctlib import check


def same_output(argv, name):
    out = ctlib.tmpdir("nocrypto")
    a = ctlib.run(argv)
    b = ctlib.run_traced(argv, out)
    c = ctlib.run(argv, env=ctlib.preload_env(ctlib.tmpdir("nocrypto-bare")))
    check(a.returncode == b.returncode == c.returncode, f"{name}: exit status unchanged")
    check(a.stdout == b.stdout == c.stdout, f"{name}: stdout identical")
    check(a.stderr == b.stderr == c.stderr, f"{name}: stderr identical")
    return out


def maps_of(argv, name):
    out = ctlib.tmpdir("maps")
    p = ctlib.run_traced(argv, out)
    maps = p.stdout.decode()
    check(p.returncode == 0, f"{name} printed its maps")
    check("libcryptrace" in maps, f"{name}: the preload is mapped (so the check means something)")
    check("libcrypto" not in maps, f"{name}: no libcrypto in its /proc/self/maps")
    return out


def says_nothing_seen(out, name):
    p = ctlib.run([ctlib.CRYPTRACE, "report", out])
    text = p.stdout.decode() + p.stderr.decode()
    check(p.returncode == 0, f"{name}: report exited 0")
    check("no crypto calls were seen" in text, f"{name}: report says no crypto calls were seen")
    rc, doc, _ = ctlib.report([out])
    check(rc == 0 and not doc.get("paths"), f"{name}: JSON report has no paths")


def test():
    ls = ctlib.need_program("ls")
    cat = ctlib.need_program("cat")
    python3 = ctlib.need_program("python3")
    says_nothing_seen(same_output([ls, "-la", "/usr"], "ls"), "ls")
    says_nothing_seen(same_output([python3, "-c", "pass"], "python3"), "python3")
    maps_of([cat, "/proc/self/maps"], "cat")
    maps_of([python3, "-c", "print(open('/proc/self/maps').read())"], "python3")


ctlib.main(test)
