# bench/lib.sh: what the benchmark scripts share; sourced, not run.

# median: the median of the numbers on standard input, one a line ("-"
# when there are none).
median() { sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
    else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B: A / B to two places, "-" when either is missing or B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
    if (a == "-" || b == "-" || b + 0 == 0) print "-";
    else printf "%.2f\n", a / b }'; }

# cluster_start BIN DIR NPEERS SLOTS: a supernode on 127.0.0.1 and NPEERS
# peerd on 127.0.0.2, 127.0.0.3, ... (each its own host label, SLOTS
# slots), as examples/demo.sh starts them; DIR/p2p.conf names the
# supernode, the group key and a user key.  Returns once mpihost lists
# every peer; cluster_stop ends them.  DIR must be reachable by the
# account jobs run as (mode 0711 on the way) when peerd runs as root.
cluster_start() {
    cl_bin=$1 cl_dir=$2 cl_n=$3 cl_slots=$4 cl_pids=""
    mkdir -p "$cl_dir" && chmod 711 "$cl_dir" || return 1
    "$cl_bin/p2p-keygen" --group "$cl_dir/group.key" >/dev/null &&
        "$cl_bin/p2p-keygen" --user "$cl_dir/user.key" >/dev/null || return 1
    printf '[network]\ngroup = bench\nkey_file = %s\nsupernodes = %s\n' \
        "$cl_dir/group.key" 127.0.0.1:0 >"$cl_dir/p2p.conf"
    printf '[run]\nuser_key = %s\n' "$cl_dir/user.key" >>"$cl_dir/p2p.conf"
    "$cl_bin/runSuperNode" --conf "$cl_dir/p2p.conf" --listen 127.0.0.1:0 \
        --foreground 2>"$cl_dir/supernode.log" &
    cl_pids="$!"
    cl_port=""
    for _ in $(seq 200); do
        cl_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' \
            "$cl_dir/supernode.log")
        [ -n "$cl_port" ] && break
        sleep 0.05
    done
    [ -n "$cl_port" ] || { cat "$cl_dir/supernode.log" >&2; return 1; }
    sed -i "s/127.0.0.1:0/127.0.0.1:$cl_port/" "$cl_dir/p2p.conf"
    i=2
    while [ $i -lt $((cl_n + 2)) ]; do
        "$cl_bin/peerd" --conf "$cl_dir/p2p.conf" --listen "127.0.0.$i:0" \
            --state-dir "$cl_dir/ws$i" --slots "$cl_slots" \
            --host-label "ws$i" --foreground 2>"$cl_dir/ws$i.log" &
        cl_pids="$cl_pids $!"
        i=$((i + 1))
    done
    for _ in $(seq 600); do
        [ "$("$cl_bin/mpihost" --conf "$cl_dir/p2p.conf" 2>/dev/null |
            tail -n +2 | wc -l)" -ge "$cl_n" ] && return 0
        sleep 0.1
    done
    echo "cluster_start: $cl_n peers did not all register" >&2
    return 1
}

cluster_stop() {
    for p in ${cl_pids:-}; do kill -TERM "$p" 2>/dev/null; done
    for p in ${cl_pids:-}; do wait "$p" 2>/dev/null; done
    cl_pids=""
}
