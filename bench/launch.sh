#!/bin/sh
# bench/launch.sh: how long a job of N ranks takes to start and finish,
# libp2pmpi on the embedded local cluster and on a loopback cluster of
# LAUNCH_PEERS (16) peers, beside Open MPI oversubscribed on this
# machine, in one run (docs/scale.md).
#
# The program is bench/mpi_launch.c: MPI_Init, one 8-byte Allreduce,
# MPI_Finalize.  For each N (16 64 256 512 1024 by default) and each
# replication degree R (LAUNCH_REPLICAS, "1 2") it prints the median wall
# time of LAUNCH_RUNS runs (from the command to its exit) for ours on
# the embedded cluster, ours on the loopback cluster (a supernode and
# LAUNCH_PEERS peerd on 127.0.0.2, 127.0.0.3, ..., LAUNCH_PEER_SLOTS
# slots each, started once for the whole run by bench/lib.sh's
# cluster_start) and, for R = 1, Open MPI (mpirun --oversubscribe over
# TCP), and the ratio of the embedded figure to Open MPI's.  Open MPI's
# start grows quickly with N on two cores: sizes above LAUNCH_OMPI_MAX
# are not run with it, and a run longer than LAUNCH_OMPI_TIMEOUT seconds
# is shown as ">T".  LAUNCH_PEERS=0 leaves the loopback cluster out.
#
# With LAUNCH_BEFORE=OTHER_BUILD_DIR (a build of another commit, e.g. the
# one before connections on demand), a column for that build (embedded)
# is added, and the ring (bench/mpi_ring.c) and 8-byte allreduce
# (bench/mpi_allreduce.c) benchmarks run at LAUNCH_RING_RANKS (64) ranks
# with each R, both builds alternated: the change must not make them
# slower.
#
# Usage: bench/launch.sh [BUILD_DIR]      (default: build/ next to bench/)
#   LAUNCH_SIZES="16 64 256 512 1024"  LAUNCH_REPLICAS="1 2"  LAUNCH_RUNS=3
#   LAUNCH_PEERS=16  LAUNCH_PEER_SLOTS=128
#   LAUNCH_OMPI_MAX=256  LAUNCH_OMPI_TIMEOUT=200
#   LAUNCH_BEFORE=DIR  LAUNCH_RING_RANKS=64
#   LAUNCH_PHASES="1024"   where the time goes at these sizes: spawning
#       only (p2prun true), then MPI_Init's table (bench/mpi_hello.c), then
#       the Allreduce's wire-up (mpi_launch), one run each, on each
#       cluster and R ("" to skip)
# Open MPI missing (Debian's openmpi-bin, libopenmpi-dev): its column is
# "-"; bench/mpi.sh installs it when run as root.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
sizes=${LAUNCH_SIZES:-16 64 256 512 1024}
runs=${LAUNCH_RUNS:-3}
ompi_max=${LAUNCH_OMPI_MAX:-256}
ompi_timeout=${LAUNCH_OMPI_TIMEOUT:-200}
before=${LAUNCH_BEFORE:-}
ring_np=${LAUNCH_RING_RANKS:-64}
reps=${LAUNCH_REPLICAS:-1 2}
npeers=${LAUNCH_PEERS:-16}
peer_slots=${LAUNCH_PEER_SLOTS:-128}
rep=1

die() { echo "launch.sh: $*" >&2; exit 1; }
[ -x "$build/bin/p2pcc" ] && [ -x "$build/bin/p2prun" ] ||
    die "no $build/bin/p2pcc or p2prun: build the project first"
[ -z "$before" ] || [ -x "$before/bin/p2prun" ] ||
    die "LAUNCH_BEFORE=$before has no bin/p2prun"

# Not under /tmp when root: a root peerd gives each job a private /tmp.
base=${TMPDIR:-/tmp}
[ "$(id -u)" != 0 ] || { base=/var/lib/p2p-bench; mkdir -p "$base"; }
work=$(mktemp -d "$base/p2p-launch.XXXXXX") || exit 1
chmod 711 "$work"
trap 'cluster_stop; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
mkdir -p "$work/home"
if [ "$npeers" -gt 0 ]; then
    cluster_start "$build/bin" "$work/net" "$npeers" "$peer_slots" ||
        die "cannot start a cluster of $npeers peers"
fi

have_ompi=no
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    have_ompi=yes

# build TAG CC: bench/mpi_{launch,ring,allreduce}.c with compiler CC.
build_with() {
    for b in launch ring allreduce hello; do
        "$2" -O2 -o "$work/$1_$b" "$root/bench/mpi_$b.c" 2>"$work/cc.err" ||
            { cat "$work/cc.err" >&2; return 1; }
    done
}
build_with now "$build/bin/p2pcc" || die "cannot build with p2pcc"
[ -z "$before" ] || build_with before "$before/bin/p2pcc" ||
    die "cannot build with $before/bin/p2pcc"
[ $have_ompi = no ] || build_with ompi mpicc.openmpi || have_ompi=no

# run TAG NP PROGRAM [ARGS]: one run, its output on stdout.
run() {
    tag=$1 np=$2
    shift 2
    case $tag in
    now)    HOME=$work/home P2P_CONF= "$build/bin/p2prun" -n "$np" \
                -r "$rep" --timeout 600 "$@" 2>>"$work/stderr" ;;
    net)    "$build/bin/p2prun" --conf "$work/net/p2p.conf" -n "$np" \
                -r "$rep" --timeout 600 "$@" 2>>"$work/stderr" ;;
    before) HOME=$work/home P2P_CONF= "$before/bin/p2prun" -n "$np" \
                -r "$rep" --timeout 600 "$@" 2>>"$work/stderr" ;;
    ompi)   timeout -k 5 "$ompi_timeout" mpirun.openmpi --allow-run-as-root \
                --oversubscribe --mca btl tcp,self -np "$np" "$@" \
                2>>"$work/stderr" ;;
    esac
}

# start TAG NP: median seconds of $runs runs of the launch program, "-"
# when a run fails, ">T" past Open MPI's time limit.
start() {
    i=0
    while [ $i -lt "$runs" ]; do
        t0=$(date +%s.%N)
        prog=$1
        [ "$1" != net ] || prog=now
        out=$(run "$1" "$2" "$work/${prog}_launch")
        rc=$?
        t1=$(date +%s.%N)
        if [ "$1" = ompi ] && [ $rc -eq 124 ]; then
            echo ">$ompi_timeout"
            break
        fi
        [ $rc -eq 0 ] && [ "$out" = "launch $2 ok" ] || { echo "-"; break; }
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
        i=$((i + 1))
    done | { read -r first || { echo "-"; return; }
             case $first in
             -|\>*) echo "$first" ;;
             *) { echo "$first"; cat; } | median ;;
             esac; }
}

echo "launch.sh: $(nproc) cores; embedded cluster of 2 peers; loopback" \
     "cluster of $npeers peers x $peer_slots slots; median of $runs runs"
printf '%-7s %2s %12s %12s %12s %8s%s\n' ranks r "embedded (s)" \
    "$npeers peers (s)" "Open MPI (s)" ratio "${before:+    before (s)}"
for rep in $reps; do
    for n in $sizes; do
        ours=$(start now "$n")
        net=-
        [ "$npeers" -eq 0 ] || net=$(start net "$n")
        theirs=-
        if [ $have_ompi = yes ] && [ "$rep" -eq 1 ]; then
            if [ "$n" -le "$ompi_max" ]; then theirs=$(start ompi "$n")
            else theirs="(>$ompi_max)"; fi
        fi
        col=""
        [ -z "$before" ] || col=$(printf '%14s' "$(start before "$n")")
        printf '%-7s %2s %12s %12s %12s %8s%s\n' "$n" "$rep" "$ours" "$net" \
            "$theirs" "$(ratio "$ours" "$theirs")" "$col"
    done
done

# seconds TAG NP PROGRAM [ARGS]: wall time of one run ("-" if it failed).
seconds() {
    t0=$(date +%s.%N)
    run "$@" >/dev/null || { echo "-"; return; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

phases=${LAUNCH_PHASES-1024}
if [ -n "$phases" ]; then
    echo
    echo "where the time goes (one run each, seconds): spawning only," \
         "+ MPI_Init, + Allreduce"
    printf '%-7s %2s %-10s %10s %10s %10s\n' ranks r cluster true hello \
        "hello+ar"
    for rep in $reps; do
        for n in $phases; do
            for where in now net; do
                [ $where = now ] || [ "$npeers" -gt 0 ] || continue
                label=embedded
                [ $where = now ] || label="$npeers peers"
                printf '%-7s %2s %-10s %10s %10s %10s\n' "$n" "$rep" \
                    "$label" "$(seconds $where "$n" true)" \
                    "$(seconds $where "$n" "$work/now_hello")" \
                    "$(seconds $where "$n" "$work/now_launch")"
            done
        done
    done
fi

# once TAG NP PROGRAM ARGS KEY: the KEY line's figure of one run.
once() {
    run "$1" "$2" "$work/${1}_$3" "$4" | awk -v k="$5" '$1 == k { print $2 }'
}

if [ -n "$before" ]; then
    echo
    echo "at $ring_np ranks: this build beside $before (lower is better;" \
         "the two alternated, median of $runs each)"
    printf '%-28s %2s %12s %12s %8s\n' figure r now before ratio
    for rep in $reps; do
        for spec in "ring ring_lap_us 100:ring, one lap (us)" \
                    "allreduce allreduce_us 500:8-byte allreduce (us)"; do
            prog=${spec%% *} rest=${spec#* }
            key=${rest%% *} rest=${rest#* }
            arg=${rest%%:*} label=${rest#*:}
            : >"$work/a"
            : >"$work/b"
            i=0
            while [ $i -lt "$runs" ]; do
                once now "$ring_np" "$prog" "$arg" "$key" >>"$work/a"
                once before "$ring_np" "$prog" "$arg" "$key" >>"$work/b"
                i=$((i + 1))
            done
            a=$(median <"$work/a") b=$(median <"$work/b")
            printf '%-28s %2s %12s %12s %8s\n' "$label" "$rep" "$a" "$b" \
                "$(ratio "$a" "$b")"
        done
    done
fi
if [ -s "$work/stderr" ] && grep -v "no supernode configured" "$work/stderr" |
        grep -q .; then
    echo
    echo "launch.sh: messages from the runs:"
    grep -v "no supernode configured" "$work/stderr" | sort | uniq -c |
        sort -rn | head -5
fi
