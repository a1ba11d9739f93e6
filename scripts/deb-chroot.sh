#!/bin/sh
# make deb-chroot (as root; needs debootstrap and the network): the Debian
# packages built as a build daemon builds them and installed as on a clean
# system.  A fresh Debian 12 (debootstrap --variant=minbase bookworm) with
# build-essential and the build dependencies of debian/control only builds
# the tree's debian/ as a user (dpkg-buildpackage -us -uc -b: a missing
# build dependency fails here, not on a machine with every package of
# scripts/deps.sh); a second fresh copy installs the four packages with apt,
# sees metad.socket enabled, runs debian/tests/smoke as a user, purges them
# and checks that no file of theirs is left.  The packages it built are
# left in build/deb-chroot/.
#   DEB_CHROOT_SUITE (bookworm), DEB_CHROOT_MIRROR (deb.debian.org)
set -eu
cd "$(dirname "$0")/.."
suite=${DEB_CHROOT_SUITE:-bookworm}
mirror=${DEB_CHROOT_MIRROR:-http://deb.debian.org/debian}
out=$PWD/build/deb-chroot
fail() {
	echo "deb-chroot: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root: it makes chroots"
command -v debootstrap >/dev/null || fail "debootstrap is not installed"

top=$(mktemp -d /var/tmp/metad-chroot.XXXXXX)
# Never remove a chroot with /proc mounted in it.
cleanup() {
	for r in "$top/build" "$top/inst"; do
		! mountpoint -q "$r/proc" || umount "$r/proc" || return 1
	done
	rm -rf --one-file-system "$top"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# inroot ROOT CMD...: CMD in the chroot ROOT, with a plain environment.
inroot() {
	r=$1
	shift
	chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	    HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# fresh NAME: a copy of the base system at $top/NAME, with /proc when the
# machine lets us mount it (the build does not need it).
fresh() {
	cp -a "$top/base" "$top/$1"
	cp /etc/resolv.conf "$top/$1/etc/"
	mount -t proc proc "$top/$1/proc" 2>/dev/null || true
	inroot "$top/$1" useradd -m tester
}

echo "deb-chroot: debootstrap $suite"
debootstrap --variant=minbase "$suite" "$top/base" "$mirror" >"$top/debootstrap.log" 2>&1 ||
    { cat "$top/debootstrap.log" >&2; fail "debootstrap failed"; }

echo "deb-chroot: the build, with debian/control's build dependencies only"
fresh build
scripts/copy-tree.sh "$top/build/src/metad"
inroot "$top/build" apt-get update -qq
inroot "$top/build" apt-get install -y -qq --no-install-recommends \
    build-essential >/dev/null
inroot "$top/build" sh -c 'cd /src/metad && apt-get build-dep -y -qq ./' >/dev/null
inroot "$top/build" chown -R tester /src
inroot "$top/build" su tester -c 'cd /src/metad && dpkg-buildpackage -us -uc -b'
rm -rf "$out"
mkdir -p "$out"
cp "$top/build/src/"*.deb "$top/build/src/"*.changes "$out/"

echo "deb-chroot: install, try, purge on a clean system"
fresh inst
mkdir "$top/inst/pkgs" "$top/inst/src" "$top/inst/src/debian"
for p in metad metactl libmetad-client0 libmetad-client-dev; do
	cp "$out/${p}_"*.deb "$top/inst/pkgs/"
done
cp -R debian/tests "$top/inst/src/debian/"
inroot "$top/inst" apt-get update -qq
inroot "$top/inst" sh -c 'find / -xdev | sort >/before'
inroot "$top/inst" sh -c 'apt-get install -y -qq --no-install-recommends /pkgs/*.deb' >/dev/null
[ -L "$top/inst/etc/systemd/system/sockets.target.wants/metad.socket" ] ||
    fail "installing metad did not enable metad.socket"
inroot "$top/inst" chown -R tester /src
# shellcheck disable=SC2016 # expanded in the chroot
inroot "$top/inst" su tester -c \
    'cd /src && AUTOPKGTEST_TMP=$(mktemp -d) debian/tests/smoke'
inroot "$top/inst" dpkg --purge metad metactl libmetad-client-dev \
    libmetad-client0 >/dev/null
inroot "$top/inst" sh -c 'find / -xdev | sort >/after'
# What the packages put there and the purge left (the dependencies apt
# pulled in, and the files of the test, aside).
left=$(inroot "$top/inst" sh -c 'comm -13 /before /after' |
    grep -E 'metad|metactl|systemd' | grep -v '^/tmp/' || true)
[ -z "$left" ] || fail "left after the purge: $left"
echo "deb-chroot: built, installed, tried and purged on a fresh $suite"
