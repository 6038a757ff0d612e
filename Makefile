# SPDX-License-Identifier: Apache-2.0
# cmdwarden build. Quiet by default; `make V=1` shows commands.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= gcc
PKGS     := jansson libseccomp sqlite3 libsodium libbpf libmicrohttpd
WERROR   ?= -Werror

# The dependency check runs once per make invocation, before anything is
# built, and not for the targets that need no build (its output goes to
# stderr, so it shows). Sub-makes inherit CW_DEPS_CHECKED and skip it.
NO_DEPS_GOALS := clean deps uninstall
ifneq ($(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
ifndef CW_DEPS_CHECKED
$(shell scripts/deps.sh ensure 1>&2)
ifneq ($(.SHELLSTATUS),0)
$(error scripts/deps.sh ensure failed: the build's packages are missing; run 'make deps' as root)
endif
export CW_DEPS_CHECKED := 1
endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libmicrohttpd: headers only; the HTTP transport loads it when it starts.
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libmicrohttpd,$(PKGS)) 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra $(WERROR) -Wno-format-truncation -D_GNU_SOURCE \
	    -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(PKG_CFLAGS)
# Includes are path-qualified from a top folder: "kernel/cgroup.h",
# "server/mcp.h", "bpf/net.h", and the generated "bpf/net.skel.h".
CPPFLAGS += -iquote userspace -iquote agent -iquote . -iquote $(BUILD)
DEPFLAGS  = -MMD -MP
LDLIBS   += $(PKG_LIBS) -lpthread -ldl
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=undefined
CLANG    ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL  ?= bpftool
BPF_ARCH ?= x86
# BPF objects: uapi headers only, no vmlinux.h, so they load without kernel BTF.
# clang -target bpf does not search the multiarch directory that holds
# <asm/types.h>: add the host compiler's system directories after its own.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) \
	     -Wall -Wextra $(WERROR) -I bpf $(CLANG_BPF_SYS_INCLUDES)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Sources are found by folder: a new file in one of them needs no Makefile line.
LIB_SRCS   := $(wildcard userspace/*/*.c)
AGENT_SRCS := $(wildcard agent/*.c agent/*/*.c)
UNIT_SRCS  := $(wildcard tests/unit/*/test_*.c)
BENCH_SRCS := $(wildcard tests/bench/*.c)
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/userspace/policy/default_policy.o
ASAN_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/asan/%.o) $(BUILD)/obj/userspace/policy/default_policy.o
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/obj/%.o)
# The agent's own modules, minus main, are linked into unit tests too.
AGENT_LIB_ASAN := $(filter-out $(BUILD)/asan/agent/main.o,$(AGENT_SRCS:%.c=$(BUILD)/asan/%.o))
UNIT_BINS  := $(foreach t,$(UNIT_SRCS),$(BUILD)/tests/$(basename $(notdir $(t))))
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/bench/%)
E2E_BINS   := $(BUILD)/tests/sysprobe $(BUILD)/tests/x32call

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps check unit e2e vmtest demo bench tsan install uninstall clean

all: $(BUILD)/cmdwarden

# Every C object waits for the BPF skeletons (a loader includes one); after
# the first build, -MMD's dependency files say which object needs which.
$(BUILD)/obj/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c | $(SKELS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(DEPFLAGS) -c $< -o $@

# eBPF: bpf/X.bpf.c -> build/bpf/X.bpf.o (DWARF stripped; BTF kept) ->
# build/bpf/X.skel.h, included by the loader in userspace/kernel/.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/obj/userspace/policy/default_policy.o: userspace/policy/default_policy.S policies/e2b-run-command.json
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -DCW_DEFAULT_POLICY='"$(CURDIR)/policies/e2b-run-command.json"' -c $< -o $@

$(BUILD)/cmdwarden: $(AGENT_OBJS) $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Unit tests: tests/unit/FOLDER/test_X.c -> build/tests/test_X.
define unit_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(1) $(ASAN_OBJS) $(AGENT_LIB_ASAN) tests/unit/unit.h
	$$(call msg,CC-TEST,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(SANFLAGS) $$(DEPFLAGS) -MF $$@.d -iquote tests/unit $$< \
		$$(ASAN_OBJS) $$(AGENT_LIB_ASAN) -o $$@ $$(LDLIBS) -lcmocka -lcrypto
endef
$(foreach t,$(UNIT_SRCS),$(eval $(call unit_rule,$(t))))

$(BUILD)/bench/%: tests/bench/%.c $(LIB_OBJS) $(filter-out $(BUILD)/obj/agent/main.o,$(AGENT_OBJS))
	$(call msg,CC-BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/sysprobe: tests/e2e/sysprobe.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/x32call: tests/e2e/x32call.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# Header dependencies the compiler wrote (-MMD), where objects are built.
-include $(shell find $(addprefix $(BUILD)/,obj asan bpf tests bench) -name '*.d' 2>/dev/null)

# Installs what build and tests need, only when something is missing.
deps:
	$(Q)scripts/deps.sh install

unit: $(UNIT_BINS)
	$(Q)tests/run.sh unit $(UNIT_BINS)

e2e: all $(E2E_BINS)
	$(Q)tests/run.sh e2e

check: all $(UNIT_BINS) $(E2E_BINS)
	$(Q)tests/run.sh all $(UNIT_BINS)

# The e2e suite in a VM on Debian's 6.1 kernel, as is and E2B-shaped
# (tests/vm/vmtest.sh).
vmtest: all $(E2E_BINS)
	$(Q)scripts/deps.sh ensure vm
	$(Q)tests/vm/vmtest.sh $(BUILD)

demo: all
	$(Q)tests/demo.sh $(BUILD)/cmdwarden

bench: all $(BENCH_BINS) $(E2E_BINS)
	$(Q)tests/bench/run.sh $(BUILD)

# The agent built with ThreadSanitizer, driven through the tests of
# concurrent calls, approvals and commands; any race report fails it.
tsan: $(E2E_BINS)
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan CC="$(CC) -fsanitize=thread" $(BUILD)/tsan/cmdwarden
	$(Q)tests/tsan.sh $(BUILD)/tsan/cmdwarden

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/cmdwarden/policies
	install -m 0755 $(BUILD)/cmdwarden $(DESTDIR)$(PREFIX)/bin/cmdwarden
	install -m 0644 policies/*.json $(DESTDIR)$(PREFIX)/share/cmdwarden/policies/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cmdwarden
	rm -rf $(DESTDIR)$(PREFIX)/share/cmdwarden

clean:
	rm -rf $(BUILD)
