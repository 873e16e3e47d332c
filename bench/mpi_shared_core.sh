#!/bin/sh
# mpi_shared_core.sh [BUILD_DIR]: ranks on cores they share without
# having counted on it (docs/mpi.md, "Transport", Waiting), ours against
# Open MPI's TCP path, run after run:
#   one core   both ranks of a 2-rank job allowed one core (taskset -c 0,
#              inherited through the embedded cluster's peerd): 1-byte
#              latency, µs one way (ours over TCP between the two peers,
#              ours through shared memory with -a concentrate, Open MPI
#              as it comes and with mpi_yield_when_idle, its setting for
#              oversubscription).  Open MPI binds 2 ranks to a core each
#              by default, over the taskset: its pinned runs say
#              --bind-to none, so both ranks do share core 0.
#   polling    the same, each receive waited for in the program's own
#              loop of MPI_Test (mpi_latency's "test"): ours over TCP,
#              Open MPI with mpi_yield_when_idle
#   two jobs   two 2-rank jobs started together on the machine's cores,
#              each MPI_SHARED_TRIPS 1-byte round trips: seconds until
#              both are done (each job alone counts a core per rank)
#   MPI_SHARED_RUNS=N   rounds (3)
#   MPI_SHARED_TRIPS=N  round trips of each job in "two jobs" (100000)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_SHARED_RUNS:-3}
trips=${MPI_SHARED_TRIPS:-100000}
p2prun=$build/bin/p2prun
p2pcc=$build/bin/p2pcc
[ -x "$p2prun" ] && [ -x "$p2pcc" ] || {
    echo "mpi_shared_core.sh: build $build first (p2prun, p2pcc)" >&2
    exit 1
}
work=$(mktemp -d /tmp/mpi_shared.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/h1" "$work/h2"
"$p2pcc" -O2 -o "$work/p2p_latency" "$root/bench/mpi_latency.c" || exit 1
need_openmpi mpi_shared_core.sh
ompi=no
mpicc.openmpi -O2 -o "$work/ompi_latency" "$root/bench/mpi_latency.c" \
    >/dev/null 2>&1 && ompi=yes

# lat1: the 1-byte figure of mpi_latency's output on standard input.
lat1() { awk '$1 == "lat" && $2 == 1 { print $3 }'; }
# ours HOME ARGS..., theirs ARGS...: a run of ours (p2prun on the
# embedded cluster, HOME its own) or of Open MPI's (bench/lib.sh), held
# to core 0 when mpi_pin is "taskset -c 0" (and bind "--bind-to none"
# for Open MPI).
bind=""
ours() { p2p_embedded "$p2prun" "$@"; }
theirs() { ompi_tcp $bind "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'; }

printf "%-5s | %-43s | %-17s | %s\n" "" "one core: 1 B latency, us" \
    "one core, polling" "two jobs at once: s"
printf "%-5s | %8s %8s %10s %13s | %8s %8s | %8s %8s\n" round "ours TCP" \
    "ours shm" "Open MPI" "OMPI yield" ours "OMPI y." ours "Open MPI"
i=1
while [ "$i" -le "$runs" ]; do
    mpi_pin="taskset -c 0"
    bind="--bind-to none"
    t=$(ours "$work/h1" -n 2 "$work/p2p_latency" 2000 1:1 | lat1)
    s=$(ours "$work/h1" -n 2 -a concentrate "$work/p2p_latency" 2000 1:1 |
        lat1)
    tp=$(ours "$work/h1" -n 2 "$work/p2p_latency" 2000 1:1 test | lat1)
    o=-
    oy=-
    op=-
    if [ $ompi = yes ]; then
        # As it comes, each hop waits for the scheduler's tick (ms): a
        # few round trips tell.
        o=$(theirs -np 2 "$work/ompi_latency" 50 1:1 | lat1)
        oy=$(theirs --mca mpi_yield_when_idle 1 -np 2 \
            "$work/ompi_latency" 2000 1:1 | lat1)
        op=$(theirs --mca mpi_yield_when_idle 1 -np 2 \
            "$work/ompi_latency" 2000 1:1 test | lat1)
    fi
    mpi_pin=""
    bind=""
    t0=$(now)
    ours "$work/h1" -n 2 "$work/p2p_latency" "$trips" 1:1 >/dev/null &
    ours "$work/h2" -n 2 "$work/p2p_latency" "$trips" 1:1 >/dev/null &
    wait
    w=$(since "$t0")
    wo=-
    if [ $ompi = yes ]; then
        t0=$(now)
        theirs -np 2 "$work/ompi_latency" "$trips" 1:1 >/dev/null &
        theirs -np 2 "$work/ompi_latency" "$trips" 1:1 >/dev/null &
        wait
        wo=$(since "$t0")
    fi
    printf "%-5s | %8s %8s %10s %13s | %8s %8s | %8s %8s\n" "$i" "${t:--}" \
        "${s:--}" "${o:--}" "${oy:--}" "${tp:--}" "${op:--}" "$w" "$wo"
    i=$((i + 1))
done
