# SPDX-License-Identifier: MIT
"""ctlib.secretscan - the secrets scan every suite runs over the trace files a test wrote,
before its temporary directories are removed (issue 8: no trace may hold a key, IV or plaintext
the test used). Looked for, raw and as hex text (lower and upper case):
  - what the test registered with register() (ctlib.secret()): keys, IVs, samples of plaintexts;
  - the fixed keys, IVs and data of the examples and test programs, read from their sources
    (string and byte-array literals named key/iv/pt, the KEY/IV/K hex literals of the Python and
    shell tests) or rebuilt from their fill functions (GENERATED below).
A trace file is any regular file under the scanned directories whose name ends in .ctrace[.N] or
that starts with the trace magic. The whole file is scanned, the HEADER's argv included: a key
typed on a command line (`openssl enc -K HEX`) is recorded as <redacted> (common/redact.c).
Secrets are cut into 8-byte windows every 8 bytes (plus the last), so any leaked run of 15
bytes or more of a secret is found; windows with fewer than 4 distinct byte values (zero runs,
memset fills) are left out, as they occur in any binary file. tests/reliability/secret_scan.py is
the focused test (every 8-byte window at every offset, planted leaks that must be found).

As a command (the shell suites): secretscan.py [--hex NAME=HEX]... DIR|FILE... exits 1 on a hit.
It imports nothing but the standard library, so that it runs as a plain script too."""
import glob
import os
import re
import sys

MAGIC = b"CRYTRACE"
TRACE_NAME = re.compile(r"\.ctrace(\.\d+)?$")
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
WINDOW = 8

_registered = {}
_known = None


def _kex_fill(n, seed):  # examples/kernel/kex_common.h kex_fill
    out = bytearray()
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        out.append((seed >> 16) & 0xFF)
    return bytes(out)


def _cdev_fill(n, seed):  # tests/cryptodev-cuse/cdev_check.c fill
    out = bytearray()
    for _ in range(n):
        seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
        out.append(seed >> 24)
    return bytes(out)


# Keys, IVs and data the programs compute rather than spell out (name: bytes).
GENERATED = {
    "kex_fill key (cryptodev_bench, afalg_bench)": _kex_fill(64, 1),
    "kex_fill iv (cryptodev_bench, afalg_bench)": _kex_fill(16, 2),
    "kex_fill data (cryptodev_bench, afalg_bench)": _kex_fill(64, 3),
    "kex_fill key (afalg_aead)": _kex_fill(32, 11),
    "kex_fill iv (afalg_aead)": _kex_fill(12, 12),
    "kex_fill aad+data (afalg_aead)": _kex_fill(64, 13),
    "cdev_check key": _cdev_fill(64, 5),
    "cdev_check iv": _cdev_fill(16, 8),
    "cdev_check data": _cdev_fill(64, 7),
    "cdev_check big data": _cdev_fill(64, 21),
    # tests/kernel/fixed_data.h (emul_client, afalg_calls)
    "emul_client/afalg_calls key": bytes((i * 7 + 1) & 0xFF for i in range(64)),
    "emul_client iv": bytes(0xA0 + i for i in range(16)),
    "emul_client data": bytes((i * 13 + 5) & 0xFF for i in range(64)),
    "cdev_compat32 key (FIPS-197 key)": bytes(range(16)),
    "cdev_compat32 iv": bytes(0xF0 + i for i in range(16)),
    "cdev_compat32 data": bytes((i * 7) & 0xFF for i in range(64)),
    "FIPS-197 C.1 plaintext (lowlevel_aes)": bytes.fromhex("00112233445566778899aabbccddeeff"),
}

_C_STR = re.compile(r'\b(key|iv|pt|plain\w*)\[(\d*)\]\s*=\s*"((?:[^"\\]|\\.)*)"')
_C_ARR = re.compile(r"\b(key|iv|pt|plain\w*)\[(\d*)\]\s*=\s*\{([0-9a-fA-Fx,\s]+)\}")
_PY_HEX = re.compile(
    r'^\s*(KEY|IV|K|\w+_KEY|\w+_IV)\s*=\s*(?:bytes\.fromhex\()?"([0-9a-fA-F]{32,})"', re.M)
_SH_HEX = re.compile(r"\b(K|IV|KEY)=([0-9a-fA-F]{32,})\b")


def _c_bytes(text, size):
    raw = text.encode("latin-1").decode("unicode_escape").encode("latin-1") if "\\" in text \
        else text.encode("latin-1")
    if size:  # C semantics: the array is as declared, NUL-padded or cut
        raw = (raw + b"\0" * int(size))[: int(size)]
    return raw


def known():
    """{name: bytes}: the fixed secrets of the examples and test programs (cached)."""
    global _known
    if _known is not None:
        return _known
    found = dict(GENERATED)
    skip_dirs = ("tests/unit/", "tests/fuzz/")  # never run under the preload
    for pattern in ("examples/**/*.c", "tests/**/*.c", "tests/**/*.py", "tests/**/*.sh"):
        for f in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            rel = os.path.relpath(f, ROOT)
            if rel.startswith(skip_dirs):
                continue
            try:
                text = open(f, encoding="latin-1").read()
            except OSError:
                continue
            if f.endswith(".c"):
                for name, size, lit in _C_STR.findall(text):
                    found[f"{rel} {name} \"{lit[:12]}...\""] = _c_bytes(lit, size)
                for name, size, body in _C_ARR.findall(text):
                    vals = [int(v, 0) for v in re.findall(r"0x[0-9a-fA-F]+|\d+", body)]
                    if vals and all(0 <= v < 256 for v in vals):
                        found[f"{rel} {name} {{...}}"] = bytes(vals)
            else:
                rx = _PY_HEX if f.endswith(".py") else _SH_HEX
                for name, hexs in rx.findall(text):
                    found[f"{rel} {name}"] = bytes.fromhex(hexs)
    _known = found
    return found


def register(name, data):
    """Adds a secret this test used. Long data (a plaintext) is sampled: 64 bytes at the start,
    a quarter, half and three quarters in."""
    data = bytes(data)
    if len(data) <= 256:
        _registered[name] = data
        return
    for i, at in enumerate((0, len(data) // 4, len(data) // 2, 3 * len(data) // 4)):
        _registered[f"{name} @{at}"] = data[at:at + 64]


def registered():
    return dict(_registered)


def _windows(secret):
    starts = list(range(0, len(secret) - WINDOW + 1, WINDOW))
    if len(secret) >= WINDOW and starts[-1] != len(secret) - WINDOW:
        starts.append(len(secret) - WINDOW)
    out = []
    for s in starts:
        w = secret[s:s + WINDOW]
        if len(set(w)) >= 4:
            out.append(w)
    return out


def needles(secrets):
    """[(needle, name, form)]: raw windows and their hex text, lower and upper case."""
    out, seen = [], set()
    for name, secret in secrets.items():
        for w in _windows(secret):
            for needle, form in ((w, "raw"), (w.hex().encode(), "hex"),
                                 (w.hex().upper().encode(), "HEX")):
                if needle not in seen:
                    seen.add(needle)
                    out.append((needle, name, form))
    return out


def trace_files(paths):
    """The trace files under the given directories (and the given files themselves)."""
    out = []
    for top in paths:
        if os.path.isfile(top):
            out.append(top)
            continue
        for d, _, names in os.walk(top):
            for n in names:
                f = os.path.join(d, n)
                if os.path.islink(f) or not os.path.isfile(f):
                    continue
                if TRACE_NAME.search(n):
                    out.append(f)
                    continue
                try:
                    with open(f, "rb") as fh:
                        if fh.read(len(MAGIC)) == MAGIC:
                            out.append(f)
                except OSError:
                    pass
    return sorted(out)


def scan(files, extra=None):
    """[hit text] for every secret (registered + known + extra) found in the files."""
    secrets = dict(known())
    secrets.update(_registered)
    secrets.update(extra or {})
    ns = needles(secrets)
    hits = []
    for f in files:
        try:
            data = open(f, "rb").read()
        except OSError:
            continue
        for needle, name, form in ns:
            at = data.find(needle)
            if at >= 0:
                hits.append(f"{f}: {name} ({form}, {needle[:16]!r}) at byte {at}")
    return hits


def check_dirs(dirs, say=print):
    """Scans the trace files under dirs; says what it found; returns the hits (empty: clean)."""
    files = trace_files([d for d in dirs if os.path.exists(d)])
    hits = scan(files)
    if hits:
        say(f"FAIL: a key, IV or plaintext is in a trace file: {hits[:5]}")
    elif files:
        say(f"ok: secrets: none of {len(known()) + len(_registered)} keys/IVs/plaintexts "
            f"(raw or hex) in the {len(files)} trace files this test wrote")
    return hits


def _main(argv):
    paths, extra = [], {}
    it = iter(argv)
    for a in it:
        if a == "--hex":
            name, _, hexs = next(it).partition("=")
            extra[name] = bytes.fromhex(hexs)
        else:
            paths.append(a)
    _registered.update(extra)
    return 1 if check_dirs(paths) else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
