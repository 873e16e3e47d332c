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
    cs_peers="" i=2
    while [ $i -lt $(($3 + 2)) ]; do
        cs_peers="$cs_peers -:127.0.0.$i"
        i=$((i + 1))
    done
    cluster_start_at "$1" "$2" "$4" -:127.0.0.1 $cs_peers
}

# cluster_start_at BIN DIR SLOTS NS:IP NS:IP...: as cluster_start, with
# the supernode on the first NS:IP and one peerd (host label ws1, ws2,
# ...) on each of the others, each started in network namespace NS
# (through `ip netns exec`; "-": this one).  mpihost runs in the
# supernode's namespace.
cluster_start_at() {
    cl_bin=$1 cl_dir=$2 cl_slots=$3 cl_pids=""
    shift 3
    cl_snns=${1%%:*} cl_snip=${1#*:}
    shift
    mkdir -p "$cl_dir" && chmod 711 "$cl_dir" || return 1
    "$cl_bin/p2p-keygen" --group "$cl_dir/group.key" >/dev/null &&
        "$cl_bin/p2p-keygen" --user "$cl_dir/user.key" >/dev/null || return 1
    printf '[network]\ngroup = bench\nkey_file = %s\nsupernodes = %s\n' \
        "$cl_dir/group.key" "$cl_snip:0" >"$cl_dir/p2p.conf"
    printf '[run]\nuser_key = %s\n' "$cl_dir/user.key" >>"$cl_dir/p2p.conf"
    $(cl_in "$cl_snns") "$cl_bin/runSuperNode" --conf "$cl_dir/p2p.conf" \
        --listen "$cl_snip:0" --foreground 2>"$cl_dir/supernode.log" &
    cl_pids="$!"
    cl_port=""
    for _ in $(seq 200); do
        cl_port=$(sed -n "s/.*listening on $cl_snip:\([0-9]*\),.*/\1/p" \
            "$cl_dir/supernode.log")
        [ -n "$cl_port" ] && break
        sleep 0.05
    done
    [ -n "$cl_port" ] || { cat "$cl_dir/supernode.log" >&2; return 1; }
    sed -i "s/$cl_snip:0/$cl_snip:$cl_port/" "$cl_dir/p2p.conf"
    cl_n=0
    for spec in "$@"; do
        cl_n=$((cl_n + 1))
        $(cl_in "${spec%%:*}") "$cl_bin/peerd" --conf "$cl_dir/p2p.conf" \
            --listen "${spec#*:}:0" --state-dir "$cl_dir/ws$cl_n" \
            --slots "$cl_slots" --host-label "ws$cl_n" --foreground \
            2>"$cl_dir/ws$cl_n.log" &
        cl_pids="$cl_pids $!"
    done
    for _ in $(seq 600); do
        [ "$($(cl_in "$cl_snns") "$cl_bin/mpihost" --conf "$cl_dir/p2p.conf" \
            2>/dev/null | tail -n +2 | wc -l)" -ge "$cl_n" ] && return 0
        sleep 0.1
    done
    echo "cluster_start: $cl_n peers did not all register" >&2
    return 1
}

# cl_in NS: the words that run a command in network namespace NS ("-":
# none), for an unquoted $(cl_in NS) before it; ip netns exec execs the
# command, so $! after `$(cl_in NS) CMD &` is CMD's pid.
cl_in() { [ "$1" = - ] || echo ip netns exec "$1"; }

cluster_stop() {
    for p in ${cl_pids:-}; do kill -TERM "$p" 2>/dev/null; done
    for p in ${cl_pids:-}; do wait "$p" 2>/dev/null; done
    cl_pids=""
}

# need_openmpi NAME: install Open MPI (Debian's openmpi-bin and
# libopenmpi-dev) when mpicc.openmpi or mpirun.openmpi is missing and we
# are root; otherwise say how.  NAME prefixes the messages.
need_openmpi() {
    command -v mpicc.openmpi >/dev/null &&
        command -v mpirun.openmpi >/dev/null && return 0
    if [ "$(id -u)" = 0 ]; then
        echo "$1: installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            openmpi-bin libopenmpi-dev >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                  openmpi-bin libopenmpi-dev >/dev/null 2>&1; } ||
            echo "$1: could not install Open MPI" >&2
    else
        echo "$1: Open MPI is missing; install it with:" >&2
        echo "    sudo apt-get install openmpi-bin libopenmpi-dev" >&2
    fi
}

# The launch lines the MPI benchmarks compare: peerd runs guest ranks in
# the idle CPU class (SCHED_IDLE, nice 19: owners first), so the other
# MPIs run in it too, $mpi_idle (MPI_BENCH_IDLE=0: at the caller's
# priority).  $mpi_pin, empty or a command such as "taskset -c 0", goes
# before both.
mpi_idle=""
[ "${MPI_BENCH_IDLE:-1}" != 0 ] && command -v chrt >/dev/null &&
    mpi_idle="chrt --idle 0 nice -n 19"
mpi_pin=""
# ompi_tcp ARGS...: mpirun.openmpi over Open MPI's TCP path.
ompi_tcp() {
    $mpi_pin $mpi_idle mpirun.openmpi --allow-run-as-root --oversubscribe \
        --mca btl tcp,self "$@" 2>/dev/null
}
# p2p_embedded P2PRUN HOME ARGS...: P2PRUN on the embedded cluster (no
# configuration, HOME its own), unencrypted.
p2p_embedded() {
    pe_run=$1 pe_home=$2
    shift 2
    $mpi_pin env HOME="$pe_home" P2P_CONF= "$pe_run" --no-encrypt \
        --timeout 300 "$@" 2>/dev/null
}
