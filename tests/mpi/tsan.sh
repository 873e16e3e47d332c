#!/bin/sh
# tsan.sh P2PRUN PROG TMP NP [OPT]
# The threads program (threads.c) built against the library compiled
# with ThreadSanitizer, on NP ranks: it must pass ("ok threads") and
# ThreadSanitizer must report nothing.  Skipped (77) when its runtime
# cannot start on this kernel (its address-space layout).
set -u
p2prun=$1 prog=$2 tmp=$3 np=$4 opt=${5:-}
mkdir -p "$tmp" || exit 1
home=$(mktemp -d "$tmp/home.XXXXXX") || exit 1
out=$(mktemp "$tmp/out.XXXXXX") || exit 1
trap 'rm -rf "$home" "$out"' EXIT

HOME=$home P2P_CONF= TSAN_OPTIONS="halt_on_error=0" timeout -k 5 200 \
    "$p2prun" -n "$np" --timeout 180 ${opt:+"$opt"} "$prog" >"$out" 2>&1
rc=$?
if grep -q 'FATAL: ThreadSanitizer' "$out"; then
    grep 'FATAL: ThreadSanitizer' "$out" | head -1
    echo "tsan.sh: ThreadSanitizer cannot run here: skipped"
    exit 77
fi
races=$(grep -c 'WARNING: ThreadSanitizer' "$out")
if [ "$races" -gt 0 ]; then
    sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY/p' "$out" | head -80
    echo "tsan.sh: $races ThreadSanitizer reports on $np ranks"
    exit 1
fi
cat "$out"
if [ $rc -ne 0 ] || ! grep -qx "ok threads" "$out"; then
    echo "tsan.sh: threads on $np ranks: exit status $rc"
    exit 1
fi
echo "tsan.sh: no ThreadSanitizer report on $np ranks"
