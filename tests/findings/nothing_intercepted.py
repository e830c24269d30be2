#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nothing-intercepted says why, from the process and from a look inside its executable:
  /bin/busybox (busybox-static)  -> the launcher writes the trace file the preload cannot (header
                                    with pid, exe, argv; a static-executable event; END with the
                                    exit status); the report exits 0 with nothing-intercepted
                                    (info) saying it is statically linked, holding no crypto
  static_evp (-static, libcrypto.a)
                                 -> the same, as a warning naming the OpenSSL linked into it
  libcrypto_a_evp (dynamic exe, libcrypto.a linked in)
                                 -> the preload's own trace sees no call; nothing-intercepted
                                    (warning) names the statically linked OpenSSL
  a static program whose file is gone when the report runs
                                 -> "not on this host", and what the launcher found then
The OpenSSL programs are built by meson only where libcrypto.a (and a static libc) exist: their
part skips with the reason, and busybox's skips without busybox-static (77 if neither ran)."""
import os
import re
import shutil
import stat

import ctlib
from ctlib import check

BIN = os.environ.get("CT_FINDINGS_BIN", "")


def nothing(doc):
    f = [x for x in doc["findings"] if x["kind"] == "nothing-intercepted"]
    check(len(f) == 1, f"one nothing-intercepted finding ({[x['kind'] for x in doc['findings']]})")
    return f[0]


def report_nothing(tag, out):
    rc = ctlib.run([ctlib.CRYPTRACE, "report", out])
    check(rc.returncode == 0, f"{tag}: cryptrace report DIR exits 0 ({rc.returncode}: "
                              f"{rc.stderr.decode()[-200:]})")
    check(b"statically linked" in rc.stdout, f"{tag}: the text report says statically linked")
    return nothing(ctlib.report_ok([out]))


def run_static(tag, argv, want_rc=0):
    out = ctlib.tmpdir(f"ni-{tag}")
    p = ctlib.run([ctlib.CRYPTRACE, "run", "-o", out, "--"] + argv)
    check(p.returncode == want_rc, f"{tag}: cryptrace run passes the exit status through "
                                   f"({p.returncode} == {want_rc})")
    files = ctlib.traces(out)
    check(len(files) == 1, f"{tag}: the launcher wrote one trace file ({os.listdir(out)})")
    mode = stat.S_IMODE(os.stat(files[0]).st_mode)
    check(mode == 0o600, f"{tag}: the trace file is 0600 like the preload's ({oct(mode)})")
    rc = ctlib.run([ctlib.CRYPTRACE, "report", out])
    check(rc.returncode == 0, f"{tag}: cryptrace report DIR exits 0 ({rc.returncode}: "
                              f"{rc.stderr.decode()[-200:]})")
    check(b"statically linked" in rc.stdout, f"{tag}: the text report says statically linked")
    doc = ctlib.report_ok([out])
    check(len(doc["processes"]) == 1 and not doc["paths"], f"{tag}: one process, no path")
    proc = doc["processes"][0]
    check(proc["exe"] == os.path.realpath(argv[0]) and proc["argv"] == argv,
          f"{tag}: header exe {proc['exe']} and argv {proc['argv']}")
    check(proc["status"] == "complete" and proc["end_reason"] == "exit" and
          proc["exit_status"] == want_rc, f"{tag}: END with exit status {proc['exit_status']}")
    check(proc["start_realtime_ns"] > 0 and proc["pid"] > 0, f"{tag}: pid and start time")
    ev = [e for e in doc["events"] if e["call"] == "static-executable"]
    check(len(ev) == 1 and ev[0]["kind"] == "trace-warning" and
          "LD_PRELOAD cannot load cryptrace" in ev[0]["detail"],
          f"{tag}: a static-executable event says why ({ev})")
    return out, doc, p


def busybox():
    bb = "/bin/busybox"
    if not os.path.exists(bb):
        print("skip busybox part: no /bin/busybox (install busybox-static)")
        return False
    out, doc, _ = run_static("busybox", [bb, "true"])
    f = nothing(doc)
    check(f["severity"] == "info", f"busybox: info (no crypto in it): {f['severity']}")
    check("statically linked, so LD_PRELOAD cannot load cryptrace into it" in f["message"],
          f"busybox: the reason is the static link: {f['message'][:200]}")
    check("holds no crypto library cryptrace recognises" in f["message"],
          f"busybox: its executable was looked at: {f['message'][-250:]}")
    run_static("busybox-false", [bb, "false"], want_rc=1)
    # -q prints nothing but still writes the file
    q = ctlib.tmpdir("ni-quiet")
    p = ctlib.run([ctlib.CRYPTRACE, "run", "-q", "-o", q, "--", bb, "true"])
    check(p.returncode == 0 and not p.stderr and len(ctlib.traces(q)) == 1,
          f"-q: silent, one trace file ({p.stderr[:100]!r})")
    return True


def openssl_inside():
    static = os.path.join(BIN, "static_evp")
    dynamic = os.path.join(BIN, "libcrypto_a_evp")
    ran = False
    for exe in (static, dynamic):
        if not os.access(exe, os.X_OK):
            print(f"skip {os.path.basename(exe)}: not built (no libcrypto.a, no static libc, or a "
                  "sanitizer build, which cannot link -static)")
    if os.access(static, os.X_OK):
        bare = ctlib.run([static])
        check(bare.returncode == 0 and bare.stdout == b"encrypted 65536 bytes\n",
              f"static_evp runs ({bare.stdout!r})")
        out, doc, p = run_static("static-evp", [static])
        check(p.stdout == bare.stdout, "static_evp: same output traced")
        f = nothing(doc)
        check(f["severity"] == "warning", f"static_evp: a warning ({f['severity']})")
        check(re.search(r"has OpenSSL [^ ]+ linked in statically", f["message"]),
              f"static_evp: names the statically linked OpenSSL: {f['message'][:400]}")
        check("crypto/evp/evp_enc.c" in f["evidence"], f"static_evp: evidence {f['evidence']}")
        check("libcrypto.so" in f["fix"], f"static_evp: the fix: {f['fix']}")
        # the same program gone from the disk by the time of the report
        d = ctlib.tmpdir("ni-gone")
        gone = os.path.join(d, "static_evp_copy")
        shutil.copy(static, gone)
        out, doc, _ = run_static("gone", [gone])
        os.unlink(gone)
        f = report_nothing("gone", out)
        check(f"executable {gone} is not on this host" in f["message"],
              f"gone: says the file is not there: {f['message'][:400]}")
        check(re.search(r"the launcher found that it carries OpenSSL [^ ]+ itself", f["message"]),
              f"gone: what the launcher found when it ran: {f['message'][-200:]}")
        check(f["severity"] == "warning", "gone: still a warning")
        ran = True
    if os.access(dynamic, os.X_OK):
        out = ctlib.tmpdir("ni-dyn")
        p = ctlib.run_traced([dynamic], out)
        check(p.returncode == 0 and p.stdout == b"encrypted 65536 bytes\n",
              f"libcrypto_a_evp runs traced ({p.stdout!r})")
        files = ctlib.traces(out)
        check(len(files) == 1 and os.path.basename(files[0]).startswith("libcrypto_a_evp."),
              f"the preload traced the dynamic program itself ({files})")
        doc = ctlib.report_ok([out])
        check(not doc["paths"], "libcrypto_a_evp: no path (its calls stay inside the file)")
        check(not any(e["call"] == "static-executable" for e in doc["events"]),
              "libcrypto_a_evp: not called static")
        f = nothing(doc)
        check(f["severity"] == "warning", f"libcrypto_a_evp: a warning ({f['severity']})")
        check("libcrypto was never loaded" in f["message"] and
              re.search(r"has OpenSSL [^ ]+ linked in statically", f["message"]),
              f"libcrypto_a_evp: no shared libcrypto, an OpenSSL inside: {f['message'][:400]}")
        # the text report's headline (the `*** no crypto calls were seen ... ***` line above
        # the tables), not only the Findings section, names the OpenSSL inside
        text = ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout.decode()
        banner = [line for line in text.splitlines()
                  if line.startswith("*** no crypto calls were seen in 1 process(es): ")]
        check(len(banner) == 1 and re.search(r"has OpenSSL [^ ]+ linked in statically \*\*\*$",
                                             banner[0]),
              f"libcrypto_a_evp: the text report's headline says so ({banner})")
        ran = True
    return ran


def test():
    ran = busybox()
    ran = openssl_inside() or ran
    if not ran:
        ctlib.skip("neither busybox-static nor a libcrypto.a program is available here")


ctlib.main(test)
