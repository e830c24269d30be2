#!/bin/sh
# SPDX-License-Identifier: MIT
# guest-init.sh: PID 1 of the qemu test guest (installed as /init in the initramfs).
#
# Mounts the pseudo file systems, loads the kernel modules in dependency order (without the CPU's
# AES drivers, /ct/cpu-drivers, when the kernel command line says ct.cpu_aes=0), runs
# /ct/script.sh with a timeout, and writes its stdout, stderr, exit status and the files it left
# in $OUT to the results channel (ct.data: the second serial port ttyS1 on x86, the virtio-serial
# port named ct.data on arm64), base64-encoded between marker lines carrying the run's nonce. The
# kernel console (ttyS0, ttyAMA0) is another device, so kernel messages can never interleave with
# the results. Then it powers off.

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

cpu_aes=1
tls=0
timeout_s=240
data=ttyS1
for arg in $(cat /proc/cmdline); do
	case $arg in
	ct.cpu_aes=*) cpu_aes=${arg#ct.cpu_aes=} ;;
	ct.data=*) data=${arg#ct.data=} ;;
	ct.tls=*) tls=${arg#ct.tls=} ;;
	ct.timeout=*) timeout_s=${arg#ct.timeout=} ;;
	esac
done
nonce=$(cat /ct/nonce)
kver=$(uname -r)
mdir=/lib/modules/$kver

log() { echo "guest-init: $*" >/dev/console; }

# The CPU-instruction drivers a "no AES-NI" / "no CE" guest must not have. Deleting the files also
# keeps the kernel's own request_module() (through busybox modprobe) from loading them later.
if [ "$cpu_aes" = 0 ]; then
	for m in $(cat /ct/cpu-drivers); do
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
	# Already there: the kernel's crypto self-tests request_module() some (aes-ce-blk) by alias.
	[ -d "/sys/module/$name" ] && continue
	insmod "$mdir/$rel" 2>/tmp/insmod.err || log "insmod $name failed: $(cat /tmp/insmod.err)"
done </ct/load-order

hostname cryptrace-vm
ip link set lo up 2>/dev/null

# The data channel: a virtio-serial port is found by its name (no udev here); a UART is set raw,
# so no \n -> \r\n translation and no echo.
for port in /sys/class/virtio-ports/*; do
	[ "$(cat "$port/name" 2>/dev/null)" = "$data" ] && data=${port##*/}
done
data=/dev/$data
[ -e "$data" ] || log "no results channel $data"
stty -F "$data" raw -echo 2>/dev/null

# CT_VM_CPU_AES (CT_VM_AESNI, its older name): 1 when the CPU's AES drivers are loaded.
export OUT=/out CT_VM_CPU_AES=$cpu_aes CT_VM_AESNI=$cpu_aes CT_VM_TLS=$tls
cd /tmp || exit 1
log "running the test script (cpu_aes=$cpu_aes, timeout ${timeout_s}s)"
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
} >"$data"
sync
# Let the UART drain before the machine disappears.
sleep 0.2
poweroff -f
