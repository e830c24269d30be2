#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The emulated /dev/crypto and AF_ALG on this host (no /dev/crypto, AF_ALG refused): with
`--route aes-*=aesni` the kernel examples run and verify against OpenSSL, the trace shows their
paths as route:aesni with no kernel syscalls and a route event per session; `openssl speed -engine
afalg` loads the engine and its AF_ALG work is served in-process, call for call. Without the route
nothing changes (the examples exit 2, openssl says Invalid engine)."""
import os
import re
import shutil

import ctlib
from ctlib import check

ROUTE = 'aes-*=aesni'
CLIENT = os.environ.get('CT_EMUL_CLIENT', '')
EXAMPLES = os.environ.get('CT_KERNEL_EXAMPLES', '')
FAKE_CDEV = os.environ.get('CT_FAKE_CDEV', '')


def bare(argv):
    return ctlib.run(argv, env=ctlib.bare_env(), text=True)


def launched(name, argv, route=ROUTE, **extra):
    """argv under `cryptrace run -o DIR --route ROUTE`; returns (CompletedProcess, DIR)."""
    out = ctlib.tmpdir(name)
    return ctlib.run_traced(argv, out, quiet=False, extra=['--route', route],
                            env=ctlib.bare_env(**extra), text=True), out


def traced(name, argv):
    """argv under `cryptrace run --route`; returns (CompletedProcess, report)."""
    r, out = launched(name, argv)
    return r, ctlib.report_ok([out])


def routed_paths(doc, api):
    ps = ctlib.paths(doc, api=api)
    check(ps and all(p['impl'] == 'route:aesni' and p['route'] == 'aesni' and p['flags'] & 1 and
                     p['syscalls'] == 0 for p in ps),
          '%s paths are route:aesni, flagged routed, 0 kernel syscalls: %s' %
          (api, sorted({(p['cipher'], p['dir'], p['entry'], p['calls']) for p in ps})))
    check(ctlib.events(doc, kind='route'), 'route events recorded')
    return ps


def test():
    if not ctlib.cpu_has_aes():
        ctlib.skip('no AES-NI on this CPU: the aesni route falls back to the kernel')
    if ctlib.afalg_refused() is None or os.path.exists('/dev/crypto'):
        ctlib.skip('this host has AF_ALG or /dev/crypto: the emulation-on-a-bare-host story does not apply '
             '(the vm test covers the kernel case)')
    ex = lambda n: os.path.join(EXAMPLES, n)  # noqa: E731

    # The semantics the examples do not reach (errno, IV chaining, AIO, poll/dup/close).
    if CLIENT:
        r, doc = traced('client', [CLIENT])
        print(r.stdout)
        check(r.returncode == 0, 'emul_client: every check passes under the route (exit %d)' % r.returncode)
        fails = ctlib.events(doc, kind='call-failed')
        check(any(e['call'] == 'bind' and e['errno_name'] == 'ENOENT' for e in fails),
              'the refused bind is recorded as call-failed ENOENT')
        check(any(e['call'].startswith('ioctl(CIOCGSESSION)') and e['errno_name'] == 'EINVAL' for e in fails),
              'the refused CIOCGSESSION is recorded as call-failed EINVAL')

    # cryptodev_bench: all modes, both directions; the example verifies against OpenSSL.
    sizes = '16,64,1024,16384,65536'
    for direction in ([], ['--decrypt']):
        argv = [ex('cryptodev_bench'), '--cipher', 'all', '--count', '7', '--sizes', sizes] + direction
        b = bare(argv)
        check(b.returncode == 2 and 'open(/dev/crypto)' in b.stderr,
              'bare cryptodev_bench%s: no device, exit 2' % ' '.join(direction))
        r, doc = traced('cdev' + ''.join(direction), argv)
        check(r.returncode == 0 and 'cryptrace-aesni' in r.stdout,
              'cryptodev_bench%s under the route: exit 0, driver cryptrace-aesni (%s)' %
              (' '.join(direction), r.stderr.strip()[-200:]))
        ps = routed_paths(doc, 'cryptodev')
        # 4 modes x 5 sizes x (7 in one session + 7 "full" sessions), all through CIOCCRYPT
        want_calls = 4 * 5 * (7 + 7)
        want_bytes = 4 * (7 + 7) * sum(int(n) for n in sizes.split(','))
        check(sum(p['calls'] for p in ps) == want_calls and sum(p['bytes'] for p in ps) == want_bytes,
              'cryptodev calls and bytes add up: %d == %d, %d == %d' %
              (sum(p['calls'] for p in ps), want_calls, sum(p['bytes'] for p in ps), want_bytes))
        check({p['cipher'] for p in ps} == {'aes-128-cbc', 'aes-128-ctr', 'aes-128-ecb', 'aes-128-xts'},
              'one path per mode')

    # Without a device, a cipher the route leaves alone meets "a device lacking it": EINVAL.
    r, out = launched('cbc-only', [ex('cryptodev_bench'), '--cipher', 'ctr', '--count', '1', '--sizes', '16'],
                      route='aes-*-cbc=aesni')
    ev = ctlib.events(ctlib.report_ok([out]), kind='call-failed', call='ioctl(CIOCGSESSION)',
                      errno_name='EINVAL')
    check(r.returncode == 2 and 'Invalid argument' in r.stderr and ev and 'AES_CTR' in ev[0]['detail'],
          'a cbc-only route: the CTR session is refused with EINVAL and recorded (%s)' % r.stderr.strip()[-80:])

    # No AES-NI usable (capped off): the route cannot serve, one fallback event says why, and the
    # program meets the kernel as it is (no device: exit 2).
    r, out = launched('no-aesni', [ex('cryptodev_bench'), '--count', '1', '--sizes', '16'],
                      CRYPTRACE_AESNI_MAX='none')
    doc = ctlib.report_ok([out])
    fb = ctlib.events(doc, kind='fallback', call='route')
    check(r.returncode == 2 and 'open(/dev/crypto)' in r.stderr and len(fb) == 1 and
          'no AES-NI' in fb[0]['detail'] and ctlib.events(doc, kind='call-failed', call='open'),
          'without AES-NI: one fallback event, the ENOENT open recorded, exit 2 as bare')

    # A device present (the kernel suite's stand-in, preloaded after the tracer so it is what the
    # tracer's "real" open/ioctl reach): the route takes CTR only; CBC/ECB/XTS stay on the device.
    if FAKE_CDEV and os.path.exists(FAKE_CDEV):
        out = ctlib.tmpdir('cdev-present')
        argv = [ex('cryptodev_bench'), '--cipher', 'all', '--no-verify', '--count', '3', '--sizes', '16,4096']
        r = ctlib.run(argv, env=ctlib.preload_env(out, [FAKE_CDEV], CRYPTRACE_ROUTE='aes-*-ctr=aesni'),
                      text=True)
        check(r.returncode == 0, 'cryptodev_bench with a device and a ctr-only route: exit 0 (%s)' % r.stderr[-200:])
        doc = ctlib.report_ok([out])
        byc = {p['cipher']: p for p in ctlib.paths(doc, api='cryptodev')}
        check(set(byc) == {'aes-128-cbc', 'aes-128-ctr', 'aes-128-ecb', 'aes-128-xts'}, 'four cryptodev paths')
        ctr = byc['aes-128-ctr']
        check(ctr['impl'] == 'route:aesni' and ctr['syscalls'] == 0, 'ctr: route:aesni, 0 syscalls')
        check(all(byc[c]['impl'].startswith('kernel:') and byc[c]['syscalls'] == byc[c]['calls']
                  for c in ('aes-128-cbc', 'aes-128-ecb', 'aes-128-xts')),
              'cbc/ecb/xts stay on the device, 1 syscall per request: %s' %
              [(c, p['impl'], p['syscalls'], p['calls']) for c, p in sorted(byc.items())])
        # the routed CTR sessions never reach the device, so OpenSSL's check holds
        out = ctlib.tmpdir('cdev-present-ctr')
        r = ctlib.run([ex('cryptodev_bench'), '--cipher', 'ctr', '--count', '3', '--sizes', '16,100,4096'],
                      env=ctlib.preload_env(out, [FAKE_CDEV], CRYPTRACE_ROUTE='aes-*-ctr=aesni'),
                      text=True)
        ps = ctlib.paths(ctlib.report_ok([out]), api='cryptodev')
        check(r.returncode == 0 and ps and all(p['impl'] == 'route:aesni' for p in ps),
              'CTR with a device present is served in-process and verifies against OpenSSL (exit %d)'
              % r.returncode)

    # afalg_bench: every skcipher, copy and splice modes.
    for mode in ('sendmsg', 'splice'):
        for alg in ('cbc(aes)', 'ctr(aes)', 'ecb(aes)', 'xts(aes)'):
            argv = [ex('afalg_bench'), '--mode', mode, '--alg', alg, '--count', '5', '--sizes', sizes]
            check(bare(argv).returncode == 2, 'bare afalg_bench %s %s: exit 2' % (mode, alg))
            r, doc = traced('afalg-%s-%s' % (mode, alg[:3]), argv)
            check(r.returncode == 0, 'afalg_bench --mode %s --alg %s under the route: exit 0 (%s)' %
                  (mode, alg, (r.stdout + r.stderr).strip()[-300:]))
            ps = routed_paths(doc, 'afalg')
            want_entry = 'vmsplice+splice' if mode == 'splice' else 'sendmsg+read'
            check(all(p['entry'] == want_entry for p in ps), 'entry %s' % want_entry)
            want_bytes = (5 + 5) * sum(int(n) for n in sizes.split(','))
            check(sum(p['calls'] for p in ps) == 5 * (5 + 5) and sum(p['bytes'] for p in ps) == want_bytes,
                  'afalg calls and bytes add up: %d, %d' % (sum(p['calls'] for p in ps),
                                                             sum(p['bytes'] for p in ps)))

    # afalg_aead: GCM encrypt/decrypt against OpenSSL, the tampered tag refused with EBADMSG.
    for bits in ('128', '256'):
        argv = [ex('afalg_aead'), '--bits', bits, '--count', '50']
        r, doc = traced('aead' + bits, argv)
        check(r.returncode == 0, 'afalg_aead --bits %s under the route: exit 0 (%s)' % (bits, r.stdout.strip()[-200:]))
        ps = routed_paths(doc, 'afalg')
        dec_err = sum(p['errors'] for p in ps if p['dir'] == 'decrypt')
        check(dec_err == 1, 'the tampered tag is the one decrypt error (%d)' % dec_err)
        check(any(e['call'] == 'read' and e['errno_name'] == 'EBADMSG'
                  for e in ctlib.events(doc, kind='call-failed')), 'EBADMSG recorded')

    # openssl speed -engine afalg: the engine loads, AF_ALG served in-process, call for call.
    openssl = shutil.which('openssl')
    if not openssl:
        ctlib.skip('no openssl binary')
    argv = [openssl, 'speed', '-seconds', '1', '-bytes', '16', '-engine', 'afalg', '-evp', 'aes-128-cbc']
    b = bare(argv)
    check('Invalid engine "afalg"' in b.stdout + b.stderr, 'without the route: Invalid engine (unchanged)')
    argv = [openssl, 'speed', '-seconds', '1', '-engine', 'afalg', '-evp', 'aes-128-cbc']
    r, doc = traced('speed', argv)
    text = r.stdout + r.stderr
    check(r.returncode == 0 and 'Invalid engine' not in text and 'Engine "afalg" set.' in text,
          'with the route: Engine "afalg" set, exit %d' % r.returncode)
    counts = [int(n) for n in re.findall(r": (\d+) aes-128-cbc's in", text, re.I)]
    check(len(counts) == 6, 'openssl reports 6 block sizes: %s' % counts)
    ps = routed_paths(doc, 'afalg')
    check(all(p['entry'] == 'io_submit' for p in ps), 'the engine reads with io_submit')
    calls = sum(p['calls'] for p in ps)
    check(calls == sum(counts), 'afalg calls == openssl\'s count: %d == %d' % (calls, sum(counts)))
    evp = ctlib.paths(doc, api='evp', impl='engine:afalg')
    check(evp and sum(p['calls'] for p in evp) == calls, 'the EVP path engine:afalg has the same calls')


if __name__ == '__main__':
    ctlib.main(test)
