/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_sink_journal.c: cli/sink_journal: a sequence of every journaled callback kind (a sample with the most
 * kernel and user addresses, a wait stack, long and empty strings, a NULL thread name) reaches the target
 * only at replay, in the same order and with every field as it was given; progress reaches it at once; a
 * small budget replays on its own while journaling, so the buffer never passes the budget (nor is grown) and
 * the whole still arrives in order; a root of the target's file system is held open and journaled as /proc/self/fd/N, through
 * which the same files open; once a namer is set, a replayed sample with a provisional task id takes the id it
 * gives, where it gives one, and no other sample changes; with provisional samples held, the budget's replays
 * hold them back (up to their own budget, past which they go on unnamed, counted) and the replay after the
 * namer delivers them first, named. */
#include "cli/sink_journal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

/* What a sink received: every callback's fields, one line each. */
struct received {
    char *text;
    size_t len;
    FILE *out;
    unsigned callbacks, progress;
};

static void put_ips(FILE *out, const char *what, const uint64_t *ips, size_t n)
{
    fprintf(out, " %s=%zu:", what, n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%llx,", (unsigned long long)ips[i]);
}

static void got_mapping(void *ctx, const struct sampler_mapping *m)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "mapping %llx %llx %llx path=[%s] root=[%s] exec=%d\n", (unsigned long long)m->start,
            (unsigned long long)m->end, (unsigned long long)m->pgoff, m->path, m->root, m->executable);
}

static void got_thread_name(void *ctx, uint32_t thread, pid_t tid, const char *name)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "thread %u %d %s[%s]\n", thread, (int)tid, name ? "named" : "NULL", name ? name : "");
}

static void got_sample(void *ctx, const struct sampler_sample *s)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "sample pid=%d tid=%d t=%llu trunc=%d thread=%u state=%d task=%llx%s probe=%llx", (int)s->pid,
            (int)s->tid, (unsigned long long)s->time_ns, s->truncated, s->thread, (int)s->task_state,
            (unsigned long long)s->task_id, s->task_id_provisional ? " provisional" : "",
            (unsigned long long)s->poll_probe_addr);
    put_ips(r->out, "kernel", s->kernel_ips, s->n_kernel);
    put_ips(r->out, "user", s->user_ips, s->n_user);
    fputc('\n', r->out);
}

static void got_poll(void *ctx, const struct sampler_poll *p)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "poll %u %u %llx %llu %llu\n", p->tid, p->thread, (unsigned long long)p->task_id,
            (unsigned long long)p->start_ns, (unsigned long long)p->end_ns);
}

static void got_task_event(void *ctx, const struct sampler_task_event *e)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "event %d %u %u %llx %llu\n", (int)e->kind, e->tid, e->thread, (unsigned long long)e->task_id,
            (unsigned long long)e->time_ns);
}

static void got_wait_stack(void *ctx, const struct sampler_wait_stack *w)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "wait_stack tid=%d thread=%u task=%llx probe=%llx t=%llu trunc=%d", (int)w->tid, w->thread,
            (unsigned long long)w->task_id, (unsigned long long)w->poll_probe_addr, (unsigned long long)w->time_ns,
            w->truncated);
    put_ips(r->out, "user", w->user_ips, w->n_user);
    fputc('\n', r->out);
}

static void got_wait_round(void *ctx, uint64_t until_ns)
{
    struct received *r = ctx;
    r->callbacks++;
    fprintf(r->out, "round %llu\n", (unsigned long long)until_ns);
}

static void got_progress(void *ctx, const struct sampler_progress *p)
{
    struct received *r = ctx;
    r->progress++;
    assert_int_equal(p->samples, 77);
}

static void received_open(struct received *r)
{
    memset(r, 0, sizeof(*r));
    r->out = open_memstream(&r->text, &r->len);
    assert_non_null(r->out);
}

static const char *received_text(struct received *r)
{
    fflush(r->out);
    return r->text;
}

static void received_close(struct received *r)
{
    fclose(r->out);
    free(r->text);
}

static struct sampler_sink sink_of(struct received *r)
{
    return (struct sampler_sink){
        .ctx = r, .on_mapping = got_mapping, .on_thread_name = got_thread_name, .on_sample = got_sample,
        .on_poll = got_poll, .on_progress = got_progress, .on_task_event = got_task_event,
        .on_wait_stack = got_wait_stack, .on_wait_round = got_wait_round,
    };
}

/* A sink fed directly and a journal in front of another, to feed the same callbacks to both and compare. */
struct journal_pair {
    struct received direct, deferred;
    struct sampler_sink direct_sink, target, journaled;
    struct sink_journal j;
};

/* budget 0: the default (p must stay where it is while in use: the sinks point into it) */
static void pair_open(struct journal_pair *p, size_t budget)
{
    received_open(&p->direct);
    received_open(&p->deferred);
    p->direct_sink = sink_of(&p->direct);
    p->target = sink_of(&p->deferred);
    sink_journal_init(&p->j, &p->target, budget);
    p->journaled = sink_journal_sink(&p->j);
}

static void pair_close(struct journal_pair *p)
{
    sink_journal_free(&p->j);
    received_close(&p->direct);
    received_close(&p->deferred);
}

#define MAX_KERNEL 127u

/* Every kind of callback, i varying the values; big: the most addresses and a long path. */
static void send_sequence(const struct sampler_sink *to, unsigned i, bool big)
{
    static uint64_t kernel_ips[MAX_KERNEL], user_ips[SAMPLER_MAX_FRAMES];
    for (size_t k = 0; k < MAX_KERNEL; k++)
        kernel_ips[k] = 0xffffffff81000000ull + k * 16 + i;
    for (size_t k = 0; k < SAMPLER_MAX_FRAMES; k++)
        user_ips[k] = 0x555555554000ull + k * 40 + i;
    char long_path[4000];
    memset(long_path, 'p', sizeof(long_path) - 1);
    long_path[0] = '/';
    long_path[sizeof(long_path) - 1] = '\0';
    struct sampler_mapping m = { .start = 0x1000u * i, .end = 0x1000u * i + 0x800, .pgoff = i * 3u,
                                 .path = big ? long_path : "/usr/lib/libx.so", .root = "", .executable = i % 2 };
    to->on_mapping(to->ctx, &m);
    to->on_thread_name(to->ctx, i, (pid_t)(1000 + i), i % 3 ? "worker-1" : NULL);
    to->on_thread_name(to->ctx, i + 1, (pid_t)(2000 + i), "");
    struct sampler_sample s = {
        .pid = 42, .tid = (pid_t)(1000 + i), .time_ns = 123456789ull * i, .kernel_ips = kernel_ips,
        .n_kernel = big ? MAX_KERNEL : i % 4, .user_ips = user_ips, .n_user = big ? SAMPLER_MAX_FRAMES : 1 + i % 30,
        .truncated = i % 2 == 0, .thread = i % 5 ? i : SAMPLER_NO_THREAD, .task_state = (enum sampler_task_state)(i % 3),
        .task_id = 0xabcdef0123ull + i, .task_id_provisional = i % 4 == 1, .poll_probe_addr = i % 2 ? 0x401000u + i : 0,
    };
    to->on_sample(to->ctx, &s);
    struct sampler_progress p = { .samples = 77 };
    to->on_progress(to->ctx, &p);
    struct sampler_poll poll = { .tid = 7, .thread = i, .task_id = i * 11u, .start_ns = i, .end_ns = i + 5u };
    to->on_poll(to->ctx, &poll);
    struct sampler_task_event e = { .kind = (enum sampler_task_event_kind)(i % 5), .tid = 8, .thread = 2,
                                    .task_id = 0x7f0000000000ull + i, .time_ns = 99u + i };
    to->on_task_event(to->ctx, &e);
    struct sampler_wait_stack w = { .tid = 9, .thread = 3, .task_id = 5u + i, .poll_probe_addr = i, .time_ns = 100u + i,
                                    .user_ips = user_ips + 1, .n_user = big ? SAMPLER_MAX_FRAMES - 1 : i % 7,
                                    .truncated = i % 3 == 0 };
    to->on_wait_stack(to->ctx, &w);
    to->on_wait_round(to->ctx, i % 4 ? 1000u * i : UINT64_MAX);
    s.n_kernel = 0;                   /* a sample without addresses at all */
    s.n_user = 0;
    to->on_sample(to->ctx, &s);
}

/* Every kind, replayed once at the end: the same lines as given straight to a sink. */
static void test_replay_equals_direct(void **state)
{
    (void)state;
    struct journal_pair p;
    pair_open(&p, 0);
    for (unsigned i = 0; i < 40; i++) {
        send_sequence(&p.direct_sink, i, i == 3 || i == 17);
        send_sequence(&p.journaled, i, i == 3 || i == 17);
    }
    assert_int_equal(p.deferred.callbacks, 0);          /* nothing delivered while journaling... */
    assert_int_equal(p.deferred.progress, 40);          /* ...but progress, at once */
    assert_int_equal(p.j.replays, 0);
    assert_int_equal(p.j.entries, 40 * 9);
    sink_journal_replay(&p.j);
    assert_false(p.j.failed);
    assert_int_equal(p.j.bytes.n, 0);
    assert_int_equal(p.deferred.callbacks, p.direct.callbacks);
    assert_int_equal(p.direct.callbacks, 40 * 9);
    assert_string_equal(received_text(&p.deferred), received_text(&p.direct));
    /* the journal is usable again after a replay */
    send_sequence(&p.direct_sink, 41, true);
    send_sequence(&p.journaled, 41, true);
    sink_journal_replay(&p.j);
    assert_string_equal(received_text(&p.deferred), received_text(&p.direct));
    pair_close(&p);
}

/* A small budget: replays come on their own while journaling, the buffer stays within the budget, and the
 * whole still arrives in order. */
static void test_budget_replays(void **state)
{
    (void)state;
    const size_t budget = 8192;
    struct journal_pair p;
    pair_open(&p, budget);
    size_t most = 0;
    for (unsigned i = 0; i < 200; i++) {
        send_sequence(&p.direct_sink, i, i % 50 == 0);
        send_sequence(&p.journaled, i, i % 50 == 0);
        most = p.j.bytes.n > most ? p.j.bytes.n : most;
        assert_true(p.j.bytes.n <= budget);             /* an entry that does not fit replays the journal first */
    }
    assert_true(p.j.replays > 10);
    assert_true(p.deferred.callbacks > 0 && p.deferred.callbacks < p.direct.callbacks);
    assert_true(most > budget / 2);
    sink_journal_replay(&p.j);
    assert_int_equal(p.deferred.callbacks, p.direct.callbacks);
    assert_string_equal(received_text(&p.deferred), received_text(&p.direct));
    assert_int_equal(p.j.bytes.cap, budget);            /* reserved once, never grown */
    pair_close(&p);
}

/* The namer of test_provisional_names: the ids of even i (send_sequence's) were learnt after their samples. */
static bool learnt_later(void *ctx, uint64_t task_id, uint64_t *named)
{
    unsigned *asked = ctx;
    (*asked)++;
    if ((task_id - 0xabcdef0123ull) % 2)
        return false;
    *named = 0x1000000000000ull + task_id;
    return true;
}

/* A namer set before the last replay: the samples whose id is provisional (i % 4 == 1; none of them even) are
 * asked about and keep theirs where it has none; then, with ids it has (a sample of even i marked provisional),
 * those take the new id, no longer provisional, counted; nothing else changes. */
static void test_provisional_names(void **state)
{
    (void)state;
    struct journal_pair p;
    pair_open(&p, 0);
    for (unsigned i = 0; i < 20; i++) {
        send_sequence(&p.direct_sink, i, false);
        send_sequence(&p.journaled, i, false);
    }
    unsigned asked = 0;
    sink_journal_name_tasks(&p.j, learnt_later, &asked);
    sink_journal_replay(&p.j);
    assert_int_equal(asked, 2 * 5);                   /* i = 1, 5, 9, 13, 17: two samples each */
    assert_int_equal(p.j.renamed, 0);
    assert_string_equal(received_text(&p.deferred), received_text(&p.direct));
    assert_non_null(strstr(received_text(&p.deferred), "task=abcdef0124 provisional"));
    /* a provisional sample whose id the namer has */
    struct sampler_sample s = { .pid = 42, .tid = 1, .task_state = SAMPLER_IN_TASK, .task_id = 0xabcdef0123ull + 6,
                                .task_id_provisional = true };
    struct sampler_sample same = s;
    same.task_id_provisional = false;
    p.journaled.on_sample(p.journaled.ctx, &s);
    p.journaled.on_sample(p.journaled.ctx, &same);
    sink_journal_replay(&p.j);
    assert_int_equal(p.j.renamed, 1);
    assert_non_null(strstr(received_text(&p.deferred), "task=100abcdef0129 probe"));
    assert_non_null(strstr(received_text(&p.deferred), "task=abcdef0129 probe"));   /* not provisional: kept */
    pair_close(&p);
}

/* The namer of test_provisional_held: every id, learnt after its samples. */
static bool learnt_all(void *ctx, uint64_t task_id, uint64_t *named)
{
    (void)ctx;
    *named = 0x1000000000000ull + task_id;
    return true;
}

/* text's lines split in two: those with a provisional task id, renamed as learnt_all names them ("task=X
 * provisional" -> "task=100X"), into *held; the others into *rest. Both allocated. */
static void split_provisional(const char *text, char **held, char **rest)
{
    size_t len = strlen(text);
    *held = calloc(1, 2 * len + 1);
    *rest = calloc(1, len + 1);
    assert_non_null(*held);
    assert_non_null(*rest);
    char *h = *held, *r = *rest;
    for (const char *line = text, *next; *line; line = next) {
        next = strchr(line, '\n') + 1;
        const char *mark = strstr(line, " provisional");
        if (!mark || mark > next) {
            r += sprintf(r, "%.*s", (int)(next - line), line);
            continue;
        }
        const char *id = strstr(line, "task=") + 5;
        h += sprintf(h, "%.*s100%.*s%.*s", (int)(id - line), line, (int)(mark - id), id,
                     (int)(next - mark - 12), mark + 12);
    }
}

/* Held back: a small budget replays while journaling, and the provisional samples (i % 4 == 1) stay behind:
 * everything else arrives in order, they arrive at the replay after the namer, first, renamed. Past the held
 * budget they are replayed as they are, counted. */
static void test_provisional_held(void **state)
{
    (void)state;
    struct journal_pair p;
    pair_open(&p, 8192);
    sink_journal_hold_provisional(&p.j);
    for (unsigned i = 0; i < 200; i++) {
        send_sequence(&p.direct_sink, i, false);
        send_sequence(&p.journaled, i, false);
    }
    assert_true(p.j.replays > 10);
    assert_int_equal(p.j.held_over, 0);
    char *held, *rest;
    split_provisional(received_text(&p.direct), &held, &rest);
    const char *before = received_text(&p.deferred);   /* delivered while journaling: no held sample */
    size_t delivered = strlen(before);
    assert_true(delivered > 0 && delivered < strlen(rest));
    assert_memory_equal(before, rest, delivered);
    sink_journal_name_tasks(&p.j, learnt_all, NULL);
    sink_journal_replay(&p.j);
    assert_int_equal(p.j.renamed, 100);               /* i = 1, 5, ..., 197: two samples each */
    assert_int_equal(p.j.held.n, 0);
    /* the renamed samples in the direct order (the held first at the last replay, then the journal's), the
     * rest as it was, and the first held right after what had been delivered */
    const char *after = received_text(&p.deferred);
    char renamed[strlen(after) + 1], others[strlen(after) + 1], *r = renamed, *o = others;
    for (const char *line = after, *next; *line; line = next) {
        next = strchr(line, '\n') + 1;
        const char *task = strstr(line, "task=100");
        if (task && task < next)
            r += sprintf(r, "%.*s", (int)(next - line), line);
        else
            o += sprintf(o, "%.*s", (int)(next - line), line);
    }
    assert_string_equal(renamed, held);
    assert_string_equal(others, rest);
    assert_memory_equal(after + delivered, held, strchr(held, '\n') - held);
    free(held);
    free(rest);
    pair_close(&p);

    /* the most held: the big samples (3 KB each) of 800 sequences pass SINK_JOURNAL_HELD_BUDGET */
    pair_open(&p, 65536);
    sink_journal_hold_provisional(&p.j);
    for (unsigned i = 0; i < 800; i++)
        send_sequence(&p.journaled, i, true);
    assert_true(p.j.replays > 0);
    assert_true(p.j.held.n <= SINK_JOURNAL_HELD_BUDGET && p.j.held.n > SINK_JOURNAL_HELD_BUDGET / 2);
    assert_true(p.j.held_over > 0);
    sink_journal_name_tasks(&p.j, learnt_all, NULL);
    sink_journal_replay(&p.j);
    assert_int_equal(p.j.renamed + p.j.held_over, 400);   /* every provisional sample renamed or counted */
    pair_close(&p);
}

/* The root of the mapping, as the replay gives it. */
static char replayed_root[64];

static void keep_root(void *ctx, const struct sampler_mapping *m)
{
    (void)ctx;
    snprintf(replayed_root, sizeof(replayed_root), "%s", m->root);
}

/* A target's root is held open and journaled as /proc/self/fd/N: the same file opens through it. */
static void test_root_held_open(void **state)
{
    (void)state;
    struct sampler_sink target = { .on_mapping = keep_root };
    struct sink_journal j;
    sink_journal_init(&j, &target, 0);
    struct sampler_sink journaled = sink_journal_sink(&j);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    struct sampler_mapping m = { .start = 1, .end = 2, .path = exe, .root = "/proc/self/root", .executable = true };
    journaled.on_mapping(journaled.ctx, &m);
    journaled.on_mapping(journaled.ctx, &m);          /* the same root: opened once */
    assert_true(j.root_fd >= 0);
    sink_journal_replay(&j);
    assert_memory_equal(replayed_root, "/proc/self/fd/", strlen("/proc/self/fd/"));
    char through[4200];
    snprintf(through, sizeof(through), "%s%s", replayed_root, exe);
    struct stat a, b;
    assert_int_equal(stat(through, &a), 0);
    assert_int_equal(stat(exe, &b), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    /* an empty root (a file opened through /proc/PID/map_files) stays empty */
    m.root = "";
    journaled.on_mapping(journaled.ctx, &m);
    sink_journal_replay(&j);
    assert_string_equal(replayed_root, "");
    sink_journal_free(&j);
    assert_int_equal(j.root_fd, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_equals_direct),
        cmocka_unit_test(test_budget_replays),
        cmocka_unit_test(test_root_held_open),
        cmocka_unit_test(test_provisional_names),
        cmocka_unit_test(test_provisional_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
