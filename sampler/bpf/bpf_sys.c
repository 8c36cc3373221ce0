/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_sys.c: thin wrappers over the bpf(2) system call for maps and probe programs. */
#include "sampler/bpf/bpf_sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int bpf_call(int cmd, union bpf_attr *attr)
{
    return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int bpf_sys_map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                       uint32_t flags)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = type;
    a.key_size = key_size;
    a.value_size = value_size;
    a.max_entries = max_entries;
    a.map_flags = flags;
    return bpf_call(BPF_MAP_CREATE, &a);
}

int bpf_sys_map_update(int map_fd, const void *key, const void *value)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)map_fd;
    a.key = (uint64_t)(uintptr_t)key;
    a.value = (uint64_t)(uintptr_t)value;
    a.flags = BPF_ANY;
    return bpf_call(BPF_MAP_UPDATE_ELEM, &a);
}

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI (uapi since 6.6; the build's headers may be older) */
#define ATTACH_UPROBE_MULTI 48
#define UPROBE_MULTI_RETURN 1u

static int prog_load(enum bpf_prog_type type, const struct bpf_insn *insns, size_t n, bool uprobe_multi, char *log,
                     size_t logsz)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = type;
    a.expected_attach_type = uprobe_multi ? ATTACH_UPROBE_MULTI : 0;
    a.insns = (uint64_t)(uintptr_t)insns;
    a.insn_cnt = (uint32_t)n;
    /* bpf_probe_read_user (memory operands) is only offered to programs under a GPL-compatible license. */
    a.license = (uint64_t)(uintptr_t)"GPL";
    if (log) {
        a.log_buf = (uint64_t)(uintptr_t)log;
        a.log_size = (uint32_t)logsz;
        a.log_level = 1;
    }
    return bpf_call(BPF_PROG_LOAD, &a);
}

static int prog_load_logged(enum bpf_prog_type type, const struct bpf_insn *insns, size_t n, bool uprobe_multi,
                            char *log, size_t logsz)
{
    /* Without a log first: a log too small for the verifier's account fails even a good program (ENOSPC). */
    int fd = prog_load(type, insns, n, uprobe_multi, NULL, 0);
    if (fd < 0 && log && logsz > 1) {
        int saved = errno;
        log[0] = '\0';
        int again = prog_load(type, insns, n, uprobe_multi, log, logsz);
        if (again >= 0) {                 /* accepted the second time: no reason to give, and no fd kept */
            close(again);
            log[0] = '\0';
        }
        errno = saved;
    }
    return fd;
}

int bpf_sys_prog_load_probe(const struct bpf_insn *insns, size_t n, bool uprobe_multi, char *log, size_t logsz)
{
    return prog_load_logged(BPF_PROG_TYPE_KPROBE, insns, n, uprobe_multi, log, logsz);
}

int bpf_sys_prog_load_perf_event(const struct bpf_insn *insns, size_t n, char *log, size_t logsz)
{
    return prog_load_logged(BPF_PROG_TYPE_PERF_EVENT, insns, n, false, log, logsz);
}

void bpf_sys_refusal(char *log, int err_no, char *out, size_t len)
{
    /* the verifier's last line says why */
    size_t n = strlen(log);
    while (n && log[n - 1] == '\n')
        log[--n] = '\0';
    const char *why = strrchr(log, '\n');
    snprintf(out, len, "BPF program refused: %s%s%s", strerror(err_no), log[0] ? ": " : "", why ? why + 1 : log);
}

/* BPF_LINK_CREATE's attributes for a uprobe_multi link, as the uapi lays them out (kernel 6.6+). */
struct uprobe_multi_link_attr {
    uint32_t prog_fd, target_fd, attach_type, flags;
    uint64_t path, offsets, ref_ctr_offsets, cookies;
    uint32_t cnt, multi_flags, pid;
    uint32_t pad[9];                   /* zero: room up to the size of older kernels' union bpf_attr */
};

int bpf_sys_uprobe_link(int prog_fd, const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool retprobe,
                        pid_t pid)
{
    struct uprobe_multi_link_attr a;
    memset(&a, 0, sizeof(a));
    unsigned long off = (unsigned long)offset, ref = (unsigned long)ref_ctr_offset;
    a.prog_fd = (uint32_t)prog_fd;
    a.attach_type = ATTACH_UPROBE_MULTI;
    a.path = (uint64_t)(uintptr_t)path;
    a.offsets = (uint64_t)(uintptr_t)&off;
    a.ref_ctr_offsets = ref ? (uint64_t)(uintptr_t)&ref : 0;
    a.cnt = 1;
    a.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
    a.pid = (uint32_t)pid;
    return (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}
