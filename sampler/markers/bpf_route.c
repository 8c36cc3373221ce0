/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_route.c: the BPF route for marker hits: the per-CPU slot regions and the doorbell ring, one loaded
 * program per marker location, attached by a uprobe_multi link or to the location's uprobe event
 * (PERF_EVENT_IOC_SET_BPF), and the read of the slots. */
#include "sampler/markers/bpf_route.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_slots.h"
#include "sampler/bpf/bpf_sys.h"

struct marker_bpf {
    pid_t tgid;
    struct bpf_slots slots;            /* a region per possible CPU */
    struct bpf_ring doorbell;          /* one record per eighth of a region: wakes the reader */
    int return_flag_fd;                /* a one-entry array: its u32 set, BPF_RETURN_WHEN_FLAGGED programs read */
};

int marker_bpf_open(struct marker_bpf **out, pid_t tgid, unsigned slot_bits, char *err, size_t errlen)
{
    *out = NULL;
    struct marker_bpf *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->tgid = tgid;
    b->slots.map_fd = -1;
    b->doorbell.map_fd = -1;
    b->return_flag_fd = -1;
    /* A region for every CPU number a program can run on (glibc counts /sys/devices/system/cpu/possible) */
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    size_t n = cpus > 0 ? (size_t)cpus : 1;
    /* The largest regions: 32768 hits per CPU, 180 ms at 180,000 hits per second, so a reader busy with
     * something else for a while still finds them all (the doorbell rings every 4096). */
    unsigned bits = slot_bits ? slot_bits : BPF_SLOTS_MAX_BITS;
    long page = sysconf(_SC_PAGESIZE);
    const char *what = "slot regions";
    if (bpf_slots_create(&b->slots, n, bits) != 0 ||
        (what = "doorbell ring", bpf_ring_create(&b->doorbell, page > 0 ? (size_t)page : 4096) != 0) ||
        (what = "return-read flag", (b->return_flag_fd = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0)) < 0)) {
        int saved = errno;
        snprintf(err, errlen, "cannot create the BPF %s: %s", what, strerror(saved));
        marker_bpf_close(b);
        errno = saved;
        return -1;
    }
    *out = b;
    return 0;
}

void marker_bpf_program_spec(const struct marker_bpf *b, uint32_t location, const struct usdt_arg *arg0,
                             enum bpf_return_read return_read, struct bpf_marker_program_spec *spec)
{
    *spec = (struct bpf_marker_program_spec){
        .arg0 = arg0, .location = location, .tgid = (uint32_t)b->tgid, .slots_fd = b->slots.map_fd,
        .slot_bits = b->slots.bits, .doorbell_fd = b->doorbell.map_fd, .return_read = return_read,
        .return_flag_fd = b->return_flag_fd,
    };
}

int marker_bpf_read_returns(struct marker_bpf *b)
{
    uint32_t key = 0, on = 1;
    return bpf_sys_map_update(b->return_flag_fd, &key, &on);
}

/* Build and load the location's program. Returns its fd (the caller closes it once it is attached: the link
 * or event then holds the program), or -1 with a reason in err. */
static int load_program(struct marker_bpf *b, uint32_t location, const struct usdt_arg *arg0,
                        enum bpf_return_read return_read, bool uprobe_multi, char *err, size_t errlen)
{
    struct bpf_insn insns[BPF_MARKER_PROGRAM_MAX];
    struct bpf_marker_program_spec spec;
    marker_bpf_program_spec(b, location, arg0, return_read, &spec);
    int n = bpf_marker_program(&spec, insns, BPF_MARKER_PROGRAM_MAX);
    if (n < 0) {
        snprintf(err, errlen, "argument out of a BPF program's reach");
        errno = EINVAL;
        return -1;
    }
    char log[4096];
    int prog = bpf_sys_prog_load_probe(insns, (size_t)n, uprobe_multi, log, sizeof(log));
    if (prog < 0) {
        int saved = errno;
        bpf_sys_refusal(log, saved, err, errlen);
        errno = saved;
        return -1;
    }
    return prog;
}

int marker_bpf_attach_uprobe(struct marker_bpf *b, const char *path, uint64_t offset, uint64_t ref_ctr_offset,
                             bool retprobe, uint32_t location, const struct usdt_arg *arg0,
                             enum bpf_return_read return_read, char *err, size_t errlen)
{
    int prog = load_program(b, location, arg0, return_read, true, err, errlen);
    if (prog < 0)
        return -1;
    int link = bpf_sys_uprobe_link(prog, path, offset, ref_ctr_offset, retprobe, b->tgid);
    int saved = errno;
    close(prog);
    if (link < 0) {
        snprintf(err, errlen, "cannot create a uprobe_multi link: %s", strerror(saved));
        errno = saved;
        return -1;
    }
    return link;
}

int marker_bpf_attach_event(struct marker_bpf *b, int event_fd, uint32_t location, const struct usdt_arg *arg0,
                            enum bpf_return_read return_read, char *err, size_t errlen)
{
    int prog = load_program(b, location, arg0, return_read, false, err, errlen);
    if (prog < 0)
        return -1;
    int rc = ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, prog);
    int saved = errno;
    close(prog);
    if (rc != 0) {
        snprintf(err, errlen, "cannot attach a BPF program to the marker's event: %s", strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}

int marker_bpf_wake_fd(const struct marker_bpf *b)
{
    return b->doorbell.map_fd;
}

uint64_t marker_bpf_region_slots(const struct marker_bpf *b)
{
    return (uint64_t)1 << b->slots.bits;
}

static void ignore_record(void *ctx, const void *data, uint32_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
}

size_t marker_bpf_read(struct marker_bpf *b, bpf_slots_fn fn, void *ctx, struct bpf_slots_loss *loss)
{
    /* The doorbell first: one that rings while the regions are read then wakes the next read. */
    bpf_ring_consume(&b->doorbell, ignore_record, NULL);
    return bpf_slots_read(&b->slots, fn, ctx, loss);
}

void marker_bpf_skip_overrun(struct marker_bpf *b)
{
    bpf_slots_skip_overrun(&b->slots);
}

void marker_bpf_close(struct marker_bpf *b)
{
    if (!b)
        return;
    bpf_ring_destroy(&b->doorbell);
    bpf_slots_destroy(&b->slots);
    if (b->return_flag_fd >= 0)
        close(b->return_flag_fd);
    free(b);
}
