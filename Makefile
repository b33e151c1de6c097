# zkelectd - ZooKeeper leader-election sidecar.
# `make` builds build/zkelectd and build/zkelectctl; `make check` runs every test.

VERSION   = 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
SBINDIR   = $(PREFIX)/sbin
BINDIR    = $(PREFIX)/bin
MANDIR    = $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR  ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

BUILD    ?= build
CC       ?= cc
CFLAGS   ?= -O2 -g
WARNINGS  = -std=c11 -Wall -Wextra -Wshadow -Wmissing-prototypes \
            -Wstrict-prototypes -Wpointer-arith -Wformat=2 -Werror
PKGS      = libevent inih libsystemd
ALL_CPPFLAGS = -D_GNU_SOURCE -DZKELECTD_VERSION='"$(VERSION)"' -Isrc \
            $(shell pkg-config --cflags $(PKGS)) $(CPPFLAGS)
ALL_CFLAGS = $(WARNINGS) $(CFLAGS) $(SANFLAGS)
LIBS      = $(shell pkg-config --libs $(PKGS)) -lzookeeper_mt -lpthread
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

# `make SAN=1 BUILD=build-san` builds with AddressSanitizer and UBSan.
ifeq ($(SAN),1)
SANFLAGS  = -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
endif

COMMON    = clock log xmalloc util
DAEMON    = config config_value config_path config_fixed zk zk_hosts zk_sock resolve candidate election election_event \
            election_reply election_act election_mark \
            election_queue election_next \
            election_preempt \
            election_time election_claim hook \
            ctl ctl_listen status session_file notify http http_conn
DAEMON   += history trace
LIBSRC    = $(COMMON) $(DAEMON)
LIBOBJ    = $(LIBSRC:%=$(BUILD)/%.o)
UNIT      = $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
# The simulator links the real pure core, nothing of the daemon around it.
SIMSRC    = $(wildcard tests/sim/*.c)
SIMCORE   = $(patsubst %,$(BUILD)/%.o,election election_event election_reply \
            election_act election_mark election_queue election_next \
            election_time \
            election_preempt election_claim \
            candidate xmalloc log util clock)
SEEDS    ?= 20000
SEED     ?= random
JOBS     ?= $(shell nproc)

all: $(BUILD)/zkelectd $(BUILD)/zkelectctl

$(BUILD)/%.o: src/%.c src/*.h | $(BUILD)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)

$(BUILD)/libzkelect.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

# The daemon around the core and libzkelect.a (the fuzz harnesses link it
# too, without zkelectd.c's main).
DAEMON_MAIN = daemon command diagnose metrics notify_hook run_hook \
              reexec reexec_check resume crashed \
              switchover lease engine queue_read slot_hook request

$(BUILD)/zkelectd: $(BUILD)/zkelectd.o $(DAEMON_MAIN:%=$(BUILD)/%.o) \
    $(BUILD)/libzkelect.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/zkelectctl: $(BUILD)/zkelectctl.o $(BUILD)/ctlclient.o \
    $(COMMON:%=$(BUILD)/%.o)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/libzkelect.a src/*.h
	@mkdir -p $(BUILD)/unit
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libzkelect.a \
	    $(ALL_LDFLAGS) $(LIBS) -lcmocka

unit: $(UNIT:%=$(BUILD)/unit/%)

$(BUILD)/sim: $(SIMSRC) tests/sim/*.h $(SIMCORE) src/*.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ $(SIMSRC) $(SIMCORE) \
	    $(ALL_LDFLAGS)

# The same simulator for long campaigns, built for this machine's CPU:
# every source compiled as one program at -O3 with link-time
# optimisation, about a fifth more schedules a second. Its traces are
# build/sim's (tests/sim/trace-hash.sh --check build/sim-fast).
SIMFAST   = -O3 -flto=auto -march=native
$(BUILD)/sim-fast: $(SIMSRC) tests/sim/*.h $(SIMCORE:$(BUILD)/%.o=src/%.c) src/*.h
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CPPFLAGS) $(WARNINGS) $(SIMFAST) -o $@ $(SIMSRC) \
	    $(SIMCORE:$(BUILD)/%.o=src/%.c)

# `make sim SEEDS=N [SEED=S] [JOBS=J]`: for every combination of the
# simulator's optional fault families (-k 2000, -W, -P, -L or -K, -R;
# tests/sim/sweep.sh), a campaign of N schedules from seed S (drawn afresh
# each run unless given, and printed) on J processes, availability checked
# (-A), then the regression seeds; exit status 1 on any violation, with
# the lines that replay it. `make sim-mutants`: every seed of seeds.txt marked m=N must
# find mutant N of the core (tests/sim/seeds.txt).
sim: $(BUILD)/sim-fast
	tests/sim/sweep.sh $(BUILD)/sim-fast $(SEED) $(SEEDS) $(JOBS) $(SEEDS) -- -A
	$(BUILD)/sim-fast -f tests/sim/seeds.txt

sim-mutants:
	$(MAKE) BUILD=build-mut CPPFLAGS=-DEL_MUTANTS build-mut/sim
	build-mut/sim -f tests/sim/seeds.txt -M

# The builds run on every CPU; scripts/check.sh says what runs and how.
check:
	@$(MAKE) -j$(JOBS) all unit
	@scripts/check.sh

# `make mutants`: the core built with EL_MUTANTS re-introduces, one at a
# time, each defect the tests were written for; every one must be caught.
mutants:
	$(MAKE) BUILD=build-mut CPPFLAGS=-DEL_MUTANTS unit
	@scripts/mutants.sh build-mut

# Everything `make install` puts in place, and `make uninstall` removes.
INSTALLED = $(SBINDIR)/zkelectd $(BINDIR)/zkelectctl \
            $(MANDIR)/man1/zkelectctl.1 $(MANDIR)/man5/zkelectd.conf.5 \
            $(MANDIR)/man8/zkelectd.8 \
            $(SYSCONFDIR)/zkelectd/zkelectd.conf.example \
            $(UNITDIR)/zkelectd@.service \
            $(UNITDIR)/zkelectd-crashed@.service $(BASHCOMPDIR)/zkelectctl

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/zkelectd \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BUILD)/zkelectd $(DESTDIR)$(SBINDIR)/zkelectd
	install -m 0755 $(BUILD)/zkelectctl $(DESTDIR)$(BINDIR)/zkelectctl
	install -m 0644 man/zkelectctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/zkelectd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/zkelectd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 conf/zkelectd.conf.example \
	    $(DESTDIR)$(SYSCONFDIR)/zkelectd/zkelectd.conf.example
	sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/zkelectd@.service.in \
	    > $(DESTDIR)$(UNITDIR)/zkelectd@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/zkelectd@.service
	sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/zkelectd-crashed@.service.in \
	    > $(DESTDIR)$(UNITDIR)/zkelectd-crashed@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/zkelectd-crashed@.service
	install -m 0644 completion/zkelectctl.bash \
	    $(DESTDIR)$(BASHCOMPDIR)/zkelectctl

# Takes the same PREFIX, DESTDIR and directory variables as install. The
# configuration directory goes only when nothing but the example was in it.
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	if [ -d $(DESTDIR)$(SYSCONFDIR)/zkelectd ]; then \
	    rmdir --ignore-fail-on-non-empty $(DESTDIR)$(SYSCONFDIR)/zkelectd; fi

clean:
	rm -rf build build-san build-mut build-fuzz

# libFuzzer harnesses (tests/fuzz/README.md), built with clang in
# $(FUZZ_BUILD) from the same sources. `make fuzz FUZZ_SECONDS=N` runs each
# for N seconds on a copy of its seed corpus and fails on any crash;
# `make fuzz-replay` checks the validators (fuzz_selftest) and runs each
# harness once over its seeds (part of make check).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer
# clang warns where gcc does not: a format attribute on log.c's static
# va_list helper, fields left to their zero default in tables.
FUZZ_CFLAGS   = $(WARNINGS) -Wno-format-nonliteral \
                -Wno-missing-field-initializers -O1 -g $(FUZZ_SAN) \
                -fsanitize=fuzzer-no-link
FUZZ_HARNESS  = config ctl candidate render
FUZZ_DAEMON   = $(DAEMON_MAIN)
FUZZ_OBJ      = $(LIBSRC:%=$(FUZZ_BUILD)/%.o) \
                $(FUZZ_DAEMON:%=$(FUZZ_BUILD)/%.o) \
                $(FUZZ_BUILD)/fuzz_check.o $(FUZZ_BUILD)/fuzz_daemon.o

$(FUZZ_BUILD)/%.o: src/%.c src/*.h
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) $(ALL_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/%.o: tests/fuzz/%.c tests/fuzz/*.h src/*.h
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) $(ALL_CPPFLAGS) -Itests/fuzz $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/libfuzz.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJ)

# The archive gives each harness only the objects it calls into.
$(FUZZ_HARNESS:%=$(FUZZ_BUILD)/fuzz_%): $(FUZZ_BUILD)/fuzz_%: \
    $(FUZZ_BUILD)/fuzz_%.o $(FUZZ_BUILD)/libfuzz.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LIBS)

# The validators the harnesses assert with, checked on their own.
$(FUZZ_BUILD)/fuzz_selftest: tests/fuzz/fuzz_selftest.c $(FUZZ_BUILD)/libfuzz.a
	$(FUZZ_CC) $(ALL_CPPFLAGS) -Itests/fuzz $(FUZZ_CFLAGS) -o $@ $^ $(LIBS)

fuzz-build: $(FUZZ_HARNESS:%=$(FUZZ_BUILD)/fuzz_%) $(FUZZ_BUILD)/fuzz_selftest

fuzz: fuzz-build
	@scripts/fuzz.sh run $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_HARNESS)

fuzz-replay: fuzz-build
	@scripts/fuzz.sh replay $(FUZZ_BUILD) 0 $(FUZZ_HARNESS)

.PHONY: all unit sim sim-mutants check mutants install uninstall clean \
	fuzz fuzz-build fuzz-replay
