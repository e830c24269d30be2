#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach $(pidof nginx)`: nginx (master as root, 2 workers as nobody) started
without cryptrace, serving a file over TLS 1.3 (issue 23). Every process of it is attached at
once (two users: the trace directory lets each create its own file); N downloads by curl arrive
intact; the workers' AES-GCM calls and bytes, added up, equal those of a control run of the same
N downloads with nginx under `cryptrace run` from its start; after the detach nginx serves on
(50 downloads, intact) and every trace ends with the detach."""
import os
import socket
import subprocess
import time

import ctlib
from ctlib import attach, check, daemons
from ctlib.programs import free_port, throwaway_cert

NGINX = "/usr/sbin/nginx"
FILE_BYTES = 4 * ctlib.MIB
DOWNLOADS = 8
AFTER = 50


def conf(tmp, port, cert, key):
    path = os.path.join(tmp, f"nginx-{port}.conf")
    with open(path, "w") as f:
        f.write(f"""daemon off;
master_process on;
worker_processes 2;
pid {tmp}/nginx-{port}.pid;
error_log {tmp}/error-{port}.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.3;
        root {tmp};
    }}
}}
""")
    return path


def wait_port(port, proc):
    deadline = time.monotonic() + attach.START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise ctlib.Failure(f"nginx did not listen on {port}")


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=attach.STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()



def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


def test():
    attach.need_attach()
    if not os.access(NGINX, os.X_OK):
        ctlib.skip(f"{NGINX} is not installed (tests/setup-deps.sh installs nginx-light)")
    if os.geteuid() != 0:
        ctlib.skip("nginx's master runs as root here (its workers as nobody)")
    openssl, curl = daemons.need_openssl_curl()
    tmp = ctlib.tmpdir("attach-nginx")
    os.chmod(tmp, 0o755)  # the workers (nobody) read the file
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, FILE_BYTES)
    os.chmod(src, 0o644)
    key, cert = throwaway_cert(tmp)

    # control: nginx under `cryptrace run` from its start
    port = free_port()
    ctl_out = ctlib.tmpdir("attach-nginx-control")
    ctl = subprocess.Popen([ctlib.CRYPTRACE, "run", "-q", "-o", ctl_out, "--", NGINX, "-c",
                            conf(tmp, port, cert, key)], start_new_session=True)
    try:
        wait_port(port, ctl)
        ok = all(attach.fetch(curl, port, src, os.path.join(tmp, f"c{i}.bin")) for i in range(DOWNLOADS))
    finally:
        stop(ctl)
    check(ok, f"control: {DOWNLOADS} downloads from nginx under `cryptrace run`, intact")
    want = attach.evp_gcm_paths(ctlib.report_ok([ctl_out]))

    port = free_port()
    nginx = subprocess.Popen([NGINX, "-c", conf(tmp, port, cert, key)], start_new_session=True)
    out = ctlib.tmpdir("attach-nginx-out")
    try:
        wait_port(port, nginx)
        pids = [nginx.pid] + children(nginx.pid)
        check(len(pids) == 3, f"nginx runs a master and 2 workers ({pids})")
        a = attach.Attach(pids, out)
        ok = all(attach.fetch(curl, port, src, os.path.join(tmp, f"a{i}.bin")) for i in range(DOWNLOADS))
        rc, err = a.end()
        check(ok, f"{DOWNLOADS} downloads while attached, intact")
        check(rc == 0 and all(f"detached from {p}" in err for p in pids),
              f"every process attached and detached ({rc}: {err.strip()[-400:]})")
        after = sum(attach.fetch(curl, port, src, os.path.join(tmp, f"p{i}.bin")) for i in range(AFTER))
        check(after == AFTER and nginx.poll() is None,
              f"after the detach nginx serves on: {after} of {AFTER} downloads intact")
    finally:
        stop(nginx)
    doc = ctlib.report_ok([out])
    got = attach.evp_gcm_paths(doc)
    check(got == want and got, f"the attached workers' AES-GCM calls and bytes equal the control "
          f"run's: {got} == {want}")
    procs = {p["pid"]: p for p in doc["processes"]}
    check(set(procs) == set(pids) and all(p["end_reason"] == "detach" for p in procs.values()),
          f"a trace per process, each ended by the detach "
          f"({ {k: v['end_reason'] for k, v in procs.items()} })")


ctlib.main(test)
