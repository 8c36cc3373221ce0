/* bpf_sys.c: thin wrappers over the bpf(2) system call for maps and probe programs. */
#include "sampler/bpf_sys.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int bpf_call(int cmd, union bpf_attr *attr)
{
    return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int bpf_sys_map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size, uint32_t max_entries)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = type;
    a.key_size = key_size;
    a.value_size = value_size;
    a.max_entries = max_entries;
    return bpf_call(BPF_MAP_CREATE, &a);
}

int bpf_sys_map_create_array_of_maps(uint32_t max_entries, int inner_fd)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
    a.key_size = 4;
    a.value_size = 4;
    a.max_entries = max_entries;
    a.inner_map_fd = (uint32_t)inner_fd;
    return bpf_call(BPF_MAP_CREATE, &a);
}

static int prog_load(const struct bpf_insn *insns, size_t n, char *log, size_t logsz)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_KPROBE;
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

int bpf_sys_prog_load_probe(const struct bpf_insn *insns, size_t n, char *log, size_t logsz)
{
    /* Without a log first: a log too small for the verifier's account fails even a good program (ENOSPC). */
    int fd = prog_load(insns, n, NULL, 0);
    if (fd < 0 && log && logsz > 1) {
        int saved = errno;
        log[0] = '\0';
        int again = prog_load(insns, n, log, logsz);
        if (again >= 0) {                 /* accepted the second time: no reason to give, and no fd kept */
            close(again);
            log[0] = '\0';
        }
        errno = saved;
    }
    return fd;
}

int bpf_sys_map_lookup(int map_fd, const void *key, void *value)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)map_fd;
    a.key = (uint64_t)(uintptr_t)key;
    a.value = (uint64_t)(uintptr_t)value;
    return bpf_call(BPF_MAP_LOOKUP_ELEM, &a);
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
