#!/usr/bin/env bats
# bats file_tags=store:sqlite
# make install puts the binaries, libmetad-client (shared, static, header,
# pkg-config file), every man page, the bash, zsh and fish completions,
# the systemd units (system and user) and the LICENSE under DESTDIR; make
# uninstall takes each of them away again;
# a file missing from the tree, or one that cannot be copied, stops the
# install.  Nothing here depends on the store: the file runs in the sqlite
# pass only.
#
# The installs do not build ("-o all": the binaries are the ones the suite
# tests) and do not join the make that may be running the suite.

load helpers

setup() {
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-install.XXXXXX")
	DEST="$TMP/root"
}

teardown() {
	rm -rf "$TMP"
}

# What make install DESTDIR=... PREFIX=/usr puts there.
EXPECTED="usr/bin/metactl
usr/bin/metad
usr/include/metad/client.h
usr/lib/libmetad-client.a
usr/lib/libmetad-client.so
usr/lib/libmetad-client.so.0
usr/lib/libmetad-client.so.0.1.0
usr/lib/pkgconfig/metad-client.pc
usr/lib/systemd/system/metad.service
usr/lib/systemd/system/metad.socket
usr/lib/systemd/user/metad.service
usr/lib/systemd/user/metad.socket
usr/share/bash-completion/completions/metactl
usr/share/bash-completion/completions/metad
usr/share/doc/metad/LICENSE
usr/share/doc/metad/metrics-alerts.yml
usr/share/fish/vendor_completions.d/metactl.fish
usr/share/fish/vendor_completions.d/metad.fish
usr/share/man/man1/metactl.1
usr/share/man/man3/metad_client.3
usr/share/man/man7/metad-protocol.7
usr/share/man/man8/metad.8
usr/share/zsh/site-functions/_metactl
usr/share/zsh/site-functions/_metad"

# make in the tree $1, installing under $DEST with PREFIX=/usr.
inst_make() {
	local tree="$1"
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory \
	    -C "$tree" -o all DESTDIR="$DEST" PREFIX=/usr "$@"
}

# The regular files (and anything else but directories) under $DEST.
installed() {
	(cd "$DEST" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}

# A copy of what make install reads: the Makefile, LICENSE, bin/, man/,
# completions/, systemd/, docs/metrics-alerts.yml, the library's header,
# pkg-config template and build.
copy_tree() {
	mkdir -p "$TMP/src/client" "$TMP/src/build/lib" "$TMP/src/docs"
	cp -R "$ROOT/Makefile" "$ROOT/LICENSE" "$ROOT/bin" "$ROOT/man" \
	    "$ROOT/completions" "$ROOT/include" "$ROOT/systemd" "$TMP/src/"
	cp "$ROOT/docs/metrics-alerts.yml" "$TMP/src/docs/"
	cp "$ROOT/client/metad-client.pc.in" "$TMP/src/client/"
	cp -P "$ROOT"/build/lib/libmetad-client.* "$TMP/src/build/lib/"
}

@test "make install puts every file in place, make uninstall removes each" {
	run inst_make "$ROOT" install
	assert_success
	run installed
	assert_output "$EXPECTED"
	[ "$(stat -c %a "$DEST/usr/bin/metad")" = 755 ]
	[ "$(stat -c %a "$DEST/usr/bin/metactl")" = 755 ]
	[ "$(stat -c %a "$DEST/usr/share/man/man8/metad.8")" = 644 ]
	[ "$(stat -c %a "$DEST/usr/share/zsh/site-functions/_metactl")" = 644 ]
	[ "$(stat -c %a "$DEST/usr/share/zsh/site-functions/_metad")" = 644 ]
	cmp "$ROOT/bin/metad" "$DEST/usr/bin/metad"
	cmp "$ROOT/completions/_metactl" \
	    "$DEST/usr/share/zsh/site-functions/_metactl"
	cmp "$ROOT/completions/metad.bash" \
	    "$DEST/usr/share/bash-completion/completions/metad"
	cmp "$ROOT/build/lib/libmetad-client.so.0.1.0" \
	    "$DEST/usr/lib/libmetad-client.so.0.1.0"
	[ "$(readlink "$DEST/usr/lib/libmetad-client.so.0")" = \
	    libmetad-client.so.0.1.0 ]
	[ "$(readlink "$DEST/usr/lib/libmetad-client.so")" = \
	    libmetad-client.so.0 ]
	grep -qx "prefix=/usr" "$DEST/usr/lib/pkgconfig/metad-client.pc"
	[ "$(stat -c %a "$DEST/usr/include/metad/client.h")" = 644 ]
	cmp "$ROOT/systemd/metad.socket" \
	    "$DEST/usr/lib/systemd/system/metad.socket"
	[ "$(stat -c %a "$DEST/usr/lib/systemd/user/metad.service")" = 644 ]
	# The services run the metad installed with them.
	grep -q "^ExecStart=/usr/bin/metad " \
	    "$DEST/usr/lib/systemd/system/metad.service"
	grep -q "^ExecStart=/usr/bin/metad " \
	    "$DEST/usr/lib/systemd/user/metad.service"
	cmp "$ROOT/LICENSE" "$DEST/usr/share/doc/metad/LICENSE"
	[ "$(stat -c %a "$DEST/usr/share/doc/metad/LICENSE")" = 644 ]

	run inst_make "$ROOT" uninstall
	assert_success
	run installed
	assert_output ""
	# The directory of the licence is metad's own: it goes too.
	[ ! -e "$DEST/usr/share/doc/metad" ]
	# Again, with nothing left to remove.
	run inst_make "$ROOT" uninstall
	assert_success
}

@test "every man page and completion in the tree is installed" {
	local m c i found
	run inst_make "$ROOT" install
	assert_success
	for m in "$ROOT"/man/*.[1-9]; do
		cmp "$m" "$DEST/usr/share/man/man${m##*.}/${m##*/}"
	done
	for c in "$ROOT"/completions/*; do
		found=
		for i in "$DEST"/usr/share/bash-completion/completions/* \
		    "$DEST"/usr/share/zsh/site-functions/* \
		    "$DEST"/usr/share/fish/vendor_completions.d/*; do
			cmp -s "$c" "$i" && found=$i
		done
		[ -n "$found" ] || {
			echo "completions/${c##*/} is not installed" >&2
			return 1
		}
	done
}

@test "a missing man page, completion, unit or LICENSE stops make install before it copies anything" {
	local f
	copy_tree
	for f in man/metactl.1 man/metad-protocol.7 man/metad.8 \
	    man/metad_client.3 include/metad/client.h \
	    completions/metactl.bash completions/_metactl \
	    completions/metactl.fish systemd/metad.service.in \
	    systemd/metad.socket systemd/user/metad.service.in \
	    systemd/user/metad.socket LICENSE; do
		mv "$TMP/src/$f" "$TMP/aside"
		run inst_make "$TMP/src" install
		assert_failure
		assert_output --partial "No rule to make target '$f'"
		[ ! -e "$DEST" ]
		mv "$TMP/aside" "$TMP/src/$f"
	done
	# All there: the copy installs as the tree does.
	run inst_make "$TMP/src" install
	assert_success
	run installed
	assert_output "$EXPECTED"
}

@test "a file make install cannot copy fails the install" {
	# A directory where the man page goes: install cannot replace it.
	mkdir -p "$DEST/usr/share/man/man7/metad-protocol.7"
	run inst_make "$ROOT" install
	assert_failure
	assert_output --partial "metad-protocol.7"
	# The ones after it were not copied.
	[ ! -e "$DEST/usr/share/man/man8/metad.8" ]
}
