#!/bin/sh
# bench/owner.sh: does guest work compete with the owner?
#
# The owner's CPU-bound loop (a counter, for OWNER_BENCH_SECONDS = 3 s),
# pinned to CPU 0, is run alone; next to a guest busy loop started through
# p2prun on the embedded cluster and pinned to the same CPU (the guest
# runs as peerd runs every job: SCHED_IDLE, nice 19, in a cgroup of weight
# 20); and next to the same busy loop started by hand at nice 0, as a
# plain user process would.  Prints the owner's iterations in each case
# and the share it keeps (the target: at least 95 % with the guest).
#
# Usage: bench/owner.sh [BUILD_DIR]     (default: build/ next to bench/)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
secs=${OWNER_BENCH_SECONDS:-3}
p2prun=$build/bin/p2prun

die() { echo "owner.sh: $*" >&2; exit 1; }
[ -x "$p2prun" ] || die "no $p2prun: build the project first"
command -v taskset >/dev/null || die "taskset (util-linux) is missing"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/p2p-ownerbench.XXXXXX") || exit 1
guest=""
cleanup() {
    [ -n "$guest" ] && kill "$guest" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
mkdir -p "$work/home"

LOOP='import time
n = 0
end = time.monotonic() + float(__import__("sys").argv[1])
while time.monotonic() < end:
    n += 1
print(n)'
BUSY='while :; do :; done'

owner() { taskset -c 0 python3 -c "$LOOP" "$secs"; }

alone=$(owner)

HOME=$work/home P2P_CONF= "$p2prun" -n 1 taskset -c 0 sh -c "$BUSY" \
    2>/dev/null &
guest=$!
sleep 1 # the embedded cluster starts, the guest spins
with_guest=$(owner)
kill -INT "$guest" 2>/dev/null
wait "$guest" 2>/dev/null
guest=""

taskset -c 0 sh -c "$BUSY" &
guest=$!
with_plain=$(owner)
kill "$guest"
wait "$guest" 2>/dev/null
guest=""

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f %%\n", 100 * a / b }'; }
printf '%-52s %12s\n' "owner's loop alone (iterations in ${secs} s)" "$alone"
printf '%-52s %12s  %s\n' "with a guest job (SCHED_IDLE, cgroup weight 20)" \
    "$with_guest" "$(share "$with_guest" "$alone")"
printf '%-52s %12s  %s\n' "with the same loop at nice 0 (no p2pmpi)" \
    "$with_plain" "$(share "$with_plain" "$alone")"
