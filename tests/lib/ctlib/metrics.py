# SPDX-License-Identifier: MIT
"""ctlib.metrics - Prometheus expositions checked by the Prometheus project's own tools: promtool
(Debian's prometheus) and the OpenMetrics and text-format parsers of Debian's
python3-prometheus-client, through tests/metrics/omparse.py under Debian's /usr/bin/python3
(the tests may run under another python3). The metrics suite's tests import it."""
import json
import os
import shutil
import subprocess
from collections import defaultdict

from .harness import SRC_ROOT, Failure, check, skip

__all__ = ["need_tools", "parse", "promtool_check", "by_labels", "sums"]

OMPARSE = os.path.join(SRC_ROOT, "tests", "metrics", "omparse.py")
DEBIAN_PYTHON = "/usr/bin/python3"


def need_tools():
    """promtool's path; skips (77) without promtool or the Python parsers."""
    promtool = shutil.which("promtool")
    if not promtool:
        skip("promtool is not installed (Debian package prometheus: tests/setup-deps.sh)")
    p = subprocess.run([DEBIAN_PYTHON, "-c", "import prometheus_client"], capture_output=True)
    if p.returncode != 0:
        skip("python3-prometheus-client is not installed for /usr/bin/python3 (tests/setup-deps.sh)")
    return promtool


def parse(text, dialect):
    """[(family, type, name, labels, value)] of an exposition; Failure when the parser rejects it.
    dialect: "openmetrics" or "text"."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    p = subprocess.run([DEBIAN_PYTHON, OMPARSE, dialect], input=text.encode(), capture_output=True)
    if p.returncode != 0:
        raise Failure(f"the {dialect} parser rejects the exposition: {p.stderr.decode().strip()}")
    return [tuple(x) for x in json.loads(p.stdout)]


def promtool_check(promtool, text, tag):
    """`promtool check metrics` accepts the exposition without a complaint."""
    if isinstance(text, str):
        text = text.encode()
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True)
    out = (p.stdout + p.stderr).decode(errors="replace").strip()
    check(p.returncode == 0 and not out, f"{tag}: promtool check metrics is silent" if not out else
          f"{tag}: promtool check metrics says: {out[:400]}")


def by_labels(samples, name):
    """{frozenset(labels.items()): value} of the samples called name."""
    return {frozenset(s[3].items()): s[4] for s in samples if s[2] == name}


def sums(samples, name, label):
    """{label value: sum} of the samples called name ({} when there is none)."""
    out = defaultdict(float)
    for s in samples:
        if s[2] == name:
            out[s[3].get(label, "")] += s[4]
    return dict(out)
