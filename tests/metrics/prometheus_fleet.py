#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two hosts scraped by a real Prometheus (issue 22's "must show"). Debian's prometheus and
prometheus-node-exporter, started here on loopback ports: two simulated hosts, each an always-on
spool (docs/fleet.md: its own cryptrace.conf, the preload loaded bare, no launcher; traces in the
per-user directory) and a textfile directory written by `cryptrace export` of the spool root,
each with its own
node_exporter, scraped under its own `instance`, with contrib/prometheus/cryptrace.rules.yml
loaded (its `for:` set to 0s so that the test need not wait five minutes). Real openssl runs on
both, one host's under the OPENSSL_ia32cap mask. Through Prometheus's HTTP API: `sum by (impl)
(cryptrace_cipher_bytes_total)` and the same per instance equal what `cryptrace report --json`
says for the same traces; CryptraceSoftwareAES fires for the masked host only; a counter of the
clean host survives its process's exit and the rotation of every trace of its spool by
`cryptrace prune` (its age cap) with no reset (`resets()` 0) and no drop."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections import defaultdict

import ctlib
from ctlib import check
from ctlib import metrics

RULES = os.path.join(ctlib.SRC_ROOT, "contrib", "prometheus", "cryptrace.rules.yml")
WAIT_S = 120  # how long Prometheus may take to scrape a change: generous, never asserted on


def enc(openssl, cipher, size_src):
    return [openssl, "enc", "-" + cipher, "-K", "33" * 32, "-iv", "44" * 16, "-in", size_src,
            "-out", "/dev/null"]


class Servers:
    def __init__(self, tmp):
        self.tmp, self.procs = tmp, []

    def start(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, p))
        return p

    def log(self, name):
        with open(os.path.join(self.tmp, name + ".log"), "rb") as f:
            return f.read().decode(errors="replace")[-1500:]

    def stop(self):
        for _, p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for _, p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


def wait_for(what, fn):
    """fn() until it returns something true (readiness polling, not a timing assertion)."""
    deadline = time.monotonic() + WAIT_S
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except OSError as e:  # not listening yet
            last = e
        time.sleep(0.2)
    raise ctlib.Failure(f"{what}: not seen within {WAIT_S} s (last: {last!r})")


class Prom:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def query(self, q):
        doc = json.loads(http_get(self.base + "/api/v1/query?" + urllib.parse.urlencode({"query": q})))
        if doc["status"] != "success":
            raise ctlib.Failure(f"query {q}: {doc}")
        return doc["data"]["result"]

    def vector(self, q, *keys):
        """{(label values...): float} of an instant vector."""
        return {tuple(r["metric"].get(k, "") for k in keys): float(r["value"][1]) for r in self.query(q)}

    def alerts(self):
        return json.loads(http_get(self.base + "/api/v1/alerts"))["data"]["alerts"]


class Host:
    def __init__(self, tmp, name, promtool):
        self.name, self.promtool = name, promtool
        self.spool = os.path.join(tmp, name, "spool")
        self.textfile = os.path.join(tmp, name, "textfile")
        self.state = os.path.join(tmp, name, "export.state")
        self.conf = os.path.join(tmp, name, "cryptrace.conf")
        os.makedirs(self.spool)
        os.chmod(self.spool, 0o1733)  # docs/fleet.md's set-up
        os.makedirs(self.textfile)
        with open(self.conf, "w") as f:
            f.write(f"spool = {self.spool}\nmax_age = 1s\n")
        self.userdir = os.path.join(self.spool, str(os.geteuid()))

    def env(self, masked=False):
        """The always-on mode: the bare preload and this host's configuration file."""
        env = ctlib.preload_env(None, CRYPTRACE_CONFIG=self.conf)
        return ctlib.masked_env(env) if masked else env

    def traces(self):
        return ctlib.traces(self.userdir) if os.path.isdir(self.userdir) else []

    def export(self):
        p = ctlib.cryptrace("export", "--textfile-dir", self.textfile, "--state", self.state, self.spool)
        check(p.returncode == 0, f"{self.name}: export" if p.returncode == 0 else
              f"{self.name}: export exited {p.returncode}: {p.stderr.decode()[-300:]}")
        text = open(os.path.join(self.textfile, "cryptrace.prom"), "rb").read()
        metrics.promtool_check(self.promtool, text, f"{self.name}'s cryptrace.prom")
        return metrics.parse(text, "text")


def json_bytes_by_impl(*spools):
    doc = json.loads(ctlib.cryptrace_ok("report", "--json", *spools).stdout)
    out = defaultdict(float)
    for pth in doc["paths"]:
        out[pth["impl"]] += pth["bytes"]
    return dict(out)


def test():
    promtool = metrics.need_tools()
    prometheus = ctlib.need_program("prometheus")
    node_exporter = ctlib.need_program("prometheus-node-exporter")
    openssl = ctlib.need_program("openssl")
    if not ctlib.cpu_has_aes():
        ctlib.skip("this CPU has no AES instructions: no host here can run AES in software "
                   "on an AES-NI CPU")
    tmp = ctlib.tmpdir("fleet")
    clean, masked = Host(tmp, "clean", promtool), Host(tmp, "masked", promtool)

    src = os.path.join(tmp, "data")
    with open(src, "wb") as f:
        f.write(ctlib.plaintext(4 << 20))
    for cipher in ("aes-128-cbc", "aes-256-ctr"):
        check(ctlib.run(enc(openssl, cipher, src), env=clean.env()).returncode == 0,
              f"clean: openssl enc -{cipher}, always-on")
        check(ctlib.run(enc(openssl, cipher, src), env=masked.env(masked=True)).returncode == 0,
              f"masked: openssl enc -{cipher}, always-on, OPENSSL_ia32cap={ctlib.MASK}")
    for h in (clean, masked):
        check(len(h.traces()) == 2, f"{h.name}: two traces in the spool's per-user directory {h.traces()}")
    clean.export()
    masked.export()

    rules = os.path.join(tmp, "cryptrace.rules.yml")
    text = open(RULES).read()
    check(re.search(r"^\s+for: 5m$", text, re.M), "the rules wait 5 minutes (set to 0s here)")
    with open(rules, "w") as f:
        f.write(re.sub(r"^(\s+)for: \d+m$", r"\1for: 0s", text, flags=re.M))

    servers = Servers(tmp)
    try:
        ports = {}
        for h in (clean, masked):
            ports[h.name] = ctlib.free_port()
            servers.start("node-exporter-" + h.name,
                          [node_exporter, f"--web.listen-address=127.0.0.1:{ports[h.name]}",
                           "--collector.disable-defaults", "--collector.textfile",
                           f"--collector.textfile.directory={h.textfile}"])
        targets = "".join(f"""
  - job_name: {h.name}
    static_configs:
      - targets: ['127.0.0.1:{ports[h.name]}']
        labels:
          instance: {h.name}
""" for h in (clean, masked))
        conf = os.path.join(tmp, "prometheus.yml")
        with open(conf, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:{targets}""")
        p = ctlib.run([promtool, "check", "config", conf], text=True)
        check(p.returncode == 0, "promtool check config" if p.returncode == 0 else
              f"promtool check config: {p.stdout + p.stderr}")
        pport = ctlib.free_port()
        servers.start("prometheus", [prometheus, f"--config.file={conf}",
                                     f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                                     f"--web.listen-address=127.0.0.1:{pport}"])
        prom = Prom(pport)
        wait_for("Prometheus ready", lambda: http_get(prom.base + "/-/ready"))
        up = wait_for("both node_exporters scraped with the cryptrace metrics",
                      lambda: len(prom.vector("count by (instance) (cryptrace_cipher_bytes_total)",
                                              "instance")) == 2 and prom.vector("up", "instance"))
        check(up == {("clean",): 1.0, ("masked",): 1.0}, f"both targets up under their own instance: {up}")

        want = json_bytes_by_impl(clean.spool, masked.spool)
        got = {k[0]: v for k, v in prom.vector("sum by (impl) (cryptrace_cipher_bytes_total)", "impl").items()}
        check(got == want, f"sum by (impl) (cryptrace_cipher_bytes_total) is report --json's: {got} == {want}")
        for h in (clean, masked):
            want = json_bytes_by_impl(h.spool)
            got = {k[0]: v for k, v in prom.vector(
                f'sum by (impl) (cryptrace_cipher_bytes_total{{instance="{h.name}"}})', "impl").items()}
            check(got == want, f"{h.name}: the same per instance: {got} == {want}")

        firing = wait_for("CryptraceSoftwareAES firing", lambda: [
            a for a in prom.alerts() if a["labels"]["alertname"] == "CryptraceSoftwareAES" and a["state"] == "firing"])
        check({a["labels"]["instance"] for a in firing} == {"masked"},
              f"CryptraceSoftwareAES fires for the masked host only: {[a['labels'] for a in firing]}")
        sw = prom.vector('cryptrace_findings{kind="software-aes"}', "instance", "executable")
        check(set(sw) == {("masked", os.path.realpath(openssl))},
              f"the software-aes finding is the masked host's only, over its two openssl processes, "
              f"labelled with the executable they both are: {sw}")

        # a counter across a process exit and the rotation of every trace of the spool
        series = 'cryptrace_cipher_bytes_total{instance="clean",cipher="aes-128-cbc"}'
        seen = []

        def scraped(value):
            def fn():
                v = prom.vector(f"sum({series})")
                return v and list(v.values())[0] == value and value
            return wait_for(f"{series} at {value}", fn)

        def exported_value():
            return sum(s[4] for s in clean.export()
                       if s[2] == "cryptrace_cipher_bytes_total" and s[3]["cipher"] == "aes-128-cbc")

        seen.append(scraped(exported_value()))
        live = subprocess.Popen([openssl, "speed", "-bytes", "16384", "-seconds", "3", "-evp", "aes-128-cbc"],
                                env=clean.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mid = wait_for("the live openssl speed's bytes exported", lambda: (lambda v: v > seen[-1] and v)(exported_value()))
        seen.append(scraped(mid))
        check(live.wait() == 0, "openssl speed exited 0")
        seen.append(scraped(exported_value()))
        time.sleep(1.5)  # older than the age cap of 1 s
        p = ctlib.cryptrace("prune", "--config", clean.conf)
        check(p.returncode == 0, "cryptrace prune" if p.returncode == 0 else
              f"cryptrace prune exited {p.returncode}: {p.stderr.decode()[-300:]}")
        check(not clean.traces(), f"every trace pruned from the clean host's spool: {clean.traces()}")
        seen.append(scraped(exported_value()))
        check(seen[1] > seen[0] and seen[2] >= seen[1] and seen[3] == seen[2],
              f"the counter grew with the live process, kept its exit and the rotation: {seen}")
        resets = prom.vector(f"resets({series}[10m])")
        check(resets and all(v == 0 for v in resets.values()), f"resets() over the run: 0 ({resets})")
        print(f"ok: {len(seen)} scrapes of the clean host's aes-128-cbc bytes: {seen}")
    except ctlib.Failure:
        for name, _ in servers.procs:
            print(f"--- {name} log:\n{servers.log(name)}")
        raise
    finally:
        servers.stop()


ctlib.main(test)
