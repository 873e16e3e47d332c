#!/bin/sh
# bench/mpi_shm.sh: ranks on the same host, libp2pmpi's shared-memory
# path beside Open MPI's (--mca btl vader,self) and beside our own
# loopback TCP path (p2prun --no-shm), 2 ranks on one peer of the
# embedded cluster (p2prun -a concentrate), in one run.
#
# Builds bench/mpi_{latency,bandwidth,shm_sizes}.c with p2pcc and with
# Open MPI's mpicc, runs them interleaved (ours shm, Open MPI, ours TCP,
# then again) RUNS times, and prints per figure the median and the range
# of each and the ratio of the medians (ours / Open MPI), then the size
# sweep of mpi_shm_sizes (medians).  Ours runs without encryption on the
# TCP rows (--no-encrypt) to compare like with like; the shared-memory
# path is never encrypted.  bench/mpi.sh runs it at its end.
#
# Usage: bench/mpi_shm.sh [BUILD_DIR]   (default: build/ next to bench/)
#   MPI_BENCH_RUNS=N  runs of each benchmark (5)
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

# run IMPL PROGRAM: 2 ranks on one host.  shm: ours through shared memory;
# tcp: ours over loopback TCP; ompi: Open MPI's shared memory.
run() {
    case $1 in
    shm)  HOME=$work/home P2P_CONF= "$p2prun" -n 2 -a concentrate \
              --timeout 300 "$work/p2p_$2" 2>/dev/null ;;
    tcp)  HOME=$work/home P2P_CONF= "$p2prun" -n 2 -a concentrate \
              --no-shm --no-encrypt --timeout 300 "$work/p2p_$2" 2>/dev/null ;;
    ompi) mpirun.openmpi --allow-run-as-root --oversubscribe \
              --mca btl vader,self -np 2 "$work/ompi_$2" 2>/dev/null ;;
    esac
}

impls="shm tcp"
[ $have_ompi = yes ] && impls="shm ompi tcp"
i=0
while [ $i -lt "$runs" ]; do
    echo "mpi_shm.sh: round $((i + 1)) of $runs" >&2
    for impl in $impls; do
        run $impl latency | awk '$1 == "latency_us" { print $2 }' \
            >>"$work/$impl.lat"
        run $impl bandwidth | awk '$1 == "bandwidth_gbs" { print $2 }' \
            >>"$work/$impl.bw"
        run $impl shm_sizes | awk '$1 == "size" { print $2, $4, $6 }' \
            >>"$work/$impl.sizes"
    done
    i=$((i + 1))
done

# range FILE: "min-max" of the numbers in FILE.
range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 }
    END { if (NR) printf "%s-%s\n", lo, hi; else print "-" }'; }
med() { [ -s "$1" ] && median <"$1" || echo -; }

echo
echo "Same host: 2 ranks on one peer, $(nproc) cores, $(uname -n)," \
     "$runs interleaved runs (median, range)"
printf "%-30s %16s %16s %7s %16s\n" figure "ours shm" "Open MPI vader" \
    ratio "ours TCP"
for row in "lat:1-byte latency (us, lower)" "bw:1 MiB bandwidth (GB/s)"; do
    key=${row%%:*} name=${row#*:}
    s=$(med "$work/shm.$key") o=$(med "$work/ompi.$key") \
        t=$(med "$work/tcp.$key")
    printf "%-30s %16s %16s %7s %16s\n" "$name" \
        "$s ($(range "$work/shm.$key"))" \
        "$o ($( [ -s "$work/ompi.$key" ] && range "$work/ompi.$key" || echo -))" \
        "$(ratio "$s" "$o")" "$t ($(range "$work/tcp.$key"))"
done
echo
echo "Sizes (medians): latency us / bandwidth GB/s"
printf "%-9s %20s %20s %20s\n" size "ours shm" "Open MPI vader" "ours TCP"
for sz in $(awk '{ print $1 }' "$work/shm.sizes" | sort -n | uniq); do
    line=$(printf "%-9s" "$sz")
    for impl in shm ompi tcp; do
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
echo "ratio = ours shm / Open MPI: below 1 is better for latency, above 1" \
     "for bandwidth"
