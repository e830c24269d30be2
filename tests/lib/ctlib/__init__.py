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
The names of the first three are available from ctlib itself."""
from .harness import (CRYPTRACE, CT_EXAMPLES, CT_LIB, MIB, RUN_TIMEOUT, SKIP, SRC_ROOT, Failure,
                      built, check, example, main, plaintext, run_cases, secret, skip, tmpdir)
from .programs import (MASK, afalg_refused, asan_runtime, bare_env, cpu_has_aes, cryptrace,
                       cryptrace_ok, free_port, masked_env, need_program, preload_env, run,
                       run_traced, speed_count, throwaway_cert)
from .reports import (check_clean, check_complete, check_expect, check_masked, compare_cell,
                      describe_paths, events, finding, fits_80, json_equal, kinds, parse_expect,
                      parse_json, paths, per_process, processes, report, report_ok, totals, traced, traces)

__all__ = [
    # harness
    "CRYPTRACE", "CT_EXAMPLES", "CT_LIB", "MIB", "RUN_TIMEOUT", "SKIP", "SRC_ROOT", "Failure",
    "built", "check", "example", "main", "plaintext", "run_cases", "secret", "skip", "tmpdir",
    # programs
    "MASK", "afalg_refused", "asan_runtime", "bare_env", "cpu_has_aes", "cryptrace",
    "cryptrace_ok", "free_port", "masked_env", "need_program", "preload_env", "run", "run_traced",
    "speed_count", "throwaway_cert",
    # reports
    "check_clean", "check_complete", "check_expect", "check_masked", "compare_cell",
    "describe_paths", "events", "finding", "fits_80", "json_equal", "kinds", "parse_expect", "parse_json",
    "paths", "per_process", "processes", "report", "report_ok", "totals", "traced", "traces",
]
