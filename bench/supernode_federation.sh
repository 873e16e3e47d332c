#!/bin/sh
# bench/supernode.sh --federation: a federated directory under load.
# Usage: bench/supernode.sh --federation [BUILD_DIR] [PEERS] [SECONDS]
#                                         [HEARTBEAT_MS]
#
# SUPERNODES (default 4) supernodes on 127.0.2.1 onwards, each
# configured with all ([supernode] federation), PEERS simulated peers in
# shards (sn_fedload: real authenticated connections, one per peer, from
# 127.64.0.1 onwards; each registers with the supernode its node key's
# rendezvous order puts first, as peerd does with supernodes_per_peer =
# 1), and queries through every supernode once a second (sn_fedquery).
# Once every peer is registered it measures each supernode's CPU and
# memory over a 10 s window, kills the supernode holding the most peers
# with SIGKILL, and reports how long until every one of its peers is
# registered again and how the queries fared.  Everything stops after
# SECONDS.
#
# Bounded by descriptors: a supernode holds one session per peer, and
# after the kill the others hold them all.  The bench asks for the open
# files that needs, raising the hard limit as root (that takes
# CAP_SYS_RESOURCE, and fs.nr_open, raised too if short); as root it
# raises fs.file-max and nf_conntrack_max when they are short, and puts
# every one back at the end.  Where the limit stays too low for PEERS on
# SUPERNODES, it runs as many supernodes as the peers need (at most 16),
# and says so; beyond that, fewer peers, with a note.
# Simulated peers go in shards of at most 15,000, one process each, each
# peer from its own loopback source address (ephemeral ports are per
# source and destination pair).
# HEARTBEAT_MS (default 1000) is the period the supernodes ask for
# ([supernode] heartbeat_ms) and the simulated peers use; the supernodes'
# expiry is ten periods, at least 10 s.  A machine too busy to carry
# PEERS heartbeats a period (the load generators encrypt each one) needs
# a longer period, or peers expire and re-register in a loop.
set -eu
build=$(cd "${1:-build}" && pwd)
want=${2:-100000}
secs=${3:-120}
hb=${4:-1000}
expire=$((hb * 10 / 1000))
[ "$expire" -lt 10 ] && expire=10
preauth=1024
# Descriptors one supernode needs when three hold every peer, with 5 %
# to spare (the cap below), and a little more.
need=$((want * 100 / 285 + 32 + preauth + 64 + 256))
restore=""
dir=$(mktemp -d /tmp/p2p-bench-fed.XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    # FED_KEEP=DIR keeps every log, each shard's counts and the kernel's
    # socket figures of the run there (for a run that went wrong).
    if [ -n "${FED_KEEP:-}" ]; then
        mkdir -p "$FED_KEEP" && cp "$dir"/*.log "$dir"/*.out "$dir"/*.err \
            "$FED_KEEP"/ 2>/dev/null || true
    fi
    rm -rf "$dir"
    for kv in $restore; do
        echo "${kv#*=}" >"/proc/sys/$(echo "${kv%%=*}" | tr . /)" || true
    done
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# raise_sysctl NAME MIN: as root, raise /proc/sys/NAME to MIN if lower,
# remembering the old value for the end of the run.
raise_sysctl() {
    f=/proc/sys/$(echo "$1" | tr . /)
    [ -w "$f" ] || return 0
    old=$(cat "$f")
    [ "$old" -ge "$2" ] && return 0
    echo "$2" >"$f" || return 0
    echo "note: $1 raised from $old to $2 for the run" >&2
    restore="$restore $1=$old"
}
# Loopback connections are tracked like any other: two ends per peer,
# and the killed supernode's sessions linger a while after it.
if [ "$(id -u)" = 0 ]; then
    raise_sysctl fs.file-max $((want * 3 + 65536))
    raise_sysctl net.netfilter.nf_conntrack_max $((want * 3))
fi
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ] &&
    [ "$(id -u)" = 0 ]; then
    raise_sysctl fs.nr_open "$need"
    # Raising a hard limit needs CAP_SYS_RESOURCE, which a container's
    # root may lack: then the bench makes do with more supernodes.
    if ulimit -H -n "$need" 2>/dev/null; then
        echo "note: open-file limit raised to $need for the bench" >&2
    fi
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
nofile=$(ulimit -n)
[ "$nofile" = unlimited ] && nofile=1048576
# A supernode's sessions: its descriptors less 32, less what admission
# keeps for connections still in their handshake, less a margin for its
# federation links and the queries.
per_sn=$((nofile - 32 - preauth - 64))
# After the kill the survivors hold every peer; rendezvous hashing
# spreads them evenly, not exactly: 5 % to spare.
nsn=${SUPERNODES:-4}
peers=$want
if [ "$peers" -gt $(((nsn - 1) * per_sn * 95 / 100)) ]; then
    fit=$(((peers + per_sn * 95 / 100 - 1) / (per_sn * 95 / 100) + 1))
    [ "$fit" -gt 16 ] && fit=16
    echo "note: $want peers asked; with $nofile descriptors per process a"          "supernode holds $per_sn sessions, and after the kill $((nsn - 1))"          "would have to hold them all: running $fit supernodes instead of"          "$nsn" >&2
    nsn=$fit
fi
cap=$(((nsn - 1) * per_sn * 95 / 100))
if [ "$peers" -gt "$cap" ]; then
    echo "note: $want peers asked; $nsn supernodes of $per_sn sessions"          "hold $cap after the kill: running $cap" >&2
    peers=$cap
fi
shard_max=$((nofile - 500))
[ "$shard_max" -gt 15000 ] && shard_max=15000
nshards=$(((peers + shard_max - 1) / shard_max))


"$build/bin/p2p-keygen" --group "$dir/group.key" >/dev/null
port=9790
members=""
for k in $(seq 1 "$nsn"); do
    members="$members${members:+, }127.0.2.$k:$port"
done
# The simulated peers announce addresses where nothing listens, so the
# supernodes must not check them back.
cat > "$dir/p2p.conf" <<EOF
[network]
group = bench
key_file = group.key
# A shard starts hundreds of handshakes at once on a loaded machine.
first_frame_ms = 5000
handshake_timeout_ms = 15000
preauth_max = $preauth
preauth_per_host = 64
[supernode]
check_peers = no
federation = $members
heartbeat_ms = $hb
EOF

snpid() { eval echo "\$sn$1"; }
for k in $(seq 1 "$nsn"); do
    "$build/bin/runSuperNode" --conf "$dir/p2p.conf" \
        --listen "127.0.2.$k:$port" --foreground --expire "$expire" \
        2>"$dir/sn$k.log" &
    eval "sn$k=$!"
    pids="$pids $!"
done
for k in $(seq 1 "$nsn"); do
    n=0
    until grep -q "listening on" "$dir/sn$k.log"; do
        n=$((n + 1))
        if [ $n -gt 100 ]; then
            echo "supernode $k did not start:" >&2
            cat "$dir/sn$k.log" >&2
            exit 1
        fi
        sleep 0.1
    done
done

sns=""
for k in $(seq 1 "$nsn"); do sns="$sns --supernode 127.0.2.$k:$port"; done
echo "== federation: $nsn supernodes, $peers simulated peers in $nshards" \
     "shards, heartbeat $hb ms, expiry $expire s, $secs s"
t0=$(date +%s.%N)
i=0
first=0
while [ $i -lt $nshards ]; do
    n=$((peers - first))
    [ $n -gt $shard_max ] && n=$shard_max
    # shellcheck disable=SC2086
    "$build/bin/sn_fedload" --conf "$dir/p2p.conf" $sns --peers "$n" \
        --first "$first" --seconds "$secs" --heartbeat-ms "$hb" \
        >"$dir/shard$i.out" \
        2>"$dir/shard$i.err" &
    pids="$pids $!"
    shardpids="${shardpids:-} $!"
    first=$((first + n))
    i=$((i + 1))
done
# shellcheck disable=SC2086
"$build/bin/sn_fedquery" --conf "$dir/p2p.conf" $sns --seconds "$secs" \
    --every-ms 1000 >"$dir/query.out" 2>"$dir/query.err" &
qpid=$!
pids="$pids $qpid"

# Wait until every shard has registered all its peers (or give up at
# two thirds of the run).
deadline=$(($(date +%s) + secs * 2 / 3))
while :; do
    done_n=$(cat "$dir"/shard*.out 2>/dev/null | grep -c '^all_registered_s' || true)
    [ "$done_n" -ge "$nshards" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "not every peer registered within $((secs * 2 / 3)) s" >&2
        break
    fi
    if [ -n "${FED_KEEP:-}" ]; then
        { date +%T; cat /proc/net/sockstat; } >>"$dir/sockstat.log"
    fi
    sleep 0.5
done
t1=$(date +%s.%N)
# Every shard says how many of its peers are registered now, and where
# ("now_on" lines; a starved shard may take seconds to answer): the
# counts below are these, whether or not every peer registered.
for p in $shardpids; do kill -USR2 "$p" 2>/dev/null || true; done
deadline=$(($(date +%s) + 60))
while [ "$(cat "$dir"/shard*.out | grep -c '^now_on 0 ' || true)" -lt "$nshards" ] &&
    [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.2
done
echo "registered: $(cat "$dir"/shard*.out | awk '$1 == "now_on" { n += $3 } END { print n + 0 }')/$peers peers in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
now() { date +%s.%N; }
# mark: note each live supernode's CPU ticks and the time.
mark() {
    for k in $(seq 1 "$nsn"); do
        # A supernode just killed may be reaped between the test and the
        # read: then it has no figure, and the run goes on.
        if [ -d "/proc/$(snpid $k)" ]; then
            ticks "$(snpid $k)" >"$dir/cpu.$k" 2>/dev/null || true
        fi
    done
    now >"$dir/cpu.t"
}
# usage K: supernode K's CPU since the mark, in % of one core.
usage() {
    awk -v a="$(cat "$dir/cpu.$1")" -v b="$(ticks "$(snpid "$1")")" \
        -v hz="$(getconf CLK_TCK)" -v t0="$(cat "$dir/cpu.t")" -v t1="$(now)" \
        'BEGIN { printf "%.1f", 100 * (b - a) / hz / (t1 - t0) }'
}
# peers WHAT K: peers the shards counted on supernode K ("now_on" or
# "end_on").
peers_on() {
    cat "$dir"/shard*.out | awk -v w="$1" -v k=$(($2 - 1)) \
        '$1 == w && $2 == k { n += $3 } END { print n + 0 }'
}
sleep 3 # the registration burst is over: measure the steady state
mark
sleep 10
for k in $(seq 1 "$nsn"); do
    echo "supernode $k: $(peers_on now_on $k) peers, RSS $(rss_mb "$(snpid $k)") MB," \
         "CPU $(usage $k)% of a core (10 s: heartbeats, summaries, queries)"
done

# Kill the supernode that holds the most peers.
victim=$(cat "$dir"/shard*.out | awk '$1 == "now_on" { n[$2] += $3 } END { m = -1; for (k in n) if (n[k] > m) { m = n[k]; v = k } print v + 1 }')
vp=$(snpid "$victim")
echo "killing supernode $victim (SIGKILL)"
# The load and the queries hear of it first, so that what they count
# from now on is the kill's doing.
for p in $qpid $shardpids; do kill -USR1 "$p" 2>/dev/null || true; done
sleep 0.1
kill -9 "$vp"
mark

wait "$qpid" || true
for p in $shardpids; do wait "$p" || true; done

cat "$dir"/shard*.out | awk '
    $1 == "lost_since_kill" { lost += $2 } $1 == "still_lost" { still += $2 }
    $1 == "lost" { all += $2 } $1 == "never_registered" { never += $2 }
    $1 == "kill_ms" && $2 > 0 { if (!km || $2 < km) km = $2 }
    $1 == "complete_ms" { if ($2 == 0) incomplete = 1; else if ($2 > cm) cm = $2 }
    END {
        printf "registrations lost since the kill: %d (in the whole run: %d); not registered at the end: %d; never registered: %d\n", lost, all, still, never
        if (!incomplete && km)
            printf "every peer registered again %.2f s after the kill\n", (cm > km ? cm - km : 0) / 1000
        else
            print "NOT every peer registered again by the end of the run"
    }'
for f in "$dir"/shard*.out; do
    awk -v s="$(basename "$f" .out)" '$1 == "registered" { r = $2 }
        $1 == "peers" { p = $2 } $1 == "never_registered" { n = $2 }
        END { if (n > 0) printf "  %s: %d of %d registered at the end, %d never\n", s, r, p, n }' "$f"
done
cat "$dir"/shard*.out | awk '$1 == "lost_reason" { n = $2; $1 = $2 = ""; r[substr($0, 3)] += n }
    END { for (k in r) printf "  %d lost: %s\n", r[k], k }'
echo "after the kill:"
for k in $(seq 1 "$nsn"); do
    [ "$k" = "$victim" ] && continue
    echo "supernode $k: $(peers_on end_on $k) peers, RSS $(rss_mb "$(snpid $k)") MB," \
         "CPU $(usage $k)% of a core (since the kill, re-registrations included)"
done
echo "queries (each through one supernode, answer bounded by [supernode] list_max):"
sed 's/^127\.0\.2\./supernode /' "$dir/query.out"
if grep -q "refused\|error" "$dir"/sn*.log 2>/dev/null; then
    echo "supernode log lines about refusals or errors:"
    grep -h "refused\|error" "$dir"/sn*.log | sort | uniq -c | sort -rn | head -5
fi
