#!/bin/sh
# bench/mpi.sh: libp2pmpi beside Open MPI (and MPICH when its explicit
# mpicc.mpich / mpiexec.mpich are there) on this machine, in one run.
#
# Builds bench/mpi_{latency,bandwidth,bibw,coll,allreduce,hello}.c with
# our p2pcc and with each MPI's own compiler, and runs them side by side,
# interleaved (run 1 of ours, run 1 of theirs, run 2 ...), ours through
# build/bin/p2prun on the embedded local cluster, with encryption off when
# p2prun offers --no-encrypt; Open MPI with mpirun over its TCP transport
# (--mca btl tcp,self, --oversubscribe); MPICH's UCX device held to TCP
# too, no shared memory.  It prints
#   1. a summary: 1-byte latency, 1 MiB bandwidth, 8-byte allreduce on
#      2 ranks, start of a 4-rank hello (median of 10); ours, Open MPI,
#      ratio (ours / Open MPI) [, MPICH, ratio];
#   2. per-size tables against Open MPI (OSU style): latency, bandwidth
#      and bidirectional bandwidth on 2 ranks, then every collective of
#      mpi_coll.c on 2 and 4 ranks (4 ranks on 2 cores are
#      oversubscribed), each call timed between barriers (the slowest
#      rank's median call, then OSU's own figure: the ranks' average of
#      their mean calls), then the same calls back to back (IMB).
#      Each cell is the median of the
#      runs; the ratio is the median of the per-run ratios ours / Open
#      MPI (each run's pair measured one after the other), with their
#      range.
# Lower is better for times, higher for bandwidth.
#
# Missing Open MPI (Debian's openmpi-bin, libopenmpi-dev) is installed
# with apt-get when run as root, else the command is printed.  MPICH is
# installed only as root and only if apt can add it without removing
# anything; the mpicc/mpirun alternatives are then put back as they were.
#
# Usage: bench/mpi.sh [BUILD_DIR]      (default: build/ next to bench/)
#   MPI_BENCH_RUNS=N      runs of each benchmark, the median is kept (3)
#   MPI_BENCH_NOMPICH=1   do not try to install MPICH
#   MPI_BENCH_SWEEP=0     the summary only, no per-size tables
#   MPI_BENCH_SIZES=MIN:MAX:F  sizes of the point-to-point sweep
#                         (1:4194304:4; F=2 for every power of two)
#   MPI_BENCH_COLL_SIZES=MIN:MAX:F  sizes of the collectives (1:4194304:4)
#   MPI_BENCH_COLL_NP="2 4"    rank counts of the collectives
#   MPI_BENCH_OPS=a,b,... collectives to run (all of mpi_coll.c)
#   MPI_BENCH_IDLE=0      run the other MPIs at normal priority, not in
#                         the idle CPU class our ranks run in
#   MPI_BENCH_ITERS=N     latency iterations up to 8 KiB, fewer above
#                         (5000); collectives use N/25
#   MPI_BENCH_ONLY=p2p    the point-to-point sweep only (latency,
#                         bandwidth, bidirectional bandwidth): no summary,
#                         collectives, encryption or shared-memory blocks
#   MPI_BENCH_ONLY=coll   the collectives' sweep only (MPI_BENCH_OPS at
#                         MPI_BENCH_COLL_NP ranks): no summary,
#                         point-to-point, encryption or shared-memory blocks
#   MPI_BENCH_ONLY=summary  the summary rows only: no sweep, encryption
#                         or shared-memory blocks
#   MPI_BENCH_P2P_OPTS="..."  more p2prun options for our runs, e.g.
#                         "-x P2P_TCP_CONGESTION=system" (docs/mpi.md)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
build=${1:-$root/build}
runs=${MPI_BENCH_RUNS:-3}
p2pcc=$build/bin/p2pcc
p2prun=$build/bin/p2prun
benches="latency bandwidth allreduce hello bibw coll"
sweep=${MPI_BENCH_SWEEP:-1}
sizes=${MPI_BENCH_SIZES:-1:4194304:4}
csizes=${MPI_BENCH_COLL_SIZES:-1:4194304:4}
cnp=${MPI_BENCH_COLL_NP:-2 4}
ops=${MPI_BENCH_OPS:-barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall}
iters=${MPI_BENCH_ITERS:-5000}
only=${MPI_BENCH_ONLY:-}
case $only in
"" | p2p | coll | summary) ;;
*) echo "mpi.sh: MPI_BENCH_ONLY=$only: only p2p, coll and summary are known" >&2
   exit 2 ;;
esac
[ "$only" = p2p ] && benches="latency bandwidth bibw" && sweep=1
[ "$only" = coll ] && benches="coll" && sweep=1
[ "$only" = summary ] && benches="latency bandwidth allreduce hello" && sweep=0

die() { echo "mpi.sh: $*" >&2; exit 1; }
[ -x "$p2pcc" ] && [ -x "$p2prun" ] ||
    die "no $p2pcc or $p2prun: build the project first"

work=$(mktemp -d "${TMPDIR:-/tmp}/p2p-mpibench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/home"

is_root() { [ "$(id -u)" = 0 ]; }

# --- Open MPI ------------------------------------------------------------
need_openmpi mpi.sh
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
# what run_mpi gives p2prun (blocks below may change it)
p2p_opts="$noenc ${MPI_BENCH_P2P_OPTS:-}"
# The other MPIs run in the idle CPU class as peerd's guests do
# ($mpi_idle, bench/lib.sh), so that on a machine with other work the
# comparison stays like with like.

# run_mpi IMPL NP PROGRAM [ARGS...]: run PROGRAM on NP ranks with
# implementation IMPL (p2p, ompi, mpich).
run_mpi() {
    impl=$1 np=$2
    shift 2
    case $impl in
    p2p)   HOME=$work/home P2P_CONF= "$p2prun" -n "$np" $p2p_opts \
               --timeout 300 "$@" 2>/dev/null ;;
    ompi)  ompi_tcp -np "$np" "$@" ;;
    mpich) UCX_TLS=tcp,self MPIR_CVAR_CH4_SHM_ENABLE=0 MPIR_CVAR_NOLOCAL=1 \
               $mpi_idle mpiexec.mpich -n "$np" "$@" 2>/dev/null ;;
    esac
}

# pick KEY: the second field of the line whose first is KEY.
pick() { awk -v k="$1" '$1 == k { print $2 }'; }

# starttime IMPL: wall time (s) of one start of a 4-rank hello.
starttime() {
    t0=$(date +%s%N)
    run_mpi "$1" 4 "$work/$1_hello" >/dev/null
    t1=$(date +%s%N)
    echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
}

impls=p2p
[ $have_ompi = yes ] && impls="$impls ompi"
[ $have_mpich = yes ] && impls="$impls mpich"

# The summary: every implementation once per run, runs interleaved.
i=0
[ -n "$only" ] && i=$runs && echo "mpi.sh: $only sweep only" >&2
[ -n "$only" ] || echo "mpi.sh: summary, $runs runs of $impls" >&2
while [ $i -lt "$runs" ]; do
    for impl in $impls; do
        run_mpi "$impl" 2 "$work/${impl}_latency" | pick latency_us \
            >>"$work/$impl.lat"
        run_mpi "$impl" 2 "$work/${impl}_bandwidth" | pick bandwidth_gbs \
            >>"$work/$impl.bw"
        run_mpi "$impl" 2 "$work/${impl}_allreduce" | pick allreduce_us \
            >>"$work/$impl.ar"
    done
    i=$((i + 1))
done
i=0
[ -n "$only" ] && i=10
while [ $i -lt 10 ]; do
    for impl in $impls; do
        starttime "$impl" >>"$work/$impl.start"
    done
    i=$((i + 1))
done

# --- summary table --------------------------------------------------------
if [ -z "$only" ]; then
val() { [ -s "$work/$1.$2" ] && median <"$work/$1.$2" || echo -; }
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
fi

# --- per-size sweep against Open MPI --------------------------------------
# sweep_run TAG NP PROGRAM [ARGS...]: one run of PROGRAM (bench/mpi_X.c)
# with ours, then with Open MPI; every "KEY SIZE VALUE" line it prints
# ("coll OP SIZE VALUE" for collectives, "b2b OP SIZE VALUE" for them
# back to back: key OP-b2b, "osu OP SIZE VALUE" for OSU's average of the
# ranks: key OP-osu) is kept in $work/sweep.dat as
# "IMPL RUN KEY[@NP] SIZE VALUE", with TAG (run number) as RUN.
sweep_run() {
    tag=$1 np=$2 prog=$3
    shift 3
    for impl in p2p ompi; do
        [ $impl = ompi ] && [ $have_ompi = no ] && continue
        run_mpi "$impl" "$np" "$work/${impl}_$prog" "$@" |
            awk -v i="$impl" -v r="$tag" -v np="$np" '
                $1 == "coll" && NF == 4 { print i, r, $2 "@" np, $3, $4 }
                $1 == "b2b" && NF == 4 { print i, r, $2 "-b2b@" np, $3, $4 }
                $1 == "osu" && NF == 4 { print i, r, $2 "-osu@" np, $3, $4 }
                $1 != "coll" && NF == 3 { print i, r, $1, $2, $3 }' \
            >>"$work/sweep.dat"
    done
}

# sweep_table TITLE KEY...: a markdown table of the sweep, a row per
# size, for each KEY: ours, Open MPI, the median per-run ratio ours /
# Open MPI and its range.
sweep_table() {
    title=$1
    shift
    echo
    echo "$title"
    awk -v keys="$*" '
    function med(a, n,   i, j, x) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
        if (n == 0) return "-"
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function human(n) {
        if (n >= 1048576 && n % 1048576 == 0) return n / 1048576 " MiB"
        if (n >= 1024 && n % 1024 == 0) return n / 1024 " KiB"
        return n " B"
    }
    function num(v) { return v == "-" ? v : sprintf(v < 10 ? "%.2f" : \
                      v < 1000 ? "%.1f" : "%.0f", v) }
    BEGIN { nk = split(keys, key, " ") }
    { v[$1, $2, $3, $4] = $5; run[$2] = 1; if (!($4 in seen)) {
          seen[$4] = 1; sz[++ns] = $4 } }
    END {
        for (i = 2; i <= ns; i++)
            for (j = i; j > 1 && sz[j - 1] + 0 > sz[j] + 0; j--) {
                x = sz[j]; sz[j] = sz[j - 1]; sz[j - 1] = x }
        hdr = "| size"; line = "|---"
        for (k = 1; k <= nk; k++) {
            hdr = hdr " | " key[k] " ours | Open MPI | ratio (range)"
            line = line "|---|---|---"
        }
        print hdr " |"; print line "|"
        for (s = 1; s <= ns; s++) {
            row = "| " human(sz[s]); any = 0
            for (k = 1; k <= nk; k++) {
                na = nb = nr = 0
                for (r in run) {
                    a = ((("p2p", r, key[k], sz[s]) in v) ? \
                         v["p2p", r, key[k], sz[s]] : "")
                    b = ((("ompi", r, key[k], sz[s]) in v) ? \
                         v["ompi", r, key[k], sz[s]] : "")
                    if (a != "") A[++na] = a + 0
                    if (b != "") B[++nb] = b + 0
                    if (a != "" && b != "" && b + 0 > 0)
                        R[++nr] = a / b
                }
                any += na + nb
                lo = hi = ""
                for (i = 1; i <= nr; i++) {
                    if (lo == "" || R[i] < lo) lo = R[i]
                    if (hi == "" || R[i] > hi) hi = R[i]
                }
                rm = med(R, nr)
                row = row " | " num(med(A, na)) " | " num(med(B, nb)) " | " \
                      (nr ? sprintf("%.2f (%.2f-%.2f)", rm, lo, hi) : "-")
            }
            if (any) print row " |"
        }
    }' "$work/sweep.dat"
}

if [ "$sweep" != 0 ]; then
    : >"$work/sweep.dat"
    citers=$((iters / 25))
    [ $citers -lt 20 ] && citers=20
    i=0
    while [ $i -lt "$runs" ]; do
        i=$((i + 1))
        echo "mpi.sh: sweep, run $i of $runs" >&2
        if [ "$only" != coll ]; then
            sweep_run $i 2 latency "$iters" "$sizes"
            sweep_run $i 2 bandwidth 1 "$sizes"
            sweep_run $i 2 bibw "$sizes"
        fi
        [ "$only" = p2p ] && continue
        for np in $cnp; do
            sweep_run $i "$np" coll "$citers" "$csizes" "$ops"
        done
    done
    echo
    echo "Per size, ours ($noenc${noenc:+, }embedded cluster) against Open" \
         "MPI over TCP, median of $runs interleaved runs; ratio = ours /" \
         "Open MPI (times: below 1 is better; bandwidth: above 1 is better)"
    if [ "$only" != coll ]; then
        sweep_table "Latency, 2 ranks (us, half round trip)" lat
        sweep_table "Bandwidth, 2 ranks (MB/s, window of 64)" bw
        sweep_table "Bidirectional bandwidth, 2 ranks (MB/s, both ways)" bibw
    fi
    [ "$only" = p2p ] && ops=""
    for op in $(echo "$ops" | tr , ' '); do
        keys=""
        for np in $cnp; do keys="$keys $op@$np"; done
        sweep_table "MPI_$op, $cnp ranks (us; size: a rank's block for
gather, scatter, allgather, alltoall, the whole buffer otherwise)" $keys
    done
    for op in $(echo "$ops" | tr , ' '); do
        keys=""
        for np in $cnp; do keys="$keys $op-osu@$np"; done
        sweep_table "MPI_$op, $cnp ranks, as the OSU benchmarks print it (us:
the same calls between barriers, each rank's mean call averaged over the
ranks, OSU's \"Avg Latency\")" $keys
    done
    for op in $(echo "$ops" | tr , ' '); do
        keys=""
        for np in $cnp; do keys="$keys $op-b2b@$np"; done
        sweep_table "MPI_$op back to back, $cnp ranks (us per call, the slowest
rank's; calls one after the other as the Intel MPI Benchmarks time them)" $keys
    done
fi

[ -n "$only" ] && exit 0

# --- more rows --------------------------------------------------------------
# Other measurements append their blocks below this line (shared memory,
# encryption), each a separate block; they may use run_mpi (p2p_opts
# holds p2prun's options), sweep_run, sweep_table, median and ratio.

# --- encryption ------------------------------------------------------------
# Ours with encryption on (the default: AES-256-GCM, libcrypto) beside
# --no-encrypt, interleaved run by run, medians of $runs: the price of
# sealing (target: at least 0.7x the plain bandwidth at 1 MiB).
if [ -n "$noenc" ]; then
    echo "mpi.sh: measuring p2p encrypted beside --no-encrypt" >&2
    for b in latency:latency_us bandwidth:bandwidth_gbs; do
        prog=${b%%:*} key=${b#*:} i=0
        : >"$work/enc.$prog"
        : >"$work/plain.$prog"
        while [ $i -lt "$runs" ]; do
            HOME=$work/home P2P_CONF= "$p2prun" -n 2 --timeout 300 \
                "$work/p2p_$prog" 2>/dev/null |
                awk -v k="$key" '$1 == k { print $2 }' >>"$work/enc.$prog"
            run_mpi p2p 2 "$work/p2p_$prog" |
                awk -v k="$key" '$1 == k { print $2 }' >>"$work/plain.$prog"
            i=$((i + 1))
        done
    done
    echo
    printf "%-34s %10s %10s %8s\n" figure encrypted plain ratio
    for row in "latency:1-byte latency (us, lower better)" \
               "bandwidth:1 MiB bandwidth (GB/s, higher)"; do
        prog=${row%%:*} name=${row#*:}
        e=$(median <"$work/enc.$prog") p=$(median <"$work/plain.$prog")
        printf "%-34s %10s %10s %8s\n" "$name" "$e" "$p" "$(ratio "$e" "$p")"
    done
    # The bandwidth ratio run by run (each pair back to back), as
    # bench/mpi_crypt.sh prints it: its median and range.
    paste "$work/enc.bandwidth" "$work/plain.bandwidth" |
        awk '$2 + 0 > 0 { printf "%.2f\n", $1 / $2 }' >"$work/ratio.bandwidth"
    printf "%-34s %s (%s-%s over %s runs)\n" "1 MiB encrypted/plain, run by run" \
        "$(median <"$work/ratio.bandwidth")" \
        "$(sort -g "$work/ratio.bandwidth" | head -1)" \
        "$(sort -g "$work/ratio.bandwidth" | tail -1)" "$runs"
fi

# --- same host (bench/mpi_shm.sh) -----------------------------------------
# Ranks on one host: our shared-memory path beside Open MPI's and our own
# loopback TCP, interleaved, in its own table.
sh "$root/bench/mpi_shm.sh" "$build"
