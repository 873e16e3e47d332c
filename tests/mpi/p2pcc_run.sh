#!/bin/sh
# p2pcc_run.sh NAME NPROCS P2PCC P2PRUN SOURCE TMPDIR [REPLICAS]
# Builds SOURCE with p2pcc (as a user would: the static library, the
# wrapper's flags) and runs it through run.sh.
set -u
name=$1 np=$2 p2pcc=$3 p2prun=$4 src=$5 tmp=$6 r=${7:-1}
here=$(dirname "$0")
mkdir -p "$tmp" || exit 1
prog="$tmp/$name.$np.$r.$$"
trap 'rm -f "$prog"' EXIT
if ! "$p2pcc" -O1 -o "$prog" "$src"; then
    echo "p2pcc_run.sh: $name: p2pcc failed"
    exit 1
fi
sh "$here/run.sh" ok "$name" "$np" "$p2prun" "$prog" "$tmp" "$r"
