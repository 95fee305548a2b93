# ibsmd — top-level Makefile.  See README.md.
CC       ?= gcc
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    := build
PKGS     := libibumad libibmad libevent libevent_pthreads yaml-0.1 jansson libsystemd libsodium \
            libgvc libcgraph
# Recursive (=) so that `make deps` can install the packages first.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
CFLAGS   ?= -O2 -g
# The version, one place: ibsmd -V, ibsmctl -V, status and the metrics' label.
VERSION_STR := $(shell cat VERSION)
# CPPFLAGS and LDFLAGS: a distribution's hardening (dpkg-buildflags, debian/)
ALL_CFLAGS = -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -I. -MMD -MP \
	-DIBSMD_VERSION='"$(VERSION_STR)"'
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Graphviz's dot layout and SVG renderer linked in (sm/render/svg.c), not
# loaded from its plugin directory at run time: no font or text-layout plugin
# (Pango, fontconfig) comes with them.
GV_PLUGINS = $(shell pkg-config --variable=libdir libgvc 2>/dev/null)/graphviz
LDLIBS   = $(PKG_LIBS) -L$(GV_PLUGINS) -Wl,-rpath,$(GV_PLUGINS) \
	   -lgvplugin_dot_layout -lgvplugin_core -lpthread -lm
IBSMCTL_LIBS = $(shell pkg-config --libs jansson 2>/dev/null)
# ibsm-listen: what libibsmd-host.a needs, no Graphviz (and no RUNPATH)
LISTEN_LIBS = $(shell pkg-config --libs libibumad libibmad libevent jansson 2>/dev/null) -lpthread -lm

# Sources by folder: every .c under a product folder is built, so a file
# moved between folders cannot drop out of the build.  ARCHITECTURE.md
# gives each folder's job and what it may include (tests/structure/layers.py).
PRODUCT_DIRS := sm mad routing reconfig traps
ALL_SRCS     := $(sort $(shell find $(PRODUCT_DIRS) -name '*.c'))
# Each program's own sources: main() and what only it links.
IBSMD_SRCS   := sm/main.c
IBSMCTL_SRCS := sm/ibsmctl/ibsmctl.c
LISTEN_SRCS  := traps/host/ibsm-listen.c
# The core library: everything else (the unit tests link it whole).
CORE_SRCS := $(filter-out $(IBSMD_SRCS) $(IBSMCTL_SRCS) $(LISTEN_SRCS),$(ALL_SRCS))
UNIT_TESTS   := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
SHIMS        := $(BUILD)/libmaddrop.so
TOOLS        := $(BUILD)/madflood $(BUILD)/madsend $(BUILD)/lftset $(BUILD)/mcjoin $(BUILD)/saperf $(BUILD)/prdbench \
	$(BUILD)/emusa $(BUILD)/emuvm $(BUILD)/emumc $(BUILD)/pmaquery $(BUILD)/emuflow $(BUILD)/emuorder \
	$(BUILD)/rblbench

# What a host-side program (ibsm-listen, the test tools) links: mad/ and the
# bottom layer, no daemon.  Building the tools from it keeps that true.
HOST_SRCS := $(filter sm/base/% mad/%,$(CORE_SRCS)) traps/notice.c traps/host/saclient.c
# ibsmctl: its client and its renderer, no daemon (tests/structure/layers.py).
IBSMCTL_LINK := $(filter sm/ibsmctl/%,$(ALL_SRCS))
HOST_OBJS := $(HOST_SRCS:%.c=$(BUILD)/obj/%.o)
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
SAN_OBJS  := $(CORE_SRCS:%.c=$(BUILD)/san/%.o)

.PHONY: all deps demo check structure unit unit-runs sim bench fuzz install uninstall package clean
# What make install installs (the tools and shims are the tests')
PROGRAMS := $(BUILD)/ibsmd $(BUILD)/ibsmctl $(BUILD)/ibsm-listen
all: $(PROGRAMS) $(SHIMS) $(TOOLS)

$(BUILD)/obj/%.o: %.c VERSION
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/san/%.o: %.c VERSION
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(BUILD)/libibsmd.a: $(CORE_OBJS)
	$(AR) rcs $@ $^
$(BUILD)/libibsmd-san.a: $(SAN_OBJS)
	$(AR) rcs $@ $^
$(BUILD)/libibsmd-host.a: $(HOST_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/ibsmd: $(IBSMD_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/libibsmd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/ibsmctl: $(IBSMCTL_LINK:%.c=$(BUILD)/obj/%.o)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(IBSMCTL_LIBS)

# A host's program: the SA client and the notice codec, no daemon.
$(BUILD)/ibsm-listen: $(LISTEN_SRCS) $(BUILD)/libibsmd-host.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libibsmd-host.a $(LISTEN_LIBS)

# ibsmd with ASan+UBSan: t_traps.sh throws a trap storm at it.
$(BUILD)/ibsmd-asan: $(IBSMD_SRCS:%.c=$(BUILD)/san/%.o) $(BUILD)/libibsmd-san.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

# LD_PRELOAD test shim in front of libumad2sim.so: drops / counts MADs.
$(BUILD)/libmaddrop.so: tests/shims/maddrop.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -shared -fPIC -o $@ $< -ldl

# Test clients under umad2sim: madflood, make bench's ceiling (ibsim +
# umad2sim with no SM behind the numbers); madsend, t_robust's hostile host;
# lftset, t_ctlcmds's corrupted LFT entry; mcjoin, multicast joins and leaves;
# pmaquery, the PerfMgt codec against ibsim's PMA (t_pma).
$(BUILD)/%: tests/tools/%.c $(BUILD)/libibsmd-host.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libibsmd-host.a $(LDLIBS)

# prdbench: the path-record distinguisher offline; emusa: the daemon's code
# on the emulator, timed from an SA host; emuvm: its bring-up of hypervisors
# with vLIDs or shared-LID slots (make bench); emuflow: traffic on the
# emulator after the daemon configured it, per-flow throughput over time.
# They link the daemon.
$(BUILD)/prdbench $(BUILD)/emusa $(BUILD)/emuvm $(BUILD)/emumc $(BUILD)/emuflow $(BUILD)/emuorder $(BUILD)/rblbench: $(BUILD)/%: tests/tools/%.c $(BUILD)/libibsmd.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libibsmd.a $(LDLIBS)

# Unit tests: each tests/unit/test_X.c is linked twice, plain and with ASan+UBSan.
$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/libibsmd.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libibsmd.a $(LDLIBS) $(shell pkg-config --libs check)
$(BUILD)/unit-san/%: tests/unit/%.c $(BUILD)/libibsmd-san.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $< $(BUILD)/libibsmd-san.a $(LDLIBS) $(shell pkg-config --libs check)

# Every unit test runs twice, plain and under ASan+UBSan, two runs per core:
# the emulator tests mostly wait on timers (43 s of CPU in 134 s one after
# another; 37 s four at a time on 2 cores).  -O keeps each run's output
# together; every test makes its own temporary dirs.
unit: $(UNIT_TESTS:%=$(BUILD)/unit/%) $(UNIT_TESTS:%=$(BUILD)/unit-san/%)
	@$(MAKE) --no-print-directory -j$$(( $(NPROC) * 2 )) -O unit-runs

unit-runs: $(foreach t,$(UNIT_TESTS),unit-san-run/$(t) unit-run/$(t))

unit-run/%: $(BUILD)/unit/%
	@echo "== unit $*"; CK_FORK=yes $(BUILD)/unit/$*

unit-san-run/%: $(BUILD)/unit-san/%
	@echo "== unit $* (asan+ubsan)"; CK_FORK=yes ASAN_OPTIONS=detect_leaks=1 $(BUILD)/unit-san/$*

# libFuzzer on the PerfMgt decoders (tests/fuzz/fuzz_pma.c), FUZZ_SECONDS
# (30) of it; needs clang (Debian clang, its libFuzzer runtime); not part of
# check, where tests/unit/test_pma.c runs a fixed seeded share of the same.
FUZZ_SECONDS ?= 30
$(BUILD)/fuzz_pma: tests/fuzz/fuzz_pma.c mad/pma.c mad/pma.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(PKG_CFLAGS) -I. -o $@ tests/fuzz/fuzz_pma.c \
		mad/pma.c $(shell pkg-config --libs libibmad libibumad)
# fuzz_mkey: the M_Key rules (mad/mkey.c) over PortInfo's M_Key fields and
# a sequence of SMPs; test_mkey.c runs a seeded share of it in check.
$(BUILD)/fuzz_mkey: tests/fuzz/fuzz_mkey.c mad/mkey.c mad/mkey.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -I. -o $@ tests/fuzz/fuzz_mkey.c mad/mkey.c
fuzz: $(BUILD)/fuzz_pma $(BUILD)/fuzz_mkey
	$(BUILD)/fuzz_pma -max_total_time=$(FUZZ_SECONDS) -max_len=258 -print_final_stats=1
	$(BUILD)/fuzz_mkey -max_total_time=$(FUZZ_SECONDS) -max_len=320 -print_final_stats=1

sim: all $(BUILD)/ibsmd-asan
	tests/sim/run-all.sh

deps:
	@tests/deps.sh

# The build in parallel (every core), the unit tests several at a time, the
# sim tests a core's worth at a time (tests/sim/run-all.sh; SIM_JOBS=1: one by one).
NPROC := $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) -j$(NPROC) all $(BUILD)/ibsmd-asan $(UNIT_TESTS:%=$(BUILD)/unit/%) \
		$(UNIT_TESTS:%=$(BUILD)/unit-san/%)
	$(MAKE) structure
	$(MAKE) unit
	$(MAKE) sim

# The shape of the tree (ARCHITECTURE.md): the include rules, ibsmctl a
# thin client, and hubs bounded by the figures of the tree they were set
# on, so that none grows back; and the paths the documents name exist.
HUB_BOUNDS := --max-cycle 5 --max-fields 47 --max-users 29
structure: all
	python3 tests/structure/layers.py
	python3 tests/structure/comments.py
	python3 tests/structure/thinctl.py $(BUILD)
	python3 tests/structure/hubs.py $(BUILD)/obj $(HUB_BOUNDS)
	python3 tests/structure/unused.py $(BUILD)/obj
	python3 tests/structure/docpaths.py

demo: deps
	$(MAKE) all
	tests/demo.sh

bench: deps
	$(MAKE) all
	tests/bench.sh

# Where `make install` puts things; DESTDIR stages them (packaging).
BINDIR     = $(PREFIX)/bin
SBINDIR    = $(PREFIX)/sbin
LIBEXECDIR = $(PREFIX)/libexec
MANDIR     = $(PREFIX)/share/man
UNITDIR    = $(PREFIX)/lib/systemd/system
# The control group (control.group in etc/ibsmd.yaml): systemd-sysusers
# reads /usr/local/lib/sysusers.d too; the Debian package runs it.
SYSUSERSDIR = $(PREFIX)/lib/sysusers.d
SYSCONFDIR = /etc
# bash-completion's directory for completions loaded on demand
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
MAN8       := ibsmd.8 ibsmctl.8 ibsm-listen.8 ibsmd-prolog.8
INSTALLED  = $(SBINDIR)/ibsmd $(BINDIR)/ibsmctl $(BINDIR)/ibsm-listen \
	$(MAN8:%=$(MANDIR)/man8/%) $(MANDIR)/man5/ibsmd.yaml.5 \
	$(SYSCONFDIR)/ibsmd/ibsmd.yaml.example $(SYSCONFDIR)/ibsmd/ibsm-lanes.sh.example \
	$(UNITDIR)/ibsmd.service $(UNITDIR)/ibsmd@.service $(SLURM_SCRIPTS:%=$(LIBEXECDIR)/ibsmd/%) \
	$(SYSCONFDIR)/ibsmd/slurm.conf.ibsmd $(SYSUSERSDIR)/ibsmd.conf \
	$(BASHCOMPDIR)/ibsmctl $(SYSCONFDIR)/logrotate.d/ibsmd
INSTALL_DIRS = $(SBINDIR) $(BINDIR) $(MANDIR)/man8 $(MANDIR)/man5 \
	$(SYSCONFDIR)/ibsmd $(UNITDIR) $(LIBEXECDIR)/ibsmd $(SYSUSERSDIR) $(BASHCOMPDIR) \
	$(SYSCONFDIR)/logrotate.d
# Slurm's PrologSlurmctld and EpilogSlurmctld: one script, the epilog a
# link to the prolog (it acts on the name it is run by)
SLURM_SCRIPTS := ibsmd-prolog ibsmd-epilog

# ibsmd.service and ibsmd@.service (one per local port, the instance its
# name: ibsmd --instance) from one source
UNIT_SED = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g'

install: $(PROGRAMS)
	install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS))
	install -m 755 $(BUILD)/ibsmd $(DESTDIR)$(SBINDIR)/ibsmd
	install -m 755 $(BUILD)/ibsmctl $(BUILD)/ibsm-listen $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN8:%=man/%) $(DESTDIR)$(MANDIR)/man8/
	install -m 644 man/ibsmd.yaml.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 etc/ibsmd.yaml $(DESTDIR)$(SYSCONFDIR)/ibsmd/ibsmd.yaml.example
	install -m 755 etc/ibsm-lanes.sh $(DESTDIR)$(SYSCONFDIR)/ibsmd/ibsm-lanes.sh.example
	$(UNIT_SED) -e 's|@INSTANCE_[A-Z]*@||g' etc/ibsmd.service.in \
		> $(DESTDIR)$(UNITDIR)/ibsmd.service
	$(UNIT_SED) -e 's|@INSTANCE_DESC@| on port %i|' -e 's|@INSTANCE_OPT@| --instance %i|' \
		-e 's|@INSTANCE_SOCKET@| -s /run/ibsmd/%i.sock|' -e 's|@INSTANCE_STATE@|/%i|' \
		etc/ibsmd.service.in > $(DESTDIR)$(UNITDIR)/ibsmd@.service
	chmod 644 $(DESTDIR)$(UNITDIR)/ibsmd.service $(DESTDIR)$(UNITDIR)/ibsmd@.service
	install -m 644 etc/ibsmd.sysusers $(DESTDIR)$(SYSUSERSDIR)/ibsmd.conf
	install -m 755 etc/slurm/ibsmd-prolog $(DESTDIR)$(LIBEXECDIR)/ibsmd/ibsmd-prolog
	ln -sf ibsmd-prolog $(DESTDIR)$(LIBEXECDIR)/ibsmd/ibsmd-epilog
	sed -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' etc/slurm/slurm.conf.ibsmd \
		> $(DESTDIR)$(SYSCONFDIR)/ibsmd/slurm.conf.ibsmd
	chmod 644 $(DESTDIR)$(SYSCONFDIR)/ibsmd/slurm.conf.ibsmd
	install -m 644 etc/ibsmctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/ibsmctl
	install -m 644 etc/ibsmd.logrotate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/ibsmd

# Removes what install put there, and /etc/ibsmd when empty (a policy the
# operator wrote stays).  Under DESTDIR also the directories install made,
# once empty, up to DESTDIR: a staging tree is left as it was.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(SYSCONFDIR)/ibsmd 2>/dev/null
	-rmdir $(DESTDIR)$(SYSCONFDIR)/logrotate.d 2>/dev/null
	@if [ -n "$(DESTDIR)" ]; then for d in $(INSTALL_DIRS); do \
		while [ "$$d" != / ]; do rmdir "$(DESTDIR)$$d" 2>/dev/null; \
			[ -e "$(DESTDIR)$$d" ] && break; d=$$(dirname "$$d"); done; done; fi

# The .deb files (debian/) into build/pkg/, built from a copy of the files
# git tracks (as they are in the work tree: nothing untracked, no build/)
# by dpkg-buildpackage; no -dbgsym package.  debhelper: make deps.
PKG_OUT := $(BUILD)/pkg
package:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "make package: dpkg-buildpackage or debhelper missing (make deps installs them)" >&2; exit 1; }
	@git rev-parse --git-dir >/dev/null 2>&1 || \
		{ echo "make package: not a git work tree (the package is built from the tracked files)" >&2; exit 1; }
	rm -rf $(PKG_OUT) && mkdir -p $(PKG_OUT)/src
	git ls-files -z | tar -c --null -T - | tar -x -C $(PKG_OUT)/src
	cd $(PKG_OUT)/src && DEB_BUILD_OPTIONS="noautodbgsym parallel=$(NPROC)" \
		dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 30 ../build.log >&2; echo "make package: dpkg-buildpackage failed ($(PKG_OUT)/build.log)" >&2; exit 1; }
	rm -rf $(PKG_OUT)/src
	@ls $(PKG_OUT)/*.deb

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
