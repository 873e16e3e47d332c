#!/bin/sh
# make demo: a supernode and three workstations on loopback, as a user
# would start them; mpihost; a replicated job through p2prun; a replicated
# job surviving a killed replica; an MPI job surviving replicas lost in both
# replica sets; a bag of tasks (p2prun --each); a job on p2prun's
# embedded cluster; then
# everything stopped again.
# Usage: demo.sh BINDIR
set -eu
bin=$(cd "${1:-build/bin}" && pwd)
examples=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/p2p-demo.XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

# As root, peers run jobs as "nobody", which must pass through here.
chmod 711 "$dir"
cd "$dir"
mkdir empty
say "p2p-keygen --group group.key"
"$bin/p2p-keygen" --group group.key
cat > p2p.conf <<CONF
[network]
group = demo
key_file = group.key
supernodes = 127.0.0.1:0
[run]
user_key = user.key
CONF

say "runSuperNode --conf p2p.conf --listen 127.0.0.1:0 --foreground &"
"$bin/runSuperNode" --conf p2p.conf --listen 127.0.0.1:0 --foreground \
    2>supernode.log &
pids="$pids $!"
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' \
        supernode.log)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { cat supernode.log; exit 1; }
sed -i "s/127.0.0.1:0/127.0.0.1:$port/" p2p.conf
echo "supernode listening on 127.0.0.1:$port"

for i in 2 3 4; do
    say "peerd --conf p2p.conf --listen 127.0.0.$i:0 --state-dir ws$i --slots 2 --host-label ws$i --foreground &"
    "$bin/peerd" --conf p2p.conf --listen "127.0.0.$i:0" --state-dir "ws$i" \
        --slots 2 --host-label "ws$i" --foreground 2>"ws$i.log" &
    pids="$pids $!"
done

for _ in $(seq 100); do
    n=$("$bin/mpihost" --conf p2p.conf 2>/dev/null | tail -n +2 | wc -l)
    [ "$n" -ge 3 ] && break
    sleep 0.05
done

say "mpihost --conf p2p.conf"
"$bin/mpihost" --conf p2p.conf

say "mpihost --conf p2p.conf --json   (first entry)"
"$bin/mpihost" --conf p2p.conf --json | sed -n '1,14p'
echo "  ..."

cp "$examples/hello.sh" .
say "p2prun --conf p2p.conf -n 3 -r 2 --tag-output ./hello.sh"
"$bin/p2prun" --conf p2p.conf -n 3 -r 2 --tag-output ./hello.sh
echo "(exit status $?; every rank ran twice, on two distinct hosts, and is shown once)"

cp "$examples/count.sh" .
say "p2prun --conf p2p.conf -n 2 -r 2 ./count.sh   (and kill rank 0's master half way)"
"$bin/p2prun" --conf p2p.conf -n 2 -r 2 ./count.sh &
run=$!
sleep 0.6
for p in $(pgrep -f count.sh); do
    if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx P2P_RANK=0 &&
       tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx P2P_REPLICA=0; then
        echo "(demo: kill -9 $p, rank 0's master replica)"
        kill -9 "$p"
    fi
done
wait "$run"
echo "(exit status $?: rank 0 went on with its other replica; the lines after"
echo " the kill come from it, none lost, none repeated)"

say "p2pcc -o ring ring.c; p2prun --conf p2p.conf -n 3 -r 2 ./ring   (an MPI job;"
echo "   we kill rank 0's replica 0, then rank 1's replica 1: no replica set stays"
echo "   whole, every rank keeps one replica)"
"$bin/p2pcc" -O2 -o ring "$examples/ring.c" || exit 1
"$bin/p2prun" --conf p2p.conf -n 3 -r 2 ./ring &
run=$!
for victim in 0.0 1.1; do
    sleep 0.6
    for p in $(pgrep -f '/ring$'); do
        if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null |
               grep -qx "P2P_RANK=${victim%.*}" &&
           tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null |
               grep -qx "P2P_REPLICA=${victim#*.}"; then
            echo "(demo: kill -9 $p, rank ${victim%.*} replica ${victim#*.})"
            kill -9 "$p"
        fi
    done
done
wait "$run"
echo "(exit status $?: every rank's lines are complete and in order; the"
echo " survivors were fed by the other replicas, which replayed what was missing)"

cp "$examples/score.sh" .
say "printf '0.1 1\\n0.5 2\\n1 3\\n2 4\\n' | p2prun --conf p2p.conf --each - --results sweep.json -- ./score.sh {}"
printf '0.1 1\n0.5 2\n1 3\n2 4\n' |
    "$bin/p2prun" --conf p2p.conf --each - --results sweep.json -- ./score.sh {}
echo "(a bag of tasks: one per input line, output in input order; sweep.json:)"
head -n 1 sweep.json

say "p2prun -n 2 ./hello.sh   (no configuration: an embedded cluster)"
HOME="$dir/empty" P2P_CONF= "$bin/p2prun" -n 2 ./hello.sh

echo
echo "supernode log:"
sed 's/^/  /' supernode.log
echo
echo "stopping the cluster"
