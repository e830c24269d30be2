# SPDX-License-Identifier: MIT
"""ctlib.tlsecho - the TLS servers and clients of the reliability suite's signal tests
(daemon_signals.py, idle_kill.py, fatal_signals.py): `openssl s_server -rev` (one process) and
the forking Python echo server (tests/reliability/tls_echo_server.py: a parent and a child per
connection), each started bare or under the preload in a session of its own, and burst clients
(tests/reliability/tls_burst_client.py) under the preload.

The clients end normally (END exit), so their traces are exact; every TLS record a server
encrypted, its client decrypted, and the other way round: a server's counts must equal its
clients' with the direction swapped, whatever the record layer passes to EVP per record."""
import os
import subprocess
import sys
import threading

from .harness import RUN_TIMEOUT, SRC_ROOT, Failure, check, tmpdir
from .programs import bare_env, need_program, preload_env

# The helper programs, beside the tests that use them.
HERE = os.path.join(SRC_ROOT, "tests", "reliability")
# Generous: a server or client that printed nothing by then is broken (never a speed check).
LINE_TIMEOUT = 60
# The record-layer ciphers (AEAD): the random-number generator's AES (DRBG) differs per process.
RECORD_CIPHERS = ("-gcm", "-ccm", "chacha20-poly1305", "-ocb")
SERVERS = ("s_server", "forking")


class Lines:
    """Reads a child's stdout on a thread (so that it never blocks on a full pipe) and lets the
    test wait for a line that starts with a prefix."""

    def __init__(self, stream):
        self.lines, self.cond, self.done = [], threading.Condition(), False
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in stream:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def wait_for(self, prefix, what):
        with self.cond:
            ok = self.cond.wait_for(lambda: self.done or any(
                ln.startswith(prefix) for ln in self.lines), timeout=LINE_TIMEOUT)
            hit = [ln for ln in self.lines if ln.startswith(prefix)]
            if not ok or not hit:
                raise Failure(f"{what}: no `{prefix}` line: {self.lines[-5:]}")
            return hit[0]


class Server:
    """kind s_server or forking; traced into outdir with CRYPTRACE_FLUSH_MS=flush_ms, or bare
    when outdir is None."""

    def __init__(self, kind, cert, key, outdir=None, flush_ms=None):
        if kind == "s_server":
            argv = [need_program("openssl"), "s_server", "-accept", "127.0.0.1:0", "-cert",
                    cert, "-key", key, "-rev"]
            ready = "ACCEPT "
        else:
            argv = [sys.executable, os.path.join(HERE, "tls_echo_server.py"), cert, key]
            ready = "listening "
        extra = {"CRYPTRACE_FLUSH_MS": flush_ms} if flush_ms else {}
        env = preload_env(outdir, **extra) if outdir else bare_env()
        self.kind = kind
        # its own working directory: a core dumped by SIGQUIT lands there, not in the tree
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True,
                                  cwd=tmpdir(f"{kind}-cwd"))
        self.out = Lines(self.p.stdout)
        try:
            self.port = int(self.out.wait_for(ready, f"{kind} start").split(":")[-1].split()[-1])
        except Failure:
            self.kill()
            raise

    def signal(self, sig):
        """To every process of the server (the forking server's children too)."""
        os.killpg(self.p.pid, sig)

    def wait(self):
        try:
            return self.p.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure(f"{self.kind} still running {RUN_TIMEOUT} s after the signal")

    def kill(self):
        try:
            os.killpg(self.p.pid, 9)
        except ProcessLookupError:
            pass
        self.p.wait()


class Client:
    """tls_burst_client.py under the preload (outdir): COUNT lines of SIZE bytes, then idle."""

    def __init__(self, port, outdir, count, size, version):
        env = preload_env(outdir) if outdir else bare_env()
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "tls_burst_client.py"),
                                   str(port), str(count), str(size), version], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        self.out = Lines(self.p.stdout)
        self.expect = count * size

    def burst_done(self):
        line = self.out.wait_for("burst ", "client burst")
        f = dict(kv.split("=") for kv in line.split()[1:])
        check(int(f["sent"]) == int(f["received"]) == self.expect,
              f"the client sent and got back {self.expect} bytes: {line}")

    def end(self):
        try:
            rc = self.p.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Failure("a client did not see its server go")
        self.out.wait_for("ended", "client end")
        check(rc == 0, f"the client exited 0 ({rc}): {self.out.lines[-3:]}")


def record_totals(doc, direction):
    """{cipher: (calls, bytes)} of the record-layer ciphers in one direction, all processes."""
    rows = {}
    for p in doc.get("paths", []):
        c = p.get("cipher", "")
        if p.get("dir") == direction and c.endswith(RECORD_CIPHERS):
            calls, nbytes = rows.get(c, (0, 0))
            rows[c] = (calls + p.get("calls", 0), nbytes + p.get("bytes", 0))
    return rows


def check_mirror(server_doc, client_doc, what, min_calls):
    """The servers encrypted exactly what the clients decrypted, and decrypted what they
    encrypted (calls and bytes, per cipher)."""
    for sdir, cdir in (("encrypt", "decrypt"), ("decrypt", "encrypt")):
        srv, cli = record_totals(server_doc, sdir), record_totals(client_doc, cdir)
        check(srv == cli, f"{what}: server {sdir} {srv} == clients' {cdir} {cli}")
        check(sum(c for c, _ in srv.values()) >= min_calls,
              f"{what}: the burst is in the server's trace ({srv})")
