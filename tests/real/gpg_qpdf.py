#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two packaged programs that do AES without OpenSSL, under cryptrace:
  gpg --symmetric --cipher-algo AES256 (libgcrypt; gpg starts gpg-agent, stopped afterwards
      with gpgconf --kill so that its trace ends too),
  qpdf --encrypt ... 256 (AES-256 through GnuTLS, qpdf's crypto provider on Debian).
The report must name the library that did the work (libgcrypt, GnuTLS), say cryptrace does not
hook it, and keep it at info with nothing to change: a distribution's program doing its own
crypto is not a defect. No warning, no error; the outputs decrypt."""
import os
import time

import ctlib
from ctlib import check, daemons


def named(doc, tag, lib, pkg):
    f = ctlib.finding(doc, "nothing-intercepted")
    check(f["severity"] == "info", f"{tag}: nothing-intercepted is info ({f['severity']})")
    check(f"it used {lib} (" in f["message"] and "which cryptrace does not hook" in f["message"],
          f"{tag}: names {lib}: {f['message'][:300]}")
    check("Nothing to change here" in f["fix"] and f"package {pkg}" in f["fix"],
          f"{tag}: nothing to change in a packaged program: {f['fix']}")
    ctlib.check_clean(doc, tag)
    return f


def pw_file(tmp, pw):
    path = os.path.join(tmp, "qpdf.pw")
    with open(path, "w") as f:
        f.write(pw + "\n")
    return path


def test():
    tmp = ctlib.tmpdir("real-gpg-qpdf")
    src = os.path.join(tmp, "plain.bin")
    daemons.random_file(src, 4 * ctlib.MIB)

    def gpg():
        if ctlib.asan_runtime():
            print("skip gpg case in the sanitizer pass: gpg hangs with the ASan runtime in "
                  "LD_PRELOAD, even with no cryptrace loaded (`gpg --version`)")
            return False
        if not ctlib.need_program("gpg") or not ctlib.need_program("gpgconf"):
            return False
        home = os.path.join(tmp, "gnupg")
        os.mkdir(home, 0o700)
        env = dict(os.environ, GNUPGHOME=home)
        enc = os.path.join(tmp, "plain.gpg")
        # from a file: a passphrase on the command line would sit in the trace's argv
        pw = os.path.join(tmp, "passphrase")
        with open(pw, "w") as f:
            f.write("Kq7-vR2m-Wx9z\n")
        ctlib.secret("gpg passphrase", b"Kq7-vR2m-Wx9z")  # no word argv also holds
        argv = ["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase-file", pw,
                "--symmetric", "--cipher-algo", "AES256", "-o", enc, src]
        out = ctlib.tmpdir("real-gpg")
        p = ctlib.run_traced(argv, out, env=env)
        check(p.returncode == 0, f"gpg --symmetric exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
        # the agent gpg started lives on: stop it, then wait for its trace to end
        ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
        deadline = time.monotonic() + 20
        while True:
            doc = ctlib.report_ok([out])
            if all(pr["status"] == "complete" for pr in doc["processes"]) or \
               time.monotonic() > deadline:
                break
            time.sleep(0.2)
        ctlib.check_complete(doc, "gpg")
        dec = ctlib.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase-file", pw,
                         "-d", enc], env=env)
        ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
        with open(src, "rb") as f:
            check(dec.returncode == 0 and dec.stdout == f.read(), "gpg -d gives the plaintext back")
        check(not doc["paths"], "gpg: no cipher path (libgcrypt is not hooked)")
        named(doc, "gpg", "libgcrypt", "gpg")

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
        named(doc, "qpdf", "GnuTLS", "qpdf")

    ctlib.run_cases([("gpg", gpg), ("qpdf", qpdf)])


ctlib.main(test)
