#!/bin/sh
# bench/mpi.sh: libp2pmpi beside Open MPI (and MPICH when its explicit
# mpicc.mpich / mpiexec.mpich are there) on this machine, in one run.
#
# Builds bench/mpi_{latency,bandwidth,allreduce,hello}.c with our p2pcc
# and with each MPI's own compiler, runs them on 2 ranks (ours through
# build/bin/p2prun on the embedded local cluster, with encryption off
# when p2prun offers --no-encrypt; Open MPI with mpirun over its TCP
# transport; MPICH's UCX device held to TCP too, no shared memory), times the start of a 4-rank hello (median of 10), and
# prints a table: figure, ours, Open MPI, ratio (ours / Open MPI) [,
# MPICH, ratio].  Lower is better except for bandwidth.
#
# Missing Open MPI (Debian's openmpi-bin, libopenmpi-dev) is installed
# with apt-get when run as root, else the command is printed.  MPICH is
# installed only as root and only if apt can add it without removing
# anything; the mpicc/mpirun alternatives are then put back as they were.
#
# Usage: bench/mpi.sh [BUILD_DIR]      (default: build/ next to bench/)
#   MPI_BENCH_RUNS=N  runs of each benchmark, the median is kept (3)
#   MPI_BENCH_NOMPICH=1  do not try to install MPICH
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_BENCH_RUNS:-3}
p2pcc=$build/bin/p2pcc
p2prun=$build/bin/p2prun
benches="latency bandwidth allreduce hello"

die() { echo "mpi.sh: $*" >&2; exit 1; }
[ -x "$p2pcc" ] && [ -x "$p2prun" ] ||
    die "no $p2pcc or $p2prun: build the project first"

work=$(mktemp -d "${TMPDIR:-/tmp}/p2p-mpibench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/home"

is_root() { [ "$(id -u)" = 0 ]; }

# --- Open MPI ------------------------------------------------------------
if ! command -v mpicc.openmpi >/dev/null || ! command -v mpirun.openmpi >/dev/null
then
    if is_root; then
        echo "mpi.sh: installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            openmpi-bin libopenmpi-dev >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                  openmpi-bin libopenmpi-dev >/dev/null 2>&1; } ||
            echo "mpi.sh: could not install Open MPI" >&2
    else
        echo "mpi.sh: Open MPI is missing; install it with:" >&2
        echo "    sudo apt-get install openmpi-bin libopenmpi-dev" >&2
    fi
fi
have_ompi=no
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    have_ompi=yes

# --- MPICH, beside it, under its explicit names ---------------------------
alt_value() { update-alternatives --query "$1" 2>/dev/null |
              awk '/^Value:/ { print $2 }'; }
if ! command -v mpicc.mpich >/dev/null && is_root &&
   [ "${MPI_BENCH_NOMPICH:-0}" != 1 ] && command -v apt-get >/dev/null; then
    if apt-get install -s mpich libmpich-dev 2>/dev/null | grep -q '^Inst' &&
       ! apt-get install -s mpich libmpich-dev 2>/dev/null | grep -q '^Remv'
    then
        arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
               echo x86_64-linux-gnu)
        saved=""
        for alt in mpi mpirun "mpi-$arch"; do
            v=$(alt_value "$alt")
            [ -n "$v" ] && saved="$saved $alt=$v"
        done
        echo "mpi.sh: installing MPICH beside Open MPI (mpich libmpich-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            mpich libmpich-dev >/dev/null 2>&1 ||
            echo "mpi.sh: could not install MPICH" >&2
        for kv in $saved; do
            update-alternatives --set "${kv%%=*}" "${kv#*=}" >/dev/null 2>&1
        done
    fi
fi
have_mpich=no
command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
    have_mpich=yes

# --- build ---------------------------------------------------------------
# cc COMPILER OUT SRC: compile quietly (other MPIs' headers warn), loudly
# on failure.
cc() {
    "$1" -O2 -o "$2" "$3" >"$work/cc.log" 2>&1 && return 0
    cat "$work/cc.log" >&2
    return 1
}
for b in $benches; do
    cc "$p2pcc" "$work/p2p_$b" "$root/bench/mpi_$b.c" ||
        die "p2pcc failed on mpi_$b.c"
    if [ $have_ompi = yes ]; then
        cc mpicc.openmpi "$work/ompi_$b" "$root/bench/mpi_$b.c" ||
            have_ompi=no
    fi
    if [ $have_mpich = yes ]; then
        cc mpicc.mpich "$work/mpich_$b" "$root/bench/mpi_$b.c" ||
            have_mpich=no
    fi
done

# --- run -----------------------------------------------------------------
noenc=""
"$p2prun" --help 2>&1 | grep -q -- '--no-encrypt' && noenc=--no-encrypt

# run_mpi IMPL NP PROGRAM: run PROGRAM on NP ranks with implementation IMPL.
run_mpi() {
    case $1 in
    p2p)   HOME=$work/home P2P_CONF= "$p2prun" -n "$2" $noenc --timeout 300 \
               "$3" 2>/dev/null ;;
    ompi)  mpirun.openmpi --allow-run-as-root --oversubscribe \
               --mca btl tcp,self -np "$2" "$3" 2>/dev/null ;;
    mpich) UCX_TLS=tcp,self MPIR_CVAR_CH4_SHM_ENABLE=0 MPIR_CVAR_NOLOCAL=1 \
               mpiexec.mpich -n "$2" "$3" 2>/dev/null ;;
    esac
}

# figure IMPL BENCH KEY: the median over $runs runs of the KEY line.
figure() {
    i=0
    while [ $i -lt "$runs" ]; do
        run_mpi "$1" 2 "$work/$1_$2" | awk -v k="$3" '$1 == k { print $2 }'
        i=$((i + 1))
    done | median
}

# jobstart IMPL: median wall time (s) of 10 starts of a 4-rank hello.
jobstart() {
    i=0
    while [ $i -lt 10 ]; do
        t0=$(date +%s%N)
        run_mpi "$1" 4 "$work/$1_hello" >/dev/null
        t1=$(date +%s%N)
        echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
        i=$((i + 1))
    done | median
}

impls=p2p
[ $have_ompi = yes ] && impls="$impls ompi"
[ $have_mpich = yes ] && impls="$impls mpich"
for impl in $impls; do
    echo "mpi.sh: measuring $impl" >&2
    figure "$impl" latency latency_us >"$work/$impl.lat"
    figure "$impl" bandwidth bandwidth_gbs >"$work/$impl.bw"
    figure "$impl" allreduce allreduce_us >"$work/$impl.ar"
    jobstart "$impl" >"$work/$impl.start"
done

# --- table ---------------------------------------------------------------
val() { [ -s "$work/$1.$2" ] && cat "$work/$1.$2" || echo -; }
echo
echo "libp2pmpi ($noenc${noenc:+, }embedded cluster) beside other MPIs," \
     "2 ranks on $(nproc) cores, $(uname -n)"
if [ $have_mpich = yes ]; then
    printf "%-34s %10s %10s %8s %10s %8s\n" figure ours "Open MPI" ratio \
        "MPICH" ratio
else
    printf "%-34s %10s %10s %8s\n" figure ours "Open MPI" ratio
fi
for row in "lat:1-byte latency (us, lower better)" \
           "bw:1 MiB bandwidth (GB/s, higher)" \
           "ar:8-byte allreduce (us, lower)" \
           "start:job start, 4-rank hello (s)"; do
    key=${row%%:*} name=${row#*:}
    ours=$(val p2p "$key") om=$(val ompi "$key") mp=$(val mpich "$key")
    if [ $have_mpich = yes ]; then
        printf "%-34s %10s %10s %8s %10s %8s\n" "$name" "$ours" "$om" \
            "$(ratio "$ours" "$om")" "$mp" "$(ratio "$ours" "$mp")"
    else
        printf "%-34s %10s %10s %8s\n" "$name" "$ours" "$om" \
            "$(ratio "$ours" "$om")"
    fi
done
[ $have_ompi = yes ] || echo "(Open MPI not available: its column is empty)"
echo "ratio = ours / theirs: below 1 is better for times, above 1 for" \
     "bandwidth"

# --- same host (bench/mpi_shm.sh) -----------------------------------------
# Ranks on one host: our shared-memory path beside Open MPI's and our own
# loopback TCP, interleaved, in its own table.
sh "$root/bench/mpi_shm.sh" "$build"
