# SPDX-License-Identifier: MIT
"""osslver - another OpenSSL release's own `openssl`, fetched from Debian's archive by fetch.sh
into the build tree and run from there, for the libcrypto suite's per-version tests.

  tree = osslver.tree("1.1.1")        # skips (77) with fetch.sh's reason when it cannot be had
  tree.argv(["speed", ...])          # the command line that runs that version's openssl
  tree.env(base)                     # its environment (library path, config, engines, modules)

1.1.1w (Debian 11, bullseye) runs on this host's glibc with LD_LIBRARY_PATH. 3.5 (Debian 13,
trixie) needs trixie's glibc: it runs through that tree's own dynamic loader run as a command,
`ld-linux-*.so.* --library-path DIR openssl ...`, which honours the LD_PRELOAD that `cryptrace
run` sets (the launcher recognises a loader run that way: tracer/cmd_run.c)."""
import glob
import os
import subprocess

import ctlib
from ctlib import check

# Debian release and packages per version. 3.5 brings its own C library and the libraries its
# libcrypto links (zstd, zlib) from the same release, so nothing of the host's is mixed in.
VERSIONS = {
    "1.1.1": ("bullseye", ["openssl", "libssl1.1"]),
    "3.5": ("trixie", ["openssl", "libssl3t64", "openssl-provider-legacy", "libc6", "libzstd1",
                       "zlib1g"]),
}
HERE = os.path.dirname(os.path.abspath(__file__))


class Tree:
    def __init__(self, version, root):
        self.version = version
        self.root = root
        libs = glob.glob(os.path.join(root, "usr/lib/*-linux-*/libcrypto.so.*"))
        if not libs:
            raise ctlib.Failure(f"no libcrypto in the unpacked {version} tree {root}")
        self.libcrypto = sorted(libs)[0]
        self.libdir = os.path.dirname(self.libcrypto)
        self.openssl = os.path.join(root, "usr/bin/openssl")
        loaders = glob.glob(os.path.join(self.libdir, "ld-linux*.so.*"))
        self.loader = loaders[0] if loaders else None
        # an executable of the host linked against this release's libcrypto cannot run its
        # glibc; one that needs a newer glibc must go through its loader
        self.own_libc = self.loader is not None

    def argv(self, args, program=None):
        prog = program or self.openssl
        if self.own_libc:
            return [self.loader, "--library-path", self.libdir, prog] + list(args)
        return [prog] + list(args)

    def env(self, base=None, **extra):
        env = dict(os.environ if base is None else base)
        if not self.own_libc:
            env["LD_LIBRARY_PATH"] = self.libdir
        # its own configuration, engines and providers, not the host's 3.0 ones
        env["OPENSSL_CONF"] = os.path.join(self.root, "etc/ssl/openssl.cnf")
        major = "1.1" if self.version.startswith("1.") else "3"
        env["OPENSSL_ENGINES"] = os.path.join(self.libdir, f"engines-{major}")
        env["OPENSSL_MODULES"] = os.path.join(self.libdir, "ossl-modules")
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def version_line(self):
        p = ctlib.run(self.argv(["version"]), env=self.env())
        if p.returncode != 0:
            raise ctlib.Failure(f"{self.version}'s openssl does not run here: {p.stderr[:300]!r}")
        return p.stdout.decode().strip()


def cache_dir(version):
    build = os.environ.get("CT_BUILD_ROOT")
    if not build:
        ctlib.skip("CT_BUILD_ROOT is not set (run through meson test)")
    return os.path.join(build, "tests", "libcrypto", "cache", f"openssl-{version}")


def tree(version):
    """The unpacked tree of that version, fetched once (fetch.sh caches and locks)."""
    suite, pkgs = VERSIONS[version]
    if os.uname().machine != "x86_64":
        # the packages are fetched for the host's architecture; the tests' expectations
        # (OPENSSL_ia32cap, AES-NI) are x86's
        ctlib.skip(f"the {version} tests check x86-64 code paths; this is {os.uname().machine}")
    d = cache_dir(version)
    # apt without the sanitizer pass's LD_PRELOAD (apt-get under an ASan runtime stalls)
    p = subprocess.run([os.path.join(HERE, "fetch.sh"), d, suite] + pkgs, env=ctlib.bare_env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    err = p.stderr.decode(errors="replace").strip()
    if p.returncode == 77:
        ctlib.skip(err or f"Debian {suite} cannot be reached")
    if p.returncode != 0:
        raise ctlib.Failure(f"fetch.sh {suite} failed ({p.returncode}): {err}")
    t = Tree(version, os.path.join(d, "root"))
    line = t.version_line()
    if f"OpenSSL {version}" not in line:
        raise ctlib.Failure(f"the {suite} tree runs {line!r}, not OpenSSL {version}")
    print(f"{version}: {line} from {t.root}" + (" (its own loader)" if t.own_libc else ""))
    return t


def host_tree():
    """This host's own OpenSSL, run the way 3.5 is: through its dynamic loader started as a
    command (so that way of running is tested where the archive cannot be reached)."""
    openssl = ctlib.need_program("openssl")
    t = Tree("3.0", "/")
    if not t.loader or os.path.realpath(openssl) != os.path.realpath(t.openssl):
        ctlib.skip(f"no loader beside {t.libcrypto}, or openssl is not {t.openssl}")
    line = t.version_line()
    if not line.startswith("OpenSSL 3.0"):
        ctlib.skip(f"this host's openssl is {line!r}, not 3.0")
    print(f"host: {line} through {t.loader}")
    return t


# ---- checks every version's tests run (the version's expectations are their arguments) --------

KEY = bytes(range(32))
IV = bytes(range(16, 32))
ENC_BLOCK = 4096  # bio_enc.c's ENC_BLOCK_SIZE: `openssl enc` hands EVP_CipherUpdate 4 KiB at most


def traced(t, args, tag, extra=(), **env):
    """That version's openssl ARGS under `cryptrace run`: (process, report)."""
    out = ctlib.tmpdir(tag)
    p = ctlib.run_traced(t.argv(args), out, env=t.env(**env), extra=extra)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0, f"{t.version} {' '.join(args[:3])}: exit 0 under cryptrace "
                             f"({p.returncode}: {err[-300:]})")
    return p, ctlib.report_ok([out])


def speed_exact(t, impl):
    """`openssl speed -evp` (aes-128-cbc both directions, aes-256-gcm): the path named impl has
    exactly the calls speed counted and N x the request size in bytes, under the same cipher name
    on every version (1.1's short name for GCM is "id-aes256-GCM"; the trace uses the long name,
    as 3.x's fetched ciphers do); one process, openssl's (its file and argv, also when a loader
    ran it), which made the contexts; no warning on these clean runs."""
    for cipher, size, decrypt in (("aes-128-cbc", 16, False), ("aes-128-cbc", 16384, False),
                                  ("aes-128-cbc", 8192, True), ("aes-256-gcm", 8192, False)):
        args = ["speed", "-seconds", "1", "-bytes", str(size)] + (["-decrypt"] if decrypt else [])
        p, doc = traced(t, args + ["-evp", cipher], "speed")
        n = ctlib.speed_count(p.stderr.decode(errors="replace"), cipher)
        direction = "decrypt" if decrypt else "encrypt"
        print(ctlib.describe_paths(doc))
        calls, nbytes = ctlib.totals(doc, api="evp", impl=impl, cipher=cipher, dir=direction)
        check(n > 0 and calls == n, f"{t.version} speed {cipher} {size} B {direction}: {calls} "
                                    f"calls in {impl} == openssl's {n}")
        check(nbytes == n * size, f"{t.version} speed {cipher} {size} B: {nbytes} bytes == "
                                  f"{n} x {size}")
        others = [x["impl"] for x in ctlib.paths(doc, api="evp") if x["impl"] != impl]
        check(not others, f"{t.version}: every EVP path in {impl} ({others})")
        procs = ctlib.processes(doc)
        check(len(procs) == 1 and procs[0]["libcrypto"].startswith(f"OpenSSL {t.version}"),
              f"{t.version}: one process, its libcrypto named "
              f"({[(x['pid'], x['libcrypto']) for x in procs]})")
        # the program, not the loader that ran it (3.5): its file, and argv from it on
        check(procs[0]["exe"] == os.path.realpath(t.openssl) and
              procs[0]["argv"][:2] == [t.openssl, "speed"],
              f"{t.version}: the process is openssl speed ({procs[0]['exe']}, "
              f"{procs[0]['argv'][:4]})")
        site = [x for x in doc["paths"] if x["cipher"] == cipher][0].get("callsite", "")
        check(site.startswith("openssl+"), f"{t.version}: the context made by openssl ({site!r})")
        ctlib.check_clean(doc, f"{t.version} speed")
        ctlib.check_complete(doc, f"{t.version} speed")


def calls(version, impl):
    """That version's exact calls and bytes (speed_exact, enc_exact), no warning on them."""
    t = tree(version)
    speed_exact(t, impl)
    for d in enc_exact(t, impl).values():
        ctlib.check_clean(d, f"{version} enc")


def enc_exact(t, impl, route=None, work=None):
    """`openssl enc` of a 1 MiB file, both directions: the same bytes with and without cryptrace
    (and the route, when given), exactly the file's bytes on the path in ENC_BLOCK calls."""
    work = work or ctlib.tmpdir("enc")
    plain = os.path.join(work, "plain")
    with open(plain, "wb") as f:
        f.write(ctlib.plaintext(1 << 20))
    ctlib.secret("key", KEY)
    ctlib.secret("iv", IV)
    docs = {}
    src = plain
    for direction in ("encrypt", "decrypt"):
        args = ["enc", "-aes-256-cbc"] + (["-d"] if direction == "decrypt" else []) + \
               ["-K", KEY.hex(), "-iv", IV.hex(), "-in", src]
        native, under = os.path.join(work, direction + ".native"), os.path.join(work, direction)
        a = ctlib.run(t.argv(args + ["-out", native]), env=t.env())
        extra = ["--route", route] if route else []
        p, doc = traced(t, args + ["-out", under], "enc", extra=extra)
        check(a.returncode == 0 and a.stdout == p.stdout,
              f"{t.version} enc {direction}: same exit status and output without cryptrace")
        with open(native, "rb") as f1, open(under, "rb") as f2:
            check(f1.read() == f2.read(), f"{t.version} enc {direction}"
                  f"{' routed ' + route if route else ''}: byte-identical to native")
        size = os.path.getsize(src)
        print(ctlib.describe_paths(doc))
        calls, nbytes = ctlib.totals(doc, api="evp", impl=impl, cipher="aes-256-cbc", dir=direction)
        want = (size + ENC_BLOCK - 1) // ENC_BLOCK
        check((calls, nbytes) == (want, size), f"{t.version} enc {direction} in {impl}: "
                                               f"(calls, bytes) {(calls, nbytes)} == {(want, size)}")
        docs[direction] = doc
        src = under
    with open(src, "rb") as f1, open(plain, "rb") as f2:
        check(f1.read() == f2.read(), f"{t.version} enc: decrypting gives the file back")
    return docs


def masked(t, impl):
    """Under OPENSSL_ia32cap's AES-NI mask (bit 57 is AES-NI in 1.1.1 and 3.x alike:
    docs/openssl-versions.md), one software-aes finding naming it and the path; without it, no
    warning."""
    args = ["speed", "-seconds", "1", "-bytes", "16384", "-evp", "aes-128-cbc"]
    p, doc = traced(t, args, "masked", OPENSSL_ia32cap=ctlib.MASK)
    f = ctlib.check_masked(doc, t.version)
    check(f"aes-128-cbc encrypt in {impl}" in f["message"],
          f"{t.version}: software-aes names aes-128-cbc in {impl}: {f['message'][:200]}")
    p, doc = traced(t, args, "unmasked")
    ctlib.check_clean(doc, f"{t.version} unmasked")


def engine_afalg_refused(t, impl):
    """`-engine afalg` where the kernel has no AF_ALG (this host): openssl goes on in software
    and says nothing on its exit status; the report says engine-failed with the socket's errno,
    and silent-fallback for the work."""
    if not ctlib.afalg_refused():
        ctlib.skip("this kernel offers AF_ALG: the refused engine cannot be shown here")
    p, doc = traced(t, ["speed", "-engine", "afalg", "-seconds", "1", "-bytes", "16384",
                        "-evp", "aes-128-cbc"], "afalg")
    kinds = ctlib.kinds(doc)
    ef = ctlib.finding(doc, "engine-failed")
    check("EAFNOSUPPORT" in ef["message"] and "afalg" in ef["message"],
          f"{t.version}: engine-failed names afalg and EAFNOSUPPORT: {ef['message'][:200]}")
    sf = ctlib.finding(doc, "silent-fallback")
    check(f"aes-128-cbc encrypt in {impl}" in sf["message"],
          f"{t.version}: silent-fallback counts the {impl} work ({kinds}): {sf['message'][:200]}")


def engine_devcrypto_refused(t, impl):
    """`-engine devcrypto`: Debian builds OpenSSL without enable-devcryptoeng (checked here on the
    library itself, so that the claim is tested, not assumed): openssl goes on in software; the
    report says the engine is not built (not "install the module", there is no package) and
    names the afalg engine, and silent-fallback counts the work."""
    engines = [os.path.join(d, f) for d in (os.path.dirname(t.libcrypto),) for f in ("engines-1.1", "engines-3")]
    has_module = any(os.path.exists(os.path.join(d, "devcrypto.so")) for d in engines)
    with open(t.libcrypto, "rb") as f:
        built_in = b"devcrypto" in f.read()
    if has_module or built_in:
        print(f"SKIP (part): {t.version}: this libcrypto has a devcrypto engine; the not-built case "
              "needs one without (the built-in case is a unit test: test_engine_devcrypto)")
        return
    p, doc = traced(t, ["speed", "-engine", "devcrypto", "-seconds", "1", "-bytes", "16384",
                        "-evp", "aes-128-cbc"], "devcrypto")
    ef = ctlib.finding(doc, "engine-failed")
    check("enable-devcryptoeng" in ef["message"] and "-engine afalg" in ef["fix"]
          and "Install the module" not in ef["fix"],
          f"{t.version}: engine-failed says devcrypto is not built, fix afalg: {ef['message'][-300:]} / {ef['fix']}")
    sf = ctlib.finding(doc, "silent-fallback")
    check(f"aes-128-cbc encrypt in {impl}" in sf["message"],
          f"{t.version}: silent-fallback counts the {impl} work: {sf['message'][:200]}")


def doctor(t, masked_env=False):
    """`cryptrace doctor --json --libcrypto` on that version's libcrypto (through its own loader
    when it needs its own glibc): its version, AES-NI speed (software under the mask)."""
    env = t.env(**({"OPENSSL_ia32cap": ctlib.MASK} if masked_env else {}))
    argv = t.argv(["doctor", "--json", "--libcrypto", t.libcrypto], program=ctlib.CRYPTRACE)
    p = ctlib.run(argv, env=env)
    doc = ctlib.parse_json(p.stdout.decode(), "doctor --json")
    checks = ctlib.doctor_checks(doc)
    lc = checks.get("libcrypto")
    check(lc is not None, f"{t.version}: doctor has a libcrypto check ({sorted(checks)})")
    vals = lc.get("values", {})
    print(f"doctor {t.version}: [{lc['status']}] {lc['title']}: {lc['evidence'][:200]}")
    check(str(vals.get("version", "")).startswith(f"OpenSSL {t.version}"),
          f"{t.version}: doctor measured that version ({vals.get('version')})")
    check(vals.get("path") == t.libcrypto, f"{t.version}: doctor measured {t.libcrypto}")
    sw = vals.get("software_aes") in (True, "true")
    if masked_env:
        check(sw and lc["status"] == "fail", f"{t.version} masked: doctor says software AES "
                                             f"({lc['status']}, {vals.get('software_aes')})")
        check(p.returncode == 1, f"{t.version} masked: doctor exits 1 ({p.returncode})")
    else:
        check(not sw and lc["status"] == "ok", f"{t.version}: doctor says AES-NI speed "
                                               f"({lc['status']}, {vals.get('software_aes')})")
    return doc, checks


def lowlevel_example(t, program, fix):
    """examples/lowlevel_aes (built for this version) on its libcrypto: the same output with and
    without cryptrace, exactly the calls and bytes it prints on api=aes paths, and the lowlevel-api
    finding of its AES-256-CBC in that version's terms (its fix names `fix`)."""
    native = ctlib.run(t.argv([], program=program), env=t.env())
    out = ctlib.tmpdir("lowlevel")
    p = ctlib.run_traced(t.argv([], program=program), out, env=t.env())
    check(p.returncode == 0 and native.returncode == 0 and p.stdout == native.stdout,
          f"lowlevel_aes on {t.version}: exit 0 and the same output under cryptrace "
          f"({p.returncode}, {p.stderr[-300:]!r})")
    doc = ctlib.report_ok([out])
    procs = ctlib.processes(doc)
    check(procs and procs[0]["libcrypto"].startswith(f"OpenSSL {t.version}"),
          f"lowlevel_aes ran on {t.version} ({procs[0]['libcrypto'] if procs else None})")
    print(ctlib.describe_paths(doc))
    ctlib.check_expect(doc, p.stdout.decode(), f"{t.version} lowlevel_aes ")
    check(all(x["impl"] == "lowlevel" for x in ctlib.paths(doc, api="aes")),
          f"{t.version}: every api=aes path is impl lowlevel")
    fs = [f for f in doc["findings"] if f["kind"] == "lowlevel-api" and
          "aes-256-cbc encrypt" in f["message"]]
    check(len(fs) == 1, f"{t.version}: one lowlevel-api finding for aes-256-cbc encrypt ({len(fs)})")
    major = "1.1" if t.version.startswith("1.") else "3.x"
    check(f"OpenSSL {major} it does not use AES-NI" in fs[0]["message"] and fix in fs[0]["fix"],
          f"{t.version} lowlevel-api in {major}'s terms: {fs[0]['message'][:300]} / {fs[0]['fix']}")


def lowlevel_route(t, program, cases=20000):
    """tests/route-kernel/lowlevel_diff (built for this version): its per-mode digests of random
    low-level AES_* work are identical natively and under --route 'aes-*=aesni', and the block,
    ECB, CBC, CFB-128 and OFB work ran on route:aesni paths (so the comparison compared the
    route)."""
    args = [str(cases), "1717"]
    native = ctlib.run(t.argv(args, program=program), env=t.env())
    check(native.returncode == 0, f"lowlevel_diff on {t.version} runs ({native.stderr[-300:]!r})")
    out = ctlib.tmpdir("lowlevel-route")
    p = ctlib.run_traced(t.argv(args, program=program), out, env=t.env(),
                         extra=["--route", "aes-*=aesni"])
    print(native.stdout.decode())
    # AES is AES: the host's own build on the host's libcrypto gives the same digests (so the
    # version's library really ran, not openssl111_stub.c)
    host = ctlib.run([os.environ["LOWLEVEL_DIFF"]] + args, env=ctlib.bare_env())
    check(host.returncode == 0 and host.stdout == native.stdout,
          f"{t.version}: native digests equal the host libcrypto's ({host.stdout.decode()[:200]})")
    check(p.returncode == 0 and p.stdout == native.stdout,
          f"{t.version}: routed AES_* digests identical to native ({p.stdout.decode()[:300]})")
    doc = ctlib.report_ok([out])
    routed = ctlib.paths(doc, api="aes", impl="route:aesni")
    modes = {x["cipher"].rsplit("-", 1)[1] for x in routed}
    check(modes >= {"ecb", "cbc", "cfb", "ofb"}, f"{t.version}: routed modes {sorted(modes)}")
