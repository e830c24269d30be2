#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The launcher's CPU profile (tracer/profile.c, report/profile.c) on real programs:

  - profile_loop (16 KiB EVP aes-128-cbc for 1 s, shared libcrypto): the profile took samples for
    the process's CPU time (samples x period against its utime + stime, within 10 %); its AES code
    is named by its instructions (AES-NI or VAES on a CPU with AES, else tables or vpaes) and is
    most of the CPU; the hooks and the profile agree: the AES code's sampled time against the
    path's user CPU within the bound the report uses (report/profile_check.c: 3 sqrt(n) samples
    plus 5 % of the hooks' time), and the report's hooks_check and text say they agree;
  - the profile over time: its 10 ms bins hold every sample, and Perfetto's "CPU profile:
    crypto %" counter shows the loop's AES near 100 %;
  - the same loop run again through a second libcrypto (a copy dlopen'd from another path,
    called through dlsym's pointers): the profile sees more cipher code than the hooked calls
    took, and the report says they disagree; openssl speed -evp aes-128-cbc over every request
    size: they agree;
  - the same under OPENSSL_ia32cap's AES-NI mask: vpaes (SSSE3), named so;
  - openssl speed -evp aes-128-gcm: AES and GHASH code (carry-less multiply) both named;
  - wget and gnutls-cli (GnuTLS) each fetching 64 MiB over TLS 1.3 AES-256-GCM (sampled at
    2 kHz) from openssl s_server: the hooks see nothing; the profile names GnuTLS's (or nettle's)
    accelerated AES, and nothing-intercepted says what it saw; with GNUTLS_CPUID_OVERRIDE=0x1 and
    NETTLE_FAT_OVERRIDE=none, no AES-NI code runs and software-aes names the library and the
    override;
  - profile_loop built static (OpenSSL inside, no preload can enter it): its AES code is named in
    its own executable all the same, and nothing-intercepted says so;
  - --no-profile: no profile; in a seccomp filter that refuses perf_event_open (noperf, as a
    container's default policy does): the program runs as it would, the trace says why there is
    no profile, and the hooks' figures are all there.
"""
import glob
import json
import math
import os
import re
import shutil
import subprocess

import ctlib
from ctlib import check
from ctlib.daemons import Daemon, free_port

BIN = os.environ.get("CT_PROFILE_BIN", "")
LOOP = os.path.join(BIN, "profile_loop")


def run(tag, argv, extra=(), env=None, wrap=(), input_bytes=None):
    out = ctlib.tmpdir(f"profile-{tag}")
    cmd = list(wrap) + [ctlib.CRYPTRACE, "run", "-q", "-o", out] + list(extra) + ["--"] + list(argv)
    p = ctlib.run(cmd, env=env, input_bytes=input_bytes)
    check(p.returncode == 0, f"{tag}: ran under cryptrace ({p.returncode}, {p.stderr[-300:]!r})")
    doc = ctlib.report_ok([out])
    doc["_out"] = out
    return p, doc


def out_dir(doc):
    """The trace directory run() reported on."""
    return doc["_out"]


def main_proc(doc):
    procs = [x for x in doc["processes"] if not x.get("superseded")]
    return procs[0]


def aes_items(prof):
    return [i for i in prof["items"] if i["category"] == "AES"]


def show(tag, prof):
    print(f"{tag}: {prof['samples']} samples, crypto {prof['crypto_share']}")
    for i in prof["items"][:8]:
        print(f"    {i['samples']:6d}  {i['category']:8s} {i['impl']:28s} {i['module']} {i['function']}")


def loop_cbc():
    p, doc = run("loop", [LOOP, "1"])
    why = ctlib.profile_refused(doc)
    if why:
        ctlib.skip(f"this machine takes no CPU profile: {why}")
    pr = main_proc(doc)
    prof = pr.get("profile")
    check(prof is not None, "profile_loop: a profile was taken")
    show("loop", prof)
    cpu_s = ((pr.get("utime_ns") or 0) + (pr.get("stime_ns") or 0)) / 1e9
    sampled_s = prof["samples"] * prof["period_us"] / 1e6
    check(cpu_s > 0.5 and abs(sampled_s / cpu_s - 1) <= 0.10,
          f"samples x period {sampled_s:.3f} s against the process's CPU {cpu_s:.3f} s (within 10 %)")
    aes = aes_items(prof)
    n_aes = sum(i["samples"] for i in aes)
    check(n_aes >= 0.8 * prof["samples"], f"AES code is most of the CPU ({n_aes} of {prof['samples']})")
    top = max(aes, key=lambda i: i["samples"])
    want = ("AES-NI", "VAES") if ctlib.cpu_has_aes() else ("tables", "vpaes")
    check(top["impl"].startswith(want) and top["module"].startswith("libcrypto"),
          f"the AES code is libcrypto's {want}: {top}")
    timeline(doc, prof)
    # the hooks against the profile: the path's user CPU against the AES code's sampled time,
    # the rule report/profile_check.c states (3 sigma of the larger count + 5 % of the hooks)
    path = max((x for x in doc["paths"] if x["api"] == "evp"), key=lambda x: x["bytes"])
    hooked_s = (path["user_ns"] or 0) / 1e9
    prof_s = n_aes * prof["period_us"] / 1e6
    if os.environ.get("CT_ASAN"):
        print("skip the hooks/profile cross-check: timing under the sanitizer runtime is not the "
              "program's (the truth suite leaves it out too)")
        return
    bound = 3 * math.sqrt(max(n_aes, hooked_s / (prof["period_us"] / 1e6))) * prof["period_us"] / 1e6 \
        + 0.05 * hooked_s
    print(f"hooks {hooked_s:.3f} s, profile's AES code {prof_s:.3f} s (bound +-{bound:.3f} s)")
    check(abs(prof_s - hooked_s) <= bound, f"hooks and profile agree: {prof_s:.3f} s within "
          f"{hooked_s:.3f} +- {bound:.3f} s")
    hc = prof.get("hooks_check")
    check(hc and hc["agree"] and ctlib.json_equal(hc["hooks_s"], sum(
        (x["user_ns"] or 0) for x in pr["paths"]) / 1e9) and abs(hc["profile_s"] - prof_s) <= 0.01 * prof_s
        + 2 * prof["period_us"] / 1e6, f"the report's hooks_check says so, with the same figures ({hc})")
    text = ctlib.cryptrace_ok("report", out_dir(doc), text=True).stdout
    check("hooks and profile agree" in text, "the text report's profile section says they agree")


def timeline(doc, prof):
    """The profile over time (PROFILE_TIME records): its bins hold every sample of the profile and
    every crypto sample, at 10 ms; the Perfetto output draws them as the "CPU profile: crypto %"
    counter, which for this loop of AES is near 100 % bin after bin, within the process's life."""
    tl = prof.get("timeline")
    check(tl and tl["samples"] == prof["samples"] and tl["crypto_samples"] == prof["crypto_samples"]
          and tl["bin_us"] == 10000 and tl["bins"] >= 50,
          f"the timeline's bins hold the profile's samples and crypto samples ({tl}, "
          f"{prof['samples']}, {prof['crypto_samples']})")
    out = os.path.join(out_dir(doc), "perfetto.json")
    ctlib.cryptrace_ok("report", "--perfetto", out, out_dir(doc))
    with open(out, encoding="utf-8") as f:
        ev = json.load(f)["traceEvents"]
    pid = main_proc(doc)["pid"]
    crypto = [e for e in ev if e["ph"] == "C" and e["name"] == "CPU profile: crypto %" and e["pid"] == pid]
    aes = [e for e in ev if e["ph"] == "C" and e["name"] == "CPU profile: AES %" and e["pid"] == pid]
    values = [e["args"]["%"] for e in crypto]
    check(len(crypto) >= tl["bins"] and len(aes) == len(crypto) and all(0 <= v <= 100 for v in values),
          f"perfetto: a crypto % value per bin, and an AES % track ({len(crypto)} values, {len(aes)} AES, "
          f"{tl['bins']} bins)")
    # a bin's value holds until the next event: the time-weighted mean is the crypto share
    pts = sorted((e["ts"], e["args"]["%"]) for e in crypto)
    busy = sum((b[0] - a[0]) * a[1] for a, b in zip(pts, pts[1:]) if a[1] > 0)
    span = sum(b[0] - a[0] for a, b in zip(pts, pts[1:]) if a[1] > 0)
    check(span > 0 and busy / span >= 80, f"perfetto: the loop's crypto share is most of every bin "
          f"({busy / span if span else 0:.1f} %)")
    life = [e for e in ev if e["ph"] == "M" and e["pid"] == pid]
    first, last = pts[0][0], pts[-1][0]
    check(0 <= first < last and (last - first) / 1e6 < 5, f"perfetto: the track spans the loop's "
          f"second ({first / 1e6:.3f} s to {last / 1e6:.3f} s, {len(life)} metadata events)")


def loop_copy():
    """The same loop, then as long again through a second libcrypto (a copy at another path,
    dlopen'd RTLD_LOCAL, called through dlsym's pointers): cipher work the hooks do not see, so
    the cross-check says the profile saw more than the hooked calls took."""
    src = next((d for d in ("/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
                            "/lib/x86_64-linux-gnu/libcrypto.so.3") if os.path.exists(d)), None)
    if not src or os.environ.get("CT_ASAN"):
        print("skip the second-copy case: " + ("a sanitizer build" if src else "no libcrypto.so.3 to copy"))
        return
    second = os.path.join(ctlib.tmpdir("second-libcrypto"), "libcrypto.so.3")
    shutil.copy(src, second)
    p, doc = run("copy", [LOOP, "1", "aes-128-cbc", second])
    prof = main_proc(doc)["profile"]
    show("copy", prof)
    hc = prof.get("hooks_check")
    print("hooks_check:", hc)
    check(hc and not hc["agree"] and hc["verdict"] == "profile-above" and
          hc["profile_s"] > hc["hooks_s"] + hc["error_s"],
          f"copy: the profile saw more cipher code than the hooked calls took ({hc})")
    text = ctlib.cryptrace_ok("report", out_dir(doc), text=True).stdout
    check("hooks and profile disagree" in text and "cipher work ran outside them" in text,
          "copy: the text report says they disagree and what it means")


def loop_masked():
    if "ssse3" not in open("/proc/cpuinfo").read().split():
        print("skip the masked case: this CPU has no SSSE3 (vpaes)")
        return
    env = dict(os.environ, OPENSSL_ia32cap=ctlib.MASK)
    p, doc = run("masked", [LOOP, "0.5"], env=env)
    prof = main_proc(doc)["profile"]
    show("masked", prof)
    top = max(aes_items(prof), key=lambda i: i["samples"])
    check(top["impl"].startswith("vpaes") and top["samples"] >= 0.8 * prof["samples"],
          f"masked: vpaes (SSSE3) named: {top}")


def speed_cbc():
    """openssl speed -evp aes-128-cbc over every request size (16 B to 16 KiB): the hooked calls'
    CPU lies between the AES code and all of libcrypto's code with the hooks', so the report says
    the hooks and the profile agree (at 16 B, EVP's dispatch is most of a call)."""
    if os.environ.get("CT_ASAN"):
        print("skip openssl speed's cross-check: a sanitizer build")
        return
    openssl = ctlib.need_program("openssl")
    p, doc = run("speed-cbc", [openssl, "speed", "-seconds", "1", "-evp", "aes-128-cbc"])
    prof = main_proc(doc)["profile"]
    show("speed-cbc", prof)
    hc = prof.get("hooks_check")
    print("hooks_check:", hc)
    check(hc and hc["agree"] and hc["hooks_s"] > 1, f"speed -evp aes-128-cbc: hooks and profile agree ({hc})")


def speed_gcm():
    openssl = ctlib.need_program("openssl")
    p, doc = run("gcm", [openssl, "speed", "-seconds", "1", "-bytes", "16384", "-evp", "aes-128-gcm"])
    prof = main_proc(doc)["profile"]
    show("gcm", prof)
    cats = {i["category"] for i in prof["items"] if i["samples"] >= 0.02 * prof["samples"]}
    if ctlib.cpu_has_aes():
        check("AES" in cats and any("CLMUL" in i["impl"] or i["category"] == "GHASH" for i in prof["items"]),
              f"gcm: AES and carry-less multiply (GHASH) both named ({cats})")


def gnutls_fetch(client, env=None, tag=None):
    """client (wget or gnutls-cli: both GnuTLS) fetching a file over TLS 1.3 AES-GCM from openssl
    s_server: the hooks see nothing of GnuTLS; the profile names its AES code (GnuTLS's own or
    nettle's). Returns the report and the AES items. wget fetches 64 MiB; gnutls-cli 16 MiB, as
    it writes what it receives a byte at a time (an unbuffered stdout): 8 s of CPU for 64 MiB."""
    tag = tag or client
    prog, openssl = ctlib.need_program(client), ctlib.need_program("openssl")
    tmp = ctlib.tmpdir(tag)
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "data.bin")
    data = os.urandom((64 if client == "wget" else 16) << 20)
    with open(src, "wb") as f:
        f.write(data)
    port = free_port()
    sdir = ctlib.tmpdir("profile-s_server")
    server = Daemon([openssl, "s_server", "-WWW", "-naccept", "1", "-tls1_3", "-ciphersuites",
                     "TLS_AES_256_GCM_SHA384", "-accept", f"127.0.0.1:{port}", "-cert", cert, "-key", key],
                    sdir, "ACCEPT", cwd=tmp)
    got = os.path.join(tmp, "got.bin")
    if client == "wget":
        argv, request = [prog, "-q", "--no-check-certificate", "-O", got,
                         f"https://127.0.0.1:{port}/data.bin"], None
    else:  # gnutls-cli sends its stdin and prints what comes back, the HTTP response included
        argv, request = [prog, "--insecure", "-p", str(port), "127.0.0.1"], b"GET /data.bin HTTP/1.0\r\n\r\n"
    try:
        # GnuTLS's AES-NI takes ~0.1 s of CPU for 64 MiB: sampled at 2 kHz for enough samples
        env = dict(env or os.environ, CRYPTRACE_PROFILE_HZ="2000")
        p, doc = run(tag, argv, env=env, input_bytes=request)
        server.wait()
    finally:
        server.stop()
    body = open(got, "rb").read() if client == "wget" else p.stdout
    check(data in body, f"{tag}: fetched the {len(data) >> 20} MiB whole")
    prof = main_proc(doc)["profile"]
    show(tag, prof)
    aes = [i for i in aes_items(prof) if i["module"].startswith(("libgnutls", "libnettle"))]
    check(aes, f"{tag}: AES code in GnuTLS or nettle named ({prof['items'][:4]})")
    f = ctlib.finding(doc, "nothing-intercepted")
    check("The CPU profile saw crypto code all the same" in f["message"],
          f"{tag}: nothing-intercepted says what the profile saw: {f['message'][:300]}")
    return doc, aes


def gnutls_cases(client):
    """client's GnuTLS runs accelerated AES-GCM, named so, with no software-aes; under GnuTLS's and
    nettle's CPU-feature overrides with AES-NI off, software-aes names the library and the
    override."""
    doc, aes = gnutls_fetch(client)
    if not ctlib.cpu_has_aes():
        print(f"skip the AES-NI and software-AES checks for {client}: this CPU has no AES instructions")
        return
    check(any(i["impl"].startswith(("AES-NI", "VAES")) for i in aes),
          f"{client}: GnuTLS's accelerated AES named ({aes[:3]})")
    check(not [f for f in doc["findings"] if f["kind"] == "software-aes"], f"{client}: no software-aes")
    # GnuTLS's and nettle's CPU-feature overrides with nothing enabled: software AES
    env = dict(os.environ, GNUTLS_CPUID_OVERRIDE="0x1", NETTLE_FAT_OVERRIDE="none")
    doc, aes = gnutls_fetch(client, env, f"{client}-sw")
    check(all(not i["impl"].startswith(("AES-NI", "VAES")) for i in aes if i["samples"] > 2),
          f"{client}-sw: no AES-NI code ran ({aes[:3]})")
    prof = main_proc(doc)["profile"]
    by_impl = {}
    for i in aes:
        if i["impl"].startswith(("tables", "vpaes")):
            by_impl[(i["module"], i["impl"])] = by_impl.get((i["module"], i["impl"]), 0) + i["samples"]
    top = max(by_impl.values(), default=0)
    check(top >= 20, f"{client}-sw: software AES named in GnuTLS or nettle ({by_impl})")
    share = top / prof["samples"]
    print(f"{client}-sw: software AES {top} samples, {100 * share:.1f} % of the process's CPU")
    if client == "gnutls-cli" and share < 0.05:
        # gnutls-cli writes what it receives a byte at a time to an unbuffered stdout: that is
        # most of its CPU, and software AES stays near the finding's 5 % (4.9 % measured): the
        # finding follows its rule either way (report/findings/profile_aes.c)
        check(not [f for f in doc["findings"] if f["kind"] == "software-aes"],
              f"{client}-sw: software AES at {100 * share:.1f} % of the CPU, under the 5 % of "
              "software-aes: no finding")
        return
    f = ctlib.finding(doc, "software-aes")
    check(("libnettle" in f["message"] or "libgnutls" in f["message"]) and
          "GNUTLS_CPUID_OVERRIDE" in f["fix"],
          f"{client}-sw: software-aes names the library and its override: {f['message'][:300]} / {f['fix']}")


def static_loop():
    exe = os.path.join(BIN, "profile_loop_static")
    if not os.access(exe, os.X_OK):
        print("skip the static case: not built (no libcrypto.a or static libc, or a sanitizer build)")
        return
    p, doc = run("static", [exe, "1"])
    prof = main_proc(doc).get("profile")
    check(prof is not None, "static: profiled although no preload entered it")
    show("static", prof)
    aes = aes_items(prof)
    check(aes and max(aes, key=lambda i: i["samples"])["module"] == "profile_loop_static"
          and sum(i["samples"] for i in aes) >= 0.8 * prof["samples"],
          f"static: its own AES code named in the executable ({aes[:2]})")
    f = ctlib.finding(doc, "nothing-intercepted")
    check("The CPU profile saw crypto code all the same" in f["message"] and "AES" in f["message"],
          f"static: nothing-intercepted says what the profile saw: {f['message'][-300:]}")


def refused():
    p, doc = run("off", [LOOP, "0.2"], extra=["--no-profile"])
    check(main_proc(doc).get("profile") is None, "--no-profile: no profile")
    noperf = os.path.join(BIN, "noperf")
    bare = ctlib.run([noperf, LOOP, "0.2"])
    if bare.returncode == 77:
        print(f"skip the refused case: {bare.stderr.decode().strip()}")
        return
    p, doc = run("refused", [LOOP, "0.2"], wrap=[noperf])
    pr = main_proc(doc)
    check(pr.get("profile") is None, "refused: no profile")
    ev = ctlib.events(doc, call="profile")
    check(ev and "perf events refused" in ev[0]["detail"], f"refused: the trace says why ({ev})")
    check(any(x["calls"] > 0 for x in doc["paths"]), "refused: the hooks' paths are all there")


def known_symbols():
    """Every function report/profile_symbols.def names in a library is in that library as
    installed here: a new version that renames one fails here, not as "other code"."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "report",
                       "profile_symbols.def")
    entries = re.findall(r'^PROFILE_SYMBOL\("([^"]+)", "([^"]+)", (\d)', open(src).read(), re.M)
    check(entries, f"profile_symbols.def has library entries ({src})")
    for module, symbol, prefix in entries:
        libs = sorted(glob.glob(f"/lib/*-linux-gnu/{module}.so*") + glob.glob(f"/usr/lib/*-linux-gnu/{module}.so*"))
        if not libs:
            print(f"skip {module}!{symbol}: {module} is not installed")
            continue
        out = subprocess.run(["readelf", "-sW", libs[0]], stdout=subprocess.PIPE, text=True).stdout
        names = {ln.split()[7].split("@")[0] for ln in out.splitlines() if len(ln.split()) >= 8}
        found = any(n.startswith(symbol) for n in names) if prefix == "1" else symbol in names
        check(found, f"{os.path.basename(libs[0])} defines {symbol} (profile_symbols.def)")


def test():
    if not os.access(LOOP, os.X_OK):
        check(False, f"{LOOP} was built")
    known_symbols()
    loop_cbc()
    loop_copy()
    speed_cbc()
    loop_masked()
    speed_gcm()
    gnutls_cases("wget")
    gnutls_cases("gnutls-cli")
    static_loop()
    refused()


ctlib.main(test)
