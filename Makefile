# qlcshape build.
#
#   make              optimised build in build/ (build/qlcshape, build/qlcshaped)
#   make test         every test, built in build/san/ under ASan and UBSan
#   make bench        the main benchmark
#   make SAN=1        sanitizer build of everything in build/san/
#   make V=1          show the commands
#   make fuzz         each fuzz harness (tests/fuzz/) under libFuzzer for
#                     FUZZ_S seconds (default 60), with clang; statistics
#                     per harness. make test replays their corpora with gcc.
#   make man          man pages from man/*.scd (scdoc) into build/man/
#   make install      binaries, systemd unit, example config, man pages,
#                     drive profiles;
#                     PREFIX (default /usr/local) and DESTDIR honoured
#   make uninstall    removes what make install put there
#
# Libraries come through pkg-config. Debian 12's libiniparser-dev ships no
# .pc file, so iniparser falls back to its Debian include path when
# pkg-config does not know it.

CC      ?= cc
SAN     ?= 0
FUZZ    ?= 0
V       ?= 0
FUZZ_S  ?= 60

ifeq ($(FUZZ),1)
# make fuzz: clang's libFuzzer, ASan and UBSan (Debian 12: clang-14), in
# build/fuzz. Every object is instrumented for coverage (fuzzer-no-link);
# only the harnesses link libFuzzer's main.
CC      := clang
BUILD   := build/fuzz
OPT     := -O1 -g -fno-omit-frame-pointer \
           -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow,float-divide-by-zero \
           -fno-sanitize-recover=all
LDSAN   := -fsanitize=address,undefined,float-cast-overflow,float-divide-by-zero
DEFS    := -DQS_NO_JEMALLOC
else ifeq ($(SAN),1)
BUILD   := build/san
# gcc's -fsanitize=undefined leaves out the floating-point checks (clang's
# includes float-cast-overflow): a double such as inf or 1e30 converted to
# an integer is undefined, and an optimised build then yields any value
# (issue 12: a pareto rank of inf sent every I/O to one block). Division by
# a floating zero is checked too: the code never means to make inf that way.
# bounds-strict also checks arrays at the end of a struct. Every check
# aborts (no recover), so a finding fails the test that hit it.
SAN_UB  := undefined,float-cast-overflow,float-divide-by-zero,bounds-strict
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,$(SAN_UB) \
           -fno-sanitize-recover=all
LDSAN   := -fsanitize=address,$(SAN_UB)
# jemalloc and ASan both want to own malloc; the sanitizer build uses libc's.
DEFS    := -DQS_NO_JEMALLOC
else
BUILD   := build
OPT     := -O2 -g
LDSAN   :=
DEFS    :=
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS    := liburing libnvme jemalloc
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
INI_CFLAGS := $(shell pkg-config --cflags iniparser 2>/dev/null || echo -I/usr/include/iniparser)
INI_LIBS   := $(shell pkg-config --libs iniparser 2>/dev/null || echo -liniparser)
CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   := $(shell pkg-config --libs cmocka 2>/dev/null)
ifneq ($(SAN)$(FUZZ),00)
PKG_LIBS := $(filter-out -ljemalloc,$(PKG_LIBS))
endif

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter -Werror=implicit-function-declaration
CFLAGS  += -std=gnu11 $(OPT) $(WARN) $(DEFS) -Iinclude -Itests/lib -MMD -MP -D_GNU_SOURCE
LDLIBS  := -lm -lpthread

# The engine: no I/O, no threads, no clock. Built as a static library that
# the tool, the daemon and every test link.
CACHE_SRCS := $(wildcard cache/*.c)
CACHE_OBJS := $(CACHE_SRCS:%.c=$(BUILD)/%.o)
LIBCACHE   := $(BUILD)/libqscache.a

# The host layer (include/host/): what both programs and the tests run on
# a real host or in a model of one: the real-time environment, the io_uring
# loop and volumes, the config reader, the control client, the device
# models and profiles, the emulated volume. It includes the engine's
# headers and nothing from bench/ or daemon/ (docs/ARCHITECTURE.md).
HOST_SRCS := $(wildcard include/host/*.c)
HOST_OBJS := $(HOST_SRCS:%.c=$(BUILD)/%.o)
LIBHOST   := $(BUILD)/libqshost.a

# The qlcshape tool: bench and control commands.
TOOL_SRCS := $(wildcard bench/*.c)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/%.o)

# The daemon (daemon/qlcshaped.c, the ublk frontend, backends, control
# socket, Prometheus output).
DAEMON_SRCS := $(wildcard daemon/*.c)
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(BUILD)/%.o)

# Tests: tests/test_*.c, one program each, linked with tests/lib/*.c.
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

TOOL   := $(BUILD)/qlcshape
DAEMON := $(BUILD)/qlcshaped

ALL := $(TOOL)
ifneq ($(DAEMON_SRCS),)
ALL += $(DAEMON)
endif

# The minimal ublk server of make vmtest-scale (tests/vm/ublk_min.c): liburing
# only, none of the project's code. Built with everything else, so that a
# warning in it shows in every build, not first in the VM.
UBLK_MIN := $(BUILD)/tests/vm/ublk_min
URING_CFLAGS := $(shell pkg-config --cflags liburing 2>/dev/null)
URING_LIBS   := $(shell pkg-config --libs liburing 2>/dev/null)
ALL += $(UBLK_MIN)

.PHONY: all test tests bench deps clean vmtest vmtest-systemd vmtest-ceph vmtest-scale peers man install uninstall fuzz fuzz-bins
all: $(ALL)

deps:
	$(Q)bash scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INI_CFLAGS) $(CMOCKA_CFLAGS) -c -o $@ $<

$(LIBCACHE): $(CACHE_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(TOOL): $(TOOL_OBJS) $(LIBHOST) $(LIBCACHE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(PKG_LIBS) $(INI_LIBS) $(LDLIBS)

$(DAEMON): $(DAEMON_OBJS) $(LIBHOST) $(LIBCACHE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(PKG_LIBS) $(INI_LIBS) $(LDLIBS)

$(UBLK_MIN): tests/vm/ublk_min.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -Idaemon $(URING_CFLAGS) $(LDSAN) -o $@ $< $(URING_LIBS) -lpthread

# Tests link the bench and daemon code (all but the programs' mains) as
# archives, so each test pulls in only the objects it uses; the archives
# are listed in layer order (each resolves only against those after it).
LIBBENCH  := $(BUILD)/libqsbench.a
LIBDAEMON := $(BUILD)/libqsdaemon.a
$(LIBBENCH): $(filter-out $(BUILD)/bench/main.o,$(TOOL_OBJS))
$(LIBDAEMON): $(filter-out $(BUILD)/daemon/qlcshaped.o,$(DAEMON_OBJS))
$(LIBHOST): $(HOST_OBJS)
$(LIBBENCH) $(LIBDAEMON) $(LIBHOST):
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^ $(if $^,,--)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB_OBJS) $(LIBBENCH) $(LIBDAEMON) $(LIBHOST) $(LIBCACHE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(CMOCKA_LIBS) $(PKG_LIBS) $(INI_LIBS) $(LDLIBS)

tests: $(TEST_BINS)

# Fuzz harnesses (tests/fuzz/fuzz_NAME.c, docs in each): with gcc, under
# make test, BUILD/tests/test_fuzz_NAME replays tests/fuzz/corpus/NAME/
# through tests/fuzz/replay.c (the name from its own); with FUZZ=1 (clang) BUILD/fuzz/fuzz_NAME is
# the libFuzzer program that make fuzz runs.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/tests/test_fuzz_%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_LIBS := $(BUILD)/tests/fuzz/fz.o $(TESTLIB_OBJS) $(LIBBENCH) $(LIBDAEMON) $(LIBHOST) $(LIBCACHE)
ifneq ($(FUZZ),1)
tests: $(FUZZ_REPLAY)
endif

$(FUZZ_REPLAY): $(BUILD)/tests/test_fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(FUZZ_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(PKG_LIBS) $(INI_LIBS) $(LDLIBS)

$(FUZZ_BINS): $(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDSAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(INI_LIBS) $(LDLIBS)

fuzz-bins: $(FUZZ_BINS)

# make fuzz: build with clang (scripts/deps.sh --fuzz installs it), then
# run every harness for FUZZ_S seconds on a copy of its corpus.
fuzz:
	$(Q)bash scripts/deps.sh --fuzz
	$(Q)$(MAKE) --no-print-directory FUZZ=1 fuzz-bins
	$(Q)bash scripts/fuzz.sh build/fuzz $(FUZZ_S) $(FUZZ_NAMES)

# The shell tests tests/test_{systemd,man,layers}.sh become the programs
# BUILD/tests/test_{systemd,man,layers}, which scripts/run-tests.sh runs
# with the others.
TEST_SCRIPTS := $(patsubst tests/%.sh,$(BUILD)/tests/%,$(wildcard tests/test_*.sh))
tests: $(TEST_SCRIPTS)
$(TEST_SCRIPTS): $(BUILD)/tests/%: tests/%.sh
	@mkdir -p $(dir $@)
	$(Q)install -m 755 $< $@

# make test: install what is missing, build everything under ASan+UBSan,
# run every test program; the summary line counts programs.
test: deps
	$(Q)$(MAKE) --no-print-directory SAN=1 all tests
	$(Q)bash scripts/run-tests.sh build/san

# make bench: the main A/B job (docs/BENCH.md), in well under two minutes.
# The engine's own micro-benchmark (about a minute on a busy 2-core machine)
# is `build/qlcshape bench engine --json build/bench-engine.json`.
bench: deps
	$(Q)$(MAKE) --no-print-directory SAN=0 all
	$(Q)build/qlcshape bench ab --json build/bench.json --svg build/bench.svg

# PC_CUTS=N: power cuts per chain of the VM power-cut test (in place and log
# placement; the QLC-only and fast-only chains run half as many). Default 8
# (tests/vm/run.sh, docs/DAEMON.md "Power cut"). Then the systemd guest
# (tests/vm/systemd.sh, docs/DAEMON.md "The systemd guest"): the unit under a
# real systemd in a Debian 12 VM, 3.5 to 7.5 minutes; both run even if the
# first fails, and vmtest fails if either did.
vmtest: deps
	$(Q)bash scripts/deps.sh --systemd-vm
	$(Q)$(MAKE) --no-print-directory SAN=0 all man
	$(Q)rc=0; $(if $(PC_CUTS),QS_VM_PC_CUTS=$(PC_CUTS) )bash tests/vm/run.sh || rc=1; \
		bash tests/vm/systemd.sh || rc=1; exit $$rc

# The systemd guest alone (part of vmtest). The first run also builds the
# guest's root file system, cached in build/vm/systemd.
vmtest-systemd: deps
	$(Q)bash scripts/deps.sh --systemd-vm
	$(Q)$(MAKE) --no-print-directory SAN=0 all man
	$(Q)bash tests/vm/systemd.sh

# Ceph on qlcshape (tests/vm/ceph.sh, docs/DAEMON.md "The Ceph guest"): a
# monitor and a BlueStore OSD on /dev/ublkb0 in a Debian 12 VM, rados bench
# shaped and bare, the emulated drive's counters in build/ceph.json. Not
# part of test or vmtest: a boot with two Ceph clusters takes minutes under TCG.
vmtest-ceph: deps
	$(Q)bash scripts/deps.sh --systemd-vm
	$(Q)$(MAKE) --no-print-directory SAN=0 all
	$(Q)bash tests/vm/ceph.sh

# The ublk floor (tests/vm/scale.sh, docs/DAEMON.md "The ublk floor"): the
# minimal ublk server at 1 and 2 queues under fio, in one boot of the newest
# kernel of the suite, qemu TCG with two vCPUs. A benchmark: it prints a
# table and fails only if something does not work. Not part of vmtest.
vmtest-scale: deps
	$(Q)bash scripts/deps.sh --vm
	$(Q)$(MAKE) --no-print-directory SAN=0 build/tests/vm/ublk_min
	$(Q)bash tests/vm/scale.sh

# qlcshape against dm-writecache, bcache and dm-cache over the same emulated
# QLC (docs/COMPARISON.md): one Debian guest under TCG, about half an hour.
# Not part of vmtest; the table is printed, the figures go to build/peers.json.
peers: deps
	$(Q)bash scripts/deps.sh --systemd-vm
	$(Q)$(MAKE) --no-print-directory SAN=0 all man
	$(Q)bash tests/vm/peers.sh

clean:
	rm -rf build

# Man pages: man/NAME.SECTION.scd -> build/man/NAME.SECTION (scdoc, Debian
# package scdoc). Whatever the build (SAN or not), they go to build/man.
MAN_SRCS  := $(wildcard man/*.scd)
MAN_PAGES := $(MAN_SRCS:man/%.scd=build/man/%)

man: $(MAN_PAGES)

build/man/%: man/%.scd
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  SCDOC   $<")
	$(Q)scdoc <$< >$@.tmp && mv $@.tmp $@

# make install: PREFIX (default /usr/local) and DESTDIR (a staging root).
# The unit goes where systemd looks for it: /lib/systemd/system for
# PREFIX=/usr (Debian's packaged units), else PREFIX/lib/systemd/system
# (systemd searches /usr/local/lib/systemd/system; other prefixes need
# UNITDIR=... or a link). ExecStart= is set to BINDIR. The configuration
# lives in /etc/qlcshape whatever the prefix (the unit reads
# /etc/qlcshape/NAME.ini); an existing example.ini is never overwritten.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
# Drive profiles and bench jobs: the programs look for them in ./conf/ and
# then in ../share/qlcshape/ next to their own bin/ directory (so BINDIR
# must stay PREFIX/bin for that): the emulated QLC (qlc = emu:NAME),
# bench --profile NAME and bench ab's default job.
PROFDIR := $(PREFIX)/share/qlcshape/profiles
JOBDIR := $(PREFIX)/share/qlcshape/bench
CONFDIR ?= /etc/qlcshape
ifeq ($(PREFIX),/usr)
UNITDIR ?= /lib/systemd/system
else
UNITDIR ?= $(PREFIX)/lib/systemd/system
endif

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CONFDIR)
	install -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/qlcshape
	install -m 755 $(DAEMON) $(DESTDIR)$(BINDIR)/qlcshaped
	install -d $(DESTDIR)$(PROFDIR)
	install -m 644 conf/profiles/*.ini $(DESTDIR)$(PROFDIR)/
	install -d $(DESTDIR)$(JOBDIR)
	install -m 644 conf/bench/*.fio $(DESTDIR)$(JOBDIR)/
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/qlcshaped@.service >$(DESTDIR)$(UNITDIR)/qlcshaped@.service
	chmod 644 $(DESTDIR)$(UNITDIR)/qlcshaped@.service
	@if [ -e $(DESTDIR)$(CONFDIR)/example.ini ]; then \
		echo "install: keeping the existing $(DESTDIR)$(CONFDIR)/example.ini"; \
	else \
		echo "install -m 644 conf/qlcshaped.ini $(DESTDIR)$(CONFDIR)/example.ini"; \
		install -m 644 conf/qlcshaped.ini $(DESTDIR)$(CONFDIR)/example.ini; \
	fi
	@for p in $(MAN_PAGES); do \
		d=$(DESTDIR)$(MANDIR)/man$${p##*.}; \
		echo "install -m 644 $$p $$d/"; \
		install -d $$d && install -m 644 $$p $$d/ || exit 1; \
	done

# Removes the files install puts, and the example config only while it is
# still the shipped one (an edited or older copy stays). Directories stay:
# they may have existed before.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/qlcshape $(DESTDIR)$(BINDIR)/qlcshaped
	rm -f $(addprefix $(DESTDIR)$(PROFDIR)/,$(notdir $(wildcard conf/profiles/*.ini)))
	rm -f $(addprefix $(DESTDIR)$(JOBDIR)/,$(notdir $(wildcard conf/bench/*.fio)))
	rm -f $(DESTDIR)$(UNITDIR)/qlcshaped@.service
	rm -f $(foreach p,$(notdir $(MAN_PAGES)),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(p))
	@if cmp -s conf/qlcshaped.ini $(DESTDIR)$(CONFDIR)/example.ini; then \
		echo "rm -f $(DESTDIR)$(CONFDIR)/example.ini"; \
		rm -f $(DESTDIR)$(CONFDIR)/example.ini; \
	elif [ -e $(DESTDIR)$(CONFDIR)/example.ini ]; then \
		echo "uninstall: keeping $(DESTDIR)$(CONFDIR)/example.ini (not the shipped file)"; \
	fi

# The compiler's dependency files. Not under build/vm/: the VM tests keep
# whole root file systems there (tests/vm/systemd.sh), full of directories
# named *.d (etc/apt/apt.conf.d, etc/rc2.d) that make cannot include.
-include $(shell find build -path build/vm -prune -o -name '*.d' -type f -print 2>/dev/null)
