#!/bin/sh
# SPDX-License-Identifier: MIT
# The preload never sleeps with nanosleep, clock_nanosleep, usleep or sleep. `cryptrace attach`
# runs the library's attach and detach as remote calls in a thread it stopped, maybe in a
# relative sleep of the program's, which the kernel resumes afterwards through restart_syscall and
# the thread's restart block: those calls reset the block on entry, and the program's sleep then
# returns early with EINTR (preload/flusher.c join_fully: an arm64 guest's sleeping target exited
# after a detach on a loaded host). ppoll, sched_yield and futex waits touch it only when a signal
# interrupts them. A comment may name them; code may not.
cd "$(dirname "$0")/../.." || exit 1
found=$(grep -rnE '\b(nanosleep|clock_nanosleep|usleep|sleep)[[:space:]]*\(' preload --include='*.c' --include='*.h' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$found" ]; then
	echo "$found"
	echo "the preload must not sleep with these calls (they reset an attached thread's restart block): use ppoll"
	exit 1
fi
echo "no nanosleep, clock_nanosleep, usleep or sleep call in preload/"
