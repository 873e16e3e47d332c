#!/bin/sh
# Install the .deb for real, with dpkg and its maintainer scripts, into a
# throw-away copy of this machine (an overlay over / in a private mount
# namespace, chrooted into), then do what docs/install.md says: first run
# without a key, make the key, start runSuperNode and peerd with the
# ExecStart lines (and User=) of the installed units, run
# `p2prun -n 2 hostname`, reinstall over an edited conffile, remove,
# purge.  Nothing reaches the real system.  Needs root and overlayfs;
# exits 77 (skipped) without them, and when P2P_DPKG_SKIP is yes (a
# sanitizer build's package).
# Usage: deb_install.sh PACKAGE.deb
#        deb_install.sh --cpack BUILD_DIR   (package that build first)
set -eu
[ "${P2P_DPKG_SKIP:-no}" = yes ] &&
    { echo "SKIP: a sanitizer build's package (the plain build installs its own)"
      exit 77; }
if [ "$1" = --cpack ]; then
    out=$(mktemp -d /tmp/p2p-cpack.XXXXXX)
    trap 'rm -rf "$out"' EXIT
    cpack -G DEB --config "$2/CPackConfig.cmake" -B "$out" >/dev/null
    set -- "$out"/p2pmpi_*.deb
fi
deb=$(readlink -f "$1")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
for t in unshare chroot pivot_root setpriv dpkg; do
    command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
unshare -m -p -f --propagation private true 2>/dev/null \
    || { echo "SKIP: cannot make mount and pid namespaces here"; exit 77; }
work=$(mktemp -d /tmp/p2p-dpkg.XXXXXX)
trap 'rm -rf "$work" ${out:+"$out"}' EXIT
cp "$deb" "$work/p2pmpi.deb"

# The part run in the new mount and pid namespaces: the overlay becomes
# the namespace's root (pivot_root, not just chroot: peerd's job mount
# namespaces start from the namespace's root), with a /proc of its own,
# so that the installed peerd sees no process of the real machine (its
# start-up clean-up kills leftover job-uid processes it sees).
cat > "$work/outside.sh" <<'EOF'
set -eu
w=$1
mount -t tmpfs -o size=512m tmpfs "$w/fs"
mkdir "$w/fs/up" "$w/fs/work" "$w/fs/m"
mount -t overlay overlay -o lowerdir=/,upperdir="$w/fs/up",workdir="$w/fs/work" "$w/fs/m" \
    || { echo "SKIP: no overlayfs over /"; exit 77; }
m=$w/fs/m
mount -t proc proc "$m/proc"
for d in sys dev; do mount --rbind /$d "$m/$d"; done
mount -t tmpfs tmpfs "$m/run"          # no systemd in there: postinst skips systemctl
# Job uids are handed out under locks in /run/p2pmpi-uids: share the
# machine's, so that no uid is given to a job here and to one outside.
mkdir -p /run/p2pmpi-uids "$m/run/p2pmpi-uids"
mount --bind /run/p2pmpi-uids "$m/run/p2pmpi-uids"
mount -t tmpfs tmpfs "$m/tmp"
cp "$w/p2pmpi.deb" "$w/inside.sh" "$m/tmp/"
mkdir -p "$m/tmp/old"
cd "$m"
pivot_root . tmp/old
umount -l /tmp/old
exec chroot . /bin/sh /tmp/inside.sh
EOF

cat > "$work/inside.sh" <<'EOF'
set -eu
fail() { echo "FAIL: $*"; exit 1; }
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset P2P_CONF
rm -rf /root/.config/p2p

t0=$(date +%s.%N)
dpkg -i /tmp/p2pmpi.deb > /tmp/dpkg.out 2>&1 || { cat /tmp/dpkg.out; fail "dpkg -i"; }
grep -q "no group key yet" /tmp/dpkg.out || fail "no first-run message from postinst"
getent passwd p2p | grep -q ':/usr/sbin/nologin$' || fail "no p2p system user"
[ -f /etc/p2p/p2p.conf ] || fail "no /etc/p2p/p2p.conf"
[ "$(man -w p2prun 2>/dev/null)" = /usr/share/man/man1/p2prun.1 ] \
    || [ ! -x /usr/bin/man ] || echo "note: man -w p2prun: $(man -w p2prun 2>&1)"
for p in runSuperNode peerd p2prun mpihost p2pcc p2p-keygen; do
    [ -x /usr/bin/$p ] || fail "/usr/bin/$p missing"
done

unit() { sed -n "s/^$2=//p" /lib/systemd/system/$1.service; }
# CapabilityBoundingSet=CAP_A CAP_B as setpriv's -all,+a,+b ("" : -all).
bounding() {
    printf -- '-all'
    for c in $(unit $1 CapabilityBoundingSet); do
        printf ',+%s' "$(echo "${c#CAP_}" | tr A-Z a-z)"
    done
}
sn_cmd=$(unit p2p-supernode ExecStart) sn_user=$(unit p2p-supernode User)
pd_cmd=$(unit p2p-peerd ExecStart)
[ "$(unit p2p-supernode NoNewPrivileges)$(unit p2p-peerd NoNewPrivileges)" = yesyes ] \
    || fail "units without NoNewPrivileges: update this script"

# First run: no key yet.
if out=$(setpriv --reuid="$sn_user" --regid="$sn_user" --init-groups $sn_cmd 2>&1); then
    fail "runSuperNode started without a key"
fi
echo "$out" | grep -q "no group key at /etc/p2p/group.key: make the network's key once" \
    || fail "first-run message: $out"
echo "first run: $out"

# What an administrator does (docs/install.md), then the services' commands.
p2p-keygen --group /etc/p2p/group.key >/dev/null
chown p2p: /etc/p2p/group.key
# As the units run them: the user, no new privileges, the capability
# bounding set (what systemd's sandboxing adds beyond that is not
# reproduced here).
setpriv --reuid="$sn_user" --regid="$sn_user" --init-groups --no-new-privs \
    --bounding-set "$(bounding p2p-supernode)" \
    $sn_cmd 2>/tmp/sn.log & pids="$pids $!"
install -d -m 0700 /var/lib/p2p              # StateDirectory=p2p
setpriv --no-new-privs --bounding-set "$(bounding p2p-peerd)" \
    $pd_cmd 2>/tmp/peerd.log & pids="$pids $!"
i=0
until mpihost 2>/dev/null | grep -q available; do
    i=$((i + 1)); [ $i -lt 100 ] || { cat /tmp/sn.log /tmp/peerd.log; fail "peer not listed"; }
    sleep 0.1
done
out=$(cd /tmp && timeout 60 p2prun -n 2 hostname 2>/tmp/p2prun.err) \
    || { cat /tmp/p2prun.err /tmp/peerd.log; fail "p2prun"; }
[ "$out" = "$(printf '%s\n%s' "$(hostname)" "$(hostname)")" ] || fail "p2prun printed: $out"
t1=$(date +%s.%N)
echo "p2prun -n 2 hostname from the installed package: ok"
cleanup; pids=""

# An upgrade (here: the same version again) keeps an edited conffile.
echo "# edited by the administrator" >> /etc/p2p/p2p.conf
dpkg -i /tmp/p2pmpi.deb >/tmp/dpkg2.out 2>&1 || { cat /tmp/dpkg2.out; fail "reinstall"; }
grep -q "edited by the administrator" /etc/p2p/p2p.conf || fail "conffile replaced"

dpkg -r p2pmpi >/dev/null 2>&1 || fail "dpkg -r"
[ ! -e /usr/bin/peerd ] || fail "peerd left after remove"
[ -f /etc/p2p/p2p.conf ] || fail "remove took the configuration"
dpkg -P p2pmpi >/dev/null 2>&1 || fail "dpkg -P"
[ ! -e /etc/p2p/p2p.conf ] || fail "purge left /etc/p2p/p2p.conf"
[ ! -e /var/lib/p2p ] || fail "purge left /var/lib/p2p"
[ -e /etc/p2p/group.key ] || fail "purge took the group key, which is not the package's"
echo "FIGURE dpkg -i to a finished p2prun -n 2 hostname: $(echo "$t1 - $t0" | bc 2>/dev/null || echo "$t0 $t1") s"
echo "ok deb install"
EOF

mkdir "$work/fs"
unshare -m -p -f --propagation private /bin/sh "$work/outside.sh" "$work"
