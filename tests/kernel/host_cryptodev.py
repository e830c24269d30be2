#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The /dev/crypto hooks on this host, which has no /dev/crypto:
 1. cryptodev_bench under the preload fails like it does bare (exit 2, same stderr), and the trace
    shows the failed open("/dev/crypto") as ENOENT with a call site in cryptodev_bench; with
    --fallback it runs OpenSSL in software and says so.
 2. Against a stand-in /dev/crypto (fake_cryptodev.so, preloaded after the tracer: it plays the
    kernel), every cryptodev ioctl returns the same value and errno with and without the preload
    (cdev_client prints them); the trace decodes each one; the fd table follows dup2/F_DUPFD and
    forgets fds on close_range; after closefrom() closed the trace fd, recording goes on in a new
    file.
 3. cryptodev_bench on the stand-in: sessions, operations, syscalls, setup/teardown and the driver
    (from our own CIOCGSESSINFO) add up exactly.
 4. The text and HTML reports' kernel-interface section (init, deinit, syscalls per operation,
    spliced/copied, per size the operation's time and MB/s) shows the JSON's figures."""
import os
import re

import ctlib
from ctlib import browser, check

EXAMPLES = os.environ.get('CT_KERNEL_EXAMPLES', '')
FAKE_CDEV = os.environ.get('CT_FAKE_CDEV', '')
CDEV_CLIENT = os.environ.get('CT_CDEV_CLIENT', '')


def ns(text):
    """'828ns', '12.3us', '1.20ms', '2.000s' (the text report's durations) in ns."""
    m = re.fullmatch(r'([0-9.]+)(ns|us|ms|s)', text)
    if not m:
        raise ctlib.Failure('not a duration: %r' % text)
    return float(m.group(1)) * {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9}[m.group(2)]


def near(got, want, rel):
    return abs(got - want) <= rel * max(abs(want), 1e-300)


def kernel_section_matches(out, doc, page):
    """For every kernel path of the JSON report: set-up and teardown per session, operations,
    syscalls per operation, spliced/copied, and per size bucket the time of one operation and
    its MB/s alone and with the session cost spread over the operations, as the text report
    prints them (rounded: within 1%) and as the HTML carries them (full precision)."""
    r = ctlib.cryptrace('report', out, text=True)
    check(r.returncode == 0 and 'Kernel interfaces' in r.stdout, 'the text report has a kernel section')
    sec = r.stdout[r.stdout.index('Kernel interfaces'):].split('\n\n')[0].splitlines()
    check(all(len(line) <= 80 for line in sec), 'the kernel section fits 80 columns')
    h = ctlib.cryptrace('report', '--html', page, out)
    check(h.returncode == 0, 'cryptrace report --html')
    els = browser.elements(open(page, encoding='utf-8').read())
    kdivs = [(i, a) for i, (t, a) in enumerate(els) if t == 'div' and a.get('class') == 'kpath']
    kpaths = [(n, q) for n, q in enumerate(doc['paths'], 1) if q['api'] in ('cryptodev', 'afalg')]
    check(kpaths and len(kdivs) == len(kpaths), '%d kernel path(s), one HTML block each' % len(kpaths))
    for n, q in kpaths:
        s = q['session']
        setup = s['setup_ns'] / s['setup_calls'] if s['setup_calls'] else None
        down = s['teardown_ns'] / s['teardown_calls'] if s['teardown_calls'] else None
        per_op = (s['setup_ns'] + s['teardown_ns']) / q['calls']
        head = '  #%d %s %s %s %s' % (n, q['api'], q['impl'], q['cipher'], q['dir'])
        check(head in sec, 'text: %s' % head.strip())
        at = sec.index(head)
        m = re.search(r'init\s+(\d+) x (\S+)\s+deinit\s+(\d+) x (\S+)', sec[at + 1])
        check(m and int(m.group(1)) == s['setup_calls'] and int(m.group(3)) == s['teardown_calls'] and
              near(ns(m.group(2)), setup, 0.01) and near(ns(m.group(4)), down, 0.01),
              'text: init %s x %s, deinit %s x %s (JSON %d x %.0f ns, %d x %.0f ns)' %
              (m and m.group(1), m and m.group(2), m and m.group(3), m and m.group(4),
               s['setup_calls'], setup or -1, s['teardown_calls'], down or -1))
        m = re.search(r'ops\s+(\d+), ([0-9.]+) syscalls each, (\d+) spliced, (\d+) copied', sec[at + 2])
        check(m and int(m.group(1)) == q['calls'] and near(float(m.group(2)), q['syscalls'] / q['calls'], 0.005) and
              int(m.group(3)) == s['spliced_calls'] and int(m.group(4)) == q['calls'] - s['spliced_calls'],
              'text: %s' % sec[at + 2].strip())
        rows = {}
        for line in sec[at + 4:]:
            cells = line.split()
            if len(cells) != 5 or not cells[0].isdigit():
                break
            rows[int(cells[0])] = cells
        start = [i for i, a in kdivs if int(a['data-path']) == n][0]
        div = els[start][1]
        check(int(div['data-setup-calls']) == s['setup_calls'] and near(float(div['data-setup-ns']), setup, 1e-5) and
              int(div['data-teardown-calls']) == s['teardown_calls'] and
              near(float(div['data-teardown-ns']), down, 1e-5) and int(div['data-ops']) == q['calls'] and
              near(float(div['data-syscalls-per-op']), q['syscalls'] / q['calls'], 1e-9) and
              int(div['data-spliced']) == s['spliced_calls'] and
              near(float(div['data-session-ns-per-op']), per_op, 1e-5),
              'HTML: path #%d set-up, teardown, syscalls and splice figures equal the JSON' % n)
        trs = []
        for t, a in els[start + 1:]:
            if t == 'div' and a.get('class') == 'kpath':
                break
            if t == 'tr' and a.get('class') == 'kop':
                trs.append(a)
        check(len(trs) == len(q['sizes']) == len(rows), 'one row per size bucket (%d)' % len(q['sizes']))
        for b, tr in zip(q['sizes'], trs):
            op = b['wall_ns'] / b['calls']
            bps = b['bytes'] * 1e9 / b['wall_ns']
            full = b['bytes'] * 1e9 / (b['wall_ns'] + b['calls'] * per_op)
            cells = rows.get(b['bucket_low'])
            check(cells and int(cells[1]) == b['calls'] and near(ns(cells[2]), op, 0.01) and
                  near(float(cells[3]), bps / 1e6, 0.001) and near(float(cells[4]), full / 1e6, 0.001),
                  'text: %d B: %s calls, %s per op, %s MB/s, %s MB/s with init+deinit (JSON %.0f ns, %.4g, %.4g)' %
                  (b['bucket_low'], cells and cells[1], cells and cells[2], cells and cells[3],
                   cells and cells[4], op, bps / 1e6, full / 1e6))
            check(int(tr['data-size']) == b['bucket_low'] and int(tr['data-calls']) == b['calls'] and
                  near(float(tr['data-op-ns']), op, 1e-5) and near(float(tr['data-op-bps']), bps, 1e-5) and
                  near(float(tr['data-full-bps']), full, 1e-5),
                  'HTML: %d B row equals the JSON' % b['bucket_low'])


def bare(argv, preload=()):
    """argv without cryptrace (the stand-in device alone, when given)."""
    env = ctlib.bare_env()
    if preload:
        env['LD_PRELOAD'] = ' '.join(preload)
    return ctlib.run(argv, env=env, text=True)


def preloaded(argv, out, preload=()):
    return ctlib.run(argv, env=ctlib.preload_env(out, preload), text=True)


def test():
    if os.path.exists('/dev/crypto'):
        ctlib.skip('this host has /dev/crypto: the ENOENT story does not apply (the vm suite covers it)')
    bench = os.path.join(EXAMPLES, 'cryptodev_bench')

    # 1. the missing device
    argv = [bench, '--count', '1', '--sizes', '16']
    out = ctlib.tmpdir('missing')
    bare_run, traced = bare(argv), preloaded(argv, out)
    check(bare_run.returncode == 2 and traced.returncode == 2, 'cryptodev_bench exits 2 without /dev/crypto, traced or not')
    check(traced.stderr == bare_run.stderr and 'open(/dev/crypto): No such file or directory' in traced.stderr,
          'same message: ' + traced.stderr.strip())
    doc = ctlib.report_ok([out])
    ev = ctlib.events(doc, kind='call-failed', call='open', errno_name='ENOENT')
    check(len(ev) == 1 and ev[0]['count'] == 1, 'one failed open, ENOENT')
    check(ev[0]['detail'] == 'path=/dev/crypto flags=O_RDWR|O_CLOEXEC', 'decoded: ' + ev[0]['detail'])
    check('cryptodev_bench' in ev[0]['callsite'], 'call site in the program: ' + ev[0]['callsite'].split('\n')[0])

    out = ctlib.tmpdir('fallback')
    fb = preloaded([bench, '--fallback', '--count', '1', '--sizes', '16,64', '--cipher', 'cbc'], out)
    check(fb.returncode == 0 and 'falling back to OpenSSL EVP in software' in fb.stdout,
          '--fallback runs in software and says so')
    doc = ctlib.report_ok([out])
    check(len(ctlib.events(doc, kind='call-failed', call='open', errno_name='ENOENT')) == 1,
          'the fallback run still shows the failed open')
    check(any(p['api'] == 'evp' and p['cipher'] == 'aes-128-cbc' and p['calls'] >= 2 for p in doc['paths']),
          'and the work on an EVP path')

    # 2. every ioctl, against the stand-in device
    if not os.path.exists(FAKE_CDEV) or not os.path.exists(CDEV_CLIENT):
        raise ctlib.Failure('test helpers not built: %s %s' % (FAKE_CDEV, CDEV_CLIENT))
    bare_run = bare([CDEV_CLIENT], [FAKE_CDEV])
    out = ctlib.tmpdir('client')
    traced = preloaded([CDEV_CLIENT], out, [FAKE_CDEV])
    check(bare_run.returncode == 0 and traced.returncode == 0, 'cdev_client ran (%d/%d)' % (bare_run.returncode, traced.returncode))
    check(traced.stdout == bare_run.stdout, 'every return value and errno identical with and without the preload')
    check('fd -1 CIOCGSESSION                       r=-1 errno=EBADF' in traced.stdout,
          'ioctl on fd -1 passes EBADF through')
    files = sorted(os.listdir(out))
    check(len(files) == 2 and files[1].endswith('.ctrace.1'),
          'closefrom(3) closed the trace fd: recording went on in a second file: %s' % files)
    # each file named, so that the continuation (<name>.ctrace.1) is read too: it repeats its
    # process's cumulative snapshot, and the reporter counts the newest one only
    evs = ctlib.report_ok(ctlib.traces(out))['events']

    def one(call, errno_name, detail):
        got = [e for e in evs if e['call'] == call and e['errno_name'] == errno_name and e['detail'] == detail]
        check(len(got) == 1 and 'cdev_client' in got[0]['callsite'],
              '%s %s "%s" recorded once with its call site' % (call, errno_name or 'ok', detail))

    one('ioctl(CIOCGSESSION)', '', 'cipher=AES_CBC keylen=32 (aes-256-cbc) mac=0 driver=cbc-aes-aesni kernel_driver_only=0')
    one('ioctl(CIOCCRYPT)', 'EINVAL', 'op=CIOCCRYPT ses=7 dir=encrypt len=64 inplace')
    one('ioctl(CIOCASYNCCRYPT)', 'EINVAL', 'op=CIOCASYNCCRYPT ses=7 dir=encrypt len=64 inplace')
    one('ioctl(CIOCAUTHCRYPT)', 'EINVAL', 'op=CIOCAUTHCRYPT ses=7 dir=decrypt len=64 auth_len=13 tag_len=16 iv_len=12')
    one('ioctl(CIOCGSESSINFO)', 'EINVAL', 'op=CIOCGSESSINFO ses=7')
    one('ioctl(CIOCFSESSION)', 'EINVAL', 'op=CIOCFSESSION ses=7')
    # CIOCKEY and CIOCASYMFEAT decoded when they work too: the operation and its parameter
    # sizes (no number), the device's feature bits; a refused CIOCKEY with what was asked.
    kop = [e for e in evs if e['call'] == 'ioctl(CIOCKEY)' and e['kind'] == 'session']
    check(len(kop) == 1 and kop[0]['errno_name'] == '' and kop[0]['count'] == 1 and
          kop[0]['detail'] == 'crk_op=MOD_EXP iparams=3 oparams=1 nbits=2048,17,2048,2048 status=0',
          'a CIOCKEY that worked is recorded decoded: %s' % [e['detail'] for e in kop])
    one('ioctl(CIOCKEY)', 'EINVAL', 'op=CIOCKEY crk_op=DSA_SIGN iparams=5 oparams=2 nbits=2048,17,2048,2048,0,0,0')
    check('CIOCASYMFEAT features=0x3' in traced.stdout, 'the stand-in offers MOD_EXP|MOD_EXP_CRT')
    one('ioctl(CIOCASYMFEAT)', '', 'features=0x3 MOD_EXP|MOD_EXP_CRT')
    one('ioctl(CIOCASYMFEAT)', 'EFAULT', 'op=CIOCASYMFEAT')
    one('ioctl(CIOCGSESSION)', 'EFAULT', 'arg=not decoded (the kernel did not read it)')
    one('ioctl(CIOCGSESSION)', '', 'cipher=AES_CBC keylen=16 (aes-128-cbc) mac=0 driver=cbc-aes-aesni kernel_driver_only=0')
    one('ioctl(CIOCGSESSION)', '', 'cipher=AES_CTR keylen=24 (aes-192-ctr) mac=0 driver=ctr-aes-aesni kernel_driver_only=0')
    one('ioctl(CIOCGSESSION)', 'EINVAL', 'cipher=AES_XTS keylen=48 mac=0')
    check(not [e for e in evs if 'keylen=17' in e['detail']],
          'the /dev/null fd that reused a closed number is not traced (close_range forgot it)')
    check(not [e for e in evs if e['call'] == 'ioctl(CIOCASYNCFETCH)'], 'a fetch with nothing ready (EAGAIN) is not a failure')

    # 3. the numbers of a benchmark run
    out = ctlib.tmpdir('bench')
    r = preloaded([bench, '--no-verify', '--cipher', 'cbc', '--bits', '256', '--count', '2', '--sizes', '16,4096'],
                  out, [FAKE_CDEV])
    check(r.returncode == 0, 'cryptodev_bench on the stand-in device')
    doc = ctlib.report_ok([out])
    ps = ctlib.paths(doc, api='cryptodev', cipher='aes-256-cbc')
    check(len(ps) == 1, 'one cryptodev aes-256-cbc path')
    p = ps[0]
    check(p['impl'] == 'kernel:cbc-aes-aesni' and p['dir'] == 'encrypt' and p['key_bits'] == 256,
          'impl from our CIOCGSESSINFO, dir and key bits: %s %s %s' % (p['impl'], p['dir'], p['key_bits']))
    check(p['flags'] & 8 and not p['flags'] & 4, 'classified as a CPU-instruction driver (flags %d)' % p['flags'])
    # per size: 2 set-up/crypt/tear-down cycles + 2 operations in one session
    check(p['calls'] == 8 and p['bytes'] == 4 * 16 + 4 * 4096, 'calls 8, bytes %d' % p['bytes'])
    check(p['syscalls'] == 8, 'one syscall per operation (%d)' % p['syscalls'])
    s = p['session']
    check(s['setup_calls'] == 6 and s['teardown_calls'] == 6 and s['setup_ns'] > 0,
          'set-up and teardown of the 6 sessions that worked (%s)' % s)
    ses = ctlib.events(doc, kind='session', call='ioctl(CIOCGSESSION)')
    check(sum(e['count'] for e in ses if 'keylen=32' in e['detail']) == 6, 'six session events for keylen=32')

    # 4. the text and HTML reports' kernel section shows the JSON's figures
    kernel_section_matches(out, doc, os.path.join(ctlib.tmpdir('html'), 'bench.html'))


if __name__ == '__main__':
    ctlib.main(test)
