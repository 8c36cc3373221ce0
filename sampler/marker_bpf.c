/* marker_bpf.c: the BPF route for marker hits: a ring per CPU (in an array of maps the programs index by
 * CPU) and the lost-hit counter, one loaded program per marker location, attached by a uprobe_multi link
 * or to the location's uprobe event (PERF_EVENT_IOC_SET_BPF), an epoll fd that turns the rings' wake-ups into an edge the sampler's poll loop
 * can wait on, and the read of the records. */
#include "sampler/marker_bpf.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sampler/bpf_ring.h"
#include "sampler/bpf_sys.h"

/* CPU numbers a program can run on: /sys/devices/system/cpu/possible ("0-3"), else the configured count. */
static size_t possible_cpus(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
    unsigned last = 0;
    char text[256];
    bool ok = f && fgets(text, sizeof(text), f);
    if (f)
        fclose(f);
    for (char *p = text; ok && *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            break;
        if (v > last)
            last = (unsigned)v;
        p = *end ? end + 1 : end;
    }
    if (ok && last < 4096)
        return last + 1;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    return n > 0 ? (size_t)n : 1;
}

struct marker_bpf {
    pid_t tgid;
    struct bpf_ring *rings;            /* one per possible CPU */
    size_t n_rings;
    int rings_fd;                      /* array of maps: CPU -> rings[cpu] */
    int lost_fd;                       /* array map: one uint64_t, hits the ring had no room for */
    uint64_t lost_seen;
    int epoll_fd;
    int *fds;                          /* programs and uprobe_multi links */
    size_t n_fds, cap_fds;
};

int marker_bpf_open(struct marker_bpf **out, pid_t tgid, size_t ring_bytes, char *err, size_t errlen)
{
    *out = NULL;
    struct marker_bpf *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->tgid = tgid;
    b->lost_fd = -1;
    b->epoll_fd = -1;
    b->rings_fd = -1;
    size_t n = possible_cpus();
    long page = sysconf(_SC_PAGESIZE);
    size_t size = page > 0 ? (size_t)page : 4096;
    while (size * 2 * n <= ring_bytes && size < (1u << 30))
        size *= 2;
    if (!(b->rings = calloc(n, sizeof(*b->rings)))) {
        snprintf(err, errlen, "out of memory");
        free(b);
        return -1;
    }
    const char *what = "ring buffer";
    for (; b->n_rings < n; b->n_rings++)
        if (bpf_ring_create(&b->rings[b->n_rings], size) != 0)
            goto fail;
    what = "marker maps";
    b->rings_fd = bpf_sys_map_create_array_of_maps((uint32_t)n, b->rings[0].map_fd);
    b->lost_fd = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
    b->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (b->rings_fd < 0 || b->lost_fd < 0 || b->epoll_fd < 0)
        goto fail;
    for (uint32_t cpu = 0; cpu < n; cpu++) {
        struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = cpu };
        if (bpf_sys_map_update(b->rings_fd, &cpu, &b->rings[cpu].map_fd) != 0 ||
            epoll_ctl(b->epoll_fd, EPOLL_CTL_ADD, b->rings[cpu].map_fd, &ev) != 0)
            goto fail;
    }
    *out = b;
    return 0;
fail:;
    int saved = errno;
    snprintf(err, errlen, "cannot create the BPF %s: %s", what, strerror(saved));
    marker_bpf_close(b);
    errno = saved;
    return -1;
}

static int keep_fd(struct marker_bpf *b, int fd)
{
    if (b->n_fds == b->cap_fds) {
        size_t cap = b->cap_fds ? b->cap_fds * 2 : 16;
        int *v = realloc(b->fds, cap * sizeof(*v));
        if (!v)
            return -1;
        b->fds = v;
        b->cap_fds = cap;
    }
    b->fds[b->n_fds++] = fd;
    return 0;
}

/* Build and load the location's program. Returns its fd, or -1 with a reason in err. */
static int load_program(struct marker_bpf *b, uint32_t location, const struct usdt_arg *arg0, bool uprobe_multi,
                        char *err, size_t errlen)
{
    struct bpf_insn insns[BPF_MARKER_PROGRAM_MAX];
    struct bpf_marker_program_spec spec = {
        .arg0 = arg0, .location = location, .tgid = (uint32_t)b->tgid, .rings_fd = b->rings_fd,
        .ring_bytes = (uint32_t)b->rings[0].size, .lost_fd = b->lost_fd,
    };
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
        /* the verifier's last line says why */
        size_t len = strlen(log);
        while (len && log[len - 1] == '\n')
            log[--len] = '\0';
        const char *why = strrchr(log, '\n');
        snprintf(err, errlen, "BPF program refused: %s%s%s", strerror(saved), log[0] ? ": " : "",
                 why ? why + 1 : log);
        errno = saved;
        return -1;
    }
    if (keep_fd(b, prog) != 0) {
        close(prog);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    return prog;
}

int marker_bpf_attach_uprobe(struct marker_bpf *b, const char *path, uint64_t offset, uint64_t ref_ctr_offset,
                             bool retprobe, uint32_t location, const struct usdt_arg *arg0, char *err, size_t errlen)
{
    int prog = load_program(b, location, arg0, true, err, errlen);
    if (prog < 0)
        return -1;
    int link = bpf_sys_uprobe_link(prog, path, offset, ref_ctr_offset, retprobe, b->tgid);
    if (link < 0 || keep_fd(b, link) != 0) {
        int saved = link < 0 ? errno : ENOMEM;
        if (link >= 0)
            close(link);
        snprintf(err, errlen, "cannot create a uprobe_multi link: %s", strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}

int marker_bpf_attach_event(struct marker_bpf *b, int event_fd, uint32_t location, const struct usdt_arg *arg0,
                            char *err, size_t errlen)
{
    int prog = load_program(b, location, arg0, false, err, errlen);
    if (prog < 0)
        return -1;
    if (ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, prog) != 0) {
        int saved = errno;
        snprintf(err, errlen, "cannot attach a BPF program to the marker's event: %s", strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}

int marker_bpf_wake_fd(const struct marker_bpf *b)
{
    return b->epoll_fd;
}

struct record_pass {
    void (*fn)(void *ctx, const struct bpf_marker_record *rec);
    void *ctx;
};

static void on_record(void *ctx, const void *data, uint32_t len)
{
    struct record_pass *p = ctx;
    struct bpf_marker_record rec;
    if (len < sizeof(rec))
        return;
    memcpy(&rec, data, sizeof(rec));
    p->fn(p->ctx, &rec);
}

size_t marker_bpf_read(struct marker_bpf *b, void (*fn)(void *ctx, const struct bpf_marker_record *rec),
                       void *ctx, uint64_t *lost)
{
    /* Re-arm the edge first: a wake-up that comes while the ring is read is then not lost. */
    struct epoll_event ev[64];
    if (epoll_wait(b->epoll_fd, ev, 64, 0) < 0 && errno != EINTR)
        fprintf(stderr, "taskspy: epoll_wait on the marker ring: %s\n", strerror(errno));
    struct record_pass p = { fn, ctx };
    size_t n = 0;
    for (size_t i = 0; i < b->n_rings; i++)
        n += bpf_ring_consume(&b->rings[i], on_record, &p);
    uint32_t key = 0;
    uint64_t total = b->lost_seen;
    if (bpf_sys_map_lookup(b->lost_fd, &key, &total) != 0)
        total = b->lost_seen;
    *lost = total - b->lost_seen;
    b->lost_seen = total;
    return n;
}

void marker_bpf_close(struct marker_bpf *b)
{
    if (!b)
        return;
    for (size_t i = b->n_fds; i-- > 0;)   /* links before their programs */
        close(b->fds[i]);
    free(b->fds);
    if (b->epoll_fd >= 0)
        close(b->epoll_fd);
    if (b->lost_fd >= 0)
        close(b->lost_fd);
    if (b->rings_fd >= 0)
        close(b->rings_fd);
    for (size_t i = 0; i < b->n_rings; i++)
        bpf_ring_destroy(&b->rings[i]);
    free(b->rings);
    free(b);
}
