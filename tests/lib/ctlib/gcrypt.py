# SPDX-License-Identifier: MIT
"""libgcrypt for the tests that run its programs (suites gcrypt and real): its hardware-feature
list as the library states it, the code cryptrace should then name for each mode, and a
private /etc/gcrypt/hwf.deny that denies AES-NI to one command (libgcrypt's only switch for its
hardware features) without touching the machine's."""
import ctypes
import ctypes.util
import os
import shutil
import subprocess

from .harness import check

__all__ = ["hwflist", "expected_impl", "hwf_deny_wrap", "gpg_overhead"]


def gpg_overhead(name):
    """The bytes gpg --symmetric (no compression, MDC) encrypts besides a file's own, for a file
    of 64 KiB or more named name (RFC 4880): the random prefix (a block and its last two bytes
    again: 16 + 2), the literal data packet's header (an old-format tag byte and a 4-byte length:
    5) and its body's fields before the data (format 'b', the name's length byte, the name, a
    4-byte date: 6 + len(name)), and the MDC packet (2 header bytes and a SHA-1: 22). One
    SEIPD packet; its version byte is not encrypted."""
    return 18 + 5 + 6 + len(name.encode()) + 22


def hwflist(wrap=()):
    """libgcrypt's gcry_get_config(0, "hwflist") ("hwflist:intel-aesni:...:") in this process, or
    under wrap (a command prefix: the hwf.deny overlay) in a child; None without libgcrypt."""
    if wrap:
        code = "import ctlib.gcrypt as g; print(g.hwflist() or '')"
        p = subprocess.run(list(wrap) + ["python3", "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        return p.stdout.strip() or None
    name = ctypes.util.find_library("gcrypt")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    lib.gcry_check_version.restype = ctypes.c_char_p
    lib.gcry_check_version.argtypes = [ctypes.c_char_p]
    lib.gcry_get_config.restype = ctypes.c_void_p
    lib.gcry_get_config.argtypes = [ctypes.c_int, ctypes.c_char_p]
    lib.gcry_free.argtypes = [ctypes.c_void_p]
    lib.gcry_check_version(None)
    p = lib.gcry_get_config(0, b"hwflist")
    if not p:
        return None
    s = ctypes.string_at(p).decode()
    lib.gcry_free(p)
    return s.strip()


def expected_impl(hwf, cipher, decrypt):
    """The libgcrypt 1.10 AES code for cipher ("aes-256-xts") in a direction, from hwf (its
    rijndael.c: VAES for the bulk functions of CBC and CFB decryption, CTR, GCM, OCB, XTS)."""
    feats = set((hwf or "").split(":"))
    mode = cipher.split("-")[-1]
    if "intel-aesni" in feats:
        vaes = {"intel-vaes-vpclmul", "intel-avx2"} <= feats
        bulk = mode in ("ctr", "gcm", "ocb", "xts") or (decrypt and mode in ("cbc", "cfb"))
        return "gcrypt:vaes" if vaes and bulk else "gcrypt:aesni"
    if "intel-ssse3" in feats:
        return "gcrypt:ssse3"
    return None  # another CPU: the tests that need a name skip


def hwf_deny_wrap(tmp):
    """The command prefix that runs a command with intel-aesni in /etc/gcrypt/hwf.deny for it
    alone (an overlay of /etc in a private mount namespace), or None, printing why it cannot
    here."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skip the hwf.deny half: it needs root and unshare (a private mount namespace)")
        return None
    upper, work = os.path.join(tmp, "etc-upper"), os.path.join(tmp, "etc-work")
    os.makedirs(os.path.join(upper, "gcrypt"))
    os.mkdir(work)
    with open(os.path.join(upper, "gcrypt", "hwf.deny"), "w") as f:
        f.write("intel-aesni\n")
    script = ("mount --make-rprivate / && mount -t overlay overlay -o "
              f"lowerdir=/etc,upperdir={upper},workdir={work} /etc && exec \"$@\"")
    wrap = ["unshare", "-m", "sh", "-c", script, "sh"]
    probe = subprocess.run(wrap + ["cat", "/etc/gcrypt/hwf.deny"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    if probe.returncode != 0 or probe.stdout != b"intel-aesni\n":
        print(f"skip the hwf.deny half: no private overlay of /etc here "
              f"({probe.stderr.decode(errors='replace').strip()[-200:]})")
        return None
    check(not os.path.exists("/etc/gcrypt/hwf.deny") or
          "intel-aesni" not in open("/etc/gcrypt/hwf.deny").read(),
          "the machine's own /etc/gcrypt/hwf.deny does not deny intel-aesni")
    return wrap
