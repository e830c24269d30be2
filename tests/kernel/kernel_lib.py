# SPDX-License-Identifier: MIT
"""Helpers for the kernel suite's host tests: run a program bare and under the preload, read the
trace back with `cryptrace report --json`, check, skip with 77. Paths come from meson (env)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from ctlib import secretscan as ctsecrets

CRYPTRACE = os.environ.get('CRYPTRACE', '')
CT_LIB = os.environ.get('CT_LIB', '')
EXAMPLES = os.environ.get('CT_KERNEL_EXAMPLES', '')
FAKE_CDEV = os.environ.get('CT_FAKE_CDEV', '')
CDEV_CLIENT = os.environ.get('CT_CDEV_CLIENT', '')


class Failure(Exception):
    pass


def skip(reason):
    print('SKIP:', reason)
    sys.exit(77)


def check(cond, what):
    if not cond:
        raise Failure(what)
    print('ok:', what)


def main(fn):
    for p in (CRYPTRACE, CT_LIB):
        if not p or not os.path.exists(p):
            print('FAIL: the launcher or the preload is not built (run through meson test): %r' % p)
            sys.exit(1)
    tmp = tempfile.mkdtemp(prefix='ct-kernel-')
    leaked = False
    try:
        fn(tmp)
        # no key, IV or plaintext in the traces it wrote (tests/integration/ctsecrets.py)
        leaked = bool(ctsecrets.check_dirs([tmp]))
    except Failure as e:
        print('FAIL:', e)
        sys.exit(1)
    finally:
        if not os.environ.get('CT_KEEP_TMP'):
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if leaked else 0)


def run(argv, preload=(), outdir=None, env_extra=None):
    """Runs argv with LD_PRELOAD set to the given libraries (none: bare). Returns CompletedProcess
    with text output."""
    env = dict(os.environ)
    env.pop('LD_PRELOAD', None)
    for k in list(env):
        if k.startswith('CRYPTRACE_') and k != 'CRYPTRACE':
            del env[k]
    if preload:
        env['LD_PRELOAD'] = ' '.join(preload)
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        env['CRYPTRACE_OUT'] = outdir
    if env_extra:
        env.update(env_extra)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def report(*inputs):
    """The merged JSON report of the given trace files or directories."""
    r = subprocess.run([CRYPTRACE, 'report', '--json', *inputs], capture_output=True, text=True,
                       timeout=60)
    if r.returncode not in (0, 1):
        raise Failure('cryptrace report failed (%d): %s' % (r.returncode, r.stderr))
    return json.loads(r.stdout)


def report_files(outdir):
    """Events of every trace file in outdir, named one by one so that a continuation file
    (<name>.ctrace.1, written after the program closed the trace fd) is read too. A continuation
    repeats its process's cumulative snapshot: the reporter counts the newest one only."""
    names = sorted(os.listdir(outdir))
    return report(*[os.path.join(outdir, n) for n in names])['events']


def events(doc_or_list, **want):
    evs = doc_or_list['events'] if isinstance(doc_or_list, dict) else doc_or_list
    return [e for e in evs if all(e.get(k) == v for k, v in want.items())]


def paths(doc, **want):
    return [p for p in doc['paths'] if all(p.get(k) == v for k, v in want.items())]
