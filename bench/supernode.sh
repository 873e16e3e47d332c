#!/bin/sh
# How much a supernode costs: memory per registered peer, time to register,
# and whether one core keeps up with N peers heartbeating every second.
# Usage: bench/supernode.sh [BUILD_DIR] [PEERS...]   (default: build 1000 10000)
set -eu
build=$(cd "${1:-build}" && pwd); shift || true
counts=${*:-1000 10000}
dir=$(mktemp -d /tmp/p2p-bench.XXXXXX)
trap 'kill $sn 2>/dev/null; wait $sn 2>/dev/null; rm -rf "$dir"' EXIT
"$build/bin/p2p-keygen" --group "$dir/group.key" >/dev/null
# The simulated peers announce addresses where nothing listens, so the
# supernode must not check them back; and they all register at once.
printf '[network]\ngroup = bench\nkey_file = group.key\npreauth_max = 65536\n[supernode]\ncheck_peers = no\n' > "$dir/p2p.conf"
for n in $counts; do
    "$build/bin/runSuperNode" --conf "$dir/p2p.conf" --listen 127.0.0.1:0 \
        --foreground --expire 10 2>"$dir/sn.log" &
    sn=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.05
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$dir/sn.log")
    done
    echo "== $n peers"
    "$build/bin/sn_load" --conf "$dir/p2p.conf" --supernode "127.0.0.1:$port" \
        --pid "$sn" --peers "$n" --seconds 10 2>"$dir/load.log" || cat "$dir/load.log"
    kill "$sn"; wait "$sn" || true
done
