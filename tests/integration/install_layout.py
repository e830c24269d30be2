#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`meson install` puts the command, the library, the man page and the docs where they belong,
and the installed command looks for the library exactly where it was installed. The build is
staged with --destdir (nothing touches the real system); the staged command is then run with
CRYPTRACE_LIB unset, so it must name the install dir, and with the library found there."""
import os
import re

import ctlib
from ctlib import check


def test():
    meson = ctlib.need_program("meson")
    build = os.environ.get("CT_BUILD_ROOT", "")
    if not build or not os.path.isdir(os.path.join(build, "meson-info")):
        ctlib.skip("CT_BUILD_ROOT is not a meson build dir")
    stage = ctlib.tmpdir("install")
    p = ctlib.run([meson, "install", "-C", build, "--no-rebuild", "--destdir", stage])
    check(p.returncode == 0, f"meson install --destdir succeeded: {(p.stdout + p.stderr).decode()[-300:]}")

    found = {}
    for root, _, files in os.walk(stage):
        for f in files:
            found.setdefault(f, []).append(os.path.join(root, f))
    check("cryptrace" in found, "the cryptrace command is installed")
    exe = next(f for f in found["cryptrace"] if f.endswith("/bin/cryptrace"))
    check("libcryptrace.so" in found, "the preload is installed")
    lib = found["libcryptrace.so"][0]
    check(os.path.basename(os.path.dirname(lib)) == "cryptrace",
          f"the preload lives in <libdir>/cryptrace/: {lib[len(stage):]}")
    check(any(f.endswith("man1/cryptrace.1") for f in found.get("cryptrace.1", [])),
          "the man page is installed in man1")
    check("README.md" in found, "the README is installed with the docs")

    # The staged command does not find a library in the build tree (none next to it); it must
    # look in the install dir, the one where meson put the library (minus the stage prefix).
    libdir = os.path.dirname(lib)[len(stage):]
    env = dict(os.environ)
    env.pop("CRYPTRACE_LIB", None)
    p = ctlib.run([exe, "run", "-o", ctlib.tmpdir("install-run"), "--", "true"], env=env)
    if os.path.exists(os.path.join(libdir, "libcryptrace.so")):
        check(p.returncode == 0, "a real installation exists: the installed command runs")
    else:
        err = p.stderr.decode()
        check(p.returncode == 2 and libdir + "/libcryptrace.so" in err,
              f"the installed command looks in the install dir: {err.strip()[:200]}")

    # With the staged library named explicitly the staged command traces as usual.
    env["CRYPTRACE_LIB"] = lib
    out = ctlib.tmpdir("install-trace")
    p = ctlib.run([exe, "run", "-q", "-o", out, "--", "true"], env=env)
    check(p.returncode == 0 and ctlib.traces(out), "the installed pieces trace a program")
    check(re.match(r"cryptrace \d", ctlib.run([exe, "--version"]).stdout.decode()) is not None,
          "the installed --version names the command")


ctlib.main(test)
