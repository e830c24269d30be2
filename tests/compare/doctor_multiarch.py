# SPDX-License-Identifier: MIT
"""doctor-multiarch: `cryptrace doctor` on a multiarch host (issue 14, item 10). Debian's real
libssl3 for arm64 and i386 (their libcrypto.so.3), fetched with apt-get download into a private apt
state (tests/port/foreign-apt.sh, as the cross builds' sysroots) and unpacked with dpkg-deb -x
(nothing is installed: installing libssl-dev:ARCH would upgrade the host's OpenSSL), plus a copy of
the host's own libcrypto, are put where the doctor looks (CRYPTRACE_DOCTOR_LIBDIRS, the test hook,
besides /usr/lib/<triplet>). The native copy is measured like any other; the foreign ones are
listed once, at info level, with their architectures, and nothing warns about them ("libcrypto
could not be measured" was the defect). The fetched files are kept in the build tree
(tests/compare/foreign-libssl3) for the next run; without apt or network the test skips and says
so."""
import glob
import os
import shutil
import subprocess

import ctlib
from ctlib import check

ARCHES = {"arm64": "aarch64", "i386": "i386"}


def fetch(cache):
    """{deb arch: unpacked libcrypto.so.3}, fetching what the cache lacks."""
    found = {a: glob.glob(os.path.join(cache, a, "usr", "lib", "*", "libcrypto.so.3"))
             for a in ARCHES}
    missing = [a for a, f in found.items() if not f]
    if missing:
        dpkg = shutil.which("dpkg-deb")
        # apt's own environment: no sanitizer runtime preloaded (the sanitizer pass sets one)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
        if not shutil.which("apt-get") or not dpkg:
            ctlib.skip("apt-get/dpkg-deb missing: cannot fetch Debian's libssl3 for " + ", ".join(missing))
        # the cross builds' apt (a private state per architecture, the host's sources; a mirror
        # caught mid-sync in a -security or -updates suite leaves the base suite's lists)
        foreign_apt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "port",
                                   "foreign-apt.sh")
        debs = os.path.join(cache, "debs")
        os.makedirs(debs, exist_ok=True)
        for a in missing:
            p = subprocess.run([foreign_apt, a, os.path.join(cache, "apt-" + a), "apt-get", "download",
                                f"libssl3:{a}"], cwd=debs, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=900, env=env)
            if p.returncode != 0:
                ctlib.skip(f"apt-get download libssl3:{a} (tests/port/foreign-apt.sh) failed: no network? "
                           f"{p.stdout.strip()[-200:]}")
        for a in missing:
            deb = glob.glob(os.path.join(debs, f"libssl3_*_{a}.deb"))
            check(len(deb) == 1, f"downloaded {os.path.basename(deb[0]) if deb else None}")
            subprocess.run([dpkg, "-x", deb[0], os.path.join(cache, a)], check=True, env=env)
        found = {a: glob.glob(os.path.join(cache, a, "usr", "lib", "*", "libcrypto.so.3"))
                 for a in ARCHES}
    check(all(found.values()), f"Debian's libcrypto.so.3 for {', '.join(ARCHES)}: "
          f"{[f[0] for f in found.values() if f]}")
    return {a: f[0] for a, f in found.items()}


def test():
    if not shutil.which("openssl"):
        ctlib.skip("openssl is not installed")
    cache = os.path.join(os.environ.get("CT_BUILD_ROOT") or ctlib.tmpdir("multiarch-cache"),
                         "tests", "compare", "foreign-libssl3")
    libs = fetch(cache)
    native_dir = ctlib.tmpdir("multiarch-native")
    native = os.path.join(native_dir, "libcrypto.so.3")
    shutil.copy(ctlib.openssl_libcrypto(), native)  # another file: not the one openssl loads
    dirs = [os.path.dirname(p) for p in libs.values()] + [native_dir]
    env = dict(os.environ, CRYPTRACE_DOCTOR_LIBDIRS=":".join(dirs))

    doc = ctlib.parse_json(ctlib.cryptrace("doctor", "--json", env=env, text=True).stdout,
                           "doctor --json")
    foreign = [c for c in doc["checks"] if c["id"] == "libcrypto:foreign"]
    check(len(foreign) == 1 and foreign[0]["status"] == "info",
          f"one info check lists the foreign copies: {[(c['status'], c['title']) for c in foreign]}")
    f = foreign[0]
    for deb_arch, elf_arch in ARCHES.items():
        check(libs[deb_arch] in f["evidence"] and elf_arch in f["evidence"],
              f"it names {libs[deb_arch]} ({elf_arch})")
    check(f["values"]["count"] >= 2, f"count {f['values']['count']}")
    about = [c for c in doc["checks"] if c is not f and
             any(p in c["evidence"] or p in str(c["values"]) for p in libs.values())]
    check(not about, f"no other check is about them (none measured, none warned): "
          f"{[(c['id'], c['status'], c['title']) for c in about]}")
    other = [c for c in doc["checks"] if c["id"] == "libcrypto:other" and
             c["values"].get("path") == native]
    check(len(other) == 1 and other[0]["status"] == "ok" and
          other[0]["values"]["software_aes"] is False,
          f"the native copy in the same search is measured: "
          f"{[(c['status'], c['title']) for c in other]}")
    check(not [c for c in doc["checks"] if c["status"] in ("warn", "fail") and
               c["id"].startswith("libcrypto")],
          "no libcrypto warning or failure")
    text = ctlib.cryptrace("doctor", env=env, text=True).stdout
    check("could not be measured" not in text and "[info] " in text and
          "of other architectures found" in text,
          "the text: no 'could not be measured', an [info] line for the foreign copies")


ctlib.main(test)
