# SPDX-License-Identifier: MIT
"""What the kTLS tests share, on this host and in the qemu guest: the fixed test secrets of
examples/kernel/ktls_pair.c (registered for the secrets scan), the set-up details the hooks
must decode, and an OpenSSL configuration that turns OpenSSL's KTLS option on (Debian 12's
OpenSSL 3.0 has kTLS compiled in, but its s_server/s_client have no -ktls option before 3.2:
`Options = KTLS` in the system_default section is how a 3.0 program asks for it)."""
import os

import ctlib

KEY = b"KTLS-TEST-KEY-0123456789abcdef!!"
IV = b"KTLS-TESTIV!"
SALT = b"SALT"
SEQ = b"RECSEQ01"

OPENSSL_KTLS_CONF = """openssl_conf = default_conf
[default_conf]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
Options = KTLS
"""

# ktls_pair arguments -> the TLS_TX set-up detail the hooks must write (never a key byte).
TX_CASES = [
    ([], "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_GCM_256 (aes-256-gcm) optlen=56"),
    (["--tls12", "--cipher", "aes-128-gcm"],
     "level=SOL_TLS optname=TLS_TX version=TLS1.2 cipher=AES_GCM_128 (aes-128-gcm) optlen=40"),
    (["--cipher", "chacha20-poly1305"],
     "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=CHACHA20_POLY1305 (chacha20-poly1305) "
     "optlen=56"),
    (["--cipher", "aes-128-ccm", "--bad-len"],
     "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_CCM_128 (aes-128-ccm) optlen=41 "
     "(expected 40)"),
]
ULP_DETAIL = "level=SOL_TCP optname=TCP_ULP ulp=tls"


def register_secrets():
    """ktls_pair's key, IV, salt and record sequence, alone and as the struct lays them out."""
    ctlib.secret("ktls_pair key", KEY)
    ctlib.secret("ktls_pair iv (12)", IV)
    ctlib.secret("ktls_pair rec_seq", SEQ)
    ctlib.secret("ktls_pair gcm256 iv|key|salt|seq", IV[:8] + KEY + SALT + SEQ)
    ctlib.secret("ktls_pair gcm128 key|salt|seq", KEY[:16] + SALT + SEQ)
    ctlib.secret("ktls_pair data", bytes((i * 7 + 3) & 0xFF for i in range(4096)))


def openssl_conf(tmp):
    path = os.path.join(tmp, "openssl-ktls.cnf")
    with open(path, "w") as f:
        f.write(OPENSSL_KTLS_CONF)
    return path


def ktls_events(doc, pid=None):
    """The report's kTLS set-up events (setsockopt TCP_ULP / SOL_TLS)."""
    return [e for e in doc["events"] if e["call"] == "setsockopt" and
            (e["detail"].startswith("level=SOL_TLS") or e["detail"].startswith(ULP_DETAIL)) and
            (pid is None or pid in e.get("pids", []))]


def finding_of(doc, kind, pid=None):
    return [f for f in doc["findings"] if f["kind"] == kind and (pid is None or f.get("pid") == pid)]
