#!/bin/sh
# enter.sh MPJRUN_MPI_DIR
# Every MPI call takes the library's lock under MPI_THREAD_MULTIPLE
# (mpii.h, thread.c): each PMPI_X definition's body opens with
# MPII_ENTER.  MPI_Wtime and MPI_Wtick read the clock only.
set -u
dir=$1
fail=0
n=0
for f in "$dir"/*.c; do
    out=$(awk '
        /^PMPI_[A-Za-z0-9_]+\(/ {
            name = $0; sub(/\(.*/, "", name)
            want = name != "PMPI_Wtime" && name != "PMPI_Wtick"
        }
        want && /;$/ && !body { want = 0; next } # a prototype
        want && $0 == "{" { body = 1; next }
        body {
            if ($0 != "    MPII_ENTER;")
                print name
            else
                print "ok"
            body = 0; want = 0
        }' "$f")
    for w in $out; do
        if [ "$w" = ok ]; then
            n=$((n + 1))
        else
            echo "enter.sh: $(basename "$f"): $w does not open with MPII_ENTER"
            fail=1
        fi
    done
done
echo "enter.sh: $n MPI calls take the lock"
[ "$n" -gt 0 ] || fail=1
[ $fail = 0 ] && echo "ok enter"
exit $fail
