#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""C++ call sites in plain words (issue 14, item 7). cxx_callsite (tests/integration) does EVP
work from vault::Sealer's two seal() overloads in a shared library (exported symbols: the
preload's dladdr names them, mangled) and from a function template in an anonymous namespace of
the executable (not exported: the reporter names it from the file's symbol table, mangled). Under
cryptrace it runs as without; the report counts what the program says it did; every output
(text, JSON, folded, HTML, Perfetto, CSV) shows the frames demangled, as `c++filt -p` reads the
same symbols, and no mangled name; JSON keeps the recorded frames in callsite_mangled."""
import os
import re
import shutil
import subprocess

import ctlib
from ctlib import check

PROG = os.environ.get("CT_CXX_CALLSITE", "")


def cxxfilt(sym):
    tool = shutil.which("c++filt")
    if not tool:
        return None
    return subprocess.run([tool, "-p", sym], stdout=subprocess.PIPE, text=True).stdout.strip()


def frames(cs):
    return cs.split("\n") if cs else []


def symbol(frame):
    """"mod!sym+0xoff" -> sym"""
    return frame.split("!", 1)[1].rsplit("+", 1)[0]


def test():
    if not PROG or not os.access(PROG, os.X_OK):
        ctlib.skip("cxx_callsite was not built (no C++ compiler at configure time: install g++)")
    key, iv = os.urandom(32), os.urandom(16)
    ctlib.secret("cxx_callsite key", key)
    ctlib.secret("cxx_callsite iv", iv)
    feed = (key.hex() + iv.hex() + "\n").encode()
    native = ctlib.run([PROG], input_bytes=feed)
    check(native.returncode == 0, f"cxx_callsite runs ({native.stderr[:200]!r})")
    out = ctlib.tmpdir("demangle")
    traced = ctlib.run_traced([PROG], out, input_bytes=feed)
    check(traced.returncode == 0 and traced.stdout == native.stdout,
          "under cryptrace: same exit status and output")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    for api, cipher, direction, calls, nbytes in ctlib.parse_expect(native.stdout.decode()):
        got = [p for p in ctlib.paths(doc, api=api, cipher=cipher, dir=direction)
               if "seal" in p["callsite"]]
        check(len(got) == 1 and got[0]["calls"] == calls and got[0]["bytes"] == nbytes,
              f"{cipher} {direction}: {calls} calls, {nbytes} B as the program says "
              f"({[(p['calls'], p['bytes']) for p in got]})")

    def path(cipher, direction):
        return [p for p in ctlib.paths(doc, api="evp", cipher=cipher, dir=direction)
                if "seal" in p["callsite"]][0]

    lib = "libcxx_vault.so"
    for cipher in ("aes-256-cbc", "aes-256-ctr"):
        p = path(cipher, "encrypt")
        shown = [f for f in frames(p["callsite"]) if f.startswith(lib + "!")]
        recorded = [f for f in frames(p["callsite_mangled"]) if f.startswith(lib + "!")]
        check(shown and shown[0].startswith(f"{lib}!vault::Sealer::seal+0x"),
              f"{cipher}: the frame reads {shown[:1]}")
        check(recorded and symbol(recorded[0]).startswith("_ZN5vault6Sealer4seal"),
              f"{cipher}: callsite_mangled keeps the symbol as recorded: {recorded[:1]}")
        filt = cxxfilt(symbol(recorded[0]))
        check(filt is None or filt == symbol(shown[0]),
              f"{cipher}: c++filt -p reads {symbol(recorded[0])} as {filt!r} too")
        check(p["created_by"]["frame"] == f"{lib}!vault::Sealer::seal" and
              p["created_by"]["module"] == lib,
              f"{cipher}: created by {p['created_by']['frame']}")
    cbc = symbol([f for f in frames(path("aes-256-cbc", "encrypt")["callsite_mangled"])
                  if f.startswith(lib)][0])
    ctr = symbol([f for f in frames(path("aes-256-ctr", "encrypt")["callsite_mangled"])
                  if f.startswith(lib)][0])
    check(cbc != ctr, f"the two overloads keep apart in callsite_mangled ({cbc}, {ctr})")

    dec = path("aes-256-cbc", "decrypt")
    exe = os.path.basename(PROG)
    shown = [f for f in frames(dec["callsite"]) if f.startswith(exe + "!")]
    recorded = [f for f in frames(dec["callsite_mangled"]) if f.startswith(exe + "!")]
    want = "(anonymous namespace)::unseal<256>"
    check(shown and symbol(shown[0]) == want,
          f"the executable's static template, named from its symbol table: {shown[:1]}")
    filt = cxxfilt(symbol(recorded[0])) if recorded else None
    check(recorded and (filt is None or filt == want),
          f"c++filt -p reads {symbol(recorded[0]) if recorded else None} as {filt!r}")

    texts = {"text": ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout,
             "json": ctlib.run([ctlib.CRYPTRACE, "report", "--json", out]).stdout,
             "folded": ctlib.run([ctlib.CRYPTRACE, "report", "--folded", out]).stdout,
             "csv": ctlib.run([ctlib.CRYPTRACE, "report", "--csv", out]).stdout}
    work = ctlib.tmpdir("demangle-out")
    for kind in ("html", "perfetto"):
        f = os.path.join(work, kind)
        check(ctlib.run([ctlib.CRYPTRACE, "report", f"--{kind}", f, out]).returncode == 0,
              f"report --{kind}")
        texts[kind] = open(f, "rb").read()
    mangled = re.compile(rb"_ZN5vault|_ZN12_GLOBAL__N")
    for kind, data in texts.items():
        if kind == "json":  # callsite_mangled holds them on purpose
            data = re.sub(rb'"callsite_mangled":"[^"]*"', b"", data)
        check(not mangled.search(data), f"report {kind}: no mangled name")
    for kind in ("text", "folded", "json"):
        check(b"vault::Sealer::seal" in texts[kind], f"report {kind} names vault::Sealer::seal")
    check(b"(anonymous namespace)::unseal<256>" in texts["folded"],
          "the folded stacks name the template too")
    text = texts["text"].decode()
    check(re.search(r"created by libcxx_vault\.so\s+\(libcxx_vault\.so!vault::Sealer::seal\)", text),
          "the text report's call sites: created by libcxx_vault.so (vault::Sealer::seal)")

    # --no-symbols: the executable's frame stays an offset; the library's, named by the
    # traced process itself, are still demangled
    p = ctlib.run([ctlib.CRYPTRACE, "report", "--json", "--no-symbols", out])
    ns = __import__("json").loads(p.stdout)
    d = [x for x in ns["paths"] if x["cipher"] == "aes-256-cbc" and x["dir"] == "decrypt" and
         exe + "+0x" in x["callsite"]]
    e = [x for x in ns["paths"] if x["cipher"] == "aes-256-cbc" and x["dir"] == "encrypt" and
         "vault::Sealer::seal" in x["callsite"]]
    check(d and e, "--no-symbols: the executable's frame as recorded, the library's demangled")


if __name__ == "__main__":
    ctlib.main(test)
