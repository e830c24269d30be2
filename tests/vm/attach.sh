#!/bin/bash
# SPDX-License-Identifier: MIT
# attach.sh: `cryptrace attach` in the guest (the arm64 one: tracer/attach_arch_aarch64.c on a
# real aarch64 kernel; docs/attach.md), on programs started there without cryptrace, in one boot:
#  - `openssl s_server -WWW` (TLS 1.3, AES-256-GCM) attached after one download it does not
#    see, N downloads by `openssl s_client` (the guest has no curl), detached: the server's
#    AES-GCM calls and bytes equal those of a control run of the same N downloads with the
#    server under `cryptrace run` in the same guest; every file intact; every import slot
#    redirected is put back; the trace says attached, how long the process stopped, and ends
#    with the detach; after it the server serves AFTER more downloads intact, writes no trace
#    and still runs.
#  - examples/evp_threads --pause-at (8 threads stopped in a futex, main in read): attached
#    mid-run, it counts exactly what the program says it did from the pause on, per cipher and
#    direction, its output is that of a run without cryptrace, and its trace ends with its exit.
#  - tests/attach/regs_aarch64 (a thread spinning in assembly on x2..x28, v0..v31, and z0..z31
#    and p0 where the CPU has SVE, as qemu's `-cpu max` does), attached and detached while it
#    spins: the thread that made both remote calls finds every register as it left it; and in
#    its --sleep mode, attached and detached in a relative sleep (clock_nanosleep), it is back in
#    it through restart_syscall, for the time left, as after any other stop (not a new sleep).
# The pauses the attaches measured are printed: TCG timings, not performance data.
source "$(dirname "$0")/lib.sh"

[[ $vm_arch == arm64 ]] || fail "attach.sh runs in the arm64 guest (suite vm-arm64); the x86-64 attach has the attach suite"
threads=$build_root/examples/evp_threads
regs=$build_root/tests/attach/regs_aarch64
need_built "$cryptrace" "$preload" "$threads" "$regs" "$host_cryptrace"
command -v openssl >/dev/null || fail "openssl is needed for the certificate"

FILE_BYTES=524288
N=4
AFTER=5
PAUSE_AT=1000

in=$scratch/in
mkdir -p "$in"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$in/key.pem" -out "$in/cert.pem" -days 1 \
	-subj /CN=localhost 2>/dev/null || fail "no throwaway certificate"
head -c $FILE_BYTES /dev/urandom >"$in/file.bin"

guest --timeout 200 --files "$cryptrace" "$preload" "$threads" "$regs" "$in" --out "$scratch/out" -- "
	cd '$in'
	ct='$cryptrace'
	# until FILE has PATTERN (30 s at most; TCG is slow)
	wait_for() {
		i=0
		while ! grep -q \"\$2\" \"\$1\" 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done
		grep -q \"\$2\" \"\$1\"
	}
	# fetch PORT NAME: one download; says NAME-ok when it arrived intact
	fetch() {
		printf 'GET /file.bin HTTP/1.0\r\n\r\n' | openssl s_client -connect 127.0.0.1:\$1 -quiet \
			-ign_eof >/tmp/\$2 2>/dev/null
		tail -c $FILE_BYTES /tmp/\$2 | cmp -s - file.bin && echo \$2-ok
	}
	server() {	# PORT [-naccept N]
		port=\$1; shift
		echo openssl s_server -WWW -accept 127.0.0.1:\$port -cert cert.pem -key key.pem \
			-ciphersuites TLS_AES_256_GCM_SHA384 \"\$@\"
	}

	# the control: the same N downloads, the server under cryptrace run from its start
	\$ct run -q -o \$OUT/control -- \$(server 4433 -naccept $N) >/tmp/control.out 2>&1 &
	cpid=\$!
	wait_for /tmp/control.out ACCEPT || echo control-not-ready
	for i in \$(seq $N); do fetch 4433 control\$i; done
	wait \$cpid; echo control-status=\$?

	# the attached server, started plainly
	\$(server 4434) >/tmp/server.out 2>&1 &
	spid=\$!
	wait_for /tmp/server.out ACCEPT || echo server-not-ready
	fetch 4434 before
	\$ct attach -o \$OUT/attached \$spid 2>\$OUT/attach.err &
	apid=\$!
	wait_for \$OUT/attach.err 'tracing into' || echo attach-not-ready
	for i in \$(seq $N); do fetch 4434 attached\$i; done
	kill -INT \$apid; wait \$apid; echo attach-status=\$?
	ls \$OUT/attached >/tmp/files.detach
	for i in \$(seq $AFTER); do fetch 4434 after\$i; done
	kill -0 \$spid && echo server-alive
	ls \$OUT/attached | cmp -s - /tmp/files.detach && echo no-trace-after-detach
	ls -l /proc/\$spid/fd | grep -q /out/ || echo no-fd-of-ours
	kill \$spid; wait \$spid

	# attach_at NAME READY PROG ARGS...: PROG started plainly with its stdin on a fifo (open on
	# fd 3), attached once READY is in its output (\$OUT/NAME.out); the trace in \$OUT/NAME
	attach_at() {
		name=\$1 ready=\$2; shift 2
		mkfifo /tmp/\$name.ctl
		\"\$@\" </tmp/\$name.ctl >\$OUT/\$name.out 2>&1 &
		tpid=\$!
		exec 3>/tmp/\$name.ctl
		wait_for \$OUT/\$name.out \$ready || echo \$name-not-ready
		\$ct attach -o \$OUT/\$name \$tpid 2>\$OUT/\$name-attach.err &
		apid=\$!
		wait_for \$OUT/\$name-attach.err 'tracing into' || echo \$name-attach-not-ready
	}

	# evp_threads, attached while its threads wait at the pause
	echo | '$threads' --pause-at $PAUSE_AT >\$OUT/threads-plain.out 2>&1; echo threads-plain-status=\$?
	attach_at threads paused '$threads' --pause-at $PAUSE_AT
	echo >&3; exec 3>&-
	wait \$tpid; echo threads-status=\$?
	wait \$apid; echo threads-attach-status=\$?

	# registers: attached and detached while its main thread spins on them
	attach_at regs spinning '$regs'
	kill -INT \$apid; wait \$apid; echo regs-attach-status=\$?
	echo >&3; exec 3>&-
	wait \$tpid; echo regs-status=\$?

	# a relative sleep in the thread that makes the calls: back in it as the kernel restarts it
	# (restart_syscall, 128, for the time left), not in a new clock_nanosleep (115)
	attach_at sleep sleeping '$regs' --sleep
	kill -INT \$apid; wait \$apid; echo sleep-attach-status=\$?
	sleep 0.5
	echo sleep-syscall=\$(cut -d' ' -f1 /proc/\$tpid/syscall)
	kill \$tpid; exec 3>&-
" || fail "the guest script failed"

out=$scratch/out
for f in control attached threads; do
	"$host_cryptrace" report --json "$out/$f" >"$scratch/$f.json" ||
		fail "cryptrace report --json $f failed (exit $?)"
done

ctlib_python - "$scratch" "$N" "$AFTER" <<'PY' || fail "the attached runs do not match"
import json, os, sys

from ctlib import attach, check, reports, verdict


def test():
    scratch, n, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    out = os.path.join(scratch, "out")
    said = open(os.path.join(scratch, "guest.out")).read().split()
    doc = {f: json.load(open(os.path.join(scratch, f + ".json")))
           for f in ("control", "attached", "threads")}
    err = open(os.path.join(out, "attach.err")).read()

    check("control-status=0" in said and all(f"control{i}-ok" in said for i in range(1, n + 1)),
          f"control: {n} downloads under `cryptrace run` intact, the server exited 0")
    want = attach.evp_gcm_paths(doc["control"])
    check(want.get(("aes-256-gcm", "encrypt"), (0, 0))[1] >= n * 524288,
          f"control: the server sealed the files' bytes ({want})")
    check("before-ok" in said, "a download before the attach, intact")
    check(all(f"attached{i}-ok" in said for i in range(1, n + 1)),
          f"{n} downloads while attached, intact")
    check("attach-status=0" in said and "detached from" in err,
          f"cryptrace attach ended 0 and detached ({err.strip()[-300:]})")
    moved = [ln for ln in err.splitlines() if "import slots redirected" in ln]
    back = [ln for ln in err.splitlines() if "import slots put back" in ln]
    num = lambda lines, what: int(lines[0].split(what)[0].split()[-1]) if lines else -1
    check(num(moved, " import slots redirected") > 0 and
          num(moved, " import slots redirected") == num(back, " import slots put back"),
          f"every import slot redirected was put back ({moved} {back})")
    check(all(f"after{i}-ok" in said for i in range(1, after + 1)) and "server-alive" in said,
          f"after the detach: {after} downloads intact, the server still runs")
    check("no-trace-after-detach" in said and "no-fd-of-ours" in said,
          "no trace written after the detach, no fd of the trace left in the server")
    procs = doc["attached"]["processes"]
    check(len(procs) == 1, f"one attached process ({len(procs)})")
    proc = procs[0]
    got = attach.evp_gcm_paths(doc["attached"], proc["pid"])
    check(got == want, f"the attached server's AES-GCM calls and bytes equal the control run's: "
          f"{got} == {want}")
    check(proc["attached"] and proc["status"] == "complete" and proc["end_reason"] == "detach",
          f"the trace says attached and ends with the detach ({proc['status']}, {proc['end_reason']})")
    check(proc["attach_pause_ns"] > 0 and proc["attach_threads"] == 1 and proc["attach_slots"] > 0,
          f"the trace says the attach stopped {proc['attach_threads']} thread(s) for "
          f"{proc['attach_pause_ns']} ns and redirected {proc['attach_slots']} slots")
    detach_line = [ln for ln in err.splitlines() if "detached from" in ln]
    print(f"s_server: attach stopped 1 thread for {proc['attach_pause_ns'] / 1e6:.1f} ms; "
          f"{detach_line[0].split(': ', 1)[1] if detach_line else ''} (TCG: not performance data)")

    plain = open(os.path.join(out, "threads-plain.out")).read()
    text = open(os.path.join(out, "threads.out")).read()
    terr = open(os.path.join(out, "threads-attach.err")).read()
    check("threads-plain-status=0" in said and "expect-after-pause" in plain,
          "evp_threads --pause-at runs by itself")
    check("threads-status=0" in said and text == plain,
          f"evp_threads exited 0 while attached, with the output of a run without cryptrace "
          f"({text[-300:]!r})")
    check("threads-attach-status=0" in said and "ended while attached" in terr,
          f"cryptrace attach saw it end ({terr.strip()[-300:]})")
    expect = [ln[len("expect-after-pause "):] for ln in text.splitlines()
              if ln.startswith("expect-after-pause ")]
    check(len(expect) == 4, f"4 expectations printed ({len(expect)})")
    reports.check_expect(doc["threads"], "\n".join("expect " + ln for ln in expect),
                         "attached mid-run: ")
    tproc = doc["threads"]["processes"][0]
    check(tproc["attach_threads"] == 9 and tproc["end_reason"] == "exit",
          f"9 threads stopped ({tproc['attach_threads']}), the trace ends with the exit "
          f"({tproc['end_reason']})")
    regs = open(os.path.join(out, "regs.out")).read()
    rerr = open(os.path.join(out, "regs-attach.err")).read()
    check("regs-attach-status=0" in said and "detached from" in rerr,
          f"attached to and detached from the spinning thread ({rerr.strip()[-300:]})")
    check("regs-status=0" in said and "regs intact" in regs,
          f"the spinning thread's registers after the attach and the detach: {regs.strip()!r}")
    check("sleep-attach-status=0" in said and "sleep-syscall=128" in said,
          f"the main thread, attached in a relative sleep, is back in it through restart_syscall "
          f"(128) as the kernel restarts it ({[w for w in said if w.startswith('sleep-')]})")
    print(f"evp_threads: attach stopped 9 threads for {tproc['attach_pause_ns'] / 1e6:.1f} ms "
          f"(TCG: not performance data)")


verdict(test)
PY
note "PASS: attached s_server counted as the control run, evp_threads exact from the pause on"
