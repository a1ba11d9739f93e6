#!/bin/sh
# make deb-check (as root, after make deb): the four packages in build/deb/
# hold what they should (dpkg-deb -c, -I), install together (dpkg -i),
# metad.socket is enabled, the installed metad and metactl work
# (debian/tests/smoke, debian/tests/libclient: the autopkgtests, run
# directly), and purging takes away what they made.  It installs and
# purges metad, metactl, libmetad-client0 and libmetad-client-dev on this
# machine: for CI, or a machine of your own.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build/deb}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
fail() {
	echo "deb-check: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root: it installs the packages"

# deb_of PACKAGE: its one .deb in $dir.
deb_of() {
	set -- "$1" "$dir/$1"_*.deb
	if [ $# -ne 2 ] || [ ! -f "$2" ]; then
		fail "not one $1 package in $dir"
	fi
	echo "$2"
}

# has DEB PATH...: each PATH is in DEB.
has() {
	deb=$1
	shift
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/list"
	for p; do
		grep -qxF "$p" "$tmp/list" || fail "${deb##*/} lacks $p"
	done
	echo "ok: ${deb##*/} holds $*"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
daemon=$(deb_of metad)
cli=$(deb_of metactl)
lib=$(deb_of libmetad-client0)
dev=$(deb_of libmetad-client-dev)

has "$daemon" /usr/bin/metad /lib/systemd/system/metad.service \
    /lib/systemd/system/metad.socket /usr/lib/systemd/user/metad.service \
    /usr/lib/systemd/user/metad.socket /usr/share/man/man8/metad.8.gz \
    /usr/share/man/man7/metad-protocol.7.gz \
    /usr/share/doc/metad/copyright
has "$cli" /usr/bin/metactl /usr/share/man/man1/metactl.1.gz \
    /usr/share/bash-completion/completions/metactl \
    /usr/share/zsh/site-functions/_metactl \
    /usr/share/fish/vendor_completions.d/metactl.fish \
    /usr/share/doc/metactl/copyright
has "$lib" "/usr/lib/$ma/libmetad-client.so.0" \
    "/usr/lib/$ma/libmetad-client.so.0.1.0" \
    /usr/share/doc/libmetad-client0/copyright
has "$dev" /usr/include/metad/client.h "/usr/lib/$ma/libmetad-client.so" \
    "/usr/lib/$ma/libmetad-client.a" "/usr/lib/$ma/pkgconfig/metad-client.pc" \
    /usr/share/man/man3/metad_client.3.gz \
    /usr/share/doc/libmetad-client-dev/copyright
for d in "$daemon" "$cli" "$lib" "$dev"; do
	dpkg-deb -c "$d" | grep -q 'usr/share/doc/metad/LICENSE' &&
	    fail "${d##*/} ships the licence apart from its copyright file"
done
dpkg-deb -I "$lib" shlibs | grep -qx "libmetad-client 0 libmetad-client0 (>= 0.1.0)" ||
    fail "libmetad-client0's shlibs"
# Its symbols are the functions of the header, each one.
grep -oE '\bmd_[a-z0-9_]+[[:space:]]*\(' include/metad/client.h |
    tr -d ' (' | sort -u >"$tmp/header"
dpkg-deb -I "$lib" symbols | sed -n 's/^ \(md_[^@]*\)@Base .*/\1/p' |
    sort >"$tmp/symbols"
diff "$tmp/header" "$tmp/symbols" ||
    fail "libmetad-client0's symbols are not the functions of client.h"
echo "ok: libmetad-client0's symbols: the $(wc -l <"$tmp/symbols") functions of client.h"
# The service runs the packaged binary.
dpkg-deb --fsys-tarfile "$daemon" |
    tar -xOf - ./lib/systemd/system/metad.service |
    grep -q '^ExecStart=/usr/bin/metad ' || fail "metad.service's ExecStart"

dpkg -i "$daemon" "$cli" "$lib" "$dev"
echo "ok: dpkg -i of the four packages"
# debhelper enabled the socket, not the service (the socket starts it).
[ -L /etc/systemd/system/sockets.target.wants/metad.socket ] ||
    fail "metad.socket is not enabled"
[ ! -e /etc/systemd/system/multi-user.target.wants/metad.service ] ||
    fail "metad.service is enabled: the socket should start it"
echo "ok: metad.socket enabled, metad.service left to it"
# The installed units as systemd reads them (ExecStart's binary there, the
# Documentation= man pages installed): any message is a finding.
for u in "/lib/systemd/system" "/usr/lib/systemd/user --user"; do
	# shellcheck disable=SC2086 # the directory, then an option
	set -- $u
	out=$(cd "$1" && shift && XDG_RUNTIME_DIR=$tmp \
	    systemd-analyze "$@" verify metad.service metad.socket 2>&1) ||
	    fail "systemd-analyze verify of $1: $out"
	[ -z "$out" ] || fail "systemd-analyze verify of $1: $out"
done
echo "ok: systemd-analyze verify of the installed units"
if [ -d /run/systemd/system ]; then
	# systemd runs here: the socket answers, through the packaged unit.
	/usr/bin/metactl -s /run/metad/metad.sock status
	echo "ok: metactl status through metad.socket"
fi

AUTOPKGTEST_TMP=$tmp/smoke
mkdir "$AUTOPKGTEST_TMP"
export AUTOPKGTEST_TMP
debian/tests/smoke
AUTOPKGTEST_TMP=$tmp/libclient
mkdir "$AUTOPKGTEST_TMP"
debian/tests/libclient

# What metad.service makes under systemd (DynamicUser=yes), made by hand
# when it did not run, so that purging is seen to remove it.
if [ ! -e /var/lib/metad ]; then
	mkdir -p /var/lib/private/metad
	ln -s private/metad /var/lib/metad
fi
dpkg --purge metad metactl libmetad-client-dev libmetad-client0
for f in /usr/bin/metad /usr/bin/metactl /lib/systemd/system/metad.socket \
    "/usr/lib/$ma/libmetad-client.so.0" /usr/include/metad/client.h \
    /etc/systemd/system/sockets.target.wants/metad.socket \
    /var/lib/metad /var/lib/private/metad; do
	if [ -e "$f" ] || [ -L "$f" ]; then
		fail "$f is still there after the purge"
	fi
done
echo "ok: purged, nothing left"
echo "deb-check: all good"
