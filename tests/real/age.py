#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""age, a Go program, under cryptrace. Debian's is dynamically linked, so the preload loads, but
Go ends every program with the exit_group system call, never through libc's exit handlers: the
preload cannot write END and the report called a clean exit "incomplete". The launcher, its
parent, completes the trace (tracer/end_trace.c); the report must say complete (exit 0) with an
exit-unseen event, and nothing-intercepted (info) naming the Go crypto/aes inside the package's
executable. (A static age, as upstream ships it, gets the launcher's static-executable trace:
complete too.) Then a C program that ends the same way (exit_group_evp): after EVP work it is
incomplete with its exit status, since the work may be missing; through exit() it is complete
with its path. Last, the CPU profile of `age -e` over 128 MiB (sampled at 10 kHz): Debian's age is
stripped, and the profile names its ChaCha20-Poly1305 code by its Go function from the pclntab
(golang.org/x/crypto/chacha20poly1305.chacha20Poly1305Seal, category ChaCha20), not "+0x...",
as most of its CPU, and nothing-intercepted says what the profile saw. (`age -p`, scrypt from a
passphrase, reads the passphrase from a terminal: not run.)"""
import os
import re
import shutil

import ctlib
from ctlib import check, daemons

HELPER = os.path.join(os.environ.get("CT_REAL_BIN", ""), "exit_group_evp")


def fde_starts(path):
    """the start addresses of the functions the file's .eh_frame describes: its C code (Go's
    linker writes no FDE for Go functions)"""
    out = ctlib.run(["readelf", "--debug-dump=frames", path]).stdout.decode()
    return {int(m.group(1), 16) for m in re.finditer(r" FDE cie=\S+ pc=([0-9a-f]+)\.\.", out)}


def events(doc, call):
    return [e for e in doc["events"] if e["call"] == call]


def test():
    tmp = ctlib.tmpdir("real-age")

    def encrypt(tag, mib, env=None):
        """age -e of mib MiB under cryptrace, with a fresh key: (p, doc, key, src, enc), or None
        without age"""
        if not ctlib.need_program("age") or not ctlib.need_program("age-keygen"):
            return None
        key = os.path.join(tmp, f"{tag}.key")
        check(ctlib.run(["age-keygen", "-o", key]).returncode == 0, "age-keygen")
        src, enc = os.path.join(tmp, f"{tag}.bin"), os.path.join(tmp, f"{tag}.age")
        daemons.random_file(src, mib * ctlib.MIB)
        p, doc, _ = ctlib.traced(tag, ["age", "-e", "-i", key, "-o", enc, src], env=env)
        return p, doc, key, src, enc

    def age():
        ran = encrypt("age", 4)
        if not ran:
            return False
        p, doc, key, src, enc = ran
        check(p.returncode == 0, f"age -e exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
        dec = ctlib.run(["age", "-d", "-i", key, enc])
        with open(src, "rb") as f:
            check(dec.returncode == 0 and dec.stdout == f.read(), "age -d gives the plaintext back")
        check(len(doc["processes"]) == 1, "one process")
        proc = doc["processes"][0]
        check(proc["status"] == "complete" and proc["end_reason"] == "exit" and
              proc["exit_status"] == 0,
              f"age's trace is complete, exit 0 ({proc['status']}, {proc['end_reason']} "
              f"{proc['exit_status']})")
        unseen, static = events(doc, "exit-unseen"), events(doc, "static-executable")
        check(len(unseen) == 1 or len(static) == 1,
              f"the launcher ended the trace: exit-unseen or static-executable ({doc['events']})")
        f = ctlib.finding(doc, "nothing-intercepted")
        check(f["severity"] == "info", f"nothing-intercepted is info ({f['severity']})")
        check("Go's crypto/aes" in f["message"], f"names Go's crypto/aes: {f['message'][:300]}")
        if unseen:
            check("exited without running its exit handlers" in f["message"] and
                  "ended before its first flush" not in f["message"],
                  f"says how it ended, not 'before its first flush': {f['message'][:300]}")
            check("package age" in f["fix"], f"a packaged program: nothing to change ({f['fix']})")
        ctlib.check_clean(doc, "age")

    def exit_group():
        check(os.access(HELPER, os.X_OK), f"{HELPER} is built")
        p, doc, _ = ctlib.traced("exit-group-evp", [HELPER, "--evp", "--exit", "3"])
        check(p.returncode == 3 and b"encrypted 1048576 bytes" in p.stdout,
              f"exit_group after EVP work: status 3 passes through ({p.returncode})")
        proc = doc["processes"][0]
        check(proc["status"] == "incomplete" and proc["end_reason"] == "exit" and
              proc["exit_status"] == 3,
              f"incomplete (its work may be missing) with the exit status 3 ({proc['status']}, "
              f"{proc['end_reason']} {proc['exit_status']})")
        ev = events(doc, "exit-unseen")
        check(len(ev) == 1 and "exited with status 3 without running its exit handlers" in
              ev[0]["detail"], f"an exit-unseen event says so ({ev})")
        text = ctlib.run([ctlib.CRYPTRACE, "report", proc["file"]]).stdout.decode()
        check("incomplete (exit 3)" in text, "the text report: incomplete (exit 3)")
        p, doc, _ = ctlib.traced("exit-libc-evp", [HELPER, "--evp", "--libc", "--exit", "5"])
        proc = doc["processes"][0]
        check(p.returncode == 5 and proc["status"] == "complete" and proc["exit_status"] == 5 and
              not events(doc, "exit-unseen"),
              f"through exit(): complete, status 5, no exit-unseen ({proc['status']})")
        calls, nbytes = ctlib.totals(doc, cipher="aes-128-ctr", dir="encrypt")
        check(nbytes == 1 << 20, f"and its 1 MiB of AES-128-CTR is there ({nbytes})")

    def profile():
        # 128 MiB of ChaCha20-Poly1305 (AVX2) is ~100 ms of CPU: sampled at 10 kHz for ~1000 samples
        ran = encrypt("age-profile", 128, dict(os.environ, CRYPTRACE_PROFILE_HZ="10000"))
        if not ran:
            return False
        p, doc = ran[0], ran[1]
        check(p.returncode == 0, f"age -e of 128 MiB exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
        why = ctlib.profile_refused(doc)
        if why:
            print(f"skip the profile check: this machine takes no CPU profile ({why})")
            return
        prof = doc["processes"][0].get("profile")
        check(prof, "age was profiled")
        for i in prof["items"][:6]:
            print(f"    {i['samples']:6d}  {i['category']:9s} {i['impl']:40s} {i['module']} {i['function']}")
        seal = [i for i in prof["items"]
                if i["function"] == "golang.org/x/crypto/chacha20poly1305.chacha20Poly1305Seal"]
        check(seal and seal[0]["category"] == "ChaCha20" and seal[0]["module"] == "age" and
              "Poly1305" in seal[0]["impl"],
              f"the profile names age's ChaCha20-Poly1305 by its Go function ({prof['items'][:3]})")
        own = ctlib.program_samples(prof)
        check(seal[0]["samples"] >= 0.5 * own,
              f"and it is most of age's CPU ({seal[0]['samples']} of {own} samples; "
              f"{prof['samples'] - own} more in the sanitizer runtime and the loader)")
        # The Go code is named from the pclntab. The C that cgo links in (its thread entry, say) is
        # not in it, and stripping took its static functions' names: those print as the start
        # of their FDE, as they must. A sample caught one in the ASan pass.
        c_starts = fde_starts(shutil.which("age"))
        unnamed = [i for i in prof["items"] if i["module"] == "age" and i["function"].startswith("+0x")]
        check(c_starts, f"age's C functions found in its .eh_frame ({len(c_starts)})")
        check(not [i for i in unnamed if int(i["function"][1:], 16) not in c_starts],
              f"no Go function of age's is left as +0x..., only C without a name ({unnamed[:5]})")
        f = ctlib.finding(doc, "nothing-intercepted")
        check("ChaCha20" in f["message"], f"nothing-intercepted says the profile saw ChaCha20: {f['message'][:400]}")

    ctlib.run_cases([("age", age), ("exit_group", exit_group), ("profile", profile)])


ctlib.main(test)
