#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""engine-failed says why, on the real openssl CLI, and a config-requested engine falls back:
  openssl enc -engine nosuch            -> engine-failed with OpenSSL's own reason: the DSO error
                                           naming the engines-3/nosuch.so it could not open
  openssl speed -engine afalg (refused) -> engine-failed with socket(AF_ALG) -> the errno and the
                                           queue's "no such engine: id=afalg"
  openssl speed -engine devcrypto      -> engine-failed saying this OpenSSL is built without it
                                           (enable-devcryptoeng is off in Debian's: checked on
                                           the library), fix the afalg engine, not "install"
  OPENSSL_CONF with an afalg engine section, then openssl enc and openssl speed -evp
                                        -> engine-failed (requested by the configuration file)
                                           + silent-fallback with the software calls
The reason is read from OpenSSL's error queue with the peek functions only: openssl prints the
same errors (stderr) with and without cryptrace. The afalg and config cases need a kernel that
refuses AF_ALG (this host); where AF_ALG works they are skipped, and exit 77 if nothing ran."""
import os
import re

import ctlib
from ctlib import check

KEY = ["-K", "000102030405060708090a0b0c0d0e0f", "-iv", "0f0e0d0c0b0a09080706050403020100"]
CONF = """openssl_conf = openssl_init
[openssl_init]
engines = engine_section
[engine_section]
afalg = afalg_section
[afalg_section]
default_algorithms = ALL
init = 1
"""


def traced(tag, argv, env=None):
    out = ctlib.tmpdir(f"eng-{tag}")
    p = ctlib.run_traced(argv, out, env=env)
    doc = ctlib.report_ok([out])
    print(f"{tag}: exit {p.returncode}, findings "
          f"{[(f['kind'], f['severity']) for f in doc['findings']]}")
    return p, doc


def finding(doc, kind):
    return next((f for f in doc["findings"] if f["kind"] == kind), None)


def errors_only(stderr):
    """openssl's error lines without the thread id that starts each of them."""
    return [line.split(":", 1)[1] for line in stderr.decode(errors="replace").splitlines()
            if re.match(r"^[0-9A-F]+:error:", line)]


def unknown_engine(openssl, tmp):
    plain = os.path.join(tmp, "plain")
    with open(plain, "wb") as f:
        f.write(ctlib.plaintext(4096))
    argv = [openssl, "enc", "-engine", "nosuch", "-aes-128-cbc"] + KEY + [
        "-in", plain, "-out", os.path.join(tmp, "cipher")]
    bare = ctlib.run(argv)
    p, doc = traced("nosuch", argv)
    check(p.returncode == bare.returncode, f"same exit status traced and bare ({p.returncode})")
    want = errors_only(bare.stderr)
    check(want and errors_only(p.stderr) == want,
          f"openssl prints the same error queue with and without cryptrace ({len(want)} lines)")
    ef = finding(doc, "engine-failed")
    check(ef is not None, "unknown engine id: engine-failed")
    msg = ef["message"]
    check("(id=nosuch)" in msg, f"engine-failed names the id: {msg[:120]}")
    # the root cause as OpenSSL itself put it in its queue (this is the line openssl prints too)
    missing = [l for l in want if "nosuch.so" in l and "cannot open shared object file" in l]
    check(missing, f"openssl's own stderr names the missing module ({want[:1]})")
    so = re.search(r"filename\(([^)]*nosuch\.so)\)", missing[0]).group(1)
    check("could not load the shared library" in msg and f"filename({so})" in msg and
          "cannot open shared object file" in msg,
          f"engine-failed carries OpenSSL's DSO reason for {so}: {msg[:400]}")
    check(f"shared object {so} does not exist" in msg, "engine-failed says the module is missing")
    check("no such engine: id=nosuch" in msg, "and the newest error, ENGINE_by_id's own")
    check("OPENSSL_ENGINES" in ef["fix"], f"the fix points at the engines directory: {ef['fix']}")


def afalg_engine(openssl, refused):
    argv = [openssl, "speed", "-seconds", "1", "-bytes", "16384", "-engine", "afalg", "-evp",
            "aes-128-cbc"]
    p, doc = traced("afalg", argv)
    check(p.returncode == 0, f"openssl speed -engine afalg exits 0 ({p.returncode})")
    ef = finding(doc, "engine-failed")
    check(ef is not None, "afalg engine refused: engine-failed")
    check("family=AF_ALG" in ef["message"] and f"failed with {refused}" in ef["message"],
          f"the reason is the refused socket(AF_ALG) -> {refused}: {ef['message'][:300]}")
    check("no such engine: id=afalg" in ef["message"],
          f"with OpenSSL's queue ({ef['message'][:300]})")
    check(finding(doc, "silent-fallback") is not None, "afalg engine refused: silent-fallback")


def devcrypto_engine(openssl):
    lib = ctlib.openssl_libcrypto()
    if not lib:
        print("skip devcrypto case: no libcrypto found for openssl (ldd)")
        return
    with open(lib, "rb") as f:
        built_in = b"devcrypto" in f.read()
    module = os.path.join(os.path.dirname(lib), "engines-3", "devcrypto.so")
    if built_in or os.path.exists(module):
        print(f"skip devcrypto case: {lib} has a devcrypto engine")
        return
    argv = [openssl, "speed", "-seconds", "1", "-bytes", "16384", "-engine", "devcrypto", "-evp",
            "aes-128-cbc"]
    p, doc = traced("devcrypto", argv)
    check(p.returncode == 0, f"openssl speed -engine devcrypto exits 0 ({p.returncode})")
    ef = finding(doc, "engine-failed")
    check(ef is not None, "devcrypto engine absent: engine-failed")
    check("enable-devcryptoeng" in ef["message"] and "-engine afalg" in ef["fix"]
          and "Install the module" not in ef["fix"],
          f"devcrypto: not built, fix afalg: {ef['message'][-300:]} / {ef['fix']}")
    check(finding(doc, "silent-fallback") is not None, "devcrypto engine absent: silent-fallback")


def config_engine(openssl, refused, tmp):
    conf = os.path.join(tmp, "afalg.cnf")
    with open(conf, "w") as f:
        f.write(CONF)
    env = dict(os.environ, OPENSSL_CONF=conf)
    plain = os.path.join(tmp, "plain")
    cases = (("conf-enc", [openssl, "enc", "-aes-128-cbc"] + KEY +
              ["-in", plain, "-out", os.path.join(tmp, "cipher2")]),
             ("conf-speed", [openssl, "speed", "-seconds", "1", "-bytes", "16384", "-evp",
                             "aes-128-cbc"]))
    for tag, argv in cases:
        bare = ctlib.run(argv, env=env)
        p, doc = traced(tag, argv, env=env)
        check(p.returncode == bare.returncode == 0,
              f"{tag}: exits 0 traced and bare ({p.returncode}, {bare.returncode})")
        ef = finding(doc, "engine-failed")
        check(ef is not None, f"{tag}: the configured afalg engine fails: engine-failed")
        check(ef["message"].startswith("The OpenSSL configuration file"),
              f"{tag}: engine-failed says the configuration asked for it: {ef['message'][:120]}")
        check(f"failed with {refused}" in ef["message"],
              f"{tag}: and why (socket(AF_ALG) -> {refused})")
        sf = finding(doc, "silent-fallback")
        check(sf is not None, f"{tag}: silent-fallback")
        m = re.search(r"(\d+) cipher calls", sf["message"])
        calls, _ = ctlib.totals(doc, api="evp", impl="provider:default", cipher="aes-128-cbc")
        check(m and calls > 0 and "aes-128-cbc encrypt in provider:default" in sf["message"],
              f"{tag}: the aes-128-cbc work in the default provider fell back ({calls} calls): "
              f"{sf['message'][:200]}")


def test():
    openssl = ctlib.need_program("openssl")
    tmp = ctlib.tmpdir("eng")
    unknown_engine(openssl, tmp)
    devcrypto_engine(openssl)
    refused = ctlib.afalg_refused()
    if refused:
        afalg_engine(openssl, refused)
        config_engine(openssl, refused, tmp)
    else:
        print("skip afalg and config cases: this kernel accepts AF_ALG sockets")


ctlib.main(test)
