#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Early and late loading. (1) A library linked into the program runs EVP work in its constructor,
before the preload's own constructor ran: those calls are counted exactly, as are main's. (2) A
program not linked with libcrypto dlopens (RTLD_LOCAL) a plugin that is: the plugin's calls are
counted exactly. (3) EVP functions taken with dlsym on a libcrypto handle bypass every preload:
the program still runs unchanged, and the trace shows libcrypto loaded (documented limitation in
docs/reliability.md). (4) Two libcrypto instances in one process (a copy loaded RTLD_LOCAL from
another directory): both are listed in the process's crypto_libs, and the multiple-libcrypto
finding names both (the calls made through the copy are not in the trace)."""
import os
import shutil

import ctlib
from ctlib import check


def early():
    out = ctlib.tmpdir("early")
    p = ctlib.run([ctlib.built("CT_REL_BIN", "rel_early")], env=ctlib.preload_env(out))
    check(p.returncode == 0, f"rel_early exit 0 ({p.returncode}) {p.stderr.decode()[:200]}")
    doc = ctlib.report_ok(ctlib.traces(out))
    ctlib.check_expect(doc, p.stdout.decode(), "constructor before ours + main: ")


def late():
    out = ctlib.tmpdir("late")
    second = os.path.join(ctlib.tmpdir("second"), "libcrypto.so.3")
    src = ctlib.system_library("libcrypto.so.3")
    if not src:
        ctlib.skip("no libcrypto.so.3 in this machine's library directories to copy")
    shutil.copy(src, second)
    plugin = os.environ.get("CT_REL_PLUGIN", "")
    bare = ctlib.run([ctlib.built("CT_REL_BIN", "rel_late"), plugin, second])
    p = ctlib.run([ctlib.built("CT_REL_BIN", "rel_late"), plugin, second], env=ctlib.preload_env(out))
    check((p.returncode, p.stdout) == (bare.returncode, bare.stdout) and p.returncode == 0,
          f"rel_late: same output and exit 0 with and without the preload ({p.returncode})")
    doc = ctlib.report_ok(ctlib.traces(out))
    ctlib.check_expect(doc, p.stdout.decode(), "plugin dlopen'd RTLD_LOCAL: ")
    direct = ctlib.totals(doc, cipher="aes-192-cbc")
    print(f"dlsym(handle) calls seen: {direct} (bypasses interposition)")
    q = ctlib.processes(doc)[0]
    check(q.get("has_libcrypto"), "the process is reported as having libcrypto")
    libs = q.get("crypto_libs", [])
    check(len(libs) == 2 and second in libs, f"both libcrypto instances listed: {libs}")
    # ... and a warning names both and says what is not seen: the 700 aes-256-cbc calls made
    # through the copy's dlsym'd functions are missing from the trace
    f = [x for x in doc["findings"] if x["kind"] == "multiple-libcrypto"]
    check(len(f) == 1 and f[0]["severity"] == "warning" and
          all(lib in f[0]["message"] for lib in libs) and
          "passed to that copy untouched and untraced" in f[0]["message"],
          f"multiple-libcrypto warns, naming both copies: {f[0]['message'][:200] if f else None}")
    check(not ctlib.paths(doc, cipher="aes-256-cbc"),
          "the second copy's aes-256-cbc calls are indeed not in the trace")


def test():
    early()
    late()


ctlib.main(test)
