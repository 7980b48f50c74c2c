# fleetsim: one non-recursive Makefile. Objects go to $(BUILD)/, mirroring the
# source folders. `make help` lists the targets.

BUILD ?= build
CC ?= cc
OPT ?= -O2
# Link-time optimization: the programs are optimized across files, as the
# policies' profile, promises and backfilling, and the host that calls them,
# lie in files of their own. HPC2N's whole replay (callgrind) 6.30 -> 5.91 G
# instructions under conservative backfilling, 1.82 -> 1.75 G under EASY; a
# clean build of the programs and unit tests 31 -> 51 s on 2 cores. LTO=
# builds without (make asan does).
LTO ?= -flto=auto
SAN ?=
PKGS := gsl yaml-0.1 jansson zlib libisal

# Debian packages the build and the tests need; `make deps` installs the missing ones.
DEBIAN_PKGS := gcc make pkg-config libgsl-dev libyaml-dev libjansson-dev zlib1g-dev libisal-dev python3 gzip \
               libsqlite3-dev prometheus util-linux gnuplot-nox chromium fonts-dejavu-core \
               slurmctld slurmd slurm-client munge

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wformat=2 -Wvla -Wundef -Wno-unused-parameter
# -ffp-contract=off: no FMA contraction, so outputs are bit-identical across builds.
# -pthread: the policy host's watchdog, and the SWF reader reads big logs in parallel.
CFLAGS = -std=c11 $(OPT) $(LTO) -g -pthread -ffp-contract=off -fno-strict-aliasing $(WARN) $(SAN) \
         $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
CPPFLAGS = -I. -D_POSIX_C_SOURCE=200809L -DFLEETSIM_VERSION_STRING='"$(VERSION)"' -MMD -MP
# GSL, libyaml, jansson and zlib are linked statically when their archives
# are installed (Debian's -dev packages ship them): loading and relocating
# them cost every run 2.5 ms of its start (`fleetsim --version` 7.5 -> 4.6 ms
# of CPU, `perf stat -r 200`; a test suite starts thousands of runs, and
# HPC2N's whole replay is 0.12 s). ISA-L ships no archive; libc, libm and
# libdl stay shared, since plugins are dlopen'd. STATIC_DEPS=0 links all
# shared. The programs depend on the archives (an update of one relinks
# them) and on LINK_STAMP, which holds the libraries named and the link
# flags (a change of STATIC_DEPS, LTO or SAN relinks them).
STATIC_DEPS ?= 1
STATIC_PKGS := gsl yaml-0.1 jansson zlib
STATIC_ARCHIVES := gsl gslcblas yaml jansson z
STATIC_ARCHIVE_FILES := $(shell for l in $(STATIC_ARCHIVES); do \
                          f=$$($(CC) -print-file-name=lib$$l.a 2>/dev/null); [ -f "$$f" ] && echo "$$f"; done)
ifeq ($(STATIC_DEPS) $(words $(STATIC_ARCHIVE_FILES)),1 $(words $(STATIC_ARCHIVES)))
LDLIBS = -Wl,-Bstatic $(filter-out -lm,$(shell pkg-config --libs $(STATIC_PKGS) 2>/dev/null)) -Wl,-Bdynamic \
         $(shell pkg-config --libs libisal 2>/dev/null) -lm -ldl -pthread
LINKED_ARCHIVES := $(STATIC_ARCHIVE_FILES)
else
LDLIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -ldl -pthread
LINKED_ARCHIVES :=
endif
LDFLAGS = $(SAN) $(LTO)
VERSION := 0.1.0

POLICY_SRC := $(wildcard policies/*.c)
CORE_SRC := $(wildcard sim/*.c models/*.c traces/*.c scenarios/*.c report/*.c)
CLI_SRC := $(wildcard cli/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

# The built-in node-type catalog, embedded as a C string so the binary needs
# no data files: each line of the YAML becomes one escaped string literal.
CATALOG_YAML := models/catalog/node-types.yaml
GEN_CATALOG_SRC := $(BUILD)/gen/node_types_yaml.c
GEN_CATALOG_OBJ := $(BUILD)/gen/node_types_yaml.o

POLICY_LIB := $(BUILD)/libfleetpolicies.a
CORE_LIB := $(BUILD)/libfleetcore.a
FLEETSIM := $(BUILD)/fleetsim
AGENT := $(BUILD)/fleetsim-agent
AGENT_UNIT := $(BUILD)/tests/agent_unit_tests
UNIT := $(BUILD)/tests/unit_tests
BENCH := $(BUILD)/tests/fleetsim-bench
# The policy contract suite (tests/policy/) and the plugins it loads: the
# example plugin users copy (policies/examples/) and test-only plugins.
CONTRACT := $(BUILD)/tests/policy_contract
CONTRACT_SRC := $(wildcard tests/policy/*.c)
CONTRACT_MAIN_SRC := $(filter-out tests/policy/plugin_%.c,$(CONTRACT_SRC))
PLUGINS := $(patsubst policies/examples/%.c,$(BUILD)/policies/examples/%.so,$(wildcard policies/examples/*.c)) \
           $(patsubst tests/policy/plugin_%.c,$(BUILD)/tests/policy/plugin_%.so,$(wildcard tests/policy/plugin_*.c))

.PHONY: all deps demo test unit asan check-layers check-seams bench fuzz clean help

all: $(FLEETSIM) $(AGENT) $(PLUGINS)

help:
	@echo "make            build $(FLEETSIM) and $(AGENT)"
	@echo "make deps       install missing Debian packages (root or sudo)"
	@echo "make demo       replay a bundled trace and print the summary"
	@echo "make test       build and run every test (unit, CLI, bad input, paper)"
	@echo "make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make bench      speed and memory figures (needs ../shared/traces)"
	@echo "make fuzz       run the libFuzzer targets for a while (needs clang)"
	@echo "make check-layers / check-seams   architecture checks (part of make test)"

deps:
	@missing=""; \
	for p in $(DEBIAN_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  if pkg-config --exists $(PKGS) 2>/dev/null; then exit 0; fi; \
	  echo "make deps: not a Debian system and missing:$$missing" >&2; exit 1; \
	fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; \
	else echo "make deps: missing Debian packages:$$missing" >&2; \
	  echo "make deps: run as root, or install them: apt-get install$$missing" >&2; exit 1; fi; \
	echo "make deps: installing$$missing" >&2; \
	$$SUDO apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# Objects depend on COMPILE_STAMP, which holds the compiler, its version
# and its flags: a build with other flags in the same folder (OPT, LTO, SAN)
# compiles every object again instead of linking old ones with new (GCC's
# LTO objects link only with the GCC that wrote them). The stamps are
# written as the Makefile is read, and only when they change (with $(file),
# no shell quoting), so `make -n` on a built tree lists nothing to do; the
# global flags are what they hold (the agent's objects add SQLite's).
COMPILE_STAMP := $(BUILD)/compile-flags
LINK_STAMP := $(BUILD)/link-libs
$(shell mkdir -p $(BUILD))
COMPILE_STAMP_TEXT := $(shell $(CC) --version 2>/dev/null | head -n 1) | $(CC) $(CPPFLAGS) $(CFLAGS)
ifneq ($(file <$(COMPILE_STAMP)),$(COMPILE_STAMP_TEXT))
$(file >$(COMPILE_STAMP),$(COMPILE_STAMP_TEXT))
endif
ifneq ($(file <$(LINK_STAMP)),$(LDFLAGS) $(LDLIBS))
$(file >$(LINK_STAMP),$(LDFLAGS) $(LDLIBS))
endif
$(COMPILE_STAMP) $(LINK_STAMP): ;

$(BUILD)/%.o: %.c $(COMPILE_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(POLICY_LIB): $(call obj,$(POLICY_SRC))
	@rm -f $@
	ar rcs $@ $^

# The seams check (tests/check_seams.sh) reads what the policy archive
# calls from its symbol tables; an LTO object's table leaves out the calls
# GCC knows as builtins (printf, exit, abort...), so under LTO the check
# reads a copy of the archive compiled without it.
ifeq ($(strip $(LTO)),)
SEAMS_LIB := $(POLICY_LIB)
else
SEAMS_LIB := $(BUILD)/seams/libfleetpolicies.a
$(BUILD)/seams/%.o: %.c $(COMPILE_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fno-lto -c $< -o $@
$(SEAMS_LIB): $(patsubst %.c,$(BUILD)/seams/%.o,$(POLICY_SRC))
	@rm -f $@
	ar rcs $@ $^
endif

# Character by character, because awks differ on backslashes in gsub
# replacements; '?' is escaped too: "??(" and friends are trigraphs under -std=c11.
$(GEN_CATALOG_SRC): $(CATALOG_YAML)
	@mkdir -p $(dir $@)
	@{ echo '/* generated from $(CATALOG_YAML) by the Makefile; do not edit */'; \
	  echo '#include "scenarios/catalog.h"'; \
	  echo 'const char scenario_builtin_catalog_yaml[] ='; \
	  awk '{ o = ""; for (i = 1; i <= length($$0); i++) { c = substr($$0, i, 1); \
	         if (c == "\\") c = "\\\\"; else if (c == "\"") c = "\\\""; \
	         else if (c == "?") c = "\\?"; else if (c == "\t") c = "\\t"; o = o c } \
	         printf "    \"%s\\n\"\n", o }' $<; \
	  echo '    "";'; \
	  echo 'const size_t scenario_builtin_catalog_yaml_len = sizeof scenario_builtin_catalog_yaml - 1;'; \
	} >$@.tmp && mv $@.tmp $@

$(GEN_CATALOG_OBJ): $(GEN_CATALOG_SRC) $(COMPILE_STAMP)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(CORE_LIB): $(call obj,$(CORE_SRC)) $(GEN_CATALOG_OBJ)
	@rm -f $@
	ar rcs $@ $^

LINK_INPUTS := $(LINK_STAMP) $(LINKED_ARCHIVES)

$(FLEETSIM): $(call obj,$(CLI_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LDLIBS)

$(UNIT): $(call obj,$(UNIT_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(UNIT_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LDLIBS)

$(CONTRACT): $(call obj,$(CONTRACT_MAIN_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CONTRACT_MAIN_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LDLIBS)

# A plugin is built against policies/policy.h alone, as a user would build
# one: without the sanitizers (a sanitized plugin would turn the crash the
# tests provoke into a sanitizer exit before the host's guard sees it).
PLUGIN_CFLAGS = $(filter-out $(SAN),$(CFLAGS))
$(BUILD)/policies/examples/%.so: policies/examples/%.c policies/policy.h
	@mkdir -p $(dir $@)
	$(CC) -I. $(PLUGIN_CFLAGS) -fPIC -shared $< -o $@
$(BUILD)/tests/policy/plugin_%.so: tests/policy/plugin_%.c policies/policy.h
	@mkdir -p $(dir $@)
	$(CC) -I. $(PLUGIN_CFLAGS) -fPIC -shared $< -o $@

$(BENCH): $(call obj,$(BENCH_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(BENCH_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LDLIBS)

# A report written from synthetic numbers, for tests/report/run.sh.
REPORT_FIXTURE := $(BUILD)/tests/report_fixture
$(REPORT_FIXTURE): $(BUILD)/tests/report/report_fixture.o $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $< $(CORE_LIB) $(POLICY_LIB) $(LDLIBS)

# fleetsim-agent (agent/): the live agent. It links the same policy archive as
# fleetsim, plus SQLite (its state store) and libdl (NVML and policy plugins
# are loaded with dlopen). Its unit tests live in tests/agent/.
AGENT_SRC := $(wildcard agent/*.c)
AGENT_LIB_OBJ := $(call obj,$(filter-out agent/main.c,$(AGENT_SRC)))
AGENT_UNIT_SRC := $(wildcard tests/agent/*.c)
AGENT_LDLIBS = $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3) -ldl
$(call obj,$(AGENT_SRC) $(AGENT_UNIT_SRC)): CFLAGS += $(shell pkg-config --cflags sqlite3 2>/dev/null)

$(AGENT): $(call obj,$(AGENT_SRC)) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(AGENT_SRC)) $(CORE_LIB) $(POLICY_LIB) $(AGENT_LDLIBS) $(LDLIBS)

$(AGENT_UNIT): $(call obj,$(AGENT_UNIT_SRC) tests/unit/test_harness.c) $(AGENT_LIB_OBJ) $(CORE_LIB) $(POLICY_LIB) $(LINK_INPUTS)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(AGENT_UNIT_SRC) tests/unit/test_harness.c) $(AGENT_LIB_OBJ) $(CORE_LIB) $(POLICY_LIB) \
	  $(AGENT_LDLIBS) $(LDLIBS)

demo: deps
	@$(MAKE) --no-print-directory $(FLEETSIM)
	$(FLEETSIM) forecast --report build/demo-report scenarios/examples/quarterly.yaml
	@echo "open build/demo-report/index.html; try: $(FLEETSIM) plan scenarios/examples/quarterly.yaml"

unit: $(UNIT)
	$(UNIT)

test: deps
	@$(MAKE) --no-print-directory $(FLEETSIM) $(UNIT) $(AGENT) $(AGENT_UNIT) $(REPORT_FIXTURE) $(CONTRACT) $(PLUGINS) \
	  $(SEAMS_LIB)
	@BUILD=$(BUILD) SAN="$(SAN)" SEAMS_LIB=$(SEAMS_LIB) sh tests/run.sh

asan:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 LTO= \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test

check-layers:
	@sh tests/check_layers.sh

check-seams: $(SEAMS_LIB)
	@sh tests/check_seams.sh $(SEAMS_LIB)

bench: deps
	@$(MAKE) --no-print-directory $(FLEETSIM) $(BENCH) $(AGENT) $(PLUGINS)
	@BUILD=$(BUILD) sh tests/bench/run.sh

FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
# The library code is compiled once with clang's instrumentation into
# build/fuzz/obj/ (fuzzer-no-link: coverage only) and linked into every target;
# with it, the agent modules that read what clients send (the request
# protocol, the HTTP listener's parser, buffers) for fuzz_agent_request.
FUZZ_CFLAGS = -std=c11 -g -O1 -pthread -I. -D_POSIX_C_SOURCE=200809L -DFLEETSIM_VERSION_STRING='"$(VERSION)"' \
  $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZ_AGENT_SRC := agent/api.c agent/http.c agent/buf.c
FUZZ_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(CORE_SRC) $(POLICY_SRC) $(FUZZ_AGENT_SRC)) build/fuzz/obj/gen/node_types_yaml.o
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -MMD -MP -c $< -o $@
build/fuzz/obj/gen/node_types_yaml.o: $(GEN_CATALOG_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -c $< -o $@
build/fuzz/libfuzzcore.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
# tests/unit/reader_case.c: fuzz_swf compares two reads with it.
build/fuzz/%: tests/fuzz/%.c tests/unit/reader_case.c build/fuzz/libfuzzcore.a
	@mkdir -p build/fuzz
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< tests/unit/reader_case.c \
	  build/fuzz/libfuzzcore.a -o $@ $(LDLIBS)

# Each target runs FUZZ_SECONDS from its seeds (tests/fuzz/seeds/NAME) and
# the corpus it grew before (build/fuzz/corpus-NAME); a crash stops the run
# and leaves its input in build/fuzz/ (keep it as a regression seed).
fuzz: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
	  name=$$(basename $$t); mkdir -p build/fuzz/corpus-$$name tests/fuzz/seeds/$$name; \
	  echo "fuzzing $$name for $(FUZZ_SECONDS) s" >&2; \
	  $$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/$$name- build/fuzz/corpus-$$name tests/fuzz/seeds/$$name || exit 1; \
	done

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
