#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Call-site frames in static functions: the preload can only print them as "module+0xoff"
(dladdr sees exported symbols); the trace names the module's file and build id, and `cryptrace
report` looks the function up in the file's symbol table: examples/evp_threads sets up its
contexts in its static worker(), so the report must say `evp_threads!worker`. With
--no-symbols, or when the file at that path is no longer the one traced (another build id),
the frame stays as recorded."""
import json
import os
import shutil

import ctlib
from ctlib import check


def creators(outdir, *opts):
    p = ctlib.run([ctlib.CRYPTRACE, "report", "--json", *opts, outdir])
    check(p.returncode == 0, f"report {' '.join(opts)} exits 0 ({p.stderr.decode()[:200]})")
    doc = json.loads(p.stdout.decode())
    frames = set()
    for q in doc["paths"]:
        if q["cipher"].startswith("aes") and q["api"] == "evp" and q["calls"]:
            frames.add((q.get("created_by") or {}).get("frame"))
            for s in (q.get("creators") or {}).get("sites", []):
                frames.add(s.get("frame"))
    return frames, doc


def test():
    tmp = ctlib.tmpdir("symbols")
    prog = os.path.join(tmp, "evp_threads")
    shutil.copy2(ctlib.example("evp_threads"), prog)  # a copy we may replace afterwards
    out = os.path.join(tmp, "t")
    p = ctlib.run_traced([prog], out)
    check(p.returncode == 0, "evp_threads ran under cryptrace")

    named, doc = creators(out)
    check(named == {"evp_threads!worker"}, f"the creators are named evp_threads!worker ({named})")
    raw, _ = creators(out, "--no-symbols")
    check(raw and all(f and f.startswith("evp_threads+0x") for f in raw),
          f"--no-symbols keeps the recorded frames ({raw})")
    text = ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout.decode()
    check("evp_threads!worker" in text, "the text report names the function too")

    # the file at the traced path is now another program: its symbols must not be used
    shutil.copy2(os.environ["CT_EVP_LENGTHS"], prog)
    stale, _ = creators(out)
    check(stale == raw, f"a different build id at the traced path: frames stay raw ({stale})")
    # ... or a damaged one: the ELF header and program headers, section headers past its end
    shutil.copy2(ctlib.example("evp_threads"), prog)
    with open(prog, "r+b") as f:
        f.truncate(4096)
    cut, _ = creators(out)
    check(cut == raw, f"a truncated file at the traced path: frames stay raw ({cut})")
    os.unlink(prog)
    os.mkfifo(prog)  # never opened for reading in a way that blocks
    fifo, _ = creators(out)
    check(fifo == raw, f"a FIFO at the traced path is not read ({fifo})")


ctlib.main(test)
