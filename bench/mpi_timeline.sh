#!/bin/sh
# mpi_timeline.sh [BUILD_DIR]: what a rooted collective timed between
# barriers measures, ours against Open MPI's TCP path, run after run
# (bench/mpi_timeline.c on the host's one clock; docs/mpi.md, "What the
# per-call figure measures").  For each rank count, operation and size,
# three figures, each the median over runs of the run's figure, and the
# median of the per-run ratios ours / Open MPI:
#   call    the slowest rank's median call between barriers (mpi_coll's
#           figure, OSU's maximum): counts how early a rank left the
#           barrier before the root did;
#   latency the collective's own, whatever order the ranks left the
#           barrier in (bcast, scatter: from the root's start to the
#           last rank's return; gather, reduce: from the last
#           contributor's start to the root's return), median call;
#   period  a barrier and the call, one iteration, on the root.
#   MPI_TIMELINE_RUNS=N    runs (5)
#   MPI_TIMELINE_NP="2 4"  rank counts (4 ranks share the 2 cores)
#   MPI_TIMELINE_OPS="bcast scatter"  of bcast, scatter, gather, reduce
#   MPI_TIMELINE_SIZES="1 256 4096"   bytes (a rank's block for scatter
#                                      and gather)
#   MPI_TIMELINE_P2P_OPTS="..."  more p2prun options for our runs, e.g.
#                         "-x P2P_COLL_HOSTS=0" (docs/mpi.md)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_TIMELINE_RUNS:-5}
nps=${MPI_TIMELINE_NP:-2 4}
ops=${MPI_TIMELINE_OPS:-bcast scatter}
sizes=${MPI_TIMELINE_SIZES:-1 256 4096}
p2p_opts=${MPI_TIMELINE_P2P_OPTS:-}
p2prun=$build/bin/p2prun
p2pcc=$build/bin/p2pcc
[ -x "$p2prun" ] && [ -x "$p2pcc" ] || {
    echo "mpi_timeline.sh: build $build first (p2prun, p2pcc)" >&2
    exit 1
}
need_openmpi mpi_timeline.sh
command -v mpicc.openmpi >/dev/null || {
    echo "mpi_timeline.sh: Open MPI is needed to compare with" >&2
    exit 1
}
work=$(mktemp -d /tmp/mpi_timeline.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"
"$p2pcc" -O2 -I"$root/bench" -o "$work/p2p_timeline" \
    "$root/bench/mpi_timeline.c" || exit 1
mpicc.openmpi -O2 -I"$root/bench" -o "$work/ompi_timeline" \
    "$root/bench/mpi_timeline.c" || exit 1

# run IMPL NP ARGS...: the run's "call latency period" (see above),
# ours on the embedded cluster or Open MPI over TCP (bench/lib.sh).
run() {
    impl=$1 np=$2
    shift 2
    if [ "$impl" = p2p ]; then
        # shellcheck disable=SC2086 # options, split on purpose
        p2p_embedded "$p2prun" "$work/home" -n "$np" $p2p_opts \
            "$work/p2p_timeline" "$@"
    else
        ompi_tcp -np "$np" "$work/ompi_timeline" "$@"
    fi | awk '
        $3 == "rank" { if (n++ == 0 || $8 > call) call = $8 }
        $3 == "latency" { latency = $4 }
        $3 == "period" { period = $4 }
        END { if (period != "") print call, latency, period }'
}

: >"$work/all"
i=1
while [ "$i" -le "$runs" ]; do
    echo "mpi_timeline.sh: run $i of $runs" >&2
    for np in $nps; do
        iters=20000
        [ "$np" -gt 2 ] && iters=5000
        for op in $ops; do
            for n in $sizes; do
                p=$(run p2p "$np" "$iters" "$op" "$n")
                o=$(run ompi "$np" "$iters" "$op" "$n")
                [ -n "$p" ] && [ -n "$o" ] &&
                    echo "$np $op $n $p $o" >>"$work/all"
            done
        done
    done
    i=$((i + 1))
done

echo
echo "Rooted collectives timed between barriers, ours / Open MPI over TCP"
echo "(us, medians of $runs interleaved runs; ratio: median of per-run"
echo "ratios ours / Open MPI, below 1 is better)"
echo
echo "| ranks | op | bytes | call ours | Open MPI | ratio | latency ours | Open MPI | ratio | period ours | Open MPI | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for np in $nps; do
    for op in $ops; do
        for n in $sizes; do
            row="| $np | $op | $n"
            for f in 4 5 6; do
                sel() { awk -v np="$np" -v op="$op" -v n="$n" -v c="$1" \
                    '$1 == np && $2 == op && $3 == n { print $c }' \
                    "$work/all"; }
                ours=$(sel "$f" | median)
                theirs=$(sel $((f + 3)) | median)
                r=$(awk -v np="$np" -v op="$op" -v n="$n" -v f="$f" \
                    '$1 == np && $2 == op && $3 == n && $(f + 3) > 0 {
                        printf "%.3f\n", $f / $(f + 3) }' "$work/all" |
                    median)
                row="$row | $ours | $theirs | $r"
            done
            echo "$row |"
        done
    done
done
