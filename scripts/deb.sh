#!/bin/sh
# make deb: the Debian packages (debian/), built by dpkg-buildpackage -us
# -uc -b in a copy of the tree at build/deb/src, so that what it writes to
# the parent directory (the .debs, .buildinfo and .changes) lands in
# build/deb/, and its "debian/rules clean" (make clean) leaves the tree's
# own build/ and bin/ alone.  The copy holds the files git knows of (and
# new ones it does not ignore), or outside git the tree without build/,
# bin/ and .git.  Then lintian on the .changes: an error fails.
#   scripts/deb.sh [--no-lintian]
# Needs the build dependencies of debian/control (dpkg-buildpackage checks
# them) and lintian; not root.
set -eu
cd "$(dirname "$0")/.."
lint=1
[ "${1:-}" != --no-lintian ] || lint=

out=build/deb
rm -rf "$out"
mkdir -p "$out/src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# (not the ones deleted from the work tree)
	git ls-files --cached --others --exclude-standard |
	    while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then
			printf '%s\n' "$f"
		fi
	    done | tar -cf - -T - | tar -xf - -C "$out/src"
else
	tar --exclude=./build --exclude=./bin --exclude=./.git -cf - . |
	    tar -xf - -C "$out/src"
fi

start=$(date +%s)
(cd "$out/src" && dpkg-buildpackage -us -uc -b)
rm -rf "$out/src"
echo "deb: built in $(($(date +%s) - start)) s:"
ls -1 "$out"

if [ -n "$lint" ]; then
	# Info tags shown too (-I), so that they get read; only errors fail.
	lintian -I --fail-on error "$out"/*.changes
	echo "deb: lintian: no error"
fi
