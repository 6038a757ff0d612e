# SPDX-License-Identifier: Apache-2.0
# cmdwarden build. Quiet by default; `make V=1` shows commands.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= gcc
PKGS     := jansson libseccomp sqlite3 libsodium libbpf libmicrohttpd
WERROR   ?= -Werror

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra $(WERROR) -Wno-format-truncation -D_GNU_SOURCE \
	    -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
	    $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
CPPFLAGS += -iquote userspace -iquote agent -iquote bpf
# libmicrohttpd: headers only; the HTTP transport loads it when it starts.
LDLIBS   += $(shell pkg-config --libs $(filter-out libmicrohttpd,$(PKGS)) 2>/dev/null) -lpthread -ldl
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=undefined
CLANG    ?= clang
BPFTOOL  ?= bpftool
BPF_ARCH ?= x86
# BPF objects: uapi headers only, no vmlinux.h, so they load without kernel BTF.
# clang -target bpf does not search the multiarch directory that holds
# <asm/types.h>: add the host compiler's system directories after its own.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) \
	     -Wall -Wextra $(WERROR) -I $(BUILD)/bpf -I bpf \
	     $(CLANG_BPF_SYS_INCLUDES)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

LIB_SRCS  := $(wildcard userspace/*.c)
LIB_ASM   := userspace/default_policy.S
AGENT_SRCS := $(wildcard agent/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
BENCH_SRCS := $(wildcard tests/bench/*.c)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/userspace/default_policy.o
ASAN_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/asan/%.o) $(BUILD)/obj/userspace/default_policy.o
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/obj/%.o)
# The agent's own modules, minus main, are linked into unit tests too.
AGENT_LIB_ASAN := $(filter-out $(BUILD)/asan/agent/main.o,$(AGENT_SRCS:%.c=$(BUILD)/asan/%.o))
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/bench/%)
E2E_BINS   := $(BUILD)/tests/sysprobe $(BUILD)/tests/x32call

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps deps-check check unit e2e vmtest demo bench tsan install uninstall clean

all: $(BUILD)/cmdwarden

$(BUILD)/obj/%.o: %.c $(wildcard userspace/*.h agent/*.h bpf/*.h) | deps-check
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c $(wildcard userspace/*.h agent/*.h bpf/*.h) | deps-check
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -c $< -o $@

# eBPF: bpf/X.bpf.c -> build/bpf/X.bpf.o -> build/bpf/X.skel.h, included by
# the userspace loader (userspace/bpfnet.c, userspace/trace.c).
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) | deps-check
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

BPFNET_OBJS := $(BUILD)/obj/userspace/bpfnet.o $(BUILD)/asan/userspace/bpfnet.o
$(BPFNET_OBJS): $(BUILD)/bpf/net.skel.h
$(BPFNET_OBJS): CPPFLAGS += -iquote $(BUILD)/bpf
TRACE_OBJS := $(BUILD)/obj/userspace/trace.o $(BUILD)/asan/userspace/trace.o
$(TRACE_OBJS): $(BUILD)/bpf/trace.skel.h
$(TRACE_OBJS): CPPFLAGS += -iquote $(BUILD)/bpf

$(BUILD)/obj/userspace/default_policy.o: userspace/default_policy.S policies/e2b-run-command.json
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -DCW_DEFAULT_POLICY='"$(CURDIR)/policies/e2b-run-command.json"' -c $< -o $@

$(BUILD)/cmdwarden: $(AGENT_OBJS) $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(ASAN_OBJS) $(AGENT_LIB_ASAN) tests/unit/unit.h
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -iquote tests/unit $< \
		$(ASAN_OBJS) $(AGENT_LIB_ASAN) -o $@ $(LDLIBS) -lcmocka -lcrypto

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

# Installs what build and tests need, only when something is missing.
deps:
	$(Q)scripts/deps.sh install

deps-check:
	$(Q)scripts/deps.sh ensure

unit: $(UNIT_BINS)
	$(Q)tests/run.sh unit $(UNIT_BINS)

e2e: all $(E2E_BINS)
	$(Q)tests/run.sh e2e

check: deps-check all $(UNIT_BINS) $(E2E_BINS)
	$(Q)tests/run.sh all $(UNIT_BINS)

# The e2e suite in a VM on Debian's 6.1 kernel, as is and E2B-shaped
# (tests/vm/vmtest.sh).
vmtest: deps-check all $(E2E_BINS)
	$(Q)scripts/deps.sh ensure vm
	$(Q)tests/vm/vmtest.sh $(BUILD)

demo: deps-check all
	$(Q)tests/demo.sh $(BUILD)/cmdwarden

bench: deps-check all $(BENCH_BINS) $(E2E_BINS)
	$(Q)tests/bench/run.sh $(BUILD)

# The agent built with ThreadSanitizer, driven through the tests of
# concurrent calls, approvals and commands; any race report fails it.
tsan: deps-check $(E2E_BINS)
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
