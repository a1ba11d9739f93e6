# metad — a versioned metadata store.  See README.md.
#
#   make                 build bin/metad and bin/metactl
#   make run             install missing packages, build, start metad
#   make check           install missing packages, build, run every test
#   make install PREFIX=/usr/local
#   make uninstall PREFIX=/usr/local   remove what make install put there
#                        (binaries, man pages, completions, systemd units,
#                        the library, the licence)
#   make unit            build and run the unit tests only
#   make deb             the Debian packages, in build/deb/ (debian/)
#
# Knobs: WERROR=1 (warnings are errors), SANITIZER=address,undefined,
# V=1 (show commands), DEBUG=1 (-O0).  CPPFLAGS, CFLAGS and LDFLAGS are
# added to ours (eval $(dpkg-buildflags --export=sh) works).

PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR	?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR	?= $(PREFIX)/share/fish/vendor_completions.d
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
SYSTEMDUNITDIR	?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
DOCDIR		?= $(PREFIX)/share/doc/metad

CC		?= cc
PKG_CONFIG	?= pkg-config
# libevent_core: the loop, buffers, bufferevents, listeners;
# libevent_extra: evhttp (--metrics-listen); libsodium: the keyed hash of
# the daemon's tables; libevent_openssl and openssl: the TLS listener
# (--listen), the client library's TLS and TLS to etcd.
PKGS		 = libevent_core libevent_extra libevent_openssl libcjson sqlite3 \
		   libnghttp2 libsodium openssl

ifeq ($(V),1)
Q =
else
Q = @
endif

OPT		 = -O2
ifeq ($(DEBUG),1)
OPT		 = -O0
endif

WARN		 = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		   -Wpointer-arith -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN		+= -Werror
endif

SAN_FLAGS	 =
ifneq ($(SANITIZER),)
SAN_FLAGS	 = -fsanitize=$(SANITIZER) -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all
endif

# pkg-config runs when a rule first needs its answer, once (so "make clean"
# works where the libraries are missing); a missing library stops the build
# with pkg-config's own message.
pkg_config	 = $(eval pkg_out := $(shell $(PKG_CONFIG) $(1)))$(if \
		   $(filter 0,$(.SHELLSTATUS)),$(pkg_out),$(error \
		   $(PKG_CONFIG) $(1) failed: "make deps" installs the \
		   development packages))
PKG_CFLAGS	 = $(eval PKG_CFLAGS := $(call pkg_config,--cflags \
		   $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS	 = $(eval PKG_LIBS := $(call pkg_config,--libs \
		   $(PKGS)))$(PKG_LIBS)
RL_CFLAGS	 = $(eval RL_CFLAGS := $(call pkg_config,--cflags \
		   readline))$(RL_CFLAGS)
RL_LIBS		 = $(eval RL_LIBS := $(call pkg_config,--libs \
		   readline))$(RL_LIBS)

# The user's CPPFLAGS, CFLAGS and LDFLAGS follow ours, so that they win.
ALL_CPPFLAGS	 = -D_GNU_SOURCE -iquote common -iquote daemon -Iinclude \
		   $(PKG_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS	 = -std=c11 -g $(OPT) $(WARN) $(SAN_FLAGS) $(CFLAGS)
ALL_LDFLAGS	 = -Wl,--as-needed $(SAN_FLAGS) $(LDFLAGS)

COMMON_SRCS	:= $(wildcard common/*.c)
# daemon/ by layer: net (connections), ops (the op table and its
# families), lease, core (requests, commit, events), store (the interface
# and generic code), metrics (counters, any layer may count) and store's
# backends, one folder each.
DAEMON_DIRS	 = daemon daemon/net daemon/ops daemon/lease daemon/core \
		   daemon/metrics daemon/store daemon/store/sqlite \
		   daemon/store/mem daemon/store/etcd daemon/store/remote
DAEMON_SRCS	:= $(wildcard $(addsuffix /*.c,$(DAEMON_DIRS)))
DAEMON_LIB_SRCS	:= $(filter-out daemon/main.c,$(DAEMON_SRCS))
CMD_SRCS	:= $(wildcard cmd/*.c)
UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)

obj		 = $(patsubst %.c,build/%.o,$(1))
COMMON_OBJS	:= $(call obj,$(COMMON_SRCS))
DAEMON_OBJS	:= $(call obj,$(DAEMON_SRCS))
DAEMON_LIB_OBJS	:= $(call obj,$(DAEMON_LIB_SRCS))
CMD_OBJS	:= $(call obj,$(CMD_SRCS))
UNIT_BINS	:= $(patsubst tests/unit/%.c,build/tests/%,$(UNIT_SRCS))

CLIENT_VERSION	 = 0.1.0
CLIENT_SOMAJOR	 = 0
CLIENT_SRCS	:= $(wildcard client/*.c) $(COMMON_SRCS)
CLIENT_OBJS	:= $(patsubst %.c,build/lib/%.o,$(CLIENT_SRCS))
CLIENT_SO	 = build/lib/libmetad-client.so.$(CLIENT_VERSION)
CLIENT_SONAME	 = libmetad-client.so.$(CLIENT_SOMAJOR)
CLIENT_A	 = build/lib/libmetad-client.a
CLIENT_LIBS	 = $(eval CLIENT_LIBS := $(call pkg_config,--libs \
		   libcjson openssl))$(CLIENT_LIBS)

.PHONY: all deps run check check-etcd unit bats install uninstall clean lint-man bench-etcd check-layers FORCE

all: bin/metad bin/metactl

# Rebuild everything when the flags change (e.g. SANITIZER=...).
build/flags: FORCE
	@mkdir -p build
	@echo '$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)' | \
	    cmp -s - $@ || \
	    echo '$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)' > $@

OBJ_FLAGS	 = $(ALL_CPPFLAGS) $(EXTRA_CPPFLAGS) $(ALL_CFLAGS)
# metactl's REPL includes readline's headers.
$(CMD_OBJS): EXTRA_CPPFLAGS = $(RL_CFLAGS)

build/%.o: %.c build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(OBJ_FLAGS) -MMD -MP -c $< -o $@

bin/metad: $(DAEMON_OBJS) $(COMMON_OBJS)
	@mkdir -p bin
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

bin/metactl: $(CMD_OBJS) $(COMMON_OBJS) $(CLIENT_A)
	@mkdir -p bin
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(RL_LIBS) -lm

# libmetad-client (client/, include/metad/client.h): its objects and the
# common/ ones it uses are built again position-independent with hidden
# visibility; only the header's declarations are exported.  The static
# archive is one relocatable object whose hidden symbols are made local, so
# that a program linking it keeps its own xmalloc, proto_parse...
build/lib/%.o: %.c build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (lib)")
	$(Q)$(CC) $(OBJ_FLAGS) -iquote client -fPIC -fvisibility=hidden \
	    -MMD -MP -c $< -o $@

$(CLIENT_SO): $(CLIENT_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(CLIENT_SONAME) \
	    -Wl,--no-undefined -o $@ $^ $(CLIENT_LIBS)
	$(Q)ln -sf libmetad-client.so.$(CLIENT_VERSION) \
	    build/lib/$(CLIENT_SONAME)
	$(Q)ln -sf $(CLIENT_SONAME) build/lib/libmetad-client.so

$(CLIENT_A): $(CLIENT_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)$(LD) -r -o build/lib/client-all.o $^
	$(Q)objcopy --localize-hidden build/lib/client-all.o
	$(Q)rm -f $@ && ar rcs $@ build/lib/client-all.o

build/lib/metad-client.pc: client/metad-client.pc.in FORCE
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(CLIENT_VERSION)|' $< > $@.tmp && \
	    mv $@.tmp $@

.PHONY: lib
lib: $(CLIENT_SO) $(CLIENT_A)
all: lib

# The library's tests (against a daemon tests/bats/client.bats starts) and
# the example, linked with the shared library as a program using it would.
CLIENT_TESTS	 = build/tests/client_ops build/tests/client_watch \
		   build/tests/client_tls build/tests/client_limits
CLIENT_LINK	 = -Lbuild/lib -lmetad-client -Wl,-rpath,$(CURDIR)/build/lib
EXAMPLES	 = build/examples/leader

$(CLIENT_TESTS): build/tests/%: tests/client/%.c tests/client/client_fx.c \
    tests/client/client_fx.h $(CLIENT_SO) build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    tests/client/client_fx.c $(CLIENT_LINK) -lcmocka

$(EXAMPLES): build/examples/%: examples/%.c $(CLIENT_SO) build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    $(CLIENT_LINK)

check check-etcd bats: $(CLIENT_TESTS) $(EXAMPLES)

# Unit tests of the store (test_store*.c) link the daemon's objects and
# their fixture (tests/unit/store_fx.c); the others only common/.
STORE_TESTS	:= $(filter build/tests/test_store%,$(UNIT_BINS))
STORE_FX_OBJS	:= build/tests/unit/store_fx.o
$(STORE_TESTS): TEST_OBJS = $(DAEMON_LIB_OBJS) $(COMMON_OBJS) \
		   $(STORE_FX_OBJS)
$(STORE_TESTS): $(DAEMON_LIB_OBJS) $(STORE_FX_OBJS)
# The store tests with etcd cases (a fixture of kind "etcd"), which
# tests/run-etcd runs against its etcd; the others test only a local
# backend's code (and run in tests/run's unit pass).
ETCD_UNIT_TESTS	:= $(patsubst tests/unit/%.c,build/tests/%,$(shell grep -l \
		   '\.kind = "etcd"' tests/unit/test_store*.c))
# The tests of the commit, the watch hub and the lease table link the
# daemon's objects and their fixture (tests/unit/md_fx.c): a daemon's
# struct metad on a memory store.
MD_TESTS	:= build/tests/test_commit build/tests/test_watch \
		   build/tests/test_lease
MD_FX_OBJS	:= build/tests/unit/md_fx.o
$(MD_TESTS): TEST_OBJS = $(DAEMON_LIB_OBJS) $(COMMON_OBJS) $(MD_FX_OBJS)
$(MD_TESTS): $(DAEMON_LIB_OBJS) $(MD_FX_OBJS)
# The etcd codec's test links its object (and libnghttp2's flags, unused).
ETCD_PB_OBJS	 = build/daemon/store/etcd/etcd_pb.o \
		   build/daemon/store/etcd/etcd_pb_msg.o \
		   build/daemon/store/etcd/etcd_pb_wire.o
build/tests/test_etcd_pb: TEST_OBJS = $(ETCD_PB_OBJS) $(COMMON_OBJS)
build/tests/test_etcd_pb: $(ETCD_PB_OBJS)
# The etcd client's set-up (URLs, TLS and authentication options) links
# the daemon's objects.
build/tests/test_etcd_client: TEST_OBJS = $(DAEMON_LIB_OBJS) $(COMMON_OBJS)
build/tests/test_etcd_client: $(DAEMON_LIB_OBJS)
# The keyed hash's test crafts its colliding keys as the benchmark does.
build/tests/test_store_hash: TEST_OBJS = $(DAEMON_LIB_OBJS) $(COMMON_OBJS) \
		   $(STORE_FX_OBJS) build/bench/crafted.o
build/tests/test_store_hash: build/bench/crafted.o
build/tests/test_store_hash: ALL_CPPFLAGS += -iquote bench
# The metrics' test: their objects alone (they know only common/).
METRICS_OBJS	 = build/daemon/metrics/metrics.o \
		   build/daemon/metrics/metrics_text.o
build/tests/test_metrics: TEST_OBJS = $(METRICS_OBJS) $(COMMON_OBJS)
build/tests/test_metrics: $(METRICS_OBJS)
# The direct decoder's test compares it with the general one: the daemon's.
build/tests/test_ops_fast: TEST_OBJS = $(DAEMON_LIB_OBJS) $(COMMON_OBJS)
build/tests/test_ops_fast: $(DAEMON_LIB_OBJS) tests/unit/ops_fast_cmp.h \
    tests/unit/ops_fast_store.h
build/tests/%: TEST_OBJS ?= $(COMMON_OBJS)
build/tests/%: tests/unit/%.c $(COMMON_OBJS) build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    $(TEST_OBJS) $(PKG_LIBS) -lcmocka -lm

deps:
	$(Q)./scripts/deps.sh

run: deps
	$(Q)$(MAKE) --no-print-directory all
	./bin/metad $(METAD_ARGS)

# The whole behaviour suite runs on every backend (tests/passes): sqlite
# (with the unit tests, and the runners' own tests in tests/runner once),
# memory, metad (the remote backend), and etcd (tests/run-etcd: one etcd on loopback ports, the store
# contract tests run against it too; a failure under CI when etcd is not
# installed, a skip elsewhere), beside the other two with CHECK_JOBS=2
# (the default: the etcd pass mostly waits on etcd's fsyncs; its output
# is printed after theirs; CHECK_JOBS=1: one after another).  Each pass leaves out the bats tests its store cannot run by
# their tags (tests/run says which); under CI any other skip fails.
# A hung test fails its pass after BATS_TIMEOUT seconds (a pass takes
# about 4 minutes here, 9 under ASan) instead of holding CI to its limit.
# CHECK_MEMORY=0 leaves out the memory backend's behaviour pass (.ci/run
# does so under the sanitizers, where the plain pass has run it and the
# unit tests still run the memory store's code), CHECK_REMOTE=0 the metad
# backend's (every daemon under test behind one of its test's; under the
# sanitizers too, where remote.bats and remote_faults.bats in the sqlite
# pass run its code).
# CHECK_ETCD_BATS="FILES" runs only those bats files in the etcd pass
# (.ci/run's sanitizer pass: the etcd backend's own files), all if empty.
BATS_TIMEOUT	?= 1800
CHECK_MEMORY	?= 1
CHECK_REMOTE	?= 1
CHECK_ETCD_BATS	?=
CHECK_JOBS	?= 2
check: deps
	$(Q)$(MAKE) --no-print-directory check-layers all $(UNIT_BINS)
	$(Q)SANITIZER="$(SANITIZER)" METAD_BATS_TIMEOUT=$(BATS_TIMEOUT) \
	    UNITS="$(UNIT_BINS)" ETCD_UNITS="$(ETCD_UNIT_TESTS)" \
	    ETCD_FILES="$(CHECK_ETCD_BATS)" CHECK_MEMORY=$(CHECK_MEMORY) \
	    CHECK_REMOTE=$(CHECK_REMOTE) \
	    CHECK_JOBS=$(CHECK_JOBS) ./tests/passes

check-etcd: all $(ETCD_UNIT_TESTS)
	$(Q)SANITIZER="$(SANITIZER)" ./tests/run-etcd \
	    $(addprefix --unit ,$(ETCD_UNIT_TESTS))

# The runners' own tests (tests/runner/runner.bats), alone.
.PHONY: check-runner
check-runner:
	$(Q)METAD_TEST_FILES=tests/runner/runner.bats ./tests/run --bats-only

# The daemon's layers, from its includes (scripts/check-layers): no cycle
# between sibling folders, no module cycle over two modules, no backend
# header outside its backend, no source file over 650 lines; the ones known
# today are listed in scripts/layers-known, which may only shrink.
check-layers:
	$(Q)./scripts/check-layers

# The unit tests alone: builds and runs them, installs nothing (the Debian
# package build runs it: debian/rules).
unit: $(UNIT_BINS)
	$(Q)./tests/run --unit-only $(UNIT_BINS)

bats: all
	$(Q)./tests/run --bats-only

# mandoc's lint, then groff's warnings (a line it cannot break, an escape
# in a macro argument), which mandoc lets by.
lint-man:
	$(Q)for m in man/*.[0-9]; do mandoc -Tlint -Wwarning $$m || exit 1; \
	    w=$$(groff -ww -man -Tutf8 -z $$m 2>&1); \
	    [ -z "$$w" ] || { echo "$$w" >&2; exit 1; }; done

# What "make install" puts where; each file must be there (a missing one
# stops the install before anything is copied), and "make uninstall"
# removes exactly these.
INST_BINS	 = bin/metad bin/metactl
INST_MAN1	 = man/metactl.1
INST_MAN7	 = man/metad-protocol.7
INST_MAN8	 = man/metad.8
INST_BASHCOMP	 = completions/metactl.bash completions/metad.bash
INST_ZSHCOMP	 = completions/_metactl completions/_metad
INST_FISHCOMP	 = completions/metactl.fish completions/metad.fish
INST_MAN3	 = man/metad_client.3
INST_HEADER	 = include/metad/client.h
INST_LIBS	 = $(CLIENT_SO) $(CLIENT_A)
INST_LIBLINKS	 = $(CLIENT_SONAME) libmetad-client.so
# systemd units: the system pair and the user pair; the services' ExecStart
# gets $(BINDIR) at install time.
INST_UNITS	 = systemd/metad.service.in systemd/metad.socket
INST_USERUNITS	 = systemd/user/metad.service.in systemd/user/metad.socket
INST_DOCS	 = LICENSE docs/metrics-alerts.yml
inst_in		 = $(addprefix $(DESTDIR)$(1)/,$(notdir $(2)))
INSTALLED	 = $(call inst_in,$(BINDIR),$(INST_BINS)) \
		   $(call inst_in,$(MANDIR)/man1,$(INST_MAN1)) \
		   $(call inst_in,$(MANDIR)/man7,$(INST_MAN7)) \
		   $(call inst_in,$(MANDIR)/man8,$(INST_MAN8)) \
		   $(DESTDIR)$(BASHCOMPDIR)/metactl \
		   $(DESTDIR)$(BASHCOMPDIR)/metad \
		   $(DESTDIR)$(ZSHCOMPDIR)/_metactl \
		   $(DESTDIR)$(ZSHCOMPDIR)/_metad \
		   $(DESTDIR)$(FISHCOMPDIR)/metactl.fish \
		   $(DESTDIR)$(FISHCOMPDIR)/metad.fish \
		   $(call inst_in,$(MANDIR)/man3,$(INST_MAN3)) \
		   $(DESTDIR)$(INCLUDEDIR)/metad/client.h \
		   $(call inst_in,$(LIBDIR),$(INST_LIBS) $(INST_LIBLINKS)) \
		   $(DESTDIR)$(PKGCONFIGDIR)/metad-client.pc \
		   $(DESTDIR)$(SYSTEMDUNITDIR)/metad.service \
		   $(DESTDIR)$(SYSTEMDUNITDIR)/metad.socket \
		   $(DESTDIR)$(SYSTEMDUSERUNITDIR)/metad.service \
		   $(DESTDIR)$(SYSTEMDUSERUNITDIR)/metad.socket \
		   $(call inst_in,$(DOCDIR),$(INST_DOCS))
unit_sed	 = sed 's|@BINDIR@|$(BINDIR)|g'

install: all $(INST_MAN1) $(INST_MAN3) $(INST_MAN7) $(INST_MAN8) \
    $(INST_BASHCOMP) $(INST_ZSHCOMP) $(INST_FISHCOMP) $(INST_HEADER) \
    build/lib/metad-client.pc $(INST_UNITS) $(INST_USERUNITS) $(INST_DOCS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man3 \
	    $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
	    $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(INCLUDEDIR)/metad \
	    $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSTEMDUSERUNITDIR) \
	    $(DESTDIR)$(DOCDIR)
	install -m 0755 $(INST_BINS) $(DESTDIR)$(BINDIR)
	install -m 0644 $(INST_MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(INST_MAN7) $(DESTDIR)$(MANDIR)/man7
	install -m 0644 $(INST_MAN8) $(DESTDIR)$(MANDIR)/man8
	install -m 0644 completions/metactl.bash \
	    $(DESTDIR)$(BASHCOMPDIR)/metactl
	install -m 0644 completions/metad.bash $(DESTDIR)$(BASHCOMPDIR)/metad
	install -m 0644 $(INST_ZSHCOMP) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0644 $(INST_FISHCOMP) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0644 $(INST_MAN3) $(DESTDIR)$(MANDIR)/man3
	install -m 0644 $(INST_HEADER) $(DESTDIR)$(INCLUDEDIR)/metad
	install -m 0755 $(CLIENT_SO) $(DESTDIR)$(LIBDIR)
	install -m 0644 $(CLIENT_A) $(DESTDIR)$(LIBDIR)
	ln -sf $(notdir $(CLIENT_SO)) $(DESTDIR)$(LIBDIR)/$(CLIENT_SONAME)
	ln -sf $(CLIENT_SONAME) $(DESTDIR)$(LIBDIR)/libmetad-client.so
	install -m 0644 build/lib/metad-client.pc $(DESTDIR)$(PKGCONFIGDIR)
	$(unit_sed) systemd/metad.service.in > \
	    $(DESTDIR)$(SYSTEMDUNITDIR)/metad.service
	install -m 0644 systemd/metad.socket $(DESTDIR)$(SYSTEMDUNITDIR)
	$(unit_sed) systemd/user/metad.service.in > \
	    $(DESTDIR)$(SYSTEMDUSERUNITDIR)/metad.service
	install -m 0644 systemd/user/metad.socket \
	    $(DESTDIR)$(SYSTEMDUSERUNITDIR)
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/metad.service \
	    $(DESTDIR)$(SYSTEMDUSERUNITDIR)/metad.service
	install -m 0644 $(INST_DOCS) $(DESTDIR)$(DOCDIR)

uninstall:
	rm -f $(INSTALLED)
	rmdir $(DESTDIR)$(INCLUDEDIR)/metad 2>/dev/null || true
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build bin

# Debian packages (debian/; README.md, "Debian packages"):
#   make deb         dpkg-buildpackage -us -uc -b in a copy of the tree,
#                    then lintian: the packages land in build/deb/
#   make deb-check   as root: checks their contents, installs them, runs
#                    the autopkgtests (debian/tests) on them, purges them
#   make deb-chroot  as root, with debootstrap: builds them in a fresh
#                    Debian 12 with debian/control's build dependencies
#                    only, installs, tries and purges them in another
#   make deb-systemd as root, with debootstrap: metad's package under a
#                    systemd booted in namespaces of its own (the socket
#                    enabled, metad.service started by it, the purge)
.PHONY: deb deb-check deb-chroot deb-systemd
deb:
	$(Q)./scripts/deb.sh

deb-check:
	$(Q)./scripts/deb-check.sh build/deb

deb-chroot:
	$(Q)./scripts/deb-chroot.sh

deb-systemd:
	$(Q)./scripts/deb-systemd.sh

-include $(shell find build -name '*.d' 2>/dev/null)

# --- Fuzzing: a libFuzzer target per decoder, built by clang with ASan and
# UBSan (tests/fuzz/fuzz_NAME.c, its seeds in tests/fuzz/corpus-NAME, its
# dictionary, if any, tests/fuzz/NAME.dict):
#   request  the request line through the decoder and dispatch, a real store
#   fast     the direct decoder (ops_fast.c) against the general one
#   pb       etcd's protobuf answers and requests (etcd_pb*.c)
#   grpc     the gRPC message reassembly from DATA chunks (etcd_grpc.c)
#   load     metactl load's dump lines (cmd_load.c)
#   txn      metactl txn's text form (txn_text.c)
#   make fuzz [FUZZ_SECONDS=60]   runs each for its share of FUZZ_SECONDS on
#   a copy of its seeds in build/fuzz/corpus-NAME; a crash leaves its input
#   in build/fuzz/artifacts and fails.  make build/fuzz/fuzz_NAME builds one.
FUZZ_CC		?= clang
FUZZ_SECONDS	?= 60
FUZZ_TARGETS	 = request fast pb grpc load txn
FUZZ_SAN	 = -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
# clang's -Wshadow also counts a libc global a parameter shadows (getopt's
# optopt in config.c), which gcc's leaves out: the gcc build checks shadows.
FUZZ_CFLAGS	 = -std=c11 -g -O1 $(WARN) -Wno-shadow $(FUZZ_SAN)
# fuzz_request.c stands in for server.c; the TLS listener (tls.c, which
# admits through server.c) is not linked into it.
FUZZ_SRCS	:= $(COMMON_SRCS) \
		   $(filter-out daemon/main.c daemon/net/server.c daemon/net/tls.c,$(DAEMON_SRCS))
FUZZ_OBJS	:= $(patsubst %.c,build/fuzz/obj/%.o,$(FUZZ_SRCS))
# The other targets take what they use from an archive: the daemon's
# objects, the listener's, metactl's but its main, the client library's.
FUZZ_LIB_SRCS	:= $(FUZZ_SRCS) daemon/net/server.c \
		   $(filter-out cmd/metactl.c,$(CMD_SRCS)) $(wildcard client/*.c)
FUZZ_LIB	 = build/fuzz/libfuzz.a
FUZZ_EACH	 = $(shell expr $(FUZZ_SECONDS) / $(words $(FUZZ_TARGETS)) \
		   \| 1)
FUZZ_ARGS	 = -max_total_time=$(FUZZ_EACH) -timeout=10 \
		   -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/

.PHONY: fuzz
build/fuzz/flags: FORCE
	@mkdir -p build/fuzz
	@echo '$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS)' | cmp -s - $@ || \
	    echo '$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS)' > $@

build/fuzz/obj/cmd/%.o: EXTRA_CPPFLAGS = $(RL_CFLAGS)
build/fuzz/obj/%.o: %.c build/fuzz/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(ALL_CPPFLAGS) $(EXTRA_CPPFLAGS) $(FUZZ_CFLAGS) \
	    -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

build/fuzz/fuzz_request: tests/fuzz/fuzz_request.c tests/unit/ops_fast_cmp.h \
    $(FUZZ_OBJS) build/fuzz/flags
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	    -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) -lm

$(FUZZ_LIB): $(patsubst %.c,build/fuzz/obj/%.o,$(FUZZ_LIB_SRCS))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

build/fuzz/fuzz_fast: tests/unit/ops_fast_cmp.h tests/unit/ops_fast_store.h
# A harness that includes the file it fuzzes (for its static functions).
build/fuzz/fuzz_grpc: daemon/store/etcd/etcd_grpc.c
build/fuzz/fuzz_load: cmd/cmd_load.c
build/fuzz/fuzz_load build/fuzz/fuzz_txn: EXTRA_CPPFLAGS = $(RL_CFLAGS) \
    -iquote cmd
build/fuzz/fuzz_load build/fuzz/fuzz_txn: FUZZ_EXTRA_LIBS = $(RL_LIBS)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) build/fuzz/flags
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(ALL_CPPFLAGS) $(EXTRA_CPPFLAGS) $(FUZZ_CFLAGS) \
	    -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(PKG_LIBS) \
	    $(FUZZ_EXTRA_LIBS) -lm

# Each target in turn; the first that crashes fails make fuzz.
fuzz: $(addprefix build/fuzz/fuzz_,$(FUZZ_TARGETS))
	@mkdir -p build/fuzz/artifacts
	$(Q)for t in $(FUZZ_TARGETS); do \
	    mkdir -p build/fuzz/corpus-$$t && \
	    cp tests/fuzz/corpus-$$t/* build/fuzz/corpus-$$t/ && \
	    d=; test -f tests/fuzz/$$t.dict && d=-dict=tests/fuzz/$$t.dict; \
	    echo "=== fuzz_$$t for $(FUZZ_EACH) s"; \
	    build/fuzz/fuzz_$$t $(FUZZ_ARGS) $$d \
	        -max_len=$$(case $$t in request) echo 8192;; \
	        *) echo 4096;; esac) build/fuzz/corpus-$$t 2>build/fuzz/$$t.log; \
	    rc=$$?; grep -aE '^(stat::|#[0-9]+[[:space:]]+DONE)' \
	        build/fuzz/$$t.log; \
	    if [ $$rc -ne 0 ]; then tail -n 60 build/fuzz/$$t.log; \
	        echo "fuzz_$$t failed (build/fuzz/$$t.log)"; exit 1; fi; \
	done

# Reliability: the linearizability checker (tests/lin) and the kill -9
# stress run (STRESS_CYCLES, default 50).  tests/bats/reliability.bats uses
# both; a short stress runs in make check.
LINCHECK	 = build/tests/lincheck

LINCHECK_SRCS	 = tests/lin/lincheck.c tests/lin/linsearch.c

$(LINCHECK): $(LINCHECK_SRCS) tests/lin/linsearch.h $(CLIENT_A) build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) -iquote tests/lin $(ALL_CFLAGS) \
	    $(ALL_LDFLAGS) -pthread -o $@ $(LINCHECK_SRCS) $(CLIENT_A) \
	    $(PKG_LIBS) -lm

check check-etcd bats: $(LINCHECK)

# Fault injection: tests/faults/dropproxy.c, a gRPC (HTTP/2) proxy in front
# of etcd that lets a write commit and loses its answer
# (tests/bats/dropproxy.bats, in the etcd pass), or relays etcd's watch
# streams late (-d, tests/bats/etcd_view_lag.bats).
DROPPROXY	 = build/tests/dropproxy

$(DROPPROXY): tests/faults/dropproxy.c tests/faults/dropproxy_h2.c \
    tests/faults/dropproxy.h build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ \
	    $(filter %.c,$^) $(PKG_LIBS)

check check-etcd: $(DROPPROXY)

# tests/faults/powerfs.c: a FUSE file system that loses power (libfuse3),
# for make powerloss (scripts/powerloss.sh) and tests/bats/powerloss.bats.
POWERFS		 = build/tests/powerfs

$(POWERFS): tests/faults/powerfs.c tests/faults/powerfs_cut.c \
    tests/faults/powerfs_tree.c tests/faults/powerfs.h build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(shell $(PKG_CONFIG) --cflags fuse3) \
	    $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.c,$^) \
	    $(shell $(PKG_CONFIG) --libs fuse3)

check bats: $(POWERFS)

# make powerloss: PL_CYCLES cycles of each mode on meta.db, 5 of each on
# a fresh sub/dir tree, then the negative control (--sync normal must lose).
PL_CYCLES	?= 20
.PHONY: powerloss
powerloss: bin/metad $(POWERFS)
	$(Q)PL_CYCLES=$(PL_CYCLES) ./scripts/powerloss.sh
	$(Q)PL_CYCLES=5 PL_FRESH=1 ./scripts/powerloss.sh
	$(Q)PL_CYCLES=5 PL_MODES=drop PL_SYNC=normal PL_EXPECT=lose \
	    PL_CUT=acks ./scripts/powerloss.sh

.PHONY: stress
stress: bin/metad
	$(Q)./scripts/stress.sh

# Benchmarks (issue 6): bin/metabench, the baselines, and the suite.  Not part
# of "make check": a benchmark measures speed, it is not a timed test.
#   make bench            build, run scripts/bench.sh (about 3 minutes)
#   make bench-build      build only
BENCH_SRCS	:= $(wildcard bench/*.c)
BENCH_OBJS	:= $(call obj,$(BENCH_SRCS))
BENCH_BINS	:= bin/metabench build/bench/sqlite_baseline \
		   build/bench/echo_server

.PHONY: bench bench-build bench-leases

all: bin/metabench

bin/metabench: $(BENCH_OBJS) $(COMMON_OBJS) $(CLIENT_A)
	@mkdir -p bin
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lpthread -lm

build/bench/%: tests/bench/%.c build/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    $(PKG_LIBS)

bench-build: all $(BENCH_BINS)

bench: bench-build
	$(Q)./scripts/bench.sh

# metad on etcd against metad on sqlite and against etcd driven directly
# (wrk), in the same run (needs etcd).
bench-etcd: all
	$(Q)./scripts/bench-etcd.sh

# The remote backend (--store metad:unix:...) against the sqlite metad it
# uses, that metad over mutual TLS, and etcd over TLS driven directly (wrk),
# in the same run (needs etcd, wrk, openssl).
.PHONY: bench-remote
bench-remote: all
	$(Q)./scripts/bench-remote.sh

# What leases cost: 10000 leases with a key each, keepalives at 1000/s,
# metad's CPU and RSS against plain keys and pings at the same rate.
bench-leases: all
	$(Q)./scripts/bench-leases.py bin

# Watches at scale (issue 37, scripts/bench-watch.py): puts with 0 to 1M
# idle watches, and delivery to 1000 and 10000 watchers of a prefix.
.PHONY: bench-watch
bench-watch: all
	$(Q)./scripts/bench-watch.py bin

# Keys crafted to collide in an unkeyed hash against random ones
# (scripts/bench-hash.sh): the keyed tables cost the same for both.
.PHONY: bench-hash
bench-hash: all
	$(Q)./scripts/bench-hash.sh

# Tail latency and file growth under churn: 64 clients of durable puts
# over 1000 keys (scripts/bench-churn.sh; CHURN_DURATION, default 30 s).
.PHONY: bench-churn
bench-churn: all
	$(Q)./scripts/bench-churn.sh

# Durable puts on sqlite against Redis (appendfsync always) in one run.
.PHONY: bench-redis
bench-redis: all
	$(Q)./scripts/bench-redis.sh

# --- Valgrind: the unit tests, and protocol/watch/txn.bats with metad
# under memcheck (tests/valgrind); any error or definite/indirect leak fails.
.PHONY: valgrind
valgrind:
	$(Q)$(MAKE) --no-print-directory SANITIZER= bin/metad bin/metactl $(UNIT_BINS)
	$(Q)./tests/valgrind $(UNIT_BINS)

# --- Static analysis: cppcheck's warning, performance and portability
# checks (its style checks fight the house style).  A false positive gets an
# inline "cppcheck-suppress ID" comment saying why.  cppcheck does not read
# system headers, so the two whose macros shape our code are given to it.
CPPCHECK	?= cppcheck
CPPCHECK_INCS	 = $(firstword $(wildcard /usr/include/sys/queue.h \
		   /usr/include/*/sys/queue.h)) \
		   $(firstword $(wildcard /usr/include/cjson/cJSON.h \
		   /usr/local/include/cjson/cJSON.h))
CPPCHECK_FLAGS	 = --enable=warning,performance,portability --std=c11 \
		   --error-exitcode=1 --inline-suppr --quiet -D_GNU_SOURCE \
		   -I common -I daemon -I include -I client \
		   $(addprefix --include=,$(CPPCHECK_INCS))

.PHONY: lint
lint:
	$(Q)$(CPPCHECK) $(CPPCHECK_FLAGS) daemon common cmd client tests/fuzz
