# SPDX-License-Identifier: MIT
"""compare-checks: `cryptrace compare` on short real programs.

- default routes here: native, aesni when the CPU has AES, afalg only where socket(AF_ALG) works;
- rounds are interleaved (R1 R2 R1 R2 ...): each run prints its start time in ns;
- a route that changes the exit status, or (--check-output) stdout, is an error: exit 1 and one
  line naming the route; identical runs (openssl enc of a file) pass and both routes show the
  aes-128-cbc path with the calls openssl made;
- the text has a table per figure, rows = paths (or --by-size request-size buckets), columns =
  routes, 4 per table (a fifth continues in another); its calls row matches the JSON's;
- bad routes and specs are usage errors (2) before anything runs; text fits 80 columns, with a
  long spec and a long output directory too.
"""
import os
import re

import ctlib
from ctlib import check


def compare(args, tag):
    out = os.path.join(ctlib.tmpdir(tag), "cmp")
    p = ctlib.run([ctlib.CRYPTRACE, "compare", "-o", out] + args, text=True)
    rc, so, se = p.returncode, p.stdout, p.stderr
    return rc, so, se, out


def test_defaults():
    rc, so, se, out = compare(["-n", "1", "--json", "--", "true"], "defaults")
    check(rc == 0, f"compare -- true exits 0 (got {rc}: {se.strip()})")
    check("\r" not in se and "round 1/" not in se,
          "no progress on stderr when it is not a terminal")
    doc = ctlib.parse_json(so, "compare --json")
    names = [r["name"] for r in doc["routes"]]
    cpu_aes = "aes" in open("/proc/cpuinfo").read().split()
    check(names[0] == "native", f"the first default route is native ({names})")
    check(("aesni" in names) == cpu_aes, f"aesni is a default route iff the CPU has aes ({names})")
    err = ctlib.afalg_refused()
    check(("afalg" in names) == (err is None),
          f"afalg is a default route iff socket(AF_ALG) works (errno {err}; {names})")
    check(("cryptodev" in names) == os.path.exists("/dev/crypto"),
          f"cryptodev is a default route iff /dev/crypto exists ({names})")


def test_progress_on_tty():
    """With stderr on a terminal (a pty here) compare shows its progress there."""
    import pty
    import subprocess
    master, slave = pty.openpty()
    out = os.path.join(ctlib.tmpdir("tty"), "cmp")
    p = subprocess.Popen([ctlib.CRYPTRACE, "compare", "--routes", "native,aesni", "-n", "2", "-o",
                          out, "--", "true"], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    so = p.communicate(timeout=300)[0]
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    check(p.returncode == 0, f"compare on a terminal exits 0 ({p.returncode})")
    check(b"round 2/2" in seen, f"progress shows on a terminal stderr: {seen[-200:]!r}")
    check(b"\r" not in so and b"runs)" not in so, "progress never goes to stdout")


def test_interleaved():
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "3", "--json", "--",
                               "sh", "-c", "date +%s%N"], "interleave")
    check(rc == 0, f"compare exits 0 ({rc}: {se.strip()})")
    stamps = []
    for rnd in (1, 2, 3):
        for route in ("native", "aesni"):
            path = os.path.join(out, route, str(rnd), "stdout")
            stamps.append((int(open(path).read().strip()), route, rnd))
    order = [(r, n) for _, r, n in sorted(stamps)]
    check(order == [("native", 1), ("aesni", 1), ("native", 2), ("aesni", 2), ("native", 3),
                    ("aesni", 3)], f"runs are interleaved round by round: {order}")


def test_exit_status_changed():
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "1", "--",
                               "sh", "-c", 'test -z "$CRYPTRACE_ROUTE"'], "status")
    lines = [l for l in se.splitlines() if "changed" in l]
    check(rc == 1, f"a route that changes the exit status makes compare exit 1 (got {rc})")
    check(len(lines) == 1 and "route aesni" in lines[0] and "exit status" in lines[0],
          f"one line names the route: {lines}")


def test_output_changed():
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "1", "--check-output", "--",
                               "sh", "-c", 'echo "route=$CRYPTRACE_ROUTE"'], "output")
    lines = [l for l in se.splitlines() if "changed" in l]
    check(rc == 1, f"a route that changes stdout makes compare --check-output exit 1 (got {rc})")
    check(len(lines) == 1 and "route aesni changed the output" in lines[0],
          f"one line names the route: {lines}")
    # Without --check-output the same difference is not looked at.
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "1", "--",
                               "sh", "-c", 'echo "route=$CRYPTRACE_ROUTE"'], "output2")
    check(rc == 0, f"without --check-output stdout is not compared (got {rc})")


def test_identical_enc():
    d = ctlib.tmpdir("enc")
    data = os.path.join(d, "in")
    with open(data, "wb") as f:
        plain = os.urandom(1 << 20)
        ctlib.secret("enc plaintext", plain)
        f.write(plain)
    argv = ["openssl", "enc", "-aes-128-cbc", "-K", "000102030405060708090a0b0c0d0e0f",
            "-iv", "0f0e0d0c0b0a09080706050403020100", "-in", data]
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "2", "--check-output", "--json",
                               "--"] + argv, "enc-cmp")
    check(rc == 0, f"openssl enc: same output under both routes, compare exits 0 ({rc}: "
                   f"{se.strip()})")
    doc = ctlib.parse_json(so, "compare --json")
    for route in ("native", "aesni"):
        c = ctlib.compare_cell(doc, "aes-128-cbc", "encrypt", route)
        check(c is not None and c["present"] and c["calls"] and c["calls"] >= 1,
              f"route {route}: the aes-128-cbc encrypt path with its calls ({c})")
        check(c["wall_bps"] is not None and c["wall_bps"]["median"] > 0,
              f"route {route}: a wall throughput")
    ref = open(os.path.join(out, "native", "1", "stdout"), "rb").read()
    check(len(ref) == (1 << 20) + 16, f"the runs' stdout holds the ciphertext ({len(ref)} bytes)")
    calls = {r: ctlib.compare_cell(doc, "aes-128-cbc", "encrypt", r)["calls"]
             for r in ("native", "aesni")}
    rc, so, se, out = compare(["--routes", "native,aesni", "-n", "1", "--by-size", "--"] + argv,
                              "enc-text")
    check(rc == 0, "text output: exit 0")
    text_tables(so, calls)
    ctlib.fits_80(so, "compare text")
    # five routes (tables continue 4 by 4), a spec longer than its column, a long -o path
    long_spec = "aes-*-cbc=aesni,aes-*-ctr=aesni,aes-*-gcm=aesni,aes-*-xts=aesni,aes-*-ecb=native"
    deep = os.path.join(ctlib.tmpdir("enc-wide"), "a-directory-name-long-enough" * 2, "to-wrap",
                        "cmp")
    p = ctlib.run([ctlib.CRYPTRACE, "compare", "-o", deep, "--routes", "native,aesni", "--route",
                   long_spec, "--route", "aes-*-cbc=native", "--route", "aes-128-*=aesni",
                   "-n", "1", "--"] + argv, text=True)
    rc, so, se = p.returncode, p.stdout, p.stderr
    check(rc == 0, f"five routes: exit 0 ({rc}: {se.strip()[-200:]})")
    ctlib.fits_80(so, "compare text with five routes and a long spec")
    check("routes 1-4 of 5" in so and "route 5 of 5" in so,
          "the fifth route continues in a table of its own")
    check(re.search(r"^  path +native +aesni +route3 +route4$", so, re.M) and
          re.search(r"^  path +route5$", so, re.M), "route columns 4 by 4")
    check(all(part in so for part in long_spec.split(",")), "the long spec is shown whole, wrapped")


def text_tables(so, calls):
    """The text layout: one table per figure, rows = paths, columns = routes."""
    for title in ("wall MB/s (median over rounds)", "CPU MB/s (user+sys, median over rounds)",
                  "calls (median over rounds)", "wall MB/s vs native (ratio)",
                  "implementation per route"):
        check(re.search(rf"^{re.escape(title)}$", so, re.M), f"a table '{title}'")
    check(len(re.findall(r"^  path +native +aesni$", so, re.M)) == 4,
          "four tables with one column per route")
    rows = re.findall(r"^  aes-128-cbc encrypt +([\d.]+[MG]?) +([\d.]+[MG]?)$", so, re.M)
    check(len(rows) == 4, f"aes-128-cbc encrypt is a row of each table ({rows})")
    # openssl enc of the same file makes the same calls on every run: the calls table says it
    check(rows[2] == (str(calls["native"]), str(calls["aesni"])),
          f"the calls row {rows[2]} matches the JSON run's calls {calls}")
    check(rows[3][0] == "1.00", f"the reference route's ratio is 1.00 ({rows[3]})")
    check(re.search(r"^  aes-128-cbc encrypt: native=provider:default, aesni=route:aesni$", so,
                    re.M), "the implementation line names what served each route")
    check(re.search(r"^aes-128-cbc encrypt by request size", so, re.M) and
          re.search(r"^  requests of +native +aesni$", so, re.M) and
          re.search(r"^  \d+[kM]?\+ bytes +[\d.]+ +[\d.]+$", so, re.M),
          "--by-size adds tables whose rows are request-size buckets")


def test_usage():
    for args, what in ((["--routes", "native,bogus", "--", "true"], "unknown route"),
                       (["--routes", "native,aes-*=aesnii", "--", "true"], "bad spec"),
                       (["--repeat", "0", "--", "true"], "--repeat 0"),
                       ([], "no command")):
        rc, so, se, out = compare(args, "usage")
        check(rc == 2, f"{what}: exit 2 (got {rc}: {se.strip()})")
        check(not os.path.exists(os.path.join(out, "native", "1", "stdout")),
              f"{what}: nothing ran")
    rc = ctlib.cryptrace("compare", "-n", "1", "-o", ctlib.tmpdir("nf"), "--",
                         "/nonexistent/prog").returncode
    check(rc == 127, f"a missing command exits 127 (got {rc})")


def test():
    test_defaults()
    test_interleaved()
    test_progress_on_tty()
    test_exit_status_changed()
    test_output_changed()
    test_identical_enc()
    test_usage()


ctlib.main(test)
