#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""borgbackup (Debian's borg 1.2, OpenSSL through its own C extension): `borg create` of 16 MiB
of random data into a repokey repository (AES-256-CTR + HMAC-SHA256), under cryptrace. borg's
own --json statistics give the numbers: the aes-256-ctr encrypt path carries at least the
deduplicated size it reports (chunks are encrypted after compression; the rest is metadata, at
most 1% + 64 KiB more) in at least one call per unique chunk; no warning, no error. Only cipher
calls are measured: the share line says "cipher calls" (borg's HMAC-SHA256 over the same data is
not in it); the CPU profile shows the SHA-256 code beside the AES, and, from its call stacks,
the share of it under HMAC (borg's id hash, `hmac.digest` -> libcrypto's HMAC, its key's
PBKDF2, its chunks' MAC through HMAC_Update) as HMAC-SHA256. Under OPENSSL_ia32cap masking AES-NI: software-aes naming the mask."""
import json
import os
import re

import ctlib
from ctlib import check, daemons

DATA = 16 * ctlib.MIB


def test():
    borg = ctlib.need_program("borg")
    tmp = ctlib.tmpdir("real-borg")
    src = os.path.join(tmp, "src")
    os.mkdir(src)
    daemons.random_file(os.path.join(src, "data.bin"), DATA)
    env = dict(os.environ, BORG_PASSPHRASE="corpus-passphrase", BORG_BASE_DIR=os.path.join(tmp, "base"),
               BORG_RELOCATED_REPO_ACCESS_IS_OK="yes", BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK="yes")
    ctlib.secret("borg passphrase", b"corpus-passphrase")

    def create(tag, env):
        repo = os.path.join(tmp, f"repo-{tag}")
        p = ctlib.run([borg, "init", "--encryption=repokey", repo], env=env)
        check(p.returncode == 0, f"{tag}: borg init ({p.stderr.decode(errors='replace')[-200:]})")
        p, doc, out = ctlib.traced(f"borg-{tag}", [borg, "create", "--json", f"{repo}::a1", src],
                                     env=env)
        check(p.returncode == 0, f"{tag}: borg create exited 0 under cryptrace "
              f"({p.stderr.decode(errors='replace')[-300:]})")
        stats = json.loads(p.stdout)
        return doc, out, stats

    def clean():
        # borg's HMAC-SHA256 over 2 x 16 MiB is ~20 ms of CPU: the profile samples at 4 kHz
        doc, out, stats = create("clean", dict(env, CRYPTRACE_PROFILE_HZ="4000"))
        dedup = stats["archive"]["stats"]["deduplicated_size"]
        chunks = stats["cache"]["stats"]["total_unique_chunks"]
        calls, nbytes = ctlib.totals(doc, cipher="aes-256-ctr", dir="encrypt")
        check(dedup >= DATA and dedup <= nbytes <= dedup * 1.01 + 65536,
              f"aes-256-ctr encrypt carries borg's deduplicated {dedup} bytes ({nbytes})\n"
              f"{ctlib.describe_paths(doc)}")
        check(calls >= chunks, f"at least one encrypt call per unique chunk ({calls} >= {chunks})")
        ctlib.check_complete(doc, "borg")
        ctlib.check_clean(doc, "borg")
        text = ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout.decode()
        check("Cipher-call share per process" in text and "cipher calls" in text and
              ", crypto " not in text, "the share says cipher calls, not crypto")
        # what the cipher-call share leaves out, the profile shows: HMAC-SHA256 beside the AES
        why = ctlib.profile_refused(doc)
        if why:
            print(f"skip the profile check: this machine takes no CPU profile ({why})")
            return
        cats = {i["category"] for pr in doc["processes"] for i in (pr.get("profile") or {}).get("items", [])}
        check("SHA-256" in cats and "AES" in cats, f"the profile shows borg's SHA-256 and AES ({cats})")
        items = [i for pr in doc["processes"] for i in (pr.get("profile") or {}).get("items", [])]
        hmac = sum(i["samples"] for i in items if i["category"] == "SHA-256" and i.get("via") == "HMAC")
        sha = sum(i["samples"] for i in items if i["category"] == "SHA-256")
        stacked = any((pr.get("profile") or {}).get("stacks") for pr in doc["processes"])
        if not stacked:
            notes = {(pr.get("profile") or {}).get("stacks_note") for pr in doc["processes"]}
            print(f"skip the HMAC-SHA256 check: the profile has no call stacks ({notes})")
            return
        # all of borg's SHA-256 is HMAC: its id hash (Python's hmac.digest -> libcrypto's HMAC),
        # its key's PBKDF2, and the MAC over each encrypted chunk (its Cython module calls
        # HMAC_Update, which tail-calls the digest: named by the caller's PLT call). A third of
        # the samples is the last kind: at least 3/4 must show as HMAC
        check(hmac >= 0.75 * sha and re.search(r"%\s+HMAC-SHA256\s+SHA", text),
              f"the profile shows the HMAC-SHA256 share ({hmac} of {sha} SHA-256 samples)")

    def masked():
        if not ctlib.cpu_has_aes():
            print("skip masked case: this CPU has no AES-NI")
            return False
        doc, _, _ = create("masked", ctlib.masked_env(env))
        f = ctlib.check_masked(doc, "borg")
        check("aes-256-ctr encrypt" in f["message"], f"names the bulk path: {f['message'][:200]}")

    ctlib.run_cases([("clean", clean), ("masked", masked)])


ctlib.main(test)
