#!/bin/sh
# Copies the source tree into DIR (made if missing): the files git knows
# of and the new ones it does not ignore, less those deleted from the work
# tree; outside git, the tree without build/, bin/ and .git.  For the
# package builds (scripts/deb.sh, scripts/deb-chroot.sh).
#   scripts/copy-tree.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: scripts/copy-tree.sh DIR" >&2; exit 2; }
mkdir -p "$1"
dest=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard |
	    while IFS= read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then
			printf '%s\n' "$f"
		fi
	    done | tar -cf - -T - | tar -xf - -C "$dest"
else
	tar --exclude=./build --exclude=./bin --exclude=./.git -cf - . |
	    tar -xf - -C "$dest"
fi
