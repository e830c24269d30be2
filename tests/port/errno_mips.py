# SPDX-License-Identifier: MIT
"""errno_mips - a trace written on MIPS names its errors right on the host (port-mipsel calls
check_refused_afalg). MIPS numbers errno its own way (EAFNOSUPPORT is 124 there, 97 on x86, where
124 is EMEDIUMTYPE): the mipsel preload records the numbering in the trace's header and the host's
reporter names the error the program got.

The program is the mipsel examples/ AF_ALG client, run by qemu-mipsel-static with the mipsel
preload; qemu passes its socket(AF_ALG) to this host's kernel, which refuses it (EAFNOSUPPORT), and
gives the program MIPS's number for it, as a MIPS kernel would."""
import errno
import os

import ctlib
from ctlib import check


def check_refused_afalg(build, sysroot):
    refused = ctlib.afalg_refused()
    if refused != "EAFNOSUPPORT":
        print(f"errno_mips: not checked: socket(AF_ALG) on this host gives {refused or 'a socket'}, "
              "not EAFNOSUPPORT (the vm suite covers AF_ALG)")
        return
    prog = os.path.join(build, "examples", "kernel", "afalg_bench")
    preload = os.path.join(build, "preload", "libcryptrace.so")
    out = ctlib.tmpdir("port-mipsel-errno")
    qemu = ["qemu-mipsel-static", "-L", sysroot]
    args = [prog, "--count", "1", "--sizes", "16"]
    bare = ctlib.run(qemu + args, env=ctlib.bare_env(), text=True)
    traced = ctlib.run(qemu + ["-E", "LD_PRELOAD=" + preload, "-E", "CRYPTRACE_OUT=" + out] + args,
                       env=ctlib.bare_env(), text=True)
    check(bare.returncode == traced.returncode == 2 and bare.stderr == traced.stderr ==
          "socket(AF_ALG): Address family not supported by protocol\n",
          f"mipsel afalg_bench is refused AF_ALG the same, traced or not ({traced.stderr.strip()!r})")
    doc = ctlib.report_ok([out])
    abis = [p.get("errno_abi") for p in ctlib.processes(doc)]
    check(abis == ["mips"], f"the mipsel trace says its errno numbering is MIPS's ({abis})")
    ev = ctlib.events(doc, kind="call-failed", call="socket")
    check(len(ev) == 1 and ev[0]["errno_name"] == "EAFNOSUPPORT" and ev[0]["errno"] == errno.EAFNOSUPPORT,
          "the host's reporter names the mipsel program's socket(AF_ALG) errno EAFNOSUPPORT "
          f"({[(e['errno'], e['errno_name']) for e in ev]})")
    f = ctlib.finding(doc, "kernel-refused")
    check("refused with EAFNOSUPPORT" in " ".join(f["message"].split()) and "af_alg" in f["message"],
          f"kernel-refused explains EAFNOSUPPORT as on x86 ({f['message'][:200]!r})")
