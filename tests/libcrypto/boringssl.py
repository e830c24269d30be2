#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/libcrypto/boringssl: cryptrace on BoringSSL's libcrypto (Debian's android-libboringssl),
through boringssl_evp (ours, linked against it: EVP AES-128-CBC/CTR/GCM and EVP_AEAD_CTX_seal/open
AES-128-GCM, each with known calls and bytes).

- clean: the program's output and exit status are the same with and without cryptrace; every
  expect line's calls and bytes are the report's, the EVP ones on entry EVP_*Update, the AEAD
  ones on entry "EVP_AEAD seal/open", AES_cbc_encrypt on AES_* and EVP_Cipher on its own; every
  EVP path is served by boringssl:<level>, the level the program's own EVP_has_aes_hardware()
  implies (aesni on a CPU with AES-NI); the process table names BoringSSL (its OpenSSL_version()
  says that and nothing more); no warning or error, and no lowlevel-api finding (BoringSSL's
  AES_* uses AES-NI, and EVP_CIPHER_fetch does not exist there).
- masked: BoringSSL honours OPENSSL_ia32cap (its EVP_has_aes_hardware() says 0 under the mask):
  the same counts, every path boringssl:vpaes (the mask leaves SSSE3), and one software-aes
  finding naming the mask. Were the mask ignored (the program says 1), the test would assert
  that no software-aes finding claims it.
- nohw: AES-NI and SSSE3 masked: boringssl:nohw, BoringSSL's constant-time C.
- two-libcryptos: the same program with OpenSSL's libcrypto also dlopen'd RTLD_LOCAL: still exact
  on BoringSSL's paths, and multiple-libcrypto says there are two copies.
- plugin: boringssl_host dlopens OpenSSL's libcrypto, then a plugin built against BoringSSL (both
  RTLD_LOCAL, as python loads its modules): the plugin's EVP_AEAD calls reach the hooks, which
  must find the real ones in the second libcrypto mapped (before that fix they failed: the plugin
  got no context); its seals are exact and BoringSSL's.
- route: `--route aes-*=aesni` cannot serve BoringSSL's EVP contexts (the route is an OpenSSL 3
  provider): the program runs the same, its contexts stay native, and each fallback event says
  why, naming BoringSSL (not "OpenSSL 1.x"); its AES_cbc_encrypt calls are served by the
  low-level route, bit-exact (the program's digest is the same)."""
import os
import re

import ctlib
from ctlib import check

NOHW_MASK = "~0x200020200000000"  # AES-NI (57), SSSE3 (41), PCLMUL (33)


def program():
    missing = os.environ.get("CT_BORINGSSL_MISSING")
    if missing:
        ctlib.skip(missing)
    prog = os.environ.get("CT_BORINGSSL_EVP", "")
    if not os.access(prog, os.X_OK):
        raise ctlib.Failure(f"{prog!r} (boringssl_evp) was not built")
    return prog


def register_secrets():
    """boringssl_evp's key, IV and plaintext (main() fills them): never in a trace."""
    ctlib.secret("boringssl_evp key", bytes((0x2B + 7 * i) & 0xFF for i in range(16)))
    ctlib.secret("boringssl_evp iv", bytes((0xF0 + i) & 0xFF for i in range(16)))
    ctlib.secret("boringssl_evp plaintext", bytes((i * 31 + 5) & 0xFF for i in range(256)))


# the program's expect api -> the report's api and entry
ENTRY = {"evp": ("evp", "EVP_*Update"), "aead": ("evp", "EVP_AEAD seal/open"),
         "aes": ("aes", "AES_*"), "raw": ("evp", "EVP_Cipher")}


def run_case(tag, prog, env, args=(), libcrypto="BoringSSL", extra=()):
    """Runs prog bare and traced under env; checks they print the same and exit the same, every
    expect line against the report, and the process's libcrypto (the first one mapped). Returns
    (report, program output)."""
    bare = ctlib.run([prog] + list(args), env=ctlib.bare_env(**env), text=True)
    check(bare.returncode == 0, f"{tag}: {os.path.basename(prog)} runs without cryptrace "
                                f"({bare.stderr[:200]})")
    out = ctlib.tmpdir(f"bssl-{tag}")
    full = dict(os.environ, **env)
    p = ctlib.run_traced([prog] + list(args), out, env=full, extra=extra)
    text = p.stdout.decode()
    check(p.returncode == bare.returncode and text == bare.stdout,
          f"{tag}: same output and exit status with cryptrace ({p.returncode}, "
          f"{p.stderr.decode()[:200]})")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    for api, cipher, direction, calls, nbytes in ctlib.parse_expect(text):
        got = ctlib.totals(doc, api=ENTRY[api][0], cipher=cipher, dir=direction, entry=ENTRY[api][1])
        check(got == (calls, nbytes), f"{tag}: {api} {cipher} {direction}: report {got}, "
                                      f"program {(calls, nbytes)}")
    procs = ctlib.processes(doc)
    check(len(procs) == 1 and procs[0]["libcrypto"].startswith(libcrypto),
          f"{tag}: the process's libcrypto is {libcrypto} ({[q.get('libcrypto') for q in procs]})")
    return doc, text


def impls(doc):
    """The implementations of the EVP paths with calls (AES_* paths are impl lowlevel)."""
    return sorted({p["impl"] for p in doc["paths"] if p["calls"] and p["api"] == "evp"})


def hardware(text):
    m = re.search(r"^aes-hardware (\d)$", text, re.M)
    check(m is not None, "boringssl_evp says what EVP_has_aes_hardware() said")
    return m.group(1) == "1"


def case_clean(prog):
    doc, text = run_case("clean", prog, {})
    table = ctlib.cryptrace_ok("report", os.path.dirname(doc["processes"][0]["file"]), text=True)
    check(re.search(r"complete \(exit 0\)\s+BoringSSL\s", table.stdout),
          "the process table's LIBCRYPTO column says BoringSSL")
    if hardware(text):
        check(impls(doc) == ["boringssl:aesni"], f"clean: every path is boringssl:aesni ({impls(doc)})")
    else:
        # no AES-NI with PCLMUL here: vpaes, C, or AES-NI without PCLMUL; never another library
        check(all(i.startswith("boringssl") for i in impls(doc)),
              f"clean: every path is BoringSSL's ({impls(doc)})")
    ctlib.check_clean(doc, "clean")
    # BoringSSL's AES_* and EVP_Cipher run its AES-NI code, and it has no engines or providers
    # to bypass: lowlevel-api's claims (table code, EVP_CIPHER_fetch as the fix) are OpenSSL's
    check("lowlevel-api" not in ctlib.kinds(doc),
          f"clean: no lowlevel-api finding for BoringSSL's AES_* and EVP_Cipher ({ctlib.kinds(doc)})")


def case_masked(prog):
    if not ctlib.cpu_has_aes():
        print("this CPU has no AES instructions: there is nothing to mask")
        return False
    doc, text = run_case("masked", prog, {"OPENSSL_ia32cap": ctlib.MASK})
    sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
    if hardware(text):
        print("BoringSSL ignored OPENSSL_ia32cap: it still uses AES-NI")
        check(not any("OPENSSL_ia32cap" in f["message"] for f in sw),
              f"masked but ignored: no finding claims the mask ({[f['message'][:120] for f in sw]})")
        return True
    check(impls(doc) == ["boringssl:vpaes"], f"masked: every path is boringssl:vpaes ({impls(doc)})")
    ctlib.check_masked(doc, "masked")
    return True


def case_nohw(prog):
    doc, text = run_case("nohw", prog, {"OPENSSL_ia32cap": NOHW_MASK})
    check(not hardware(text), "nohw: BoringSSL says it uses no AES hardware")
    check(impls(doc) == ["boringssl:nohw"], f"nohw: every path is boringssl:nohw ({impls(doc)})")
    return True


def case_two_libcryptos(prog):
    other = ctlib.openssl_libcrypto()
    if not other:
        print("no OpenSSL libcrypto found (ldd openssl): nothing to load beside BoringSSL")
        return False
    doc, _ = run_case("two-libcryptos", prog, {}, ["--also-load", other])
    check(all(i.startswith("boringssl") for i in impls(doc)),
          f"two-libcryptos: BoringSSL's calls still on its paths ({impls(doc)})")
    f = ctlib.finding(doc, "multiple-libcrypto")
    check(os.path.basename(other) in f["message"] and "libcrypto.so.0" in f["message"],
          f"multiple-libcrypto names both copies: {f['message'][:200]}")
    return True


def case_route(prog):
    doc, _ = run_case("route", prog, {}, extra=["--route", "aes-*=aesni"])
    check(all(i.startswith("boringssl") for i in impls(doc)),
          f"route: BoringSSL's contexts stay native ({impls(doc)})")
    if ctlib.cpu_has_aes():
        # the low-level route keeps its own key table: BoringSSL's AES_* calls are served there,
        # and the program's digest (same output) says bit-exact
        low = {p["impl"] for p in ctlib.paths(doc, api="aes") if p["calls"]}
        check(low == {"route:aesni"}, f"route: AES_cbc_encrypt served by route:aesni ({low})")
    reasons = {e["detail"].split(": ")[-1] for e in doc["events"] if e["kind"] == "fallback"}
    check(reasons == {"libcrypto has no providers (BoringSSL)"},
          f"route: each fallback says why, naming BoringSSL ({reasons})")
    return True


def case_plugin():
    other = ctlib.openssl_libcrypto()
    if not other:
        print("no OpenSSL libcrypto found (ldd openssl): nothing to load before BoringSSL")
        return False
    host, plugin = os.environ["CT_BORINGSSL_HOST"], os.environ["CT_BORINGSSL_PLUGIN"]
    doc, text = run_case("plugin", host, {}, [other, plugin], libcrypto="OpenSSL")
    check("plugin sealed 25" in text, f"plugin: every seal worked under cryptrace ({text!r})")
    check(all(i.startswith("boringssl") for i in impls(doc)),
          f"plugin: the plugin's seals are BoringSSL's ({impls(doc)})")
    ctlib.finding(doc, "multiple-libcrypto")
    return True


def test():
    prog = program()
    register_secrets()
    machine = os.uname().machine
    cases = [("clean", lambda: case_clean(prog)), ("masked", lambda: case_masked(prog)),
             ("two-libcryptos", lambda: case_two_libcryptos(prog)), ("plugin", case_plugin),
             ("route", lambda: case_route(prog))]
    if machine in ("x86_64", "i686", "i386"):
        cases.append(("nohw", lambda: case_nohw(prog)))
    else:
        print(f"nohw: OPENSSL_ia32cap is x86's ({machine} here)")
    ctlib.run_cases(cases)


ctlib.main(test)
