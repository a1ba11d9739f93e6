#!/bin/sh
# make deb-systemd (as root, after make deb; needs debootstrap, the network
# and a kernel that lets new PID and mount namespaces mount cgroup2): the
# metad package under a real systemd.  A fresh Debian 12 with systemd
# boots it as PID 1 in namespaces of its own (unshare); apt installs metad
# and metactl from build/deb/; metad.socket must be enabled and listening,
# metad.service not started until metactl put, get and status through
# /run/metad/metad.sock start it, as a dynamic user (its state in
# /var/lib/private/metad); a reinstall keeps the value; a purge stops both
# units and removes the state, the runtime directory and the socket's
# enablement.
set -eu
cd "$(dirname "$0")/.."
fail() {
	echo "deb-systemd: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root: it makes a chroot and boots systemd"
command -v debootstrap >/dev/null || fail "debootstrap is not installed"
for p in metad metactl; do
	set -- build/deb/"$p"_*.deb
	if [ $# -ne 1 ] || [ ! -f "$1" ]; then
		fail "not one $p package in build/deb: make deb"
	fi
done

top=$(mktemp -d /var/tmp/metad-systemd.XXXXXX)
root=$top/root
upid=
sdpid=
# systemd powered off (else killed), then the tree removed: the mounts were
# made in systemd's own mount namespace, so none is left here.
cleanup() {
	if [ -n "$sdpid" ]; then
		insd systemctl poweroff >/dev/null 2>&1 || true
		tries=0
		while kill -0 "$upid" 2>/dev/null && [ "$tries" -lt 100 ]; do
			tries=$((tries + 1))
			sleep 0.1
		done
		kill -KILL "$sdpid" 2>/dev/null || true
	fi
	if grep -qF "$top" /proc/mounts; then
		echo "deb-systemd: $top still has mounts: left in place" >&2
		return 1
	fi
	rm -rf --one-file-system "$top"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# insd CMD...: CMD in the booted system.
insd() {
	timeout 120 nsenter -t "$sdpid" -m -p -u -i -r -w /usr/bin/env -i \
	    PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
	    DEBIAN_FRONTEND=noninteractive "$@"
}

# expect WHAT EXPECTED CMD...
expect() {
	what=$1
	want=$2
	shift 2
	got=$(insd "$@" 2>&1) || true
	[ "$got" = "$want" ] || fail "$what: expected '$want', got '$got'"
	echo "ok: $what"
}

echo "deb-systemd: debootstrap bookworm with systemd"
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm \
    "$root" http://deb.debian.org/debian >"$top/debootstrap.log" 2>&1 ||
    { cat "$top/debootstrap.log" >&2; fail "debootstrap failed"; }
cp /etc/resolv.conf "$root/etc/"
mkdir "$root/pkgs"
cp build/deb/metad_*.deb build/deb/metactl_*.deb "$root/pkgs/"

cat >"$top/boot.sh" <<BOOT
#!/bin/sh
set -e
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
mount --rbind /dev "$root/dev"
exec chroot "$root" /usr/bin/env container=other /lib/systemd/systemd --system
BOOT
unshare --pid --fork --mount --uts --ipc sh "$top/boot.sh" \
    >"$top/boot.log" 2>&1 </dev/null &
upid=$!
tries=0
state=
while [ "$state" != running ] && [ "$state" != degraded ]; do
	tries=$((tries + 1))
	if [ "$tries" -gt 300 ] || ! kill -0 "$upid" 2>/dev/null; then
		cat "$top/boot.log" >&2
		fail "systemd did not boot within 30 seconds (state '$state')"
	fi
	sleep 0.1
	[ -n "$sdpid" ] || sdpid=$(ps -o pid= --ppid "$upid" | tr -d ' ')
	[ -z "$sdpid" ] || state=$(insd systemctl is-system-running 2>/dev/null) || true
done
echo "ok: systemd booted ($state)"

insd apt-get update -qq
insd sh -c 'apt-get install -y -qq --no-install-recommends /pkgs/*.deb' >/dev/null
expect "metad.socket enabled" enabled systemctl is-enabled metad.socket
expect "metad.socket listening" active systemctl is-active metad.socket
expect "metad.service not started yet" inactive \
    systemctl is-active metad.service
ctl="/usr/bin/metactl -s /run/metad/metad.sock"
# shellcheck disable=SC2086 # the command's words
expect "put through the socket" 1 $ctl put pkg/key hello
# shellcheck disable=SC2086
expect "get" hello $ctl get pkg/key
# shellcheck disable=SC2086
expect "status" "backend: sqlite" sh -c "$ctl status | grep '^backend:'"
expect "metad.service started by the socket" active \
    systemctl is-active metad.service
uid=$(insd stat -c %u /var/lib/private/metad)
[ "$uid" -ne 0 ] || fail "/var/lib/private/metad is root's: no dynamic user"
echo "ok: metad runs as a dynamic user (uid $uid)"

insd dpkg -i /pkgs/"$(basename build/deb/metad_*.deb)" >/dev/null
# shellcheck disable=SC2086
expect "the value kept across a reinstall" hello $ctl get pkg/key

insd dpkg --purge metad metactl >/dev/null
expect "both units stopped by the purge" "inactive
inactive" systemctl is-active metad.socket metad.service
for f in /var/lib/metad /var/lib/private/metad /run/metad \
    /etc/systemd/system/sockets.target.wants/metad.socket; do
	if insd test -e "$f" || insd test -L "$f"; then
		fail "$f is still there after the purge"
	fi
done
echo "ok: purged: no state, runtime directory or enablement left"
echo "deb-systemd: metad's package works under systemd"
