#!/bin/sh
# bench/replicas.sh: what replication costs when nothing fails.
#
# Runs bench/mpi_{latency,bandwidth,stencil,iprobe,burst}.c through p2prun on the
# embedded local cluster with -r 1 and with -r 2 (encryption off, so that
# the protocol and not the cipher is measured), keeps the median of
# REPLICAS_BENCH_RUNS runs (3), and prints R=1, R=2 and the ratio R2/R1
# (the targets: latency at most 1.2, bandwidth at least 0.8, where every
# process has a core of its own).  The stencil runs on 1 and on 2 ranks.
# A last column runs two R=1 jobs at once (as many processes as R=2, no
# replication) and compares R=2 with that: the protocol's own cost when
# the machine has fewer cores than R=2 has processes.
#
# With R=2 every rank runs twice: 2 ranks make 4 processes, so on a
# machine with fewer than 4 cores the R=2 rows measure oversubscription
# as much as the protocol; the table says how many cores there were.
#
# Usage: bench/replicas.sh [BUILD_DIR]     (default: build/ next to bench/)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${REPLICAS_BENCH_RUNS:-3}
p2pcc=$build/bin/p2pcc
p2prun=$build/bin/p2prun

die() { echo "replicas.sh: $*" >&2; exit 1; }
[ -x "$p2pcc" ] && [ -x "$p2prun" ] ||
    die "no $p2pcc or $p2prun: build the project first"

work=$(mktemp -d "${TMPDIR:-/tmp}/p2p-repbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/home"

for b in latency bandwidth stencil iprobe; do
    "$p2pcc" -O2 -o "$work/$b" "$root/bench/mpi_$b.c" ||
        die "cannot build mpi_$b"
done
# Many requests open at once, at two counts: the cost per message must
# not grow with the count (mpi_burst.c).
for v in "burst_1k -DBURST_N=1000" "burst_16k -DBURST_N=16000" \
         "get_1k -DBURST_N=1000 -DBURST_GET=1" \
         "get_16k -DBURST_N=16000 -DBURST_GET=1"; do
    set -- $v
    b=$1
    shift
    "$p2pcc" -O2 "$@" -o "$work/$b" "$root/bench/mpi_burst.c" ||
        die "cannot build mpi_burst ($b)"
done

# figure R NP BENCH KEY: median over $runs runs of the value after KEY.
figure() {
    i=0
    while [ $i -lt "$runs" ]; do
        HOME=$work/home P2P_CONF= "$p2prun" -n "$2" -r "$1" --no-encrypt \
            --timeout 300 "$work/$3" 2>/dev/null |
            awk -v k="$4" '$1 == k { print $2 }'
        i=$((i + 1))
    done | median
}

# twice NP BENCH KEY: two R=1 jobs at the same time, as many processes
# as R=2 but without any replication: the median of both jobs' values
# over $runs runs.  R=2 against this is the protocol's own cost on a
# machine that R=2 oversubscribes.
twice() {
    i=0
    while [ $i -lt "$runs" ]; do
        for j in 1 2; do
            # Told how many processes share the machine, as R=2's are.
            HOME=$work/home P2P_CONF= "$p2prun" -n "$1" --no-encrypt \
                -x P2P_LOCAL_PROCS=$((2 * $1)) --timeout 300 "$work/$2" \
                2>/dev/null >"$work/twice.$j" &
        done
        wait
        cat "$work/twice.1" "$work/twice.2" | awk -v k="$3" '$1 == k { print $2 }'
        i=$((i + 1))
    done | median
}

row() { # LABEL NP BENCH KEY
    r1=$(figure 1 "$2" "$3" "$4")
    r2=$(figure 2 "$2" "$3" "$4")
    t1=$(twice "$2" "$3" "$4")
    printf "%-38s %9s %9s %7s %11s %7s\n" "$1" "$r1" "$r2" \
        "$(ratio "$r2" "$r1")" "$t1" "$(ratio "$r2" "$t1")"
}

echo "replicas.sh: R=1 against R=2, --no-encrypt, embedded cluster," \
     "$(nproc) cores, $(uname -n), median of $runs" >&2
printf "%-38s %9s %9s %7s %11s %7s\n" figure R=1 R=2 R2/R1 "2 x R=1" \
    "R2/2xR1"
# protocol NP BENCH KEY: R=2 whose replicas 1 die at start-up (the
# test-only P2P_TEST_KILL): the survivors run with the whole protocol
# (numbers, logs, acknowledgements) and a core each; the median.
protocol() {
    i=0
    kills=""
    k=0
    while [ $k -lt "$1" ]; do
        kills="$kills${kills:+,}$k.1:init:1"
        k=$((k + 1))
    done
    while [ $i -lt "$runs" ]; do
        HOME=$work/home P2P_CONF= "$p2prun" -n "$1" -r 2 --no-encrypt \
            -x P2P_TEST_KILL="$kills" --timeout 300 "$work/$2" 2>/dev/null |
            awk -v k="$3" '$1 == k { print $2 }'
        i=$((i + 1))
    done | median
}

row "1-byte latency, 2 ranks (us)" 2 latency latency_us
row "1 MiB bandwidth, 2 ranks (GB/s)" 2 bandwidth bandwidth_gbs
row "stencil 1024x1024x200, 1 rank (s)" 1 stencil stencil_s
row "stencil 1024x1024x200, 2 ranks (s)" 2 stencil stencil_s
row "MPI_Iprobe finding nothing, 2 ranks (us)" 2 iprobe iprobe_us
row "1,000 Isends of 100 KB at once (us each)" 2 burst_1k burst_us
row "16,000 Isends of 100 KB at once (us each)" 2 burst_16k burst_us
row "1,000 Gets in one epoch, 2 ranks (us each)" 2 get_1k get_us
row "16,000 Gets in one epoch, 2 ranks (us each)" 2 get_16k get_us

echo
echo "The protocol alone, a core per process: R=2 whose replicas 1 died at"
echo "start-up (numbering, sender logs, acknowledgements all on):"
printf "%-38s %9s %9s %7s\n" figure R=1 "R=2 (1)" ratio
prow() {
    r1=$(figure 1 2 "$2" "$3")
    p1=$(protocol 2 "$2" "$3")
    printf "%-38s %9s %9s %7s\n" "$1" "$r1" "$p1" "$(ratio "$p1" "$r1")"
}
prow "1-byte latency, 2 ranks (us)" latency latency_us
prow "1 MiB bandwidth, 2 ranks (GB/s)" bandwidth bandwidth_gbs
prow "stencil 1024x1024x200, 2 ranks (s)" stencil stencil_s
prow "MPI_Iprobe finding nothing, 2 ranks (us)" iprobe iprobe_us
