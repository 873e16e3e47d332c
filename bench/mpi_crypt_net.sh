#!/bin/sh
# mpi_crypt_net.sh [BUILD_DIR]: the price of encryption between two hosts.
# bench/mpi_crypt.sh measures it on loopback, where both ranks share the
# machine's two cores with the kernel's copies and nothing else limits
# the stream; here each rank's peer lives in a network namespace of its
# own (ws1 in A, ws2 in B, 169.254.214.1 and .2), joined by a veth pair,
# so the ranks talk as two hosts do, and the pair is run bare and held to
# the rates of common links (tc tbf on both ends).  For each
# link, build/bin/mpi_bandwidth (1 MiB messages, a window of 16) runs
# encrypted (the default, AES-256-GCM) and with --no-encrypt, pair by
# pair, the order of each pair alternating, the links taken in turn
# round by round; prints every pair, then per link the medians and the
# encrypted / plain ratio's median and range (each ratio taken within its
# pair).  The namespaces, the veth pair and the cluster (a supernode and
# ws1 in A, ws2 in B, one slot each) are made here and removed on exit.
# Needs root and `ip netns`/`tc` (iproute2): without them it says why and
# exits 0 without measuring.
#   MPI_CRYPT_RUNS=N     rounds (5)
#   MPI_CRYPT_ITERS=N    windows of 16 x 1 MiB per run (100)
#   MPI_CRYPT_LINKS=...  links, in order: "bare" or a tc rate such as
#                        10gbit ("bare 25gbit 10gbit")
#   MPI_CRYPT_MTU=N      the veth pair's MTU (1500; 9000 for jumbo frames)
#   MPI_CRYPT_P2P_OPTS="..."  more p2prun options for both modes, e.g.
#                        "-x P2P_AEAD_LIB=libcrypto"
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_CRYPT_RUNS:-5}
iters=${MPI_CRYPT_ITERS:-100}
links=${MPI_CRYPT_LINKS:-bare 25gbit 10gbit}
mtu=${MPI_CRYPT_MTU:-1500}
prog=$build/bin/mpi_bandwidth
[ -x "$prog" ] && [ -x "$build/bin/p2prun" ] && [ -x "$build/bin/peerd" ] || {
    echo "mpi_crypt_net.sh: build $build first (mpi_bandwidth, p2prun, peerd)" >&2
    exit 1
}

skip() {
    echo "mpi_crypt_net.sh: skipped, network namespaces unavailable: $*"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "not root"
command -v ip >/dev/null && command -v tc >/dev/null ||
    skip "no ip or tc command (iproute2)"
tag=$$
nsa=p2pcn${tag}a nsb=p2pcn${tag}b veth=p2pcn$tag
ipa=169.254.214.1 ipb=169.254.214.2
work=""
cleanup() {
    cluster_stop
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null # takes the veth pair with it
    [ -z "$work" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$nsa" 2>/dev/null || skip "ip netns add failed"

# A root peerd gives each job a private /tmp: the cluster lives elsewhere.
mkdir -p /var/lib/p2p-bench
work=$(mktemp -d /var/lib/p2p-bench/crypt-net.XXXXXX) || exit 1
chmod 711 "$work"

# The two hosts: a veth pair, one end in each namespace.
for c in "netns add $nsb" \
    "link add ${veth}a netns $nsa type veth peer name ${veth}b netns $nsb" \
    "-n $nsa addr add $ipa/30 dev ${veth}a" \
    "-n $nsb addr add $ipb/30 dev ${veth}b" \
    "-n $nsa link set ${veth}a mtu $mtu up" \
    "-n $nsb link set ${veth}b mtu $mtu up" \
    "-n $nsa link set lo up" "-n $nsb link set lo up"; do
    # shellcheck disable=SC2086 # the words of one ip command
    ip $c || skip "ip $c failed"
done
cluster_start_at "$build/bin" "$work/net" 1 "$nsa:$ipa" "$nsa:$ipa" \
    "$nsb:$ipb" || { echo "mpi_crypt_net.sh: cannot start the cluster" >&2; exit 1; }

# shape LINK: both ends of the veth pair held to LINK's rate (a token
# bucket of 1 MiB, 4 ms of queue), or bare.
shape() {
    for end in "$nsa ${veth}a" "$nsb ${veth}b"; do
        set -- $end
        tc -n "$1" qdisc del dev "$2" root 2>/dev/null
        [ "$link" = bare ] || tc -n "$1" qdisc add dev "$2" root tbf \
            rate "$link" burst 1mb latency 4ms || return 1
    done
}

# one MODE: the GB/s of one run (MODE enc or plain), ranks on ws1 and ws2.
one() {
    opt=""
    [ "$1" = plain ] && opt=--no-encrypt
    ip netns exec "$nsa" "$build/bin/p2prun" --conf "$work/net/p2p.conf" \
        -n 2 $opt ${MPI_CRYPT_P2P_OPTS:-} --timeout 120 "$prog" "$iters" 2>>"$work/stderr" |
        awk '$1 == "bandwidth_gbs" { print $2 }'
}

printf "%-7s %-5s %10s %10s %7s\n" link round encrypted plain ratio
i=1
while [ "$i" -le "$runs" ]; do
    for link in $links; do
        shape || { echo "mpi_crypt_net.sh: tc cannot shape $link" >&2; exit 1; }
        if [ $((i % 2)) = 1 ]; then
            e=$(one enc)
            p=$(one plain)
        else
            p=$(one plain)
            e=$(one enc)
        fi
        r=$(ratio "${e:--}" "${p:--}")
        echo "${e:--}" >>"$work/enc.$link"
        echo "${p:--}" >>"$work/plain.$link"
        echo "$r" >>"$work/ratio.$link"
        printf "%-7s %-5s %10s %10s %7s\n" "$link" "$i" "${e:--}" "${p:--}" "$r"
    done
    i=$((i + 1))
done
echo
printf "%-7s %10s %10s %7s %12s\n" link encrypted plain ratio "ratio range"
for link in $links; do
    printf "%-7s %10s %10s %7s %12s\n" "$link" \
        "$(grep -v '^-' "$work/enc.$link" | median)" \
        "$(grep -v '^-' "$work/plain.$link" | median)" \
        "$(grep -v '^-' "$work/ratio.$link" | median)" \
        "$(sort -g "$work/ratio.$link" | grep -v '^-' | head -1)-$(sort -g \
            "$work/ratio.$link" | grep -v '^-' | tail -1)"
done
echo "(1 MiB messages, GB/s, medians of $runs rounds; p2prun -n 2" \
    "[--no-encrypt] mpi_bandwidth $iters across the veth pair, MTU $mtu)"
[ ! -s "$work/stderr" ] || { echo "p2prun said:"; sort "$work/stderr" | uniq -c | head -5; }
