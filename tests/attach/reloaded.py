#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A module is patched only once the loader has relocated it (docs/attach.md, gotpatch.c): while
attached, `reloaded` (reloaded.c) loads and unloads a module that takes milliseconds to relocate
(reloc_module.c) for SECONDS, sealing 16 bytes through it each time, so that the flusher's polls
find it in the loader's list mid-relocation; then it loads it once more and seals SEALS x SIZE
bytes with AES-128-GCM through it after the flusher's next poll. Both ways of binding (dlopen
RTLD_NOW, RTLD_LAZY): the program ends normally, its ciphertexts are the bare run's, and every
GCM byte is counted. A slot patched mid-relocation was undone by the loader (RTLD_NOW: those
calls were lost) or shifted by the module's load address (RTLD_LAZY: the program crashed)."""
import os
import subprocess

import ctlib
from ctlib import attach, check

SEALS, SIZE = 16, 65536  # as reloaded.c
SECONDS = "2.5"


def run_bare(mode):
    p = subprocess.run([os.environ["CT_RELOADED"], os.environ["CT_RELOC_MODULE"], "0.2", mode],
                       input=b"\n\n", stdout=subprocess.PIPE, env=ctlib.bare_env(), timeout=120)
    check(p.returncode == 0, f"the bare run ({mode}) ended 0 ({p.returncode})")
    return p.stdout.decode().split()[-1]


def case(mode):
    want = run_bare(mode)
    out = ctlib.tmpdir(f"attach-reloaded-{mode}")
    sealed, pid = attach.attached_between_lines(
        [os.environ["CT_RELOADED"], os.environ["CT_RELOC_MODULE"], SECONDS, mode], out,
        r"sealed (\d+) ([0-9a-f]{16})", f"reloaded ({mode})")
    loads, got = sealed.groups()
    check(got == want, f"{mode}: the ciphertexts are the bare run's ({got}), after {loads} loads")
    paths = attach.evp_gcm_paths(ctlib.report_ok([out]), pid)
    enc = paths.get(("aes-128-gcm", "encrypt"), (0, 0))
    check(enc[1] == SEALS * SIZE,
          f"{mode}: every seal through the module loaded last is counted: {enc[1]} == "
          f"{SEALS * SIZE} bytes")


def test():
    attach.need_attach()
    for mode in ("now", "lazy"):
        case(mode)


ctlib.main(test)
