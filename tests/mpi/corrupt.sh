#!/bin/sh
# corrupt.sh KIND P2PRUN PROGRAM TMPDIR [N [EXPECT]]
#
# A sealed frame damaged on the wire: rank 0 flips a bit of the Nth (1)
# sealed frame of KIND ("data": a rendezvous payload, opened straight
# into the receiver's buffer; "any": the first frame, opened in the
# connection's buffer) after sealing it (P2P_TEST_CORRUPT, testkill.c).
# The receiver must refuse it with its log line, and the job must end
# promptly with an error, no process crashing.  With EXPECT, the job's
# output must also hold a line starting with it (the program's own
# verdict on what the refusal left in its buffer: tamper.c).
set -u
kind=$1 p2prun=$2 prog=$3 tmp=$4 nth=${5:-1} expect=${6:-}

mkdir -p "$tmp" || exit 1
home=$(mktemp -d "$tmp/home.XXXXXX") || exit 1
out=$(mktemp "$tmp/out.XXXXXX") || exit 1
trap 'rm -rf "$home" "$out"' EXIT

start=$(date +%s)
HOME=$home P2P_CONF= P2P_TEST_CORRUPT=0.0:$kind:$nth timeout -k 5 100 \
    "$p2prun" -x P2P_TEST_CORRUPT -n 2 --timeout 60 "$prog" >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"
fail() {
    echo "corrupt.sh ($kind): $*"
    exit 1
}
[ $rc -ne 0 ] || fail "exit status 0: the damaged frame was accepted"
[ $rc -ne 124 ] && [ $elapsed -le 30 ] ||
    fail "took ${elapsed}s (status $rc), expected to end promptly"
grep -q "rank 1: malformed frame from rank 0 (sealed payload does not verify)" \
    "$out" || fail "no refusal in the log"
! grep -q "killed by signal" "$out" || fail "a process crashed"
! grep -q "ERROR: AddressSanitizer\|runtime error:" "$out" ||
    fail "a sanitizer error"
[ -z "$expect" ] || grep -q "^$expect" "$out" ||
    fail "no line \"$expect\" from the program"
echo "corrupt.sh ($kind): refused (status $rc, ${elapsed}s)"
