#!/bin/sh
# bench/box.sh: what the box around each job costs at launch.
#
# Starts a supernode and three peers on loopback (127.0.0.2-4) twice: with
# the box (a uid per job, a cgroup per job and process, a private /tmp;
# what a root peerd does by default) and without it (cgroups = no,
# private_tmp = no, job_uids = none), and times `p2prun -n 4 true`
# BOX_BENCH_RUNS times (20) against each.  Prints both medians and their
# ratio.  Needs root for the box; without root both rows are the same.
#
# Usage: bench/box.sh [BUILD_DIR]     (default: build/ next to bench/)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${BOX_BENCH_RUNS:-20}
bin=$build/bin

die() { echo "box.sh: $*" >&2; exit 1; }
[ -x "$bin/peerd" ] && [ -x "$bin/p2prun" ] || die "build the project first"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/p2p-boxbench.XXXXXX") || exit 1
chmod 711 "$work"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$bin/p2p-keygen" --group "$work/group.key" >/dev/null || die "keygen"
"$bin/p2p-keygen" --user "$work/user.key" >/dev/null || die "keygen"

# network NAME EXTRA: a supernode and three peers with [peer] EXTRA; sets
# $conf to a configuration naming the supernode.
network() {
    d=$work/$1
    mkdir -p "$d"
    printf '[network]\ngroup = bench\nkey_file = %s\n[peer]\nheartbeat_ms = 200\n%s\n' \
        "$work/group.key" "$2" >"$d/p2p.conf"
    "$bin/runSuperNode" --conf "$d/p2p.conf" --listen 127.0.0.1:0 \
        --foreground >"$d/sn.log" 2>&1 &
    pids="$pids $!"
    i=0
    until port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
                 "$d/sn.log" | head -1) && [ -n "$port" ]; do
        i=$((i + 1)); [ $i -lt 100 ] || die "supernode did not start"
        sleep 0.05
    done
    for h in 2 3 4; do
        "$bin/peerd" --conf "$d/p2p.conf" --listen 127.0.0.$h:0 \
            --supernode 127.0.0.1:$port --state-dir "$d/state-$h" \
            --slots 2 --host-label host$h --foreground >"$d/peer$h.log" 2>&1 &
        pids="$pids $!"
    done
    printf '[network]\ngroup = bench\nkey_file = %s\nsupernodes = 127.0.0.1:%s\n[run]\nuser_key = %s\n' \
        "$work/group.key" "$port" "$work/user.key" >"$d/run.conf"
    conf=$d/run.conf
    i=0
    until "$bin/p2prun" --conf "$conf" -n 4 true 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || die "the network did not come up"
        sleep 0.1
    done
}

# launches: median seconds of $runs `p2prun -n 4 true`.
launches() {
    i=0
    while [ $i -lt "$runs" ]; do
        s=$(date +%s.%N)
        "$bin/p2prun" --conf "$conf" -n 4 true || die "a launch failed"
        e=$(date +%s.%N)
        echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
        i=$((i + 1))
    done | median
}

network box ""
grep -h "contained by\|no cgroups\|uid of its own" "$work/box/peer2.log" |
    sed 's/^[^]]*]: /box: /'
with=$(launches)
network bare "cgroups = no
private_tmp = no
job_uids = none"
without=$(launches)
printf '%-40s %8s s\n' "p2prun -n 4 true, no box (median of $runs)" "$without"
printf '%-40s %8s s\n' "p2prun -n 4 true, box (median of $runs)" "$with"
printf '%-40s %8s\n' "ratio box / no box" "$(ratio "$with" "$without")"
