#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preload/libcryptrace.map, the library's exports and its sources agree, so the map cannot drift:
 1. every name in the map's global: list is defined and exported by libcryptrace.so (GNU ld
    ignores listed names that nothing defines, so a stale entry would claim a hook that does not
    exist); the one exception is a name compiled only into some builds (ASan), and only when
    this build did not compile it;
 2. every symbol the library exports is in the map (nothing leaks past `local: *`);
 3. every symbol the library's own objects mark for export (CT_EXPORT: global, default
    visibility) is exported: a hook written but left out of the map would be hidden by the
    version script, and silently never run;
 4. every name `cryptrace attach` redirects (preload/gotpatch.c's patched_names) is in the map:
    a name left there after its hook went would redirect nothing."""
import os
import re
import shutil
import subprocess

import ctlib
from ctlib import check

MAP = os.path.join(ctlib.SRC_ROOT, 'preload', 'libcryptrace.map')
GOTPATCH = os.path.join(ctlib.SRC_ROOT, 'preload', 'gotpatch.c')
OBJDIR = os.environ.get('CT_PRELOAD_OBJDIR', '')
# Defined only under #if: the build either compiled it (then it must be exported) or not.
CONDITIONAL = {'__asan_default_options': 'ASan builds only (preload/init.c)'}
# musl defines these as macros for the plain names: its builds compile only the plain hooks
CONDITIONAL.update({n: 'not in musl builds, where it is a macro for %s' % n[:-2]
                    for n in ('open64', 'openat64', 'sendfile64', 'setrlimit64', 'prlimit64')})
CONDITIONAL.update({n: '32-bit glibc builds only (preload/kernel/khooks.h: CT_TIME64_HOOKS)'
                    for n in ('__ioctl_time64', '__fcntl_time64', '__setsockopt64', '__sendmsg64',
                              '__recvmsg64')})


def map_names(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    m = re.search(r'global\s*:(.*?)local\s*:', text, re.S)
    check(m is not None, 'the map has a global: and a local: section')
    names = [n.strip() for n in m.group(1).split(';') if n.strip()]
    check(all(re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', n) for n in names),
          'the global: section lists plain names (no globs): %d of them' % len(names))
    dups = sorted({n for n in names if names.count(n) > 1})
    check(not dups, 'no name listed twice %s' % dups)
    return set(names)


def readelf_globals(path, dynamic):
    """Defined global/weak symbols of path with default visibility: name -> type."""
    out = subprocess.run(['readelf', '-W', '--dyn-syms' if dynamic else '-s', path],
                         capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].endswith(':') or f[6] == 'UND':
            continue
        # __odr_asan.*: the one-definition-rule markers an ASan build adds for each global
        if f[4] in ('GLOBAL', 'WEAK') and f[5] == 'DEFAULT' and f[3] in ('FUNC', 'OBJECT', 'IFUNC') \
                and not f[7].startswith('__odr_asan'):
            syms[f[7].split('@')[0]] = f[3]
    return syms


def test():
    if not shutil.which('readelf'):
        ctlib.skip('readelf (binutils) is needed to read the symbol tables')
    check(os.path.isdir(OBJDIR), "the preload's object dir exists: %r" % OBJDIR)
    listed = map_names(open(MAP).read())
    exported = readelf_globals(ctlib.CT_LIB, True)
    objs = sorted(os.path.join(OBJDIR, f) for f in os.listdir(OBJDIR) if f.endswith('.o'))
    check(len(objs) > 10, '%d objects of libcryptrace.so in %s' % (len(objs), OBJDIR))
    marked = {}
    for o in objs:
        for name, typ in readelf_globals(o, False).items():
            marked.setdefault(name, os.path.basename(o))

    missing = sorted(n for n in listed - set(exported) if not (n in CONDITIONAL and n not in marked))
    check(not missing, 'every name in the map is defined and exported (stale: %s)' % missing)
    for n in sorted(set(CONDITIONAL) & listed - set(exported)):
        print('   (%s: not in this build, %s)' % (n, CONDITIONAL[n]))
    extra = sorted(set(exported) - listed)
    check(not extra, 'every exported symbol is in the map (unlisted: %s)' % extra)
    table = re.search(r'patched_names\[\] = \{(.*?)\};', open(GOTPATCH).read(), re.S)
    check(table is not None, 'gotpatch.c has its patched_names table')
    patched = re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', table.group(1))
    unlisted = sorted(set(patched) - listed)
    check(len(patched) > 100 and not unlisted,
          '%d names attach redirects, every one in the map (not: %s)' % (len(patched), unlisted))
    hidden = sorted('%s (%s)' % (n, marked[n]) for n in set(marked) - set(exported))
    check(not hidden, 'every CT_EXPORT symbol of the objects is exported (hidden by the map: %s)'
          % hidden)
    stray = sorted(set(exported) - set(marked))
    check(not stray, 'every export comes from the library\'s own objects (%s)' % stray)
    check({'socket', 'ioctl', 'syscall', 'EVP_CipherUpdate', 'cryptrace_version'} <= set(exported),
          'the hooks the map exists for are exported: %d symbols' % len(exported))


if __name__ == '__main__':
    ctlib.main(test)
