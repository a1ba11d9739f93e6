#!/bin/sh
# make deb: the Debian packages (debian/), built by dpkg-buildpackage -us
# -uc -b in a copy of the tree in a temporary directory, whose parent
# directory gets what dpkg-buildpackage writes there (the .debs, .buildinfo
# and .changes): they are then moved to build/deb/.  So the tree's parent
# is left alone, and so are the tree's build/ and bin/ ("debian/rules
# clean" runs make clean).  The copy: scripts/copy-tree.sh.  Then lintian
# on the .changes: an error fails.
#   scripts/deb.sh [--no-lintian]
# Needs the build dependencies of debian/control (dpkg-buildpackage checks
# them) and lintian; not root.
set -eu
cd "$(dirname "$0")/.."
lint=1
[ "${1:-}" != --no-lintian ] || lint=

out=build/deb
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/metad-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
scripts/copy-tree.sh "$work/metad"

start=$(date +%s)
(cd "$work/metad" && dpkg-buildpackage -us -uc -b)
find "$work" -maxdepth 1 -type f -exec mv {} "$out/" \;
echo "deb: built in $(($(date +%s) - start)) s:"
ls -1 "$out"

if [ -n "$lint" ]; then
	# Info tags shown too (-I), so that they get read; only errors fail.
	lintian -I --fail-on error "$out"/*.changes
	echo "deb: lintian: no error"
fi
