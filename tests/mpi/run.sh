#!/bin/sh
# run.sh MODE NAME NPROCS P2PRUN PROGRAM TMPDIR [REPLICAS [P2PRUN OPTION]]
#
# Runs PROGRAM on NPROCS ranks through the real launcher on the embedded
# local cluster (a fresh, empty HOME under TMPDIR and no P2P_CONF, so
# that no configuration is found), and judges the outcome:
#   MODE ok    exit status 0 and the line "ok NAME" in the output
#   MODE fail  a non-zero exit status, promptly (the job must not wait
#              for its timeout: MPI_Abort, a crashed rank)
set -u
mode=$1 name=$2 np=$3 p2prun=$4 prog=$5 tmp=$6 r=${7:-1} opt=${8:-}
limit=${P2P_TEST_FAIL_LIMIT:-20}

mkdir -p "$tmp" || exit 1
home=$(mktemp -d "$tmp/home.XXXXXX") || exit 1
out=$(mktemp "$tmp/out.XXXXXX") || exit 1
trap 'rm -rf "$home" "$out"' EXIT

start=$(date +%s)
HOME=$home P2P_CONF= timeout -k 5 100 \
    "$p2prun" -n "$np" -r "$r" --timeout 60 ${opt:+"$opt"} "$prog" >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"

case $mode in
ok)
    if [ $rc -ne 0 ]; then
        echo "run.sh: $name on $np ranks: exit status $rc after ${elapsed}s"
        exit 1
    fi
    if ! grep -qx "ok $name" "$out"; then
        echo "run.sh: $name on $np ranks: no 'ok $name' line"
        exit 1
    fi
    # With replicas a crashed process is carried by its rank's other
    # replica and the job ends 0: only p2prun's line shows the crash.
    if grep -q "killed by signal" "$out"; then
        echo "run.sh: $name on $np ranks: a process died of a signal"
        exit 1
    fi
    ;;
fail)
    if [ $rc -eq 0 ]; then
        echo "run.sh: $name on $np ranks: exit status 0, expected a failure"
        exit 1
    fi
    if [ $rc -eq 124 ] || [ $elapsed -gt "$limit" ]; then
        echo "run.sh: $name on $np ranks: took ${elapsed}s (status $rc)," \
             "expected to end within ${limit}s"
        exit 1
    fi
    # A crash makes the other ranks abort ("a peer process may be
    # gone"): the user must be told of the crash, its first cause.
    if [ "$name" = crash ] && { ! grep -q "killed by signal 11" "$out" ||
        grep -q "called MPI_Abort" "$out"; }; then
        echo "run.sh: crash on $np ranks: the crash is not what p2prun" \
             "reported"
        exit 1
    fi
    echo "run.sh: $name on $np ranks failed as expected (status $rc," \
         "${elapsed}s)"
    ;;
*)
    echo "run.sh: unknown mode $mode"
    exit 2
    ;;
esac
exit 0
