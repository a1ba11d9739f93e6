#!/bin/sh
# Install the Debian packages that building and testing metad need, when
# they are missing.  Quiet and quick when everything is already there.
set -eu

PKGS="build-essential pkg-config libevent-dev libcjson-dev libsqlite3-dev
libreadline-dev libcmocka-dev bats bats-support bats-assert socat jq mandoc
sqlite3 procps util-linux strace tmux bash-completion valgrind cppcheck clang
libclang-rt-14-dev etcd-server etcd-client curl"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
	    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages:$missing (no apt-get here: install them by hand)" >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "deps: missing packages:$missing (run as root or install sudo)" >&2
		exit 1
	}
	SUDO="sudo"
fi
echo "deps: installing$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
