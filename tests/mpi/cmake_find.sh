#!/bin/sh
# cmake_find.sh BUILD_DIR SOURCE_DIR TMP
# What a user of an installed p2pmpi does with a CMake project: install
# to a fresh prefix, build tests/mpi/cmake_find (find_package(MPI), C and
# C++) with MPI_C_COMPILER=p2pcc and MPI_CXX_COMPILER=p2pc++, and run
# both programs with the installed p2prun.  Also p2pc++ and p2pcxx by
# hand.
set -eu
build=$1 src=$2 tmp=$3
dir="$tmp/cmake_find.$$"
rm -rf "$dir"
mkdir -p "$dir/home"
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
p="$dir/prefix"
for w in p2pc++ p2pcxx; do
    [ -x "$p/bin/$w" ] || { echo "FAIL: $w not installed"; exit 1; }
done
"$p/bin/p2pc++" -showme:compile | grep -q -- "-I$p/bin/../include/p2pmpi" || {
    echo "FAIL: p2pc++ -showme:compile: $("$p/bin/p2pc++" -showme:compile)"
    exit 1; }
"$p/bin/p2pcxx" -O1 -o "$dir/by_hand" "$src/tests/mpi/cmake_find/hello.cc"
if ! cmake -S "$src/tests/mpi/cmake_find" -B "$dir/proj" \
        -DMPI_C_COMPILER="$p/bin/p2pcc" -DMPI_CXX_COMPILER="$p/bin/p2pc++" \
        >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log"; echo "FAIL: find_package(MPI) failed"; exit 1
fi
grep -q "uses_mpi: MPI 3.1, C include $p/include/p2pmpi" \
    "$dir/configure.log" || {
    cat "$dir/configure.log"; echo "FAIL: FindMPI did not find p2pmpi"; exit 1; }
cmake --build "$dir/proj" >"$dir/build.log" 2>&1 || {
    cat "$dir/build.log"; echo "FAIL: the project did not build"; exit 1; }
chmod 711 "$dir"
cd "$dir"
run() {
    HOME="$dir/home" P2P_CONF= "$p/bin/p2prun" -n 3 --timeout 60 "$@" \
        2>/dev/null
}
out=$(run ./proj/hello_c)
[ "$(printf '%s\n' "$out" | grep -c '^sum 3$')" = 3 ] || {
    echo "FAIL: hello_c: unexpected output:"; echo "$out"; exit 1; }
for prog in ./proj/hello_cxx ./by_hand; do
    out=$(run "$prog")
    [ "$(printf '%s\n' "$out" | grep -c '^cxx sum 3$')" = 3 ] || {
        echo "FAIL: $prog: unexpected output:"; echo "$out"; exit 1; }
done
echo "ok cmake_find"
