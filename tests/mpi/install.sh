#!/bin/sh
# make install to a fresh prefix, then build an MPI program with the
# installed p2pcc (libp2pmpi linked statically) and with pkg-config (the
# shared library, found through an rpath as a user of a private prefix
# does), and run both with the installed p2prun: what a user of an
# installed p2pmpi does.
# Usage: install.sh BUILD_DIR SOURCE_DIR TMP
set -eu
build=$1 src=$2 tmp=$3
dir="$tmp/install.$$"
rm -rf "$dir"
mkdir -p "$dir/home"
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
p="$dir/prefix"
"$p/bin/p2pcc" --showme x.c | grep -q -- "-I$p/bin/../include/p2pmpi" || {
    echo "FAIL: p2pcc --showme does not point into the prefix"; exit 1; }
"$p/bin/p2pcc" -o "$dir/hello" "$src/tests/mpi/hello_install.c"
pc=$(find "$p" -name p2pmpi.pc)
pcdir=$(dirname "$pc") libdir=$(dirname "$(dirname "$pc")")
cc $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags p2pmpi) \
    -o "$dir/hello_pc" "$src/tests/mpi/hello_install.c" \
    $(PKG_CONFIG_PATH="$pcdir" pkg-config --libs p2pmpi) \
    -Wl,-rpath,"$libdir":'$ORIGIN'
# In a job, a prefix under /tmp is hidden by the job's private /tmp: the
# library also travels with the program (-l), found through $ORIGIN.
so="$libdir/$(readlink "$libdir/libp2pmpi.so")"
ldd "$dir/hello" | grep -q libp2pmpi && {
    echo "FAIL: p2pcc linked libp2pmpi dynamically"; exit 1; }
ldd "$dir/hello_pc" | grep -q "libp2pmpi.so.* => $libdir/" || {
    echo "FAIL: pkg-config build does not use the installed shared library:"
    ldd "$dir/hello_pc"; exit 1; }
chmod 711 "$dir"
cd "$dir"
out=$(HOME="$dir/home" P2P_CONF= "$p/bin/p2prun" -n 3 --timeout 60 ./hello 2>/dev/null)
[ "$(printf '%s\n' "$out" | grep -c '^sum 3$')" = 3 ] || {
    echo "FAIL: unexpected output:"; echo "$out"; exit 1; }
out=$(HOME="$dir/home" P2P_CONF= "$p/bin/p2prun" -n 2 --timeout 60 -l "$so" ./hello_pc 2>/dev/null)
[ "$(printf '%s\n' "$out" | grep -c '^sum 2$')" = 2 ] || {
    echo "FAIL: pkg-config build: unexpected output:"; echo "$out"; exit 1; }
echo "ok install"
