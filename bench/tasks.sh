#!/bin/sh
# bench/tasks.sh: a bag of tasks through the farm, side by side with GNU
# parallel (a process per task, on this machine) and Dask distributed
# (persistent Python workers, client.map of a trivial function).
#
# Runs TASKS_BENCH_N (10000) tasks of `true` with p2prun --each on the
# embedded cluster (one slot per core), the same with `parallel true`, and
# client.map over a LocalCluster with one worker per core; prints tasks
# per second and the overhead per task of each, and the ratios.  Then 40
# tasks of `sleep 1` on 4 slots (the ideal is 10 s).
#
# Persistent workers, side by side with the same Dask run: the C task API
# (bench/tasks_api.c under p2prun --workers: an empty task through
# p2p_map, the median submit-and-wait round trip, 64 KiB in and out per
# call), and the worker protocol with an empty Python function
# (examples/worker.py under p2prun --each --worker, timed from the
# command's start, so it includes starting the farm).  Targets (issue 12):
# C >= 10x Dask's tasks/s, round trip < 1 ms, Python worker >= 3x Dask.
#
# GNU parallel (Debian's parallel) and Dask (python3-distributed) are
# installed with apt-get when run as root, else the command is printed
# and that column is left out.
#
# Usage: bench/tasks.sh [BUILD_DIR]     (default: build/ next to bench/)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=$(cd "${1:-$root/build}" && pwd) || exit 1
n=${TASKS_BENCH_N:-10000}
p2prun=$build/bin/p2prun
cores=$(nproc)

die() { echo "tasks.sh: $*" >&2; exit 1; }
[ -x "$p2prun" ] || die "no $p2prun: build the project first"

need() { # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ]; then
        echo "tasks.sh: installing $2" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" \
            >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" \
                  >/dev/null 2>&1; } || echo "tasks.sh: could not install $2" >&2
    else
        echo "tasks.sh: $1 is missing; sudo apt-get install $2" >&2
    fi
    command -v "$1" >/dev/null 2>&1
}
# Debian's Python, where Debian's Dask is (not a python3 of another
# installation that PATH may find first).
py=/usr/bin/python3
$py -c 'import distributed' 2>/dev/null || {
    need dask-scheduler python3-distributed >/dev/null
}
need parallel parallel >/dev/null

work=$(mktemp -d "${TMPDIR:-/var/tmp}/p2p-taskbench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/home"
seq 1 "$n" >"$work/inputs"

# secs COMMAND...: wall seconds of one run.
secs() {
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || echo "tasks.sh: failed: $*" >&2
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
}

ours=$(secs env HOME="$work/home" P2P_CONF= "$p2prun" --each "$work/inputs" -- true)
par=-
if command -v parallel >/dev/null 2>&1; then
    par=$(secs sh -c "parallel -j $cores true :::: '$work/inputs'")
fi
dask=-
if $py -c 'import distributed' 2>/dev/null; then
    cat >"$work/dask_map.py" <<'EOF'
import sys, time, logging
logging.disable(logging.WARNING)
from distributed import Client, LocalCluster

def f(x):
    return x

if __name__ == "__main__":
    n, cores = int(sys.argv[1]), int(sys.argv[2])
    with LocalCluster(n_workers=cores, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cl, Client(cl) as c:
        c.gather(c.map(f, range(100), pure=False))  # warm
        t = time.monotonic()
        c.gather(c.map(f, range(n), pure=False))
        print("%.3f" % (time.monotonic() - t))
EOF
    dask=$(cd "$work" && $py dask_map.py "$n" "$cores" 2>/dev/null) || dask=-
    [ -n "$dask" ] || dask=-
fi

# Persistent workers.
api=$build/bin/tasks_api
capi=- crtt=- cbytes=- pyw=- cpus=-
cbsize=65536 cbn=$(( n / 5 > 0 ? n / 5 : 1 ))
# runapi ARGS...: the benchmark program's one figure (- on failure).
runapi() {
    (cd "$work" && env HOME="$work/home" P2P_CONF= "$p2prun" --workers 0 \
        ./tasks_api "$@" 2>/dev/null) || echo -
}
if [ -x "$api" ]; then
    cp "$api" "$work/tasks_api"
    cmap=$(runapi map "$n")
    capi=$(echo "$cmap" | awk '{ print $1 }')
    cpus=$(echo "$cmap" | awk 'NF == 5 { printf "caller %s, p2prun %s, peerd %s, worker %s", $2, $3, $4, $5 }')
    crtt=$(runapi rtt 1000)
    cbytes=$(runapi bytes "$cbn" "$cbsize")
fi
printf 'import worker\nworker.serve(lambda data: b"")\n' >"$work/empty_worker.py"
cp "$root/examples/worker.py" "$work/worker.py"
pyw=$(cd "$work" && secs env HOME="$work/home" P2P_CONF= "$p2prun" --each "$work/inputs" \
    --worker -l "$work/worker.py" -l "$work/empty_worker.py" -- python3 empty_worker.py)

rate() { awk -v n="$n" -v s="$1" 'BEGIN { if (s == "-" || s + 0 == 0) print "-"; else printf "%.0f\n", n / s }'; }
per() { awk -v n="$n" -v s="$1" -v c="$cores" 'BEGIN { if (s == "-") print "-"; else printf "%.2f\n", 1000 * s * c / n }'; }
printf '%d tasks, %d cores\n' "$n" "$cores"
printf '%-36s %10s %12s %16s\n' "" "seconds" "tasks/s" "ms/task/slot"
printf '%-36s %10s %12s %16s\n' "p2prun --each (embedded, true)" "$ours" "$(rate "$ours")" "$(per "$ours")"
printf '%-36s %10s %12s %16s\n' "GNU parallel -j$cores true" "$par" "$(rate "$par")" "$(per "$par")"
printf '%-36s %10s %12s %16s\n' "Dask client.map (trivial function)" "$dask" "$(rate "$dask")" "$(per "$dask")"
printf '%-36s %10s\n' "p2prun vs GNU parallel (speed)" "$(ratio "$par" "$ours")"
printf '%-36s %10s\n' "p2prun vs Dask (speed)" "$(ratio "$dask" "$ours")"

# 40 tasks of sleep 1 on 4 slots: 10 s ideally.
seq 1 40 >"$work/forty"
t40=$(secs env HOME="$work/home" P2P_CONF= P2P_LOCAL_SLOTS=2 "$p2prun" --each "$work/forty" -- sh -c 'sleep 1' {})
printf '%-36s %10s (ideal 10.0 on 4 slots)\n' "40 x sleep 1 on 4 slots" "$t40"

# Persistent workers, against the same Dask run.
mbs() { awk -v n="$cbn" -v b="$cbsize" -v s="$1" 'BEGIN { if (s == "-" || s + 0 == 0) print "-"; else printf "%.0f\n", n * b * 2 / s / 1e6 }'; }
echo
printf 'persistent workers (%d tasks)\n' "$n"
printf '%-36s %10s %12s\n' "" "seconds" "tasks/s"
printf '%-36s %10s %12s\n' "C task API, empty task (p2p_map)" "$capi" "$(rate "$capi")"
printf '%-36s %10s %12s\n' "Python worker, empty function" "$pyw" "$(rate "$pyw")"
printf '%-36s %10s %12s\n' "Dask client.map (trivial function)" "$dask" "$(rate "$dask")"
printf '%-36s %10s (target >= 10)\n' "C task API vs Dask (speed)" "$(ratio "$dask" "$capi")"
printf '%-36s %10s (target >= 3)\n' "Python worker vs Dask (speed)" "$(ratio "$dask" "$pyw")"
printf '%-36s %s\n' "CPU per C task (us)" "$cpus"
printf '%-36s %10s ms (target < 1; Dask 10.6 ms here)\n' "submit + wait, median round trip" "$crtt"
printf '%-36s %10s MB/s (in + out; %d calls in %s s)\n' "64 KiB in and 64 KiB out per call" "$(mbs "$cbytes")" "$cbn" "$cbytes"
