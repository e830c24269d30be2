#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --openmetrics` and `--prometheus` on real programs: the OpenMetrics text is
accepted by the strict OpenMetrics parser and the text-format one by `promtool check metrics`;
both carry the same samples; calls and bytes summed by impl are the JSON report's; the labels
are api, impl, cipher, direction and executable only (no pid, no argv), a hostile executable
path escaped; the masked openssl (OPENSSL_ia32cap) has the software-aes finding gauge and the
clean one none; a damaged trace and a file that is not one are counted."""
import json
import os
import shutil
from collections import defaultdict

import ctlib
from ctlib import check
from ctlib import metrics

LABELS = {"api", "impl", "cipher", "direction", "executable"}
# a directory name with a quote, a backslash, a line feed and a byte that is not UTF-8
HOSTILE = b'ev"il\\dir\n\xff'


def enc(openssl, env=None):
    return [openssl, "enc", "-aes-128-cbc", "-K", "00112233445566778899aabbccddeeff",
            "-iv", "0102030405060708090a0b0c0d0e0f10", "-in", "/bin/ls", "-out", "/dev/null"]


def test():
    promtool = metrics.need_tools()
    openssl = ctlib.need_program("openssl")
    tmp = ctlib.tmpdir("om")
    weird_dir = os.path.join(tmp.encode(), HOSTILE)
    os.mkdir(weird_dir)
    weird = os.path.join(weird_dir, b"openssl")
    shutil.copy(openssl, weird)
    d = os.path.join(tmp, "traces")
    p = ctlib.run_traced([weird.decode("utf-8", "surrogateescape")] + enc(openssl)[1:], d)
    check(p.returncode == 0, "openssl enc from a hostile directory ran under cryptrace")
    p = ctlib.run_traced(enc(openssl), d, env=ctlib.masked_env())
    check(p.returncode == 0, "openssl enc under the AES-NI mask ran under cryptrace")

    doc = json.loads(ctlib.cryptrace_ok("report", "--json", d).stdout)
    om = ctlib.cryptrace_ok("report", "--openmetrics", d).stdout
    check(om.endswith(b"\n# EOF\n"), "the OpenMetrics text ends with # EOF")
    got = metrics.parse(om, "openmetrics")
    print(f"ok: the OpenMetrics parser accepts it ({len(got)} samples)")
    text = ctlib.cryptrace_ok("report", "--prometheus", d).stdout
    metrics.promtool_check(promtool, text, "--prometheus")
    plain = metrics.parse(text, "text")
    key = lambda s: (s[2], tuple(sorted(s[3].items())), s[4])  # noqa: E731
    check(sorted(map(key, got)) == sorted(map(key, plain)),
          "--prometheus carries the same samples as --openmetrics")

    counters = [s for s in got if s[2].startswith("cryptrace_cipher_")]
    check(counters and all(set(s[3]) == LABELS for s in counters),
          f"every cipher counter has exactly the labels {sorted(LABELS)}")
    for field, name in (("bytes", "cryptrace_cipher_bytes_total"), ("calls", "cryptrace_cipher_calls_total")):
        want = defaultdict(int)
        for pth in doc["paths"]:
            want[pth["impl"]] += pth[field]
        have = metrics.sums(got, name, "impl")
        check(have == dict(want), f"{name} by impl is the JSON report's {field}: {dict(want)}")
    exes = {s[3]["executable"] for s in counters}
    hostile = weird.decode("utf-8", "replace")  # the \xff byte becomes U+FFFD
    check(exes == {openssl, hostile}, f"executables {sorted(exes)!r}: the two openssl paths, the hostile one "
          "escaped and read back as written (\\xff as U+FFFD)")
    check(all(p["exe"] in exes for p in doc["processes"]), "the same executables as the JSON report's")

    fnd = {(s[3]["kind"], s[3]["executable"]): s[4] for s in got if s[2] == "cryptrace_findings"}
    if ctlib.cpu_has_aes():
        check(fnd.get(("software-aes", openssl), 0) >= 1,
              f"the masked openssl has a software-aes finding gauge ({fnd})")
        check(not any(k == "software-aes" and e == hostile for k, e in fnd), "the clean one has none")
        cpu = metrics.by_labels(got, "cryptrace_cpu_aes_instructions")
        check(list(cpu.values()) == [1], "cryptrace_cpu_aes_instructions is 1 on this AES-NI CPU")
    files = metrics.by_labels(got, "cryptrace_trace_files")
    check(files[frozenset({("state", "read")})] == len(doc["processes"]) == 2 and
          files[frozenset({("state", "damaged")})] == 0, "two trace files read, none damaged")

    # a trace cut short inside a record (two thirds in; a cut on a record's end would be a trace
    # whose process was killed there, not damage): read up to the damage, counted, exit 1 as the
    # other outputs do
    cut = ctlib.tmpdir("om-cut")
    src = ctlib.traces(d)[0]
    with open(src, "rb") as f:
        data = f.read()
    start = next(s for s, e, _, _ in ctlib.trace_records(data) if e > len(data) * 2 // 3)
    with open(os.path.join(cut, os.path.basename(src)), "wb") as f:
        f.write(data[: start + 9])
    p = ctlib.cryptrace("report", "--openmetrics", cut)
    check(p.returncode == 1, f"a damaged trace: exit 1 ({p.returncode})")
    files = metrics.by_labels(metrics.parse(p.stdout, "openmetrics"), "cryptrace_trace_files")
    check(files[frozenset({("state", "damaged")})] == 1, "the damaged trace is counted")
    with open(os.path.join(cut, "forged.1.ctrace"), "wb") as f:
        f.write(b"not a trace at all\n")
    p = ctlib.cryptrace("report", "--openmetrics", cut)
    files = metrics.by_labels(metrics.parse(p.stdout, "openmetrics"), "cryptrace_trace_files")
    check(p.returncode == 2 and files[frozenset({("state", "unreadable")})] == 1 and
          files[frozenset({("state", "read")})] == 1, "a file that is not a trace: exit 2, counted unreadable")


ctlib.main(test)
