#!/bin/sh
# symbols.sh LIBP2PMPI.a MPI.H
# The library exports only MPI_*, PMPI_* and p2p_* names; every MPI_X it
# defines has a strong PMPI_X and is itself weak (the profiling
# interface); mpi.h declares a PMPI_X for every MPI_X.
set -u
lib=$1 header=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

nm -g --defined-only "$lib" | awk 'NF == 3 { print $2, $3 }' | sort -u \
    >"$tmp/defined"
if ! [ -s "$tmp/defined" ]; then
    echo "symbols.sh: no symbols in $lib"
    exit 1
fi
echo "symbols.sh: $(wc -l <"$tmp/defined") exported names"

# Only the allowed names.
if grep -Ev ' (MPI_|PMPI_|p2p_)' "$tmp/defined" >"$tmp/bad"; then
    echo "symbols.sh: names outside MPI_*, PMPI_*, p2p_*:"
    sed 's/^/  /' "$tmp/bad"
    fail=1
fi
# MPI_X weak, PMPI_X strong, in pairs.
awk '$2 ~ /^MPI_/ { print substr($2, 5) }' "$tmp/defined" | sort >"$tmp/mpi"
awk '$2 ~ /^PMPI_/ { print substr($2, 6) }' "$tmp/defined" | sort >"$tmp/pmpi"
if ! cmp -s "$tmp/mpi" "$tmp/pmpi"; then
    echo "symbols.sh: MPI_X without PMPI_X or the reverse:"
    comm -3 "$tmp/mpi" "$tmp/pmpi" | sed 's/^/  /'
    fail=1
fi
if awk '$2 ~ /^MPI_/ && $1 != "W"' "$tmp/defined" | grep . >"$tmp/strong"
then
    echo "symbols.sh: MPI_ names that are not weak:"
    sed 's/^/  /' "$tmp/strong"
    fail=1
fi
if awk '$2 ~ /^PMPI_/ && $1 != "T"' "$tmp/defined" | grep . >"$tmp/weak"
then
    echo "symbols.sh: PMPI_ names that are not strong functions:"
    sed 's/^/  /' "$tmp/weak"
    fail=1
fi
# The header: a PMPI_ prototype for every MPI_ one.
grep -Eo '^(int|double|MPI_[A-Za-z]+) MPI_[A-Za-z0-9_]+\(' "$header" |
    sed 's/.* MPI_//; s/($//' | sort >"$tmp/hmpi"
grep -Eo '^(int|double|MPI_[A-Za-z]+) PMPI_[A-Za-z0-9_]+\(' "$header" |
    sed 's/.* PMPI_//; s/($//' | sort >"$tmp/hpmpi"
if ! cmp -s "$tmp/hmpi" "$tmp/hpmpi"; then
    echo "symbols.sh: mpi.h declares MPI_X without PMPI_X or the reverse:"
    comm -3 "$tmp/hmpi" "$tmp/hpmpi" | sed 's/^/  /'
    fail=1
fi
# And everything mpi.h declares is in the library.
if comm -23 "$tmp/hmpi" "$tmp/mpi" | grep . >"$tmp/missing"; then
    echo "symbols.sh: declared in mpi.h, not in the library:"
    sed 's/^/  MPI_/' "$tmp/missing"
    fail=1
fi
[ $fail = 0 ] && echo "ok symbols"
exit $fail
