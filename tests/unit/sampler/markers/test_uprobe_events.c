/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_uprobe_events.c: end-to-end check of marker attachment on a running executor fixture: opens the
 * task-poll-start probes (uprobe PMU for the register form with a semaphore, tracefs for the heap memory
 * form), reads the records from per-event ring buffers, decodes arg0 and compares it with the task ids the
 * fixture logs; checks the semaphore is raised while attached and back to 0 after, and that tracefs
 * groups are removed (ours at the end, a dead process's by uprobe_tracefs_remove_stale). Needs root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "sampler/target/proc_maps.h"
#include "sampler/markers/uprobe_pmu.h"
#include "sampler/markers/uprobe_tracefs.h"
#include "sampler/probes/usdt_args.h"
#include "sampler/probes/usdt_notes.h"

#define RB_PAGES 16
#define MAX_EVENTS 64

static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/test_uprobe.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void build_executor(const char *name, const char *flags, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s", tmpdir, name);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cc -g -O2 -pthread -I/usr/include/x86_64-linux-gnu %s tests/fixtures/executor.c -o '%s'",
             flags, out);
    if (system(cmd) != 0)
        fail_msg("build failed: %s", cmd);
}

/* Start the fixture with stdout to log; returns its pid. */
static pid_t start_fixture(const char *path, const char *log)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(127);
        execl(path, path, "30", "--log-tasks", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static size_t list_tids(pid_t pid, pid_t *tids, size_t cap)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' && n < cap)
            tids[n++] = (pid_t)atoi(de->d_name);
    closedir(d);
    return n;
}

/* Runtime address of a link-time vaddr of the fixture's main executable (PIE). */
static uint64_t runtime_addr(pid_t pid, const char *path, const struct elf_file *ef, uint64_t vaddr)
{
    struct proc_maps m = {0};
    assert_int_equal(proc_maps_load(&m, pid), 0);
    int64_t off = elf_file_vaddr_to_offset(ef, vaddr);
    assert_true(off >= 0);
    uint64_t addr = 0;
    for (size_t i = 0; i < m.n; i++) {
        const struct proc_map *pm = &m.v[i];
        if (strcmp(pm->path, path) == 0 && (uint64_t)off >= pm->pgoff && (uint64_t)off - pm->pgoff < pm->end - pm->start)
            addr = pm->start + ((uint64_t)off - pm->pgoff);
    }
    proc_maps_free(&m);
    assert_true(addr != 0);
    return addr;
}

static unsigned read_u16_at(pid_t pid, uint64_t addr)
{
    char mem[64];
    snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
    int fd = open(mem, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    uint16_t v = 0;
    assert_int_equal(pread(fd, &v, 2, (off_t)addr), 2);
    close(fd);
    return v;
}

/* ---- a minimal ring buffer reader (test only) --------------------------------------------------- */
struct ring {
    int fd;
    void *base;
    size_t size;                       /* data area */
    const struct uprobe_arg_plan *plan;
    const struct usdt_arg *arg;
};

static void ring_map(struct ring *r)
{
    long page = sysconf(_SC_PAGESIZE);
    r->size = (size_t)page * RB_PAGES;
    r->base = mmap(NULL, (size_t)page + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    assert_true(r->base != MAP_FAILED);
}

/* Decode every sample; append ids to out. Returns the number of samples that failed to decode. */
static size_t ring_drain(struct ring *r, uint64_t *ids, size_t *n_ids, size_t cap, pid_t *tids_seen, size_t *n_tids)
{
    struct perf_event_mmap_page *mp = r->base;
    const uint8_t *data = (const uint8_t *)r->base + sysconf(_SC_PAGESIZE);
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    size_t bad = 0;
    uint8_t rec[4096];
    while (tail < head) {
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof(h); i++)
            ((uint8_t *)&h)[i] = data[(tail + i) % r->size];
        assert_true(h.size >= sizeof(h) && h.size <= sizeof(rec));
        for (size_t i = 0; i < h.size; i++)
            rec[i] = data[(tail + i) % r->size];
        if (h.type == PERF_RECORD_SAMPLE) {
            struct uprobe_sample s;
            uint64_t v;
            if (uprobe_sample_parse(r->plan, rec + sizeof(h), h.size - sizeof(h), &s) != 0 ||
                uprobe_arg_decode(r->arg, r->plan, &s, &v) != 0) {
                bad++;
            } else {
                if (*n_ids < cap)
                    ids[(*n_ids)++] = v;
                bool known = false;
                for (size_t i = 0; i < *n_tids; i++)
                    known |= tids_seen[i] == (pid_t)s.tid;
                if (!known && *n_tids < 16)
                    tids_seen[(*n_tids)++] = (pid_t)s.tid;
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
    return bad;
}

/* Task ids the fixture logged ("spawn ID KIND"). */
static size_t logged_ids(const char *log, uint64_t *ids, size_t cap)
{
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[256];
    size_t n = 0;
    unsigned long long id;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "spawn %llu", &id) == 1 && n < cap)
            ids[n++] = id;
    fclose(f);
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool tracefs_group_exists(const struct uprobe_tracefs *tf, const char *group)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/events/%s", tf->root, group);
    struct stat st;
    return stat(p, &st) == 0;
}

/* Attach every poll-start location of the fixture at path to all its threads and check the ids. */
static void run_poll_start_check(const char *name, const char *flags, enum uprobe_arg_method want)
{
    char path[256], log[300];
    build_executor(name, flags, path, sizeof(path));
    snprintf(log, sizeof(log), "%s/%s.log", tmpdir, name);

    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    struct usdt_note_list notes;
    assert_int_equal(usdt_notes_read(&ef, &notes), 0);

    struct uprobe_pmu pmu;
    assert_int_equal(uprobe_pmu_info(&pmu), 0);
    assert_true(pmu.ref_ctr_shift == 32);
    struct uprobe_tracefs tf;
    char err[256] = "";
    if (uprobe_tracefs_init(&tf, err, sizeof(err)) != 0)
        fail_msg("tracefs: %s", err);

    pid_t pid = start_fixture(path, log);
    pid_t tids[16];
    size_t n_tids = 0;
    /* wait until main and its two workers are up (bounded: 10 s, for a loaded machine) */
    for (int waited = 0; waited < 1000 && (n_tids = list_tids(pid, tids, 16)) < 3; waited++)
        sleep_ms(10);
    assert_int_equal(n_tids, 3);

    static struct ring rings[MAX_EVENTS];
    static struct usdt_arg args[MAX_EVENTS];
    static struct uprobe_arg_plan plans[MAX_EVENTS];
    struct uprobe_tracefs_event tevs[8];
    size_t n_rings = 0, n_tevs = 0, n_locations = 0;
    uint64_t sema_addr = 0;
    for (size_t i = 0; i < notes.n; i++) {
        const struct usdt_note *u = &notes.v[i];
        if (u->marker != USDT_MARKER_POLL_START)
            continue;
        struct usdt_arg *a = &args[n_locations];
        struct uprobe_arg_plan *pl = &plans[n_locations];
        n_locations++;
        assert_int_equal(usdt_arg_parse(u->args, 0, a), USDT_ARG_OK);
        assert_int_equal(uprobe_arg_plan_for(a, pl), 0);
        assert_int_equal(pl->method, want);
        if (u->semaphore)
            sema_addr = runtime_addr(pid, path, &ef, u->semaphore);
        struct uprobe_tracefs_event *tev = NULL;
        if (pl->method == UPROBE_ARG_TRACEFS) {
            tev = &tevs[n_tevs++];
            if (uprobe_tracefs_create(&tf, path, u->pc_offset, u->semaphore_offset, a, false, u->name, tev, pl, err,
                                      sizeof(err)) != 0)
                fail_msg("tracefs create: %s", err);
        }
        for (size_t t = 0; t < n_tids; t++) {
            struct ring *r = &rings[n_rings++];
            r->plan = pl;
            r->arg = a;
            if (tev) {
                r->fd = uprobe_tracefs_open(tev, pl, tids[t], -1, false, false, -1);
            } else {
                struct uprobe_attach at = {.path = path, .offset = u->pc_offset,
                                           .ref_ctr_offset = u->semaphore_offset, .tid = tids[t], .cpu = -1,
                                           .plan = pl, .group_fd = -1};
                r->fd = uprobe_event_open(&pmu, &at);
            }
            if (r->fd < 0)
                fail_msg("perf_event_open on tid %d: %s", (int)tids[t], strerror(errno));
            ring_map(r);
        }
    }
    assert_true(n_locations >= 1);
    if (sema_addr) {
        sleep_ms(50);
        assert_true(read_u16_at(pid, sema_addr) >= 1);
    }

    static uint64_t ids[1 << 16];
    size_t n_ids = 0, bad = 0;
    pid_t seen[16];
    size_t n_seen = 0;
    /* drain for 0.5 s, then on (bounded: 10 s, for a loaded machine) until both workers were seen polling
     * more than 1000 times in all */
    for (int round = 0; round < 200 && (round < 10 || n_ids <= 1000 || n_seen < 2); round++) {
        sleep_ms(50);
        for (size_t i = 0; i < n_rings; i++)
            bad += ring_drain(&rings[i], ids, &n_ids, sizeof(ids) / sizeof(ids[0]), seen, &n_seen);
    }
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n_rings; i++) {
        assert_int_equal(munmap(rings[i].base, (size_t)page + rings[i].size), 0);
        assert_int_equal(close(rings[i].fd), 0);
    }
    uprobe_tracefs_cleanup(&tf, tevs, n_tevs);
    assert_false(tracefs_group_exists(&tf, tf.group));
    if (sema_addr) {
        sleep_ms(50);
        assert_int_equal(read_u16_at(pid, sema_addr), 0);
    }
    assert_int_equal(kill(pid, SIGTERM), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    static uint64_t logged[1 << 20];
    size_t n_logged = logged_ids(log, logged, sizeof(logged) / sizeof(logged[0]));
    assert_true(n_logged > 12);
    qsort(logged, n_logged, sizeof(logged[0]), cmp_u64);
    print_message("%s: %zu poll-start records on %zu threads, %zu tasks spawned, %zu undecodable\n", name, n_ids,
                  n_seen, n_logged, bad);
    assert_int_equal(bad, 0);
    assert_true(n_ids > 1000);          /* ~80k polls/s, some lost to full buffers at most */
    for (size_t i = 0; i < n_ids; i++)
        if (!bsearch(&ids[i], logged, n_logged, sizeof(logged[0]), cmp_u64))
            fail_msg("arg0 %llu is not a task id the fixture spawned", (unsigned long long)ids[i]);
    /* tasks migrate between the two workers: both must have polled */
    assert_true(n_seen >= 2);
    if (flags && strstr(flags, "SEMAPHORES")) {
        FILE *f = fopen(log, "r");
        char line[512];
        bool zero = false;
        while (fgets(line, sizeof(line), f))
            zero |= strstr(line, "semaphores: task__poll__start=0 ") != NULL;
        fclose(f);
        assert_true(zero);
    }
    usdt_notes_free(&notes);
    elf_file_close(&ef);
}

static void test_pmu_register_arg_with_semaphore(void **state)
{
    (void)state;
    run_poll_start_check("exec_sema", "-DEXECUTOR_SEMAPHORES", UPROBE_ARG_REGS);
}

static void test_pmu_register_arg_lld(void **state)
{
    (void)state;
    run_poll_start_check("exec_lld", "-fuse-ld=lld -DEXECUTOR_SEMAPHORES", UPROBE_ARG_REGS);
}

static void test_tracefs_memory_arg(void **state)
{
    (void)state;
    run_poll_start_check("exec_memarg", "-DEXECUTOR_MEMARG", UPROBE_ARG_TRACEFS);
}

static void test_remove_stale_group(void **state)
{
    (void)state;
    char path[256];
    build_executor("exec_stale", "-DEXECUTOR_MEMARG", path, sizeof(path));
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    struct usdt_note_list notes;
    assert_int_equal(usdt_notes_read(&ef, &notes), 0);
    const struct usdt_note *u = NULL;
    for (size_t i = 0; i < notes.n; i++)
        if (notes.v[i].marker == USDT_MARKER_POLL_START)
            u = &notes.v[i];
    assert_non_null(u);
    /* a pid that is certainly dead: a child we reaped */
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    struct uprobe_tracefs ours, theirs;
    char err[256];
    assert_int_equal(uprobe_tracefs_init(&ours, err, sizeof(err)), 0);
    assert_int_equal(uprobe_tracefs_init_at(&theirs, ours.root, dead), 0);
    struct usdt_arg a;
    struct uprobe_arg_plan pl;
    assert_int_equal(usdt_arg_parse(u->args, 0, &a), USDT_ARG_OK);
    assert_int_equal(uprobe_arg_plan_for(&a, &pl), 0);
    struct uprobe_tracefs_event ev;
    if (uprobe_tracefs_create(&theirs, path, u->pc_offset, 0, &a, false, "left_behind", &ev, &pl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_true(tracefs_group_exists(&ours, theirs.group));
    assert_true(uprobe_tracefs_remove_stale(&ours) >= 1);
    assert_false(tracefs_group_exists(&ours, theirs.group));
    usdt_notes_free(&notes);
    elf_file_close(&ef);
}

static void test_tracefs_text_helpers(void **state)
{
    (void)state;
    struct usdt_arg a;
    char buf[512];
    assert_int_equal(usdt_arg_parse("-4@-20(%rbp)", 0, &a), 0);
    assert_int_equal(uprobe_tracefs_format_def("taskspy_1", "ev_0", "/bin/x", 0x1b58, 0x40f2, &a, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "p:taskspy_1/ev_0 /bin/x:0x1b58(0x40f2) arg0=-20(%bp):u32");
    assert_int_equal(usdt_arg_parse("8@8(%r12)", 0, &a), 0);
    assert_int_equal(uprobe_tracefs_format_def("g", "e", "/a b", 1, 0, &a, buf, sizeof(buf)), -1);
    assert_int_equal(uprobe_tracefs_format_def("g", "e", "/ab", 1, 0, &a, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "p:g/e /ab:0x1 arg0=+8(%r12):u64");
    assert_int_equal(usdt_arg_parse("8@%rdi", 0, &a), 0);
    assert_int_equal(uprobe_tracefs_format_def("g", "e", "/ab", 1, 0, &a, buf, sizeof(buf)), -1);
    /* every marker location as one tracefs event: registers, immediates, no argument, return probes */
    struct uprobe_arg_plan plan;
    assert_int_equal(uprobe_arg_plan_tracefs(&a, &plan), 0);
    assert_int_equal(plan.method, UPROBE_ARG_TRACEFS);
    assert_true(plan.sample_type & PERF_SAMPLE_RAW);
    assert_false(plan.sample_type & PERF_SAMPLE_REGS_USER);
    assert_int_equal(uprobe_tracefs_format_probe("g", "e", "/ab", 0x10, 0x20, &a, false, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "p:g/e /ab:0x10(0x20) arg0=%di:u64");
    assert_int_equal(usdt_arg_parse("-4@%eax", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_tracefs(&a, &plan), 0);
    assert_int_equal(uprobe_tracefs_format_probe("g", "e", "/ab", 1, 0, &a, false, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "p:g/e /ab:0x1 arg0=%ax:u32");
    assert_int_equal(usdt_arg_parse("1@%ah", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_tracefs(&a, &plan), -1);      /* a high byte: the uprobe PMU's job */
    assert_int_equal(usdt_arg_parse("8@$42", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_tracefs(&a, &plan), 0);
    assert_int_equal(plan.method, UPROBE_ARG_REGS);
    assert_false(plan.sample_type & PERF_SAMPLE_RAW);
    assert_int_equal(uprobe_tracefs_format_probe("g", "e", "/ab", 1, 0, &a, false, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "p:g/e /ab:0x1");
    assert_int_equal(uprobe_arg_plan_tracefs(NULL, &plan), 0);
    assert_int_equal(plan.method, UPROBE_ARG_NONE);
    assert_int_equal(uprobe_tracefs_format_probe("g", "e", "/ab", 0x2f, 0, NULL, true, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "r:g/e /ab:0x2f");
    uint32_t off, size;
    const char *fmt = "name: e\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                      "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
                      "\tfield:u32 arg0;\toffset:16;\tsize:4;\tsigned:0;\n";
    assert_int_equal(uprobe_tracefs_parse_format(fmt, &off, &size), 0);
    assert_int_equal(off, 16);
    assert_int_equal(size, 4);
    assert_int_equal(uprobe_tracefs_parse_format("field:u64 xarg0;\toffset:16;\tsize:8;", &off, &size), -1);
    assert_int_equal(uprobe_tracefs_parse_format("", &off, &size), -1);
}

static void test_plans(void **state)
{
    (void)state;
    struct usdt_arg a;
    struct uprobe_arg_plan p;
    assert_int_equal(uprobe_arg_plan_for(NULL, &p), 0);
    assert_int_equal(p.method, UPROBE_ARG_NONE);
    assert_int_equal(usdt_arg_parse("8@%rdi", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_for(&a, &p), 0);
    assert_int_equal(p.method, UPROBE_ARG_REGS);
    assert_int_equal(p.regs_mask, 1u << 5);
    assert_true(p.sample_type & PERF_SAMPLE_REGS_USER);
    assert_int_equal(usdt_arg_parse("-4@12(%rsp)", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_for(&a, &p), 0);
    assert_int_equal(p.method, UPROBE_ARG_STACK);
    assert_int_equal(p.stack_size, 16);
    /* decode a hand-made sample: id, pid/tid, time, abi, sp, stack size, 16 bytes, dyn size */
    uint8_t body[8 + 8 + 8 + 8 + 8 + 8 + 16 + 8];
    uint64_t w[] = {42, (7ull << 32) | 7, 1000, PERF_SAMPLE_REGS_ABI_64, 0x7ffd0000, 16};
    memcpy(body, w, sizeof(w));
    uint8_t stack[16] = {0};
    stack[12] = 0xfe, stack[13] = 0xff, stack[14] = 0xff, stack[15] = 0xff;
    memcpy(body + sizeof(w), stack, 16);
    uint64_t dyn = 16;
    memcpy(body + sizeof(w) + 16, &dyn, 8);
    struct uprobe_sample s;
    uint64_t v;
    assert_int_equal(uprobe_sample_parse(&p, body, sizeof(body), &s), 0);
    assert_int_equal(s.id, 42);
    assert_int_equal(uprobe_arg_decode(&a, &p, &s, &v), 0);
    assert_int_equal(v, (uint64_t)-2);
    dyn = 8;   /* the kernel could copy only 8 bytes: the operand is outside */
    memcpy(body + sizeof(w) + 16, &dyn, 8);
    assert_int_equal(uprobe_sample_parse(&p, body, sizeof(body), &s), 0);
    assert_int_equal(uprobe_arg_decode(&a, &p, &s, &v), -1);
    for (size_t cut = 0; cut < sizeof(body); cut++)
        assert_int_equal(uprobe_sample_parse(&p, body, cut, &s), -1);
    assert_int_equal(usdt_arg_parse("8@8(%rbx)", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_for(&a, &p), 0);
    assert_int_equal(p.method, UPROBE_ARG_TRACEFS);
    assert_int_equal(usdt_arg_parse("8@4096(%rsp)", 0, &a), 0);
    assert_int_equal(uprobe_arg_plan_for(&a, &p), 0);
    assert_int_equal(p.method, UPROBE_ARG_TRACEFS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_tracefs_text_helpers),
        cmocka_unit_test(test_pmu_register_arg_with_semaphore),
        cmocka_unit_test(test_pmu_register_arg_lld),
        cmocka_unit_test(test_tracefs_memory_arg),
        cmocka_unit_test(test_remove_stale_group),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
