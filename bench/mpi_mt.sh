#!/bin/sh
# mpi_mt.sh [BUILD_DIR]: MPI_THREAD_MULTIPLE (docs/mpi.md, "Threads"),
# ours against Open MPI's TCP path, run after run.  Two ranks; each runs
# T threads, thread t of one playing 1-byte ping-pong with thread t of
# the other (bench/mpi_mt.c), and the table gives the time of a
# round trip, the threads' mean, in us:
#   single     MPI_Init, one thread (the figure every other bench has)
#   mult. 1    MPI_Init_thread(MPI_THREAD_MULTIPLE), one thread: what the
#              lock costs a program that asked for it
#   mult. 2/4  2 or 4 threads per rank (on this machine's 2 cores: the
#              threads outnumber the cores)
#   mult. 1:2  osu_latency_mt's 1:2 case: one thread on rank 0, two on
#              rank 1 whose receives wait for the same messages
# Ours over TCP between the embedded cluster's two peers and through
# shared memory (-a concentrate), unencrypted; Open MPI over TCP as it
# comes.
#   MPI_MT_RUNS=N   rounds (3)
#   MPI_MT_TRIPS=N  round trips of each thread (20000)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_MT_RUNS:-3}
trips=${MPI_MT_TRIPS:-20000}
p2prun=$build/bin/p2prun
p2pcc=$build/bin/p2pcc
[ -x "$p2prun" ] && [ -x "$p2pcc" ] || {
    echo "mpi_mt.sh: build $build first (p2prun, p2pcc)" >&2
    exit 1
}
work=$(mktemp -d /tmp/mpi_mt.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/h"
"$p2pcc" -O2 -o "$work/p2p_mt" "$root/bench/mpi_mt.c" || exit 1
need_openmpi mpi_mt.sh
ompi=no
mpicc.openmpi -O2 -o "$work/ompi_mt" "$root/bench/mpi_mt.c" \
    >/dev/null 2>&1 && ompi=yes

# rt: the round trip of mpi_mt's line on standard input.
rt() { awk '$1 == "threads" { print $5 }'; }

printf "%-5s %-8s | %9s %9s %9s\n" round case "ours TCP" "ours shm" \
    "Open MPI"
i=1
while [ "$i" -le "$runs" ]; do
    for c in "single 1" "multiple 1" "multiple 2" "multiple 4" \
        "multiple 1:2"; do
        set -- $c
        t=$(p2p_embedded "$p2prun" "$work/h" -n 2 "$work/p2p_mt" \
            "$1" "$2" "$trips" 1 | rt)
        s=$(p2p_embedded "$p2prun" "$work/h" -n 2 -a concentrate \
            "$work/p2p_mt" "$1" "$2" "$trips" 1 | rt)
        o=-
        if [ $ompi = yes ]; then
            # Its threads spin for the lock: a few round trips tell.
            n=$trips
            [ "$2" != 1 ] && n=$((trips / 100 + 1))
            o=$(ompi_tcp -np 2 "$work/ompi_mt" "$1" "$2" "$n" 1 | rt)
        fi
        name=$1
        [ "$1" = multiple ] && name="mult. $2"
        printf "%-5s %-8s | %9s %9s %9s\n" "$i" "$name" "${t:--}" \
            "${s:--}" "${o:--}"
    done
    i=$((i + 1))
done
