/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_join.c: the TLS marker route (see tls_join.h): the marker found (tls_locate.h), the kernel offsets from BTF, the
 * ring and the program, and the join of ring records with samples. Records wait in a table keyed by
 * (tid, time); a sample whose record is not there yet reads the ring first (the program writes its record
 * before the kernel writes the sample, so a record is in the ring before its sample can be read). Records
 * whose sample never came (a sample lost to a full perf buffer) are dropped two seconds later. */
#include "sampler/markers/tls_join.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/u64_map.h"
#include "base/vec.h"
#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_sys.h"
#include "sampler/bpf/btf_offsets.h"
#include "sampler/bpf/sample_program.h"
#include "sampler/markers/header_join.h"
#include "sampler/markers/sample_time_check.h"
#include "sampler/markers/tls_locate.h"
#include "sampler/probes/tls_library.h"

#define RING_BYTES ((size_t)4 << 20)
#define STALE_NS 2000000000ull           /* a record this much older than the newest one lost its sample */
#define TIME_CHECK_NS 10000000ull        /* the sample's time and the program's clock differ by less */
#define PLACE_RETRY_NS 5000000ull         /* a library marker not placed yet: the link map read again after */
#define BUSY_TRIES 256                   /* ring reads while a record ahead of the sample's is being written */

struct tls_join {
    struct bpf_ring ring;
    int prog_fd;
    size_t attached;                             /* sampling events running the program */
    VEC_OF(struct bpf_sample_record) pending;   /* read, not joined yet (tid 0 once joined) */
    struct u64_map index;                        /* key_of(tid, time) -> pending.v[] */
    size_t joined_since_compact;
    uint64_t newest_ns;
    uint64_t last_probe_addr;                    /* of a poll probe that opened a poll the marker agrees with,
                                                    else the poll-start marker's address (below) */
    bool probe_ids_comparable;                   /* the probes' task ids are the marker's (not tokio's) */
    bool name_by_probes;                         /* else: samples named by the probes' ids, or polls by the
                                                    marker's (both through id_pairs) */
    /* The marker's task id and the probes' id for the same task, learnt from the samples both placed in a task,
     * keyed by the side looked up: with name_by_probes the marker's id -> the probes' (probes_name), else the
     * probes' id -> the marker's (tls_join_task_of_probe_id), learnt at the poll function the sample was in. */
    struct header_join id_pairs;
    struct u64_map seen;                         /* task ids the samples were in (for the status line) */
    bool uncounted;                              /* (none kept in seen) */
    uint64_t tasks_seen;
    /* The executable's poll-start USDT marker, not attached: where the poll wrapper is, to cut task stacks at
     * when no probe says it (its address once the executable is mapped). */
    uint64_t poll_marker_offset;                 /* file offset, 0: none */
    bool needs_poll_probes;                      /* several such markers: their probes name the poll frame */
    dev_t exe_dev;
    ino_t exe_ino;
    /* a marker in a library the target loads at start, placed once it has (place map entry 0) */
    int place_map_fd;
    bool placing;                                /* not placed yet */
    uint64_t next_place_ns;                      /* when to look at the link map again */
    pid_t tgid;
    char root[64];
    struct tls_join_stats stats;
};

void tls_join_split_spec(const char *spec, bool *tls, char *probes, size_t len)
{
    *tls = false;
    if (spec && strcmp(spec, "probes") == 0) {
        snprintf(probes, len, "auto");   /* the probe route alone */
        return;
    }
    if (!spec || strcmp(spec, "auto") == 0) {
        *tls = true;
        snprintf(probes, len, "auto");
        return;
    }
    size_t at = 0;
    probes[0] = '\0';
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 3 && strncmp(p, "tls", 3) == 0)
            *tls = true;
        else if (n > 0 && at + n + 2 < len)
            at += (size_t)snprintf(probes + at, len - at, "%s%.*s", at ? "," : "", (int)n, p);
        p += n + (p[n] == ',');
    }
    if (!probes[0])
        snprintf(probes, len, "none");
}

static uint64_t key_of(uint32_t tid, uint64_t time_ns)
{
    return time_ns ^ ((uint64_t)tid << 40) ^ ((uint64_t)tid >> 24);
}

/* The kernel offsets the program needs, from BTF. Returns 0, or -1 with a reason in err. */
static int kernel_offsets(struct bpf_sample_program_spec *spec, char *err, size_t errlen)
{
    struct btf_types btf;
    if (btf_types_load(&btf, "/sys/kernel/btf/vmlinux") != 0) {
        snprintf(err, errlen, "no kernel BTF (/sys/kernel/btf/vmlinux: %s)", strerror(errno));
        return -1;
    }
    uint32_t data, time, fsbase;
    int rc = btf_member_offset(&btf, "bpf_perf_event_data_kern", "data", &data) == 0 &&
                     btf_member_offset(&btf, "perf_sample_data", "time", &time) == 0 &&
                     btf_member_offset(&btf, "task_struct", "thread.fsbase", &fsbase) == 0 && data < 32768 &&
                     time < 32768 && fsbase < 32768
                 ? 0
                 : -1;
    btf_types_free(&btf);
    if (rc != 0) {
        snprintf(err, errlen, "the kernel's BTF lacks task_struct.thread.fsbase or perf_sample_data.time");
        return -1;
    }
    spec->off_ctx_data = (uint16_t)data;
    spec->off_data_time = (uint16_t)time;
    spec->off_task_fsbase = (uint16_t)fsbase;
    return sample_time_check(spec, err, errlen) == 1 ? 0 : -1;
}

static int load_program(struct tls_join *j, struct bpf_sample_program_spec *spec, char *err, size_t errlen)
{
    if (kernel_offsets(spec, err, errlen) != 0)
        return -1;
    struct bpf_insn insns[BPF_SAMPLE_PROGRAM_MAX];
    int n = bpf_sample_program(spec, insns, BPF_SAMPLE_PROGRAM_MAX);
    if (n < 0) {
        snprintf(err, errlen, "the sample program does not fit");
        return -1;
    }
    char log[4096] = "";
    j->prog_fd = bpf_sys_prog_load_perf_event(insns, (size_t)n, log, sizeof(log));
    if (j->prog_fd < 0) {
        bpf_sys_refusal(log, errno, err, errlen);
        return -1;
    }
    return 0;
}

int tls_join_open(struct tls_join **out, const struct tls_join_target *t, char *err, size_t errlen)
{
    *out = NULL;
    struct bpf_sample_program_spec spec = { .tgid = (uint32_t)t->tgid, .place_map_fd = -1 };
    struct tls_join_stats found = { 0 };
    struct tls_location loc;
    int rc = tls_locate(t, &spec, &found, &loc, err, errlen);
    if (rc <= 0)
        return rc;
    struct tls_join *j = calloc(1, sizeof(*j));
    if (!j || u64_map_init(&j->index, 1024) != 0 || header_join_init(&j->id_pairs) != 0 ||
        u64_map_init(&j->seen, 256) != 0) {
        if (j) {
            u64_map_free(&j->index);
            header_join_free(&j->id_pairs);
        }
        free(j);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    j->prog_fd = -1;
    j->ring.map_fd = -1;
    j->place_map_fd = -1;
    j->stats = found;
    j->stats.program_store = !loc.tokio;
    j->tgid = t->tgid;
    snprintf(j->root, sizeof(j->root), "%s", t->root);
    j->probe_ids_comparable = !loc.tokio;    /* tokio's probes give header addresses, the marker tokio's ids */
    j->name_by_probes = t->name_by_probes;
    j->uncounted = t->uncounted;
    /* One poll wrapper with a poll-start marker: its place cuts task stacks without a probe. Several (one per
     * future type, as in a tokio program's own instrumentation): only their probes tell which one polls. None
     * and no runtime rule (tokio's) to cut at: poll markers elsewhere (a library's) may tell, through probes. */
    struct stat st;
    j->needs_poll_probes = loc.poll_wrappers > 1 || (loc.poll_wrappers == 0 && !loc.tokio);
    if (loc.poll_wrappers == 1 && stat(t->exe, &st) == 0) {
        j->poll_marker_offset = loc.poll_marker_offset;
        j->exe_dev = st.st_dev;
        j->exe_ino = st.st_ino;
    }
    if (bpf_ring_create(&j->ring, RING_BYTES) != 0) {
        snprintf(err, errlen, "cannot create a BPF ring buffer: %s", strerror(errno));
        tls_join_close(j);
        return -1;
    }
    spec.ring_fd = j->ring.map_fd;
    if (loc.place_later) {
        uint32_t key = 0;
        int64_t predicted = spec.tp_offset;
        j->place_map_fd = spec.place_map_fd = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
        j->placing = true;
        if (j->place_map_fd < 0 || bpf_sys_map_update(j->place_map_fd, &key, &predicted) != 0) {
            snprintf(err, errlen, "cannot create a BPF map: %s", strerror(errno));
            tls_join_close(j);
            return -1;
        }
    }
    if (load_program(j, &spec, err, errlen) != 0) {
        tls_join_close(j);
        return -1;
    }
    *out = j;
    return 1;
}

int tls_join_attach(struct tls_join *j, int event_fd, char *err, size_t errlen)
{
    if (ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, j->prog_fd) != 0) {
        snprintf(err, errlen, "cannot attach the BPF program to a sampling event: %s", strerror(errno));
        return -1;
    }
    j->attached++;
    return 0;
}

size_t tls_join_attached(const struct tls_join *j)
{
    return j->attached;
}

bool tls_join_needs_poll_probes(const struct tls_join *j)
{
    return j->needs_poll_probes;
}

void tls_join_mapping(struct tls_join *j, const char *path, uint64_t start, uint64_t end, uint64_t pgoff)
{
    struct stat st;
    uint64_t off = j->poll_marker_offset;
    if (!off || j->last_probe_addr || off < pgoff || off - pgoff >= end - start || stat(path, &st) != 0 ||
        st.st_dev != j->exe_dev || st.st_ino != j->exe_ino)
        return;
    j->last_probe_addr = start + (off - pgoff);
}

/* Drop joined records and those whose sample was lost, and index the rest again. */
static void compact(struct tls_join *j)
{
    size_t kept = 0;
    for (size_t i = 0; i < j->pending.n; i++) {
        const struct bpf_sample_record *r = &j->pending.v[i];
        if (r->tid != 0 && r->time_ns + STALE_NS > j->newest_ns)
            j->pending.v[kept++] = *r;
    }
    j->pending.n = kept;
    struct u64_map fresh;
    if (u64_map_init(&fresh, kept * 2 + 64) != 0)
        return;                /* keep the old index: it still finds every record it held */
    for (size_t i = 0; i < kept; i++)
        if (u64_map_put(&fresh, key_of(j->pending.v[i].tid, j->pending.v[i].time_ns), (uint32_t)i) != 0)
            break;
    u64_map_free(&j->index);
    j->index = fresh;
    j->joined_since_compact = 0;
}

static void take_record(void *ctx, const void *data, uint32_t len)
{
    struct tls_join *j = ctx;
    if (len < sizeof(struct bpf_sample_record))
        return;
    struct bpf_sample_record r;
    memcpy(&r, data, sizeof(r));
    j->stats.records++;
    uint64_t skew = r.time_ns > r.ktime_ns ? r.time_ns - r.ktime_ns : r.ktime_ns - r.time_ns;
    if (r.tid == 0 || skew > TIME_CHECK_NS)
        return;                /* not the sample's time (a kernel that runs the program before filling it) */
    struct bpf_sample_record *slot = vec_push(&j->pending);
    if (!slot)
        return;
    *slot = r;
    if (u64_map_put(&j->index, key_of(r.tid, r.time_ns), (uint32_t)(j->pending.n - 1)) != 0)
        j->pending.n--;
    if (r.time_ns > j->newest_ns)
        j->newest_ns = r.time_ns;
}

static struct bpf_sample_record *find(struct tls_join *j, uint32_t tid, uint64_t time_ns)
{
    uint32_t i;
    if (!u64_map_get(&j->index, key_of(tid, time_ns), &i) || i >= j->pending.n)
        return NULL;
    struct bpf_sample_record *r = &j->pending.v[i];
    return r->tid == tid && r->time_ns == time_ns ? r : NULL;
}

/* The library with the marker is loaded (or not yet: again 5 ms later): its place into the place map. */
static void place_library_marker(struct tls_join *j, uint64_t time_ns)
{
    struct tls_library_place place;
    char err[400];
    int rc = tls_library_place(j->tgid, j->root, &place, err, sizeof(err));
    j->next_place_ns = time_ns + PLACE_RETRY_NS;
    if (rc == 0)
        return;
    j->placing = false;
    uint32_t key = 0;
    if (rc < 0 || (place.tp_offset != j->stats.tp_offset &&
                   bpf_sys_map_update(j->place_map_fd, &key, &place.tp_offset) != 0)) {
        snprintf(j->stats.place_error, sizeof(j->stats.place_error), "%s", rc < 0 ? err : "cannot update a BPF map");
        return;
    }
    if (place.tp_offset != j->stats.tp_offset) {
        j->stats.place_corrected = true;     /* the prediction was wrong: samples before this are wrong too */
        j->stats.tp_offset = place.tp_offset;
    }
}

/* A sample the marker places in task, while poll probes whose ids are of another kind are attached (tokio's
 * CONTEXT.current_task_id beside the probes' header addresses, or a marker program's own ids): named by the
 * probes' id, which every poll event, wait and summary line of the recording carries, so one task has one
 * name in every output. Where the probes place the sample in a task too, theirs (learnt for the marker's id:
 * the marker's id stays one task's for its life, a header passes to a new task once the old one is done);
 * else the probes' id last learnt for the marker's; else the marker's own, *provisional set (a pair learnt
 * later names it: tls_join_probes_name). */
static uint64_t probes_name(struct tls_join *j, uint64_t task, enum sampler_task_state probe_state, uint64_t probe_task,
                            bool *provisional)
{
    uint64_t named;
    if (probe_state == SAMPLER_IN_TASK) {
        if (header_join_learn(&j->id_pairs, task, probe_task, 0) != 0)
            j->stats.probe_names_lost++;
        return probe_task;
    }
    if (header_join_find(&j->id_pairs, task, 0, &named))
        return named;
    *provisional = true;
    return task;
}

void tls_join_sample(struct tls_join *j, uint32_t tid, uint64_t time_ns, bool probes,
                     enum sampler_task_state *state, uint64_t *task_id, uint64_t *probe_addr, bool *provisional)
{
    *provisional = false;
    struct bpf_sample_record *r = find(j, tid, time_ns);
    if (!r) {
        if (j->joined_since_compact > j->pending.n / 2 + 1024)
            compact(j);
        if (bpf_ring_consume(&j->ring, take_record, j) > 0)
            r = find(j, tid, time_ns);
        /* A record another CPU's program is still writing holds back the ones after it (the ring is read in
         * the order space was taken): wait the few hundred nanoseconds that takes. */
        for (int tries = 0; !r && tries < BUSY_TRIES && bpf_ring_pending(&j->ring) > 0; tries++)
            if (bpf_ring_consume(&j->ring, take_record, j) > 0)
                r = find(j, tid, time_ns);
    }
    enum sampler_task_state probe_state = *state;
    uint64_t probe_task = *task_id;
    if (!r) {
        j->stats.missing++;
        *state = SAMPLER_UNKNOWN_TASK;
        *task_id = 0;
        *probe_addr = 0;
        return;
    }
    j->stats.joined++;
    j->joined_since_compact++;
    uint32_t flags = r->flags;
    if (j->placing && time_ns >= j->next_place_ns)
        place_library_marker(j, time_ns);
    uint64_t task = r->task;
    r->tid = 0;                /* joined: a second sample of the same (tid, time) is not this one */
    if (flags) {
        j->stats.unreadable++;
        *state = SAMPLER_UNKNOWN_TASK;
        *task_id = 0;
        *probe_addr = 0;
        return;
    }
    if (probes && j->probe_ids_comparable && probe_state != SAMPLER_UNKNOWN_TASK) {
        /* the probes' answer where they have one, for the summary (and their poll frame to cut at) */
        j->stats.probe_compared++;
        bool agree = task ? probe_state == SAMPLER_IN_TASK && probe_task == task : probe_state == SAMPLER_NOT_IN_TASK;
        if (!agree)
            j->stats.probe_disagreements++;
        else if (task)
            j->last_probe_addr = *probe_addr;
    } else if (probes && !j->name_by_probes && probe_state == SAMPLER_IN_TASK && task) {
        /* at the poll function (the probe's address): (out of memory: that poll stays unnamed) */
        (void)header_join_learn(&j->id_pairs, probe_task, task, *probe_addr);
    }
    *state = task ? SAMPLER_IN_TASK : SAMPLER_NOT_IN_TASK;
    *task_id = probes && j->name_by_probes && !j->probe_ids_comparable && task ?
               probes_name(j, task, probe_state, probe_task, provisional) : task;
    uint32_t one;
    if (task && !j->uncounted && !u64_map_get(&j->seen, task, &one) && u64_map_put(&j->seen, task, 1) == 0)
        j->tasks_seen++;
    /* the probe's poll frame where it says the same poll (ids of another kind: where it says a poll) */
    bool same_poll = probe_state == SAMPLER_IN_TASK && (probe_task == task || !j->probe_ids_comparable);
    if (task && !same_poll)
        *probe_addr = j->last_probe_addr;
    else if (!task && probe_state != SAMPLER_IN_TASK)
        *probe_addr = j->last_probe_addr;   /* where a poll is cut: a poll frame on a stack in no task is told */
}

uint64_t tls_join_tasks_seen(const struct tls_join *j)
{
    return j->tasks_seen;
}

uint64_t tls_join_task_of_probe_id(const struct tls_join *j, uint64_t probe_id, uint64_t poll_function)
{
    uint64_t id;          /* (learnt in another poll function: the header passed to a task of another type) */
    if (j->probe_ids_comparable || j->name_by_probes || !header_join_find(&j->id_pairs, probe_id, poll_function, &id))
        return probe_id;
    return id;
}

bool tls_join_probes_name(const struct tls_join *j, uint64_t marker_id, uint64_t *probe_id)
{
    return j->name_by_probes && !j->probe_ids_comparable && header_join_find(&j->id_pairs, marker_id, 0, probe_id);
}

const struct tls_join_stats *tls_join_stats(const struct tls_join *j)
{
    return &j->stats;
}

void tls_join_close(struct tls_join *j)
{
    if (!j)
        return;
    if (j->prog_fd >= 0)
        close(j->prog_fd);
    if (j->place_map_fd >= 0)
        close(j->place_map_fd);
    bpf_ring_destroy(&j->ring);
    vec_free(&j->pending);
    u64_map_free(&j->index);
    header_join_free(&j->id_pairs);
    u64_map_free(&j->seen);
    free(j);
}
