#!/bin/sh
# openmpi.sh SRCDIR TMPDIR NPROCS NAME...
# The self-checking programs of tests/mpi are standard MPI: each NAME.c
# must also build with Open MPI's compiler and print "ok NAME" under its
# mpirun on NPROCS ranks (oversubscribed, its default transports: its
# one-sided windows need the shared-memory one), so a test that only our
# library passes is caught.  Skipped (status 77) when
# Open MPI (mpicc.openmpi, mpirun.openmpi) is not installed, and when
# P2P_OPENMPI_SKIP is yes (sanitizer builds: no code of ours runs here).
set -u
src=$1 tmp=$2 np=$3
shift 3
[ "${P2P_OPENMPI_SKIP:-no}" = yes ] &&
    { echo "openmpi.sh: a sanitizer build runs none of our code here:" \
        "skipped (the plain build runs it)"; exit 77; }
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
    { echo "openmpi.sh: Open MPI is not installed: skipped"; exit 77; }
mkdir -p "$tmp" || exit 1
work=$(mktemp -d "$tmp/ompi.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# mpirun refuses root unless told; a job of this test may run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo
export HOME=$work
fail=0
for name in "$@"; do
    if ! mpicc.openmpi -O1 -o "$work/$name" "$src/$name.c" >"$work/cc" 2>&1
    then
        cat "$work/cc"
        echo "openmpi.sh: $name does not build with Open MPI"
        fail=1
        continue
    fi
    timeout -k 5 100 mpirun.openmpi --oversubscribe -n "$np" \
        "$work/$name" >"$work/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -qx "ok $name" "$work/out"; then
        cat "$work/out"
        echo "openmpi.sh: $name on $np ranks under Open MPI: status $rc"
        fail=1
    else
        echo "ok $name (Open MPI, $np ranks)"
    fi
done
exit $fail
