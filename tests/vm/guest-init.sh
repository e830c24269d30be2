#!/bin/sh
# SPDX-License-Identifier: MIT
# guest-init.sh: PID 1 of the qemu test guest (installed as /init in the initramfs).
#
# Mounts the pseudo file systems, loads the kernel modules in dependency order (without the AES-NI
# drivers when the kernel command line says ct.aesni=0), runs /ct/script.sh with a timeout, and
# writes its stdout, stderr, exit status and the files it left in $OUT to the second serial port
# (ttyS1), base64-encoded between marker lines carrying the run's nonce. ttyS0 stays the kernel
# console, so kernel messages can never interleave with the results. Then it powers off.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
umask 022

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /root /out
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /tmp stays on the initramfs' own rootfs (already RAM-backed and writable), so files that
# run-in-guest.sh --files placed under /tmp stay visible.
chmod 1777 /tmp
dmesg -n 1

aesni=1
tls=0
timeout_s=240
for arg in $(cat /proc/cmdline); do
	case $arg in
	ct.aesni=*) aesni=${arg#ct.aesni=} ;;
	ct.tls=*) tls=${arg#ct.tls=} ;;
	ct.timeout=*) timeout_s=${arg#ct.timeout=} ;;
	esac
done
nonce=$(cat /ct/nonce)
kver=$(uname -r)
mdir=/lib/modules/$kver

log() { echo "guest-init: $*" >/dev/console; }

# The CPU-instruction drivers a "no AES-NI" guest must not have. Deleting the files also keeps
# the kernel's own request_module() (through busybox modprobe) from loading them later.
cpu_drivers="aesni_intel ghash_clmulni_intel"
if [ "$aesni" = 0 ]; then
	for m in $cpu_drivers; do
		rel=$(sed -n "s/^$m //p" /ct/load-order)
		[ -n "$rel" ] && rm -f "$mdir/$rel"
	done
fi
# kTLS (tests/vm/ktls.sh): the tls module only when asked for (ct.tls=1); otherwise deleted, so
# that setsockopt(TCP_ULP, "tls") fails with ENOENT as on a machine without it.
if [ "$tls" != 1 ]; then
	rel=$(sed -n "s/^tls //p" /ct/load-order)
	[ -n "$rel" ] && rm -f "$mdir/$rel"
fi
while read -r name rel; do
	[ -f "$mdir/$rel" ] || continue
	insmod "$mdir/$rel" 2>/tmp/insmod.err || log "insmod $name failed: $(cat /tmp/insmod.err)"
done </ct/load-order

hostname cryptrace-vm
ip link set lo up 2>/dev/null

# The data channel: raw, so no \n -> \r\n translation and no echo.
data=/dev/ttyS1
stty -F $data raw -echo 2>/dev/null

export OUT=/out CT_VM_AESNI=$aesni CT_VM_TLS=$tls
cd /tmp || exit 1
log "running the test script (aesni=$aesni, timeout ${timeout_s}s)"
timeout -s KILL "$timeout_s" /bin/sh /ct/script.sh >/tmp/ct.stdout 2>/tmp/ct.stderr </dev/null
rc=$?
log "test script exited with $rc"

{
	echo "==CT-$nonce-STDOUT=="
	base64 </tmp/ct.stdout
	echo "==CT-$nonce-STDERR=="
	base64 </tmp/ct.stderr
	echo "==CT-$nonce-OUT=="
	tar -c -C /out . | gzip -1 | base64
	echo "==CT-$nonce-STATUS $rc=="
	echo "==CT-$nonce-END=="
} >$data
sync
# Let the UART drain before the machine disappears.
sleep 0.2
poweroff -f
