# SPDX-License-Identifier: MIT
"""ctlib - the one helper library of the Python tests, for every suite. meson puts tests/lib
on PYTHONPATH (tests/meson.build: test_py_env), and a test begins with

    import ctlib
    from ctlib import check

and ends with ctlib.main(test). Its parts, each a module of this package:
  harness     how a test runs: check/Failure/skip/main, exit codes 0/1/77, temporary
              directories, secrets registered for the scan, the build's paths
  programs    running programs bare, under `cryptrace run` or a bare LD_PRELOAD; host facts
  reports     trace files and `cryptrace report --json` read back, selected and checked
  secretscan  the scan of every trace file a passing test wrote for keys, IVs, plaintexts
              (also a command for the shell suites)
and, imported by the tests that need them:
  daemons     sshd, openssl s_server and curl on loopback under the launcher (e2e, real)
  tlsecho     TLS echo servers and burst clients, bare or preloaded (reliability)
  browser     headless Chromium and the HTML report's DOM (reports)
  perfetto    Perfetto files: the trace-event schema and the viewers' nesting rule (reports, scale)
The names of the first three are available from ctlib itself."""
from . import harness, programs, reports
from .harness import *  # noqa: F401,F403
from .programs import *  # noqa: F401,F403
from .reports import *  # noqa: F401,F403

__all__ = harness.__all__ + programs.__all__ + reports.__all__
