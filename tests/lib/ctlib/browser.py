# SPDX-License-Identifier: MIT
"""ctlib.browser - headless Chromium for the HTML report (skips, saying why, without it) and the
elements of a dumped DOM with their attributes (the data-* of the report's chart points)."""
import html.parser
import shutil
import subprocess
import tempfile

from .harness import skip

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


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
