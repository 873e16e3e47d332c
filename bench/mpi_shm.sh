#!/bin/sh
# bench/mpi_shm.sh: ranks on the same host, libp2pmpi's shared-memory
# path beside Open MPI's (--mca btl vader,self) and beside our own
# loopback TCP path (p2prun --no-shm), 2 ranks on one peer of the
# embedded cluster (p2prun -a concentrate), in one run.
#
# Builds bench/mpi_{latency,bandwidth,shm_sizes}.c with p2pcc and with
# Open MPI's mpicc, runs them interleaved (ours shm, Open MPI, ours shm
# with the single copy off, ours TCP, then again) RUNS times, and prints
# per figure the median and the range of each and the ratio of the
# medians (ours / Open MPI), then the size sweep of mpi_shm_sizes
# (medians) and, per size, the ratio ours / Open MPI of each round
# (median and range).  Ours runs without encryption on the TCP rows
# (--no-encrypt) to compare like with like; the shared-memory path is
# never encrypted.  bench/mpi.sh runs it at its end.
#
# Usage: bench/mpi_shm.sh [BUILD_DIR]   (default: build/ next to bench/)
#   MPI_BENCH_RUNS=N  runs of each benchmark (5)
#   MPI_SHM_IMPLS="shm ompi ring tcp"  what to run (ring: ours through
#                     shared memory with the single copy off, -x
#                     P2P_SHM_CMA=0: large messages copied twice through
#                     the rings)
#   MPI_SHM_ONLY=sizes  only the size sweep (not mpi_latency and
#                     mpi_bandwidth)
#   MPI_SHM_SIZES=MIN:MAX  the sweep's sizes, powers of 4 from MIN to MAX
#                     bytes (1:4194304), e.g. 1:1024 for message rate
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_BENCH_RUNS:-5}
p2pcc=$build/bin/p2pcc
p2prun=$build/bin/p2prun

die() { echo "mpi_shm.sh: $*" >&2; exit 1; }
[ -x "$p2pcc" ] && [ -x "$p2prun" ] ||
    die "no $p2pcc or $p2prun: build the project first"
have_ompi=no
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    have_ompi=yes

work=$(mktemp -d "${TMPDIR:-/tmp}/p2p-shmbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/home"

for b in latency bandwidth shm_sizes; do
    "$p2pcc" -O2 -o "$work/p2p_$b" "$root/bench/mpi_$b.c" ||
        die "p2pcc failed on mpi_$b.c"
    if [ $have_ompi = yes ]; then
        mpicc.openmpi -O2 -o "$work/ompi_$b" "$root/bench/mpi_$b.c" \
            >/dev/null 2>&1 || have_ompi=no
    fi
done

# run IMPL PROGRAM [ARGS]: 2 ranks on one host.  shm: ours through shared
# memory; ring: the same without the single copy; tcp: ours over loopback
# TCP; ompi: Open MPI's shared memory.
run() {
    r_impl=$1 r_prog=$2
    shift 2
    case $r_impl in
    shm)  HOME=$work/home P2P_CONF= "$p2prun" -n 2 -a concentrate \
              --timeout 300 "$work/p2p_$r_prog" "$@" 2>/dev/null ;;
    ring) HOME=$work/home P2P_CONF= "$p2prun" -n 2 -a concentrate \
              -x P2P_SHM_CMA=0 --timeout 300 "$work/p2p_$r_prog" "$@" \
              2>/dev/null ;;
    tcp)  HOME=$work/home P2P_CONF= "$p2prun" -n 2 -a concentrate \
              --no-shm --no-encrypt --timeout 300 "$work/p2p_$r_prog" "$@" \
              2>/dev/null ;;
    ompi) mpirun.openmpi --allow-run-as-root --oversubscribe \
              --mca btl vader,self -np 2 "$work/ompi_$r_prog" "$@" 2>/dev/null ;;
    esac
}

impls=${MPI_SHM_IMPLS:-shm ompi ring tcp}
[ $have_ompi = yes ] || impls=$(echo "$impls" | sed 's/ompi//')
only=${MPI_SHM_ONLY:-}
ssizes=${MPI_SHM_SIZES:-1:4194304}
for impl in shm ompi ring tcp; do
    : >"$work/$impl.lat"
    : >"$work/$impl.bw"
    : >"$work/$impl.sizes"
done
i=0
while [ $i -lt "$runs" ]; do
    echo "mpi_shm.sh: round $((i + 1)) of $runs" >&2
    for impl in $impls; do
        if [ "$only" != sizes ]; then
            run $impl latency | awk '$1 == "latency_us" { print $2 }' \
                >>"$work/$impl.lat"
            run $impl bandwidth | awk '$1 == "bandwidth_gbs" { print $2 }' \
                >>"$work/$impl.bw"
        fi
        run $impl shm_sizes 1 "$ssizes" |
            awk -v r=$i '$1 == "size" { print $2, $4, $6, r }' \
            >>"$work/$impl.sizes"
    done
    i=$((i + 1))
done

# range FILE: "min-max" of the numbers in FILE.
range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 }
    END { if (NR) printf "%s-%s\n", lo, hi; else print "-" }'; }
med() { [ -s "$1" ] && median <"$1" || echo -; }

# cell FILE: "median (range)", or "-" when FILE is empty.
cell() { [ -s "$1" ] && echo "$(med "$1") ($(range "$1"))" || echo -; }

echo
echo "Same host: 2 ranks on one peer, $(nproc) cores, $(uname -n)," \
     "$runs interleaved runs (median, range)"
if [ "$only" != sizes ]; then
printf "%-30s %16s %16s %7s %16s %16s\n" figure "ours shm" \
    "Open MPI vader" ratio "ours rings only" "ours TCP"
for row in "lat:1-byte latency (us, lower)" "bw:1 MiB bandwidth (GB/s)"; do
    key=${row%%:*} name=${row#*:}
    printf "%-30s %16s %16s %7s %16s %16s\n" "$name" \
        "$(cell "$work/shm.$key")" "$(cell "$work/ompi.$key")" \
        "$(ratio "$(med "$work/shm.$key")" "$(med "$work/ompi.$key")")" \
        "$(cell "$work/ring.$key")" "$(cell "$work/tcp.$key")"
done
echo
fi
echo "Sizes (medians): latency us / bandwidth GB/s"
printf "%-9s %20s %20s %20s %20s\n" size "ours shm" "Open MPI vader" \
    "ours rings only" "ours TCP"
for sz in $(awk '{ print $1 }' "$work/shm.sizes" | sort -n | uniq); do
    line=$(printf "%-9s" "$sz")
    for impl in shm ompi ring tcp; do
        if [ -s "$work/$impl.sizes" ]; then
            l=$(awk -v s="$sz" '$1 == s { print $2 }' "$work/$impl.sizes" |
                median)
            b=$(awk -v s="$sz" '$1 == s { print $3 }' "$work/$impl.sizes" |
                median)
            line="$line $(printf "%20s" "$l / $b")"
        else
            line="$line $(printf "%20s" -)"
        fi
    done
    echo "$line"
done
# Per size and round, ours / Open MPI (the rounds interleave, so each
# ratio compares runs taken moments apart): median and range.
if [ -s "$work/ompi.sizes" ]; then
    echo
    echo "Sizes, ours shm / Open MPI vader per round: median (range)"
    printf "%-9s %24s %24s\n" size "latency (lower better)" \
        "bandwidth (higher better)"
    for sz in $(awk '{ print $1 }' "$work/shm.sizes" | sort -n | uniq); do
        for col in 2 3; do
            awk -v s="$sz" -v c=$col 'NR == FNR { if ($1 == s) o[$4] = $c;
                next } $1 == s && ($4 in o) && o[$4] > 0 {
                printf "%.3f\n", $c / o[$4] }' \
                "$work/ompi.sizes" "$work/shm.sizes" >"$work/r$col"
        done
        printf "%-9s %24s %24s\n" "$sz" "$(cell "$work/r2")" \
            "$(cell "$work/r3")"
    done
fi
echo "ratio = ours shm / Open MPI: below 1 is better for latency, above 1" \
     "for bandwidth"
