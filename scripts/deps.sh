#!/bin/sh
# Install the Debian packages that building and testing metad need, when
# they are missing: every tool a test uses too, so that no test is skipped
# for lack of one (under CI a skip fails: tests/run).  Quiet and quick when
# everything is already there.
set -eu

# Build: the compiler, the libraries (pkg-config; libnghttp2 for etcd's
# gRPC API, libsodium for the daemon's keyed hash tables, libssl-dev
# and libevent's OpenSSL part, in libevent-dev, for the TLS listener, the
# client library's TLS and TLS to etcd; openssl, the CLI, makes the
# tests' certificates),
# cmocka, clang (make fuzz),
# valgrind, cppcheck (make lint).  Tests: bats and its libraries; socat, jq,
# sqlite3, curl, openssl (the throwaway CA of etcd_tls.bats), mandoc and
# groff (groff-base: the man pages' rendering checks in docs.bats); ps (procps), ss (iproute2) and etcd for the etcd
# pass; prlimit and setpriv (util-linux), mount and umount (mount), strace,
# tmux (repl.bats), bash-completion, zsh and fish (the completions in
# docs.bats), systemd (systemd-socket-activate and systemd-analyze verify
# in systemd.bats, no running systemd needed) and man-db (verify opens the
# units' Documentation= man pages),
# redis-server and redis-tools (make bench-redis), python3 (make
# check-layers), fuse3 and libfuse3-dev (powerfs: make powerloss,
# powerloss.bats), python3-prometheus-client and python3-yaml (metrics.bats
# parses the exposition and the sample alert rules with them), python3-h2
# (etcd_bounds.bats: a fake etcd speaking HTTP/2).  The Debian packages
# (make deb, make deb-check, .ci/run):
# debhelper, dpkg-dev and fakeroot to build them, lintian, autopkgtest,
# debootstrap (make deb-chroot).  clang's runtime (ASan, UBSan, libFuzzer) is installed after
# clang, for clang's version: see below.
PKGS="build-essential pkg-config libevent-dev libcjson-dev libsqlite3-dev
libnghttp2-dev libsodium-dev libssl-dev openssl libreadline-dev libcmocka-dev clang valgrind cppcheck
bats bats-support bats-assert socat jq sqlite3 curl mandoc groff-base procps
iproute2 etcd-server etcd-client util-linux mount strace tmux bash-completion
zsh fish wrk bc systemd man-db redis-server redis-tools python3 fuse3
libfuse3-dev python3-prometheus-client python3-yaml python3-h2
debhelper dpkg-dev fakeroot lintian autopkgtest debootstrap"

# The commands the tests look for; missing after the install, a warning.
CMDS="bats socat jq sqlite3 openssl curl mandoc groff ps ss etcd etcdctl prlimit
setpriv mount umount mountpoint strace tmux zsh fish valgrind clang
systemd-socket-activate systemd-analyze man python3 fusermount3 dpkg-buildpackage
lintian autopkgtest debootstrap"

SUDO=""
[ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null 2>&1 || SUDO="sudo"
updated=""

# The packages of those named that are not installed, one a line.
deps_missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "ok installed" || echo "$p"
	done
}

deps_update() {
	[ -z "$updated" ] || return 0
	[ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ] || return 0
	$SUDO apt-get update -qq
	updated=1
}

# Install the packages named; apt-get, as root or with sudo.
deps_install() {
	[ $# -gt 0 ] || return 0
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "deps: missing packages: $* (no apt-get here: install them by hand)" >&2
		exit 1
	fi
	if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
		echo "deps: missing packages: $* (run as root or install sudo)" >&2
		exit 1
	fi
	echo "deps: installing $*" >&2
	deps_update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
	    --no-install-recommends "$@" >&2
}

# shellcheck disable=SC2046,SC2086 # one word per package
deps_install $(deps_missing $PKGS)

# clang's compiler runtime: libclang-rt-N-dev for the installed clang N,
# where Debian ships it apart (bookworm and later); before that it came
# with clang (libclang-common-N-dev).
major=$(clang --version 2>/dev/null |
    sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
if [ -z "$major" ]; then
	echo "deps: cannot tell clang's version: its runtime is not installed" >&2
else
	rt="libclang-rt-$major-dev"
	if [ -n "$(deps_missing "$rt")" ]; then
		deps_update
		if apt-cache show "$rt" >/dev/null 2>&1; then
			deps_install "$rt"
		fi
	fi
fi

for c in $CMDS; do
	command -v "$c" >/dev/null 2>&1 ||
	    echo "deps: $c is still missing: the tests that need it will fail under CI" >&2
done
exit 0
