# SPDX-License-Identifier: MIT
"""ctlib.programs - running programs with and without cryptrace: bare, under the launcher
(`cryptrace run`) or under a bare LD_PRELOAD, with libasan first in the sanitizer pass; what
this host has (programs, AES instructions, AF_ALG); the OPENSSL_ia32cap mask that hides AES-NI;
a throwaway TLS certificate."""
import errno
import os
import re
import shutil
import socket
import subprocess
import sysconfig

from .harness import CRYPTRACE, CT_LIB, RUN_TIMEOUT, Failure, check, skip

__all__ = ["MASK", "afalg_refused", "asan_runtime", "bare_env", "cpu_flags", "cpu_has_aes", "cryptrace",
           "cryptrace_ok", "free_port", "masked_env", "need_program", "openssl_libcrypto",
           "preload_env", "run", "run_traced", "speed_count", "system_lib_dirs", "system_library",
           "throwaway_cert"]

# AES-NI (bit 57) and PCLMULQDQ (bit 33) masked out of libcrypto's capabilities.
MASK = "~0x200000200000000"


def run(argv, env=None, stdin=None, cwd=None, input_bytes=None, text=False, timeout=RUN_TIMEOUT):
    """Runs argv; returns CompletedProcess with bytes stdout/stderr (str with text=True)."""
    p = subprocess.run(argv, env=env, stdin=stdin, cwd=cwd, input=input_bytes,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if text:
        p.stdout = p.stdout.decode(errors="replace")
        p.stderr = p.stderr.decode(errors="replace")
    return p


def cryptrace(*args, env=None, text=False):
    """`cryptrace ARGS`; returns the CompletedProcess."""
    return run([CRYPTRACE] + list(args), env=env, text=text)


def cryptrace_ok(*args, env=None, text=False):
    """`cryptrace ARGS`, which must exit 0."""
    p = cryptrace(*args, env=env, text=text)
    if p.returncode != 0:
        err = p.stderr if text else p.stderr.decode(errors="replace")
        raise Failure(f"cryptrace {' '.join(args)} exited {p.returncode}: {err.strip()[:400]}")
    return p


def run_traced(argv, outdir, quiet=True, extra=(), env=None, **kw):
    """`cryptrace run [-q] -o outdir [extra] -- argv`."""
    cmd = [CRYPTRACE, "run"] + (["-q"] if quiet else []) + ["-o", outdir] + list(extra)
    return run(cmd + ["--"] + list(argv), env=env, **kw)


def asan_runtime():
    """The libasan the preload was built against, when CT_ASAN=1 (the sanitizer CI pass), else
    None: an ASan-built preload inside a non-ASan program needs the runtime loaded first."""
    if os.environ.get("CT_ASAN") != "1":
        return None
    out = subprocess.run(["ldd", CT_LIB], stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():  # "libasan.so.8 => /path (..)" or, preloaded, "/path (..)"
        if "libasan" in line:
            return line.split("=>")[-1].split()[0]
    return None


def bare_env(**extra):
    """This environment without the preload (no LD_PRELOAD), plus extra (values as strings)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def preload_env(outdir=None, preload=(), **extra):
    """The bare-preload environment, no launcher: LD_PRELOAD = [libasan] libcryptrace.so
    [preload...], CRYPTRACE_OUT = outdir (unset without one), then extra (values as strings; it
    may override any of them)."""
    env = bare_env()
    libs = [CT_LIB] + list(preload)
    asan = asan_runtime()
    if asan:
        libs.insert(0, asan)
        env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
    env["LD_PRELOAD"] = " ".join(libs)
    if outdir:
        env["CRYPTRACE_OUT"] = outdir
    env.update({k: str(v) for k, v in extra.items()})
    return env


def masked_env(base=None):
    """base (this environment by default) with AES-NI masked out of libcrypto (MASK)."""
    env = dict(base if base is not None else os.environ)
    env["OPENSSL_ia32cap"] = MASK
    return env


def need_program(name):
    """The program's path; skips the test (77) when it is not installed."""
    path = shutil.which(name)
    if not path:
        skip(f"{name} is not installed")
    return path


def system_lib_dirs():
    """This machine's library directories, its multiarch ones first (Debian's
    /usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu...: whatever Python was built for)."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    dirs = [os.path.join(d, multiarch) for d in ("/usr/lib", "/lib") if multiarch]
    return dirs + ["/usr/lib64", "/lib64", "/usr/lib", "/lib"]


def system_library(name):
    """The path of a system library (e.g. "libcrypto.so.3"), or None."""
    return next((p for p in (os.path.join(d, name) for d in system_lib_dirs()) if os.path.exists(p)),
                None)


def openssl_libcrypto():
    """The libcrypto the openssl command loads (ldd's answer), or None."""
    openssl = shutil.which("openssl")
    if not openssl:
        return None
    out = subprocess.run(["ldd", openssl], stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"libcrypto\.so\S* => (\S+)", out)
    return m.group(1) if m else None


def afalg_refused():
    """The errno name socket(AF_ALG) fails with here (EAFNOSUPPORT on this kind of host), or None
    when the kernel accepts it."""
    try:
        socket.socket(38, socket.SOCK_SEQPACKET, 0).close()  # AF_ALG
        return None
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def cpu_flags():
    """The x86 CPU flags of /proc/cpuinfo's first "flags" line (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((set(line.split(":", 1)[1].split()) for line in f
                         if line.startswith("flags")), set())
    except OSError:
        return set()


def cpu_has_aes():
    """This CPU advertises AES instructions (x86 "aes"; arm64 "aes" in Features)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith(("flags", "Features")) and " aes " in line + " "
                       for line in f)
    except OSError:
        return False


def speed_count(stderr_text, name):
    """N from openssl speed's `... N <name>'s in 1.00s` (`N <NAME> ops in` from OpenSSL 3.2 on;
    1.1 writes the name in lower case)."""
    m = re.search(r"(\d+) " + re.escape(name) + r"(?:'s| ops) in", stderr_text, re.I)
    if not m:
        raise Failure(f"no count for {name} in openssl speed output: {stderr_text[:300]!r}")
    return int(m.group(1))


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def throwaway_cert(tmp):
    """A self-signed RSA key and certificate for localhost in tmp: (key, cert) paths."""
    openssl = need_program("openssl")
    key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    p = run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
             "-out", cert, "-days", "1", "-subj", "/CN=localhost"])
    check(p.returncode == 0, "throwaway certificate" if p.returncode == 0 else
          f"throwaway certificate: {p.stderr.decode(errors='replace')[-200:]}")
    return key, cert
