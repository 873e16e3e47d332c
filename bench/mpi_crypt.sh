#!/bin/sh
# mpi_crypt.sh [BUILD_DIR]: the price of encryption on the MPI data path.
# Runs build/bin/mpi_bandwidth (1 MiB messages, a window of 16, 2 ranks
# on the embedded local cluster) encrypted (the default, AES-256-GCM)
# and with --no-encrypt, interleaved pair by pair (the order of each
# pair alternates, so neither always runs first), and prints every pair,
# then the medians and the encrypted / plain ratio's median and range.
# Each ratio is taken within its pair: the machine's drift between pairs
# cancels.  Loopback puts both ranks and the kernel's copies on one
# machine's cores; bench/mpi_crypt_net.sh measures the same between two
# hosts (network namespaces over a veth pair, held to link rates).
#   MPI_CRYPT_RUNS=N    pairs (7)
#   MPI_CRYPT_ITERS=N   windows of 16 x 1 MiB per run (100: in shorter
#                       runs one hiccup of the machine moves the figure)
#   MPI_CRYPT_TIME=1    also the CPU time (user + system, both ranks and
#                       the launcher) of each run, from /usr/bin/time
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_CRYPT_RUNS:-7}
iters=${MPI_CRYPT_ITERS:-100}
prog=$build/bin/mpi_bandwidth
p2prun=$build/bin/p2prun
[ -x "$prog" ] && [ -x "$p2prun" ] || {
    echo "mpi_crypt.sh: build $build first (mpi_bandwidth, p2prun)" >&2
    exit 1
}
work=$(mktemp -d /tmp/mpi_crypt.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"

# one MODE: the GB/s of one run (MODE enc or plain), and its CPU seconds
# on the second line when MPI_CRYPT_TIME=1.
one() {
    opt=""
    [ "$1" = plain ] && opt=--no-encrypt
    if [ "${MPI_CRYPT_TIME:-0}" = 1 ]; then
        HOME=$work/home P2P_CONF= /usr/bin/time -f "cpu %U %S" -o "$work/t" \
            "$p2prun" -n 2 $opt --timeout 120 "$prog" "$iters" 2>/dev/null |
            awk '$1 == "bandwidth_gbs" { print $2 }'
        awk '{ printf "%.2f\n", $2 + $3 }' "$work/t"
    else
        HOME=$work/home P2P_CONF= "$p2prun" -n 2 $opt --timeout 120 \
            "$prog" "$iters" 2>/dev/null |
            awk '$1 == "bandwidth_gbs" { print $2 }'
    fi
}

printf "%-5s %10s %10s %7s\n" pair encrypted plain ratio
i=1
while [ $i -le "$runs" ]; do
    if [ $((i % 2)) = 1 ]; then
        e=$(one enc)
        p=$(one plain)
    else
        p=$(one plain)
        e=$(one enc)
    fi
    eg=$(echo "$e" | sed -n 1p) pg=$(echo "$p" | sed -n 1p)
    r=$(ratio "${eg:--}" "${pg:--}")
    echo "$eg" >>"$work/enc"
    echo "$pg" >>"$work/plain"
    echo "$r" >>"$work/ratio"
    if [ "${MPI_CRYPT_TIME:-0}" = 1 ]; then
        printf "%-5s %10s %10s %7s   cpu s: %s %s\n" "$i" "$eg" "$pg" "$r" \
            "$(echo "$e" | sed -n 2p)" "$(echo "$p" | sed -n 2p)"
    else
        printf "%-5s %10s %10s %7s\n" "$i" "$eg" "$pg" "$r"
    fi
    i=$((i + 1))
done
printf "%-5s %10s %10s %7s\n" median "$(median <"$work/enc")" \
    "$(median <"$work/plain")" "$(median <"$work/ratio")"
printf "ratio range %s - %s over %s pairs (1 MiB, GB/s)\n" \
    "$(sort -g "$work/ratio" | grep -v '^-' | head -1)" \
    "$(sort -g "$work/ratio" | grep -v '^-' | tail -1)" "$runs"
