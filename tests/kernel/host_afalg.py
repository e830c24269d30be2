#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""AF_ALG on this host, which refuses it (EAFNOSUPPORT): the examples fail the same way traced or
not and the trace shows the failed socket(AF_ALG) with its decoded type and the caller; for
`openssl speed -engine afalg -evp aes-128-cbc` (a silent fallback: it prints `Invalid engine` and
benchmarks software AES) the caller is inside the engine, afalg.so. afalg_calls prints the same
return values and errno bare, preloaded and under `cryptrace run`: the setsockopt hook passes every
errno of calls on other descriptors (bad fd, not a socket, another level or option, a bad optlen
or pointer) through, and socket(AF_ALG) fails the same."""
import os
import shutil

import ctlib
from ctlib import check

EXAMPLES = os.environ.get('CT_KERNEL_EXAMPLES', '')
AFALG_CALLS = os.environ.get('CT_AFALG_CALLS', '')


def bare(argv):
    return ctlib.run(argv, env=ctlib.bare_env(), text=True)


def preloaded(argv, out):
    return ctlib.run(argv, env=ctlib.preload_env(out), text=True)


def test():
    if ctlib.afalg_refused() != 'EAFNOSUPPORT':
        ctlib.skip('AF_ALG works on this host: the EAFNOSUPPORT story does not apply (the vm suite covers AF_ALG)')
    for name, expect_type in (('afalg_bench', 'SOCK_SEQPACKET|SOCK_CLOEXEC'),
                              ('afalg_aead', 'SOCK_SEQPACKET|SOCK_CLOEXEC')):
        prog = os.path.join(EXAMPLES, name)
        argv = [prog, '--count', '1'] if name == 'afalg_aead' else [prog, '--count', '1', '--sizes', '16']
        out = ctlib.tmpdir(name)
        bare_run, traced = bare(argv), preloaded(argv, out)
        check(bare_run.returncode == 2 and traced.returncode == 2, '%s exits 2, traced or not' % name)
        check(traced.stderr == bare_run.stderr == 'socket(AF_ALG): Address family not supported by protocol\n',
              '%s prints the errno: %s' % (name, traced.stderr.strip()))
        ev = ctlib.events(ctlib.report_ok([out]), kind='call-failed', call='socket',
                          errno_name='EAFNOSUPPORT')
        check(len(ev) == 1 and ev[0]['detail'] == 'family=AF_ALG type=%s protocol=0' % expect_type,
              '%s: socket EAFNOSUPPORT decoded (%s)' % (name, ev and ev[0]['detail']))
        check(name in ev[0]['callsite'], '%s: call site in the program' % name)

    # every return value and errno, with and without the preload
    if not AFALG_CALLS or not os.path.exists(AFALG_CALLS):
        raise ctlib.Failure('afalg_calls is not built: %r' % AFALG_CALLS)
    bare_run = bare([AFALG_CALLS])
    out = ctlib.tmpdir('calls')
    pre = preloaded([AFALG_CALLS], out)
    launched = ctlib.run_traced([AFALG_CALLS], ctlib.tmpdir('calls-run'), env=ctlib.bare_env(),
                                text=True)
    check(bare_run.returncode == pre.returncode == launched.returncode == 2,
          'afalg_calls exits 2 (no AF_ALG) bare, preloaded and launched: %d %d %d'
          % (bare_run.returncode, pre.returncode, launched.returncode))
    check(bare_run.stdout == pre.stdout == launched.stdout,
          'every return value and errno identical with and without the preload')
    for line in ('setsockopt(-1, SOL_ALG, ALG_SET_KEY, 16)             r=-1 errno=EBADF',
                 'setsockopt(/dev/null, SOL_ALG, ALG_SET_KEY, 16)      r=-1 errno=ENOTSOCK',
                 'setsockopt(closed fd, SOL_ALG, ALG_SET_KEY, 16)      r=-1 errno=EBADF',
                 'setsockopt(udp, SOL_ALG, ALG_SET_KEY, 16)            r=-1 errno=ENOPROTOOPT',
                 'setsockopt(udp, SOL_SOCKET, 9999, 4)                 r=-1 errno=ENOPROTOOPT',
                 'setsockopt(udp, SOL_SOCKET, SO_RCVBUF, optlen 2)     r=-1 errno=EINVAL',
                 'setsockopt(udp, SOL_SOCKET, SO_RCVBUF, NULL, 4)      r=-1 errno=EFAULT',
                 'setsockopt(udp, SOL_SOCKET, SO_RCVBUF, 4)            r=0',
                 'socket(AF_ALG)                                       r=-1 errno=EAFNOSUPPORT'):
        check(line in pre.stdout.splitlines(), 'preloaded: ' + ' '.join(line.split()))
    ev = ctlib.events(ctlib.report_ok([out]), kind='call-failed')
    check([(e['call'], e['errno_name'], e['detail']) for e in ev] ==
          [('socket', 'EAFNOSUPPORT', 'family=AF_ALG type=SOCK_SEQPACKET|SOCK_CLOEXEC protocol=0')],
          'the failed socket(AF_ALG) is the one event: setsockopt on other descriptors is not ours')
    check(ev[0]['callsite'].startswith('afalg_calls'), 'called from afalg_calls')

    openssl = shutil.which('openssl')
    if not openssl:
        ctlib.skip('no openssl binary')
    argv = [openssl, 'speed', '-seconds', '1', '-bytes', '16', '-engine', 'afalg', '-evp', 'aes-128-cbc']
    out = ctlib.tmpdir('openssl')
    bare_run, traced = bare(argv), preloaded(argv, out)
    check(bare_run.returncode == traced.returncode == 0, 'openssl speed exits 0 both ways (the silent fallback)')
    check('Invalid engine "afalg"' in traced.stderr + traced.stdout, 'openssl says Invalid engine "afalg"')
    ev = ctlib.events(ctlib.report_ok([out]), kind='call-failed', call='socket',
                      errno_name='EAFNOSUPPORT')
    check(len(ev) == 1 and ev[0]['detail'].startswith('family=AF_ALG type=SOCK_SEQPACKET'),
          'the engine\'s socket(AF_ALG) failure is in the trace')
    check('afalg.so' in ev[0]['callsite'].split('\n')[0],
          'its call site is inside afalg.so: ' + ev[0]['callsite'].replace('\n', ' < '))


if __name__ == '__main__':
    ctlib.main(test)
