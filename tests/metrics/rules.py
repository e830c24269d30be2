#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""contrib/prometheus/cryptrace.rules.yml: `promtool check rules` accepts it, and `promtool test
rules` (tests/metrics/rules_test.yml) shows each alert firing on the hosts it is for and not on
the others (software AES on a CPU without AES instructions, or at the info level, is no alert)."""
import os

import ctlib
from ctlib import check
from ctlib import metrics

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(ctlib.SRC_ROOT, "contrib", "prometheus", "cryptrace.rules.yml")


def test():
    promtool = metrics.need_tools()
    p = ctlib.run([promtool, "check", "rules", RULES], text=True)
    check(p.returncode == 0 and "SUCCESS: 4 rules found" in p.stdout,
          f"promtool check rules: {(p.stdout + p.stderr).strip()[:300]}")
    p = ctlib.run([promtool, "test", "rules", "rules_test.yml"], cwd=HERE, text=True)
    check(p.returncode == 0 and "SUCCESS" in p.stdout,
          "promtool test rules: every alert on its host only" if p.returncode == 0 else
          f"promtool test rules: {(p.stdout + p.stderr).strip()[:1500]}")


ctlib.main(test)
