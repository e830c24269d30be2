# SPDX-License-Identifier: MIT
"""rlib - helpers for the reports suite on top of tests/integration/ctlib.py (same environment:
CRYPTRACE, CT_LIB, CT_EXAMPLES): running `cryptrace report` with any options, headless Chromium,
and reading the data-* attributes of the HTML report's chart points from a dumped DOM."""
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import ctlib  # noqa: E402
from ctlib import Failure, check, skip  # noqa: E402,F401

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def report(*args):
    """`cryptrace report ARGS`; returns the CompletedProcess (bytes)."""
    return ctlib.run([ctlib.CRYPTRACE, "report"] + list(args))


def report_ok(*args):
    p = report(*args)
    if p.returncode != 0:
        raise Failure(f"cryptrace report {' '.join(args)} exited {p.returncode}: "
                      f"{p.stderr.decode(errors='replace').strip()[:400]}")
    return p


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    skip("chromium is not installed (Debian package `chromium`; tests/setup-deps.sh installs it)")


def browse(url, *extra, timeout=120):
    """Runs headless Chromium on url with a fresh profile; returns (stdout, stderr) text."""
    profile = tempfile.mkdtemp(prefix="ct-chromium-")
    try:
        p = subprocess.run([chromium()] + CHROMIUM_FLAGS + [f"--user-data-dir={profile}"] +
                           list(extra) + [url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        return p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Elements(html.parser.HTMLParser):
    """Collects (tag, attrs) of every element, for reading the dumped DOM."""

    def __init__(self):
        super().__init__()
        self.elements = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def elements(text):
    p = Elements()
    p.feed(text)
    return p.elements


def close(a, b, rel=2e-5):
    """Equal within the JSON report's precision (numbers that are not whole print with 6
    significant digits there)."""
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
