#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two packaged programs that do AES without OpenSSL, under cryptrace:
  gpg --symmetric --cipher-algo AES256 (libgcrypt, whose cipher calls are hooked: one
      aes-256-cfb gcrypt path with the OpenPGP stream's exact bytes; gpg starts gpg-agent,
      stopped afterwards with gpgconf --kill so that its trace ends too),
  qpdf --encrypt ... 256 (AES-256 through GnuTLS, qpdf's crypto provider on Debian, whose cipher
      calls are hooked: its paths, api gnutls).
No nothing-intercepted, no warning, no error; the outputs decrypt.
With the CPU profile at 4 kHz, gpg --symmetric --cipher-algo AES256 on 32 MiB (not compressed):
the profile names libgcrypt's AES code, AES-NI or VAES on a CPU with AES, and agrees with the
hooked calls' time (the report's hooks_check); and with intel-aesni
in /etc/gcrypt/hwf.deny (libgcrypt's only switch for its hardware features, written in a private
mount namespace over an overlay of /etc, so that nothing else on the machine sees it): its
software AES (vpaes, SSSE3), and software-aes names libgcrypt and hwf.deny's fix."""
import os
import platform
import time

import ctlib
from ctlib import check, daemons
from ctlib.gcrypt import gpg_overhead, hwf_deny_wrap


def pw_file(tmp, pw):
    path = os.path.join(tmp, "qpdf.pw")
    with open(path, "w") as f:
        f.write(pw + "\n")
    return path


def gpg_symmetric(tmp, tag, src, pw, extra=(), env_extra=None, wrap=()):
    """gpg --symmetric --cipher-algo AES256 of src under the launcher, in a GNUPGHOME of its own
    (wrap: a command the launcher runs inside); stops the agent gpg started and waits for its
    trace to end. Returns the report and the encrypted file."""
    home = os.path.join(tmp, f"gnupg-{tag}")
    os.mkdir(home, 0o700)
    env = dict(os.environ, GNUPGHOME=home, **(env_extra or {}))
    enc = os.path.join(tmp, f"{tag}.gpg")
    argv = ["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase-file", pw,
            "--symmetric", "--cipher-algo", "AES256"] + list(extra) + ["-o", enc, src]
    out = ctlib.tmpdir(f"real-{tag}")
    cmd = list(wrap) + [ctlib.CRYPTRACE, "run", "-q", "-o", out, "--"] + argv
    p = ctlib.run(cmd, env=env)
    check(p.returncode == 0, f"{tag}: gpg --symmetric exited 0 "
          f"({p.stderr.decode(errors='replace')[-300:]})")
    # the agent gpg started lives on: stop it, then wait for its trace to end
    ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
    deadline = time.monotonic() + 20
    while True:
        doc = ctlib.report_ok([out])
        if all(pr["status"] == "complete" for pr in doc["processes"]) or \
           time.monotonic() > deadline:
            break
        time.sleep(0.2)
    ctlib.check_complete(doc, tag)
    return doc, enc, env


def gcrypt_aes(doc, tag):
    """gpg's AES lines in libgcrypt (the profile of the gpg process)."""
    procs = [pr for pr in doc["processes"] if pr["exe"].endswith("/gpg") and
             (pr.get("profile") or {}).get("samples")]
    check(procs, f"{tag}: gpg was profiled ({[pr['exe'] for pr in doc['processes']]})")
    prof = max(procs, key=lambda pr: pr["profile"]["samples"])["profile"]
    aes = [i for i in prof["items"] if i["category"] == "AES" and i["module"].startswith("libgcrypt.so.20")]
    print(f"{tag}: {prof['samples']} samples; AES in libgcrypt: "
          f"{[(i['impl'], i['function'], i['samples']) for i in aes]}")
    # the hooked gcry_cipher_* calls' CPU against the profile's libgcrypt cipher code
    hc = prof.get("hooks_check")
    check(hc and hc["agree"] and hc["hooked_module"] == "libgcrypt",
          f"{tag}: the hooks and the profile agree on libgcrypt's cipher calls ({hc})")
    return prof, aes


def test():
    tmp = ctlib.tmpdir("real-gpg-qpdf")
    src = os.path.join(tmp, "plain.bin")
    daemons.random_file(src, 4 * ctlib.MIB)
    # from a file: a passphrase on the command line would sit in the trace's argv
    pw = os.path.join(tmp, "passphrase")
    with open(pw, "w") as f:
        f.write("Kq7-vR2m-Wx9z\n")
    ctlib.secret("gpg passphrase", b"Kq7-vR2m-Wx9z")  # no word argv also holds

    def need_gpg():
        if ctlib.asan_runtime():
            print("skip gpg case in the sanitizer pass: gpg hangs with the ASan runtime in "
                  "LD_PRELOAD, even with no cryptrace loaded (`gpg --version`)")
            return False
        return ctlib.need_program("gpg") and ctlib.need_program("gpgconf")

    def gpg():
        if not need_gpg():
            return False
        # not compressed: the bytes encrypted are then the file's and OpenPGP's own
        doc, enc, env = gpg_symmetric(tmp, "gpg", src, pw, ["--compress-algo", "none"])
        dec = ctlib.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase-file", pw,
                         "-d", enc], env=env)
        ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
        with open(src, "rb") as f:
            check(dec.returncode == 0 and dec.stdout == f.read(), "gpg -d gives the plaintext back")
        # libgcrypt's cipher calls are hooked: one AES-256-CFB path with the OpenPGP stream's
        # bytes (tests/gcrypt/gcrypt.py derives the overhead), and nothing to say about it
        paths = [x for x in doc["paths"] if x["api"] == "gcrypt"]
        want = os.path.getsize(src) + gpg_overhead(os.path.basename(src))
        check(len(paths) == 1 and paths[0]["cipher"] == "aes-256-cfb" and paths[0]["dir"] == "encrypt"
              and paths[0]["bytes"] == want, f"gpg: one aes-256-cfb encrypt gcrypt path of {want} bytes\n"
              f"{ctlib.describe_paths(doc)}")
        check("nothing-intercepted" not in ctlib.kinds(doc), "gpg: no nothing-intercepted")
        ctlib.check_clean(doc, "gpg")

    def qpdf():
        if not ctlib.need_program("qpdf"):
            return False
        pdf, enc = os.path.join(tmp, "in.pdf"), os.path.join(tmp, "out.pdf")
        content = b"BT /F1 12 Tf 20 100 Td (corpus) Tj ET\n" * 20000
        objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
                b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"]
        body, offs = b"%PDF-1.4\n", []
        for i, o in enumerate(objs):
            offs.append(len(body))
            body += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
        xref = len(body)
        body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
        body += b"".join(b"%010d 00000 n \n" % o for o in offs)
        body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
        with open(pdf, "wb") as f:
            f.write(body)
        # the passwords from an argument file (qpdf @FILE), not the traced command line
        args = os.path.join(tmp, "qpdf.args")
        with open(args, "w") as f:
            f.write(f"--encrypt\ncorpus-user\ncorpus-owner\n256\n--\n{pdf}\n{enc}\n")
        ctlib.secret("qpdf password", b"corpus-owner")
        p, doc, _ = ctlib.traced("qpdf", ["qpdf", f"@{args}"])
        check(p.returncode == 0, f"qpdf --encrypt exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
        chk = ctlib.run(["qpdf", "--password-file=" + pw_file(tmp, "corpus-user"), "--check", enc])
        check(chk.returncode == 0 and b"R = 6" in chk.stdout,
              f"qpdf --check reads the AES-256 (R=6) file back ({chk.stdout[-200:]!r})")
        ctlib.check_complete(doc, "qpdf")
        # GnuTLS's cipher API is hooked: the file's AES-256-CBC and R=6's password hash (AES-128-CBC
        # rounds) are paths of api gnutls, named by the code GnuTLS ran
        check("nothing-intercepted" not in ctlib.kinds(doc), "qpdf: its GnuTLS calls are intercepted")
        for cipher, bits in (("aes-256-cbc", 256), ("aes-128-cbc", 128)):
            got = ctlib.paths(doc, api="gnutls", cipher=cipher, dir="encrypt")
            check(len(got) == 1 and got[0]["key_bits"] == bits and got[0]["calls"] > 0 and
                  got[0]["bytes"] % 16 == 0, f"qpdf: one gnutls {cipher} encrypt path, "
                  f"{bits}-bit, whole blocks ({ctlib.describe_paths(doc)})")
            want = "gnutls:aesni" if ctlib.cpu_has_aes() and platform.machine() == "x86_64" else None
            check(want is None or got[0]["impl"] == want,
                  f"qpdf: {cipher} runs in {want} ({got[0]['impl']})")
        ctlib.check_clean(doc, "qpdf")

    def gpg_profile():
        if not need_gpg():
            return False
        big = os.path.join(tmp, "big.bin")
        daemons.random_file(big, 32 * ctlib.MIB)
        # 4 kHz: AES-NI takes ~30 ms of the run (the passphrase's S2K hashing most of the rest)
        hz = {"CRYPTRACE_PROFILE_HZ": "4000"}
        doc, _, _ = gpg_symmetric(tmp, "gpg-prof", big, pw, ["--compress-algo", "none"], hz)
        why = ctlib.profile_refused(doc)
        if why:
            print(f"skip the profile case: this machine takes no CPU profile ({why})")
            return False
        prof, aes = gcrypt_aes(doc, "gpg-prof")
        if not ctlib.cpu_has_aes():
            check(aes, "gpg-prof: libgcrypt's AES named")
            print("skip the AES-NI and hwf.deny checks: this CPU has no AES instructions")
            return
        hw = [i for i in aes if i["impl"].startswith(("AES-NI", "VAES"))]
        check(sum(i["samples"] for i in hw) >= 10,
              f"gpg-prof: libgcrypt's AES is named by its instructions, AES-NI or VAES ({aes})")
        check("software-aes" not in ctlib.kinds(doc), "gpg-prof: no software-aes")
        ctlib.check_clean(doc, "gpg-prof")
        wrap = hwf_deny_wrap(tmp)
        if not wrap:
            return
        doc, _, _ = gpg_symmetric(tmp, "gpg-hwf", big, pw, ["--compress-algo", "none"], hz, wrap)
        prof, aes = gcrypt_aes(doc, "gpg-hwf")
        check(all(not i["impl"].startswith(("AES-NI", "VAES")) for i in aes if i["samples"] > 2),
              f"gpg-hwf: no AES-NI code ran ({aes})")
        soft = [i for i in aes if i["impl"].startswith(("vpaes", "tables"))]
        check(sum(i["samples"] for i in soft) >= 20,
              f"gpg-hwf: libgcrypt's software AES is named ({aes})")
        f = ctlib.finding(doc, "software-aes")
        check("libgcrypt" in f["message"] and "hwf.deny" in f["fix"] and "intel-aesni" in f["fix"],
              f"gpg-hwf: software-aes names libgcrypt and hwf.deny: {f['message'][:300]} / {f['fix']}")

    ctlib.run_cases([("gpg", gpg), ("gpg profile", gpg_profile), ("qpdf", qpdf)])


ctlib.main(test)
