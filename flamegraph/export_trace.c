/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_trace.c: writes task polls and CPU samples as Chrome Trace Event JSON (the JSON object format): a
 * process_name and a thread_name per thread, each poll a complete event on its thread's track, each sample an
 * instant event whose "sf" names its stack in a stackFrames table made of the profile nodes the samples end
 * at and their ancestors. Polls are written sorted per thread; one that starts before the previous poll of
 * its thread ended is clipped (or left out when nothing of it remains), so no track shows two overlapping.
 * Each task that waited (the wait profile's intervals) has a track of its own above the recording's, its
 * [suspended] and [runnable] spans complete events on it (a task's waits never overlap: each lies between
 * two of its polls). A poll that a wait of its task overlaps (its start and end records were two polls', the
 * records between them lost) is left out and counted. */
#include "flamegraph/export_internal.h"
#include "flamegraph/json_string.h"

#include "base/u64_map.h"
#include "base/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The recording's own track: no thread has this tid (pid_max is at most 2^22, tids are below it); viewers that
 * sort tracks by tid put it last. */
#define RECORDING_TID 4194304u

/* What the stackFrames table says of a node. */
enum node_mark { NODE_UNUSED, NODE_USED, NODE_IN_TASK, NODE_IN_THREAD };

struct trace_writer {
    const struct profile *profile;
    const struct trace_events *ev;
    FILE *out;
    uint64_t origin_ns;          /* ts 0 */
    const struct profile_node *nodes;
    size_t n_nodes;
    uint8_t *marks;              /* enum node_mark per node */
    uint32_t *order;             /* polls by (tid, start) */
    uint32_t *wait_order;        /* waits by (task, start) */
    struct trace_report report;
    VEC_OF(char) name;           /* scratch: a wait span's name */
};

static int put_string(FILE *out, const char *s)
{
    return json_write_string(out, s, strlen(s));
}

/* ns since the origin as microseconds with three decimals. */
static int put_time(struct trace_writer *w, const char *key, uint64_t t)
{
    uint64_t d = t > w->origin_ns ? t - w->origin_ns : 0;
    return fprintf(w->out, ",\"%s\":%" PRIu64 ".%03u", key, d / 1000, (unsigned)(d % 1000)) < 0 ? -1 : 0;
}

static int put_duration(FILE *out, uint64_t d)
{
    return fprintf(out, ",\"dur\":%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000)) < 0 ? -1 : 0;
}

/* The earliest time of the trace: the recording's start, or an earlier event (clocks need not agree). */
static uint64_t origin_of(const struct trace_events *ev)
{
    uint64_t o = ev->start_ns ? ev->start_ns : UINT64_MAX;
    for (size_t i = 0; i < ev->n_polls; i++)
        if (ev->polls[i].start_ns < o)
            o = ev->polls[i].start_ns;
    for (size_t i = 0; i < ev->n_samples; i++)
        if (ev->samples[i].time_ns < o)
            o = ev->samples[i].time_ns;
    return o == UINT64_MAX ? 0 : o;
}

static int by_thread_and_start(const void *a, const void *b, void *ctx)
{
    const struct trace_poll *polls = ctx;
    const struct trace_poll *x = &polls[*(const uint32_t *)a], *y = &polls[*(const uint32_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    /* the same start: the longer first, so that the shorter is the one found inside it */
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

static int write_metadata(struct trace_writer *w, const char *what, uint32_t tid, const char *name)
{
    if (fprintf(w->out, ",\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":0,"
                        "\"args\":{\"name\":", what, w->ev->pid, tid) < 0 ||
        put_string(w->out, name) != 0 || fputs("}}", w->out) == EOF)
        return -1;
    return 0;
}

/* A task id as the graph shows it (addresses in hex), as a string: ids may not fit a JSON number exactly. */
static int put_task_id(FILE *out, uint64_t id)
{
    return fprintf(out, id > UINT32_MAX ? "\"0x%" PRIx64 "\"" : "\"%" PRIu64 "\"", id) < 0 ? -1 : 0;
}

/* The name of a poll's or wait's task root. */
static const char *root_name(const struct trace_writer *w, uint32_t root)
{
    return root != PROFILE_NO_FRAME && root < profile_frame_count(w->profile) ? profile_frame_name(w->profile, root)
                                                                               : "[task entry unknown]";
}

/* Waits by task, then start. */
static int by_task_and_start(const void *a, const void *b, void *ctx)
{
    const struct trace_wait *waits = ctx;
    const struct trace_wait *x = &waits[*(const uint32_t *)a], *y = &waits[*(const uint32_t *)b];
    if (x->task_id != y->task_id)
        return x->task_id < y->task_id ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Whether a wait of the poll's task overlaps it: the task cannot have waited while it was polled, so the poll's
 * start and end records belong to two polls (the end of the first and the start of the second lost between
 * them). The task's waits never overlap each other, so the last one starting before the poll's end decides. */
static bool poll_contradicted(const struct trace_writer *w, const struct trace_poll *poll, uint64_t end)
{
    const struct trace_wait *waits = w->ev->waits;
    size_t lo = 0, hi = w->ev->n_waits;          /* first wait of a later task, or of this one starting at or
                                                    after the poll's end */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct trace_wait *x = &waits[w->wait_order[mid]];
        if (x->task_id < poll->task_id || (x->task_id == poll->task_id && x->start_ns < end))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    const struct trace_wait *last = &waits[w->wait_order[lo - 1]];
    return last->task_id == poll->task_id && last->end_ns > poll->start_ns;
}

static int write_polls(struct trace_writer *w)
{
    const struct trace_events *ev = w->ev;
    for (size_t i = 0; i < ev->n_waits; i++)
        w->wait_order[i] = (uint32_t)i;
    if (ev->n_waits > 1)
        qsort_r(w->wait_order, ev->n_waits, sizeof(*w->wait_order), by_task_and_start, (void *)ev->waits);
    for (size_t i = 0; i < ev->n_polls; i++)
        w->order[i] = (uint32_t)i;
    if (ev->n_polls > 1)
        qsort_r(w->order, ev->n_polls, sizeof(*w->order), by_thread_and_start, (void *)ev->polls);
    uint32_t tid = 0;
    uint64_t busy_until = 0;      /* end of the thread's last poll written */
    for (size_t i = 0; i < ev->n_polls; i++) {
        const struct trace_poll *poll = &ev->polls[w->order[i]];
        uint64_t start = poll->start_ns, end = poll->end_ns > start ? poll->end_ns : start;
        if (poll_contradicted(w, poll, end)) {
            w->report.contradicted++;
            continue;
        }
        if (i == 0 || poll->tid != tid) {
            tid = poll->tid;
            busy_until = 0;
        } else if (start < busy_until) {
            if (end <= busy_until) {
                w->report.dropped++;
                continue;
            }
            start = busy_until;
            w->report.clipped++;
        }
        busy_until = end;
        if (fputs(",\n{\"name\":", w->out) == EOF || put_string(w->out, root_name(w, poll->root)) != 0 ||
            fprintf(w->out, ",\"cat\":\"poll\",\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, ev->pid,
                    poll->tid) < 0 ||
            put_time(w, "ts", start) != 0 || put_duration(w->out, end - start) != 0 ||
            fputs(",\"args\":{\"task_id\":", w->out) == EOF || put_task_id(w->out, poll->task_id) != 0 ||
            fputs("}}", w->out) == EOF)
            return -1;
        w->report.polls++;
    }
    return 0;
}

/* One span of a wait on its task's track: "ROOT [state]", the await point and task id in args. */
static int write_wait_span(struct trace_writer *w, const struct trace_wait *wait, uint32_t tid, const char *state,
                           uint64_t start, uint64_t end)
{
    FILE *out = w->out;
    const char *root = root_name(w, wait->root);
    size_t root_len = strlen(root), state_len = strlen(state);
    if (vec_reserve(&w->name, root_len + state_len) != 0)
        return -1;
    memcpy(w->name.v, root, root_len);
    memcpy(w->name.v + root_len, state, state_len);
    if (fputs(",\n{\"name\":", out) == EOF || json_write_string(out, w->name.v, root_len + state_len) != 0 ||
        fprintf(out, ",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, w->ev->pid, tid) < 0 ||
        put_time(w, "ts", start) != 0 || put_duration(out, end - start) != 0 ||
        fputs(",\"args\":{\"state\":", out) == EOF || put_string(out, state + 1) != 0 ||
        fputs(",\"task_id\":", out) == EOF || put_task_id(out, wait->task_id) != 0 ||
        (wait->site && (fputs(",\"await\":", out) == EOF || put_string(out, wait->site) != 0)) ||
        fputs("}}", out) == EOF)
        return -1;
    w->report.wait_spans++;
    return 0;
}

/* The waits, each task on a track of its own (tid above the recording's, named when first used). */
static int write_waits(struct trace_writer *w)
{
    const struct trace_events *ev = w->ev;
    struct u64_map track_of;     /* task id -> track number */
    if (u64_map_init(&track_of, 256) != 0)
        return -1;
    uint32_t tracks = 0;
    int rc = 0;
    for (size_t i = 0; i < ev->n_waits && rc == 0; i++) {
        const struct trace_wait *wait = &ev->waits[i];
        uint32_t track;
        if (!u64_map_get(&track_of, wait->task_id, &track)) {
            char name[600];
            track = tracks++;
            snprintf(name, sizeof(name), wait->task_id > UINT32_MAX ? "waits of task 0x%" PRIx64 ": %s"
                                                                    : "waits of task %" PRIu64 ": %s",
                     wait->task_id, root_name(w, wait->root));
            if (track >= UINT32_MAX - RECORDING_TID - 1 || u64_map_put(&track_of, wait->task_id, track) != 0 ||
                write_metadata(w, "thread_name", RECORDING_TID + 1 + track, name) != 0) {
                rc = -1;
                break;
            }
        }
        uint32_t tid = RECORDING_TID + 1 + track;
        uint64_t woken = wait->woken_ns < wait->start_ns ? wait->start_ns
                         : wait->woken_ns > wait->end_ns ? wait->end_ns : wait->woken_ns;
        if (woken > wait->start_ns)
            rc = write_wait_span(w, wait, tid, " [suspended]", wait->start_ns, woken);
        if (rc == 0 && wait->end_ns > woken)
            rc = write_wait_span(w, wait, tid, " [runnable]", woken, wait->end_ns);
    }
    u64_map_free(&track_of);
    return rc;
}

static bool node_known(const struct trace_writer *w, uint32_t node)
{
    return node != PROFILE_NO_NODE && node != 0 && node < w->n_nodes;
}

static int write_samples(struct trace_writer *w)
{
    const struct trace_events *ev = w->ev;
    for (size_t i = 0; i < ev->n_samples; i++) {
        const struct trace_sample *s = &ev->samples[i];
        bool known = node_known(w, s->node);
        const char *leaf = known ? profile_frame_name(w->profile, w->nodes[s->node].frame) : "[stack unknown]";
        if (fputs(",\n{\"name\":", w->out) == EOF || put_string(w->out, leaf) != 0 ||
            fprintf(w->out, ",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32,
                    ev->pid, s->tid) < 0 ||
            put_time(w, "ts", s->time_ns) != 0 ||
            (known && fprintf(w->out, ",\"sf\":%" PRIu32, s->node) < 0) || putc('}', w->out) == EOF)
            return -1;
    }
    return 0;
}

/* Mark the nodes the samples end at and their ancestors, then tell each whether it is under a task root
 * (children come after their parent in the node array: one pass in order). */
static void mark_stacks(struct trace_writer *w)
{
    for (size_t i = 0; i < w->ev->n_samples; i++)
        for (uint32_t n = w->ev->samples[i].node; node_known(w, n) && w->marks[n] == NODE_UNUSED;
             n = w->nodes[n].parent)
            w->marks[n] = NODE_USED;
    for (size_t n = 1; n < w->n_nodes; n++) {
        if (w->marks[n] == NODE_UNUSED)
            continue;
        uint32_t parent = w->nodes[n].parent;
        if (parent != 0) {
            w->marks[n] = w->marks[parent];
            continue;
        }
        struct root_parts root;
        export_parse_root(profile_frame_name(w->profile, w->nodes[n].frame), &root);
        w->marks[n] = root.task ? NODE_IN_TASK : NODE_IN_THREAD;
    }
}

static int write_stack_frames(struct trace_writer *w)
{
    bool first = true;
    for (size_t n = 1; n < w->n_nodes; n++) {
        if (w->marks[n] == NODE_UNUSED)
            continue;
        if (fprintf(w->out, "%s\"%zu\":{\"name\":", first ? "\n" : ",\n", n) < 0 ||
            put_string(w->out, profile_frame_name(w->profile, w->nodes[n].frame)) != 0 ||
            fprintf(w->out, ",\"category\":\"%s\"", w->marks[n] == NODE_IN_TASK ? "task" : "thread") < 0 ||
            (w->nodes[n].parent != 0 && fprintf(w->out, ",\"parent\":\"%" PRIu32 "\"", w->nodes[n].parent) < 0) ||
            putc('}', w->out) == EOF)
            return -1;
        first = false;
    }
    return 0;
}

static int write_other_data(struct trace_writer *w, const struct export_info *info)
{
    FILE *out = w->out;
    if (fputs("\"otherData\":{\"exporter\":", out) == EOF ||
        put_string(out, info && info->exporter ? info->exporter : "taskspy") != 0 ||
        fputs(",\"command\":", out) == EOF || put_string(out, info && info->name ? info->name : "taskspy") != 0)
        return -1;
    uint64_t period = info ? info->period_ns : 0, duration = info ? info->duration_ns : 0;
    return fprintf(out, ",\"pid\":%" PRIu32 ",\"sample_period_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
                        ",\"samples\":%zu,\"polls\":%" PRIu64 ",\"polls_clipped\":%" PRIu64
                        ",\"polls_dropped\":%" PRIu64 ",\"polls_contradicted\":%" PRIu64 ",\"wait_spans\":%" PRIu64 ",\"events_left_out\":%" PRIu64 "}",
                   w->ev->pid, period, duration, w->ev->n_samples, w->report.polls, w->report.clipped,
                   w->report.dropped, w->report.contradicted, w->report.wait_spans, w->ev->left_out) < 0 ? -1 : 0;
}

static int write_document(struct trace_writer *w, const struct export_info *info)
{
    const struct trace_events *ev = w->ev;
    FILE *out = w->out;
    const char *name = info && info->name ? info->name : "taskspy";
    /* the process and the recording's track first: a trace without polls still has a complete event */
    if (fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out) == EOF ||
        fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":0,"
                     "\"args\":{\"name\":", ev->pid, ev->pid) < 0 ||
        put_string(out, name) != 0 || fputs("}}", out) == EOF ||
        write_metadata(w, "thread_name", RECORDING_TID, "taskspy recording") != 0)
        return -1;
    for (size_t i = 0; i < ev->n_threads; i++) {
        const struct trace_thread *t = &ev->threads[i];
        if (t->tid != RECORDING_TID && t->name != PROFILE_NO_FRAME && t->name < profile_frame_count(w->profile) &&
            write_metadata(w, "thread_name", t->tid, profile_frame_name(w->profile, t->name)) != 0)
            return -1;
    }
    if (fprintf(out, ",\n{\"name\":\"recording\",\"cat\":\"recording\",\"ph\":\"X\",\"pid\":%" PRIu32
                     ",\"tid\":%u", ev->pid, RECORDING_TID) < 0 ||
        put_time(w, "ts", ev->start_ns ? ev->start_ns : w->origin_ns) != 0 ||
        put_duration(out, info ? info->duration_ns : 0) != 0 || putc('}', out) == EOF)
        return -1;
    if (write_polls(w) != 0 || write_waits(w) != 0 || write_samples(w) != 0 || fputs("\n],\"stackFrames\":{", out) == EOF)
        return -1;
    mark_stacks(w);
    if (write_stack_frames(w) != 0 || fputs("\n},", out) == EOF || write_other_data(w, info) != 0 ||
        fputs("}\n", out) == EOF)
        return -1;
    return ferror(out) ? -1 : 0;
}

int profile_write_trace(const struct profile *p, const struct trace_events *ev, const struct export_info *info,
                        FILE *out, struct trace_report *report)
{
    struct trace_writer w = { .profile = p, .ev = ev, .out = out, .origin_ns = origin_of(ev) };
    w.nodes = profile_nodes(p, &w.n_nodes);
    if (ev->n_polls > UINT32_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    w.marks = calloc(w.n_nodes ? w.n_nodes : 1, sizeof(*w.marks));
    w.order = malloc((ev->n_polls ? ev->n_polls : 1) * sizeof(*w.order));
    w.wait_order = malloc((ev->n_waits ? ev->n_waits : 1) * sizeof(*w.wait_order));
    int rc = -1;
    if (ev->n_waits > UINT32_MAX) {
        errno = EOVERFLOW;
    } else if (!w.marks || !w.order || !w.wait_order) {
        errno = ENOMEM;
    } else {
        errno = 0;
        rc = write_document(&w, info);
        if (rc != 0 && errno == 0)
            errno = EIO;
    }
    free(w.marks);
    free(w.order);
    free(w.wait_order);
    vec_free(&w.name);
    if (report)
        *report = w.report;
    return rc;
}
