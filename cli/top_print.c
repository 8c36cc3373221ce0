/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_print.c: `taskspy top -b`'s frames (SPEC section 3c), and the order and words the full-screen view shares
 * with them. A text frame:
 *
 *   taskspy top: pid 1234, tokio 1.24.2, frame 3 at 3.0 s (every 1.0 s)
 *   tasks: 108 (100 idle, 4 scheduled, 2 running, 0 complete, 0 changing); 7 spawned, 3 ended since the view began
 *   worker 0 tid 1235 tokio-runtime-w: task 17, local queue 3, busy 98%
 *   global queue 0; blocking threads 1 (1 idle)
 *   cpu: 197.9% of one CPU (195.7% in tasks), sampled at 99 Hz
 *
 *    COUNT  IDLE SCHED   RUN   CPU%  BUSY% SCHED%  IDLE%   AWAIT  WARNINGS     ROOT | AWAIT POINT | LEAF
 *       50    50     0     0    0.0    0.0    0.0  100.0    3.0s  -            app::park (main.rs:20) | ...
 *
 *   warnings:
 *     lost-waker: task 57 at app::park_forever @ main.rs:95: This task has lost its waker, ...
 *
 * A JSON frame is one object on one line: the header's figures, "rows" and "warnings". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_out.h"
#include "cli/top_view.h"

#define HOT_IN_JSON 5                 /* hottest frames per row in a JSON frame */

const char *top_duration(double s, char *buf, size_t len)
{
    if (s < 1)
        snprintf(buf, len, "%.0fms", s * 1000);
    else if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    return buf;
}

const char *top_row_await(const struct task_top_row *r, char *buf, size_t len)
{
    const struct task_frame *f = r->await_frame;
    buf[0] = '\0';
    if (f && f->function && f->file)
        snprintf(buf, len, "%s @ %s:%u%s%s%s", f->function, f->file, f->line, f->macro ? " (" : "",
                 f->macro ? f->macro : "", f->macro ? ")" : "");
    else if (f && f->function)
        snprintf(buf, len, "%s", f->function);
    return buf;
}

static bool contains(const char *text, const char *part)
{
    return text && strstr(text, part);
}

static bool matches(const struct task_top_row *r, const char *filter)
{
    char where[512];
    return !filter[0] || contains(r->root, filter) || contains(top_row_await(r, where, sizeof(where)), filter) ||
           contains(r->leaf, filter) || contains(r->detail, filter);
}

/* (qsort_r's comparison: the sort key is its context) */
static int compare_rows(const void *x, const void *y, void *key)
{
    const struct task_top_row *a = x, *b = y;
    enum top_sort sort_key = *(const enum top_sort *)key;
    double da = 0, db = 0;
    switch (sort_key) {
    case TOP_SORT_CPU: da = a->cpu_percent; db = b->cpu_percent; break;
    case TOP_SORT_COUNT: da = (double)a->count; db = (double)b->count; break;
    case TOP_SORT_WAIT: da = a->await_s; db = b->await_s; break;
    case TOP_SORT_ID: break;
    }
    if (da != db)
        return da < db ? 1 : -1;
    if (sort_key != TOP_SORT_COUNT && a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return (a->id > b->id) - (a->id < b->id);
}

size_t top_arrange_rows(const struct top_session *s, struct task_top_row *rows, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)        /* the matching rows first */
        if (matches(&rows[i], s->filter)) {
            struct task_top_row r = rows[kept];
            rows[kept++] = rows[i];
            rows[i] = r;
        }
    enum top_sort key = s->sort;
    qsort_r(rows, kept, sizeof(*rows), compare_rows, &key);
    return kept;
}

static const char *state_names[] = { "idle", "scheduled", "running", "complete", "changing" };

const char *top_warning_words(unsigned bits, const char *none, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (unsigned b = 1; b < (1u << TASK_TOP_WARNINGS) && at + 1 < len; b <<= 1)
        if (bits & b)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "", task_top_warning_word(b));
    if (!at)
        snprintf(buf, len, "%s", none);
    return buf;
}

static void print_header(FILE *out, const struct top_session *s, const struct task_top_frame *f)
{
    fprintf(out, "taskspy top: pid %d, %s, frame %" PRIu64 " at %.1f s (every %.1f s)%s\n", (int)s->pid,
            f->runtime ? f->runtime : "tokio", f->number, f->uptime_s, s->interval_s,
            f->target_gone ? ", the target exited" : "");
    fprintf(out, "tasks: %zu (%zu idle, %zu scheduled, %zu running, %zu complete, %zu changing); %s%" PRIu64
            " spawned, %" PRIu64 " ended since the view began\n", f->tasks, f->states[TASK_IDLE],
            f->states[TASK_SCHEDULED], f->states[TASK_RUNNING], f->states[TASK_COMPLETE], f->states[TASK_CHANGING],
            f->spawned_known ? "" : "at least ", f->spawned, f->ended);
    for (size_t i = 0; i < f->n_workers; i++) {
        const struct task_top_worker *w = &f->workers[i];
        if (w->index >= 0)
            fprintf(out, "worker %" PRId64 " tid %d %s: ", w->index, (int)w->tid, w->name);
        else
            fprintf(out, "thread tid %d %s (block_on): ", (int)w->tid, w->name);
        if (w->task)
            fprintf(out, "task %" PRIu64, w->task);
        else
            fprintf(out, "no task");
        if (w->local_queue >= 0)
            fprintf(out, ", local queue %" PRId64, w->local_queue);
        fprintf(out, ", busy %.0f%%\n", w->busy_percent);
    }
    if (f->global_queue >= 0)
        fprintf(out, "global queue %" PRId64, f->global_queue);
    else
        fprintf(out, "global queue not read");
    if (f->blocking_threads >= 0)
        fprintf(out, "; blocking threads %" PRId64 " (%" PRId64 " idle)\n", f->blocking_threads, f->blocking_idle);
    else
        fprintf(out, "; blocking threads not read\n");
    if (f->cpu_percent >= 0)
        fprintf(out, "cpu: %.1f%% of one CPU (%.1f%% in tasks, %.1f%% of it in tasks no snapshot listed), sampled at "
                "%u Hz\n", f->cpu_percent, f->cpu_in_tasks_percent, f->cpu_unlisted_percent, s->frequency);
    else
        fprintf(out, "cpu: not sampled (%s)\n", s->sampling_note ? s->sampling_note : "no samples yet");
}

int top_print_text(FILE *out, const struct top_session *s, const struct task_top_frame *f, size_t shown)
{
    print_header(out, s, f);
    fprintf(out, "\n%7s %5s %5s %5s %6s %6s %6s %6s %7s  %-12s %s\n", s->rows == TASK_TOP_TASKS ? "ID" : "COUNT",
            "IDLE", "SCHED", "RUN", "CPU%", "BUSY%", "SCHED%", "IDLE%", "AWAIT", "WARNINGS",
            "ROOT | AWAIT POINT | LEAF");
    for (size_t i = 0; i < shown; i++) {
        const struct task_top_row *r = &f->rows[i];
        char cpu[16], await_s[16], words[96], where[512];
        if (r->cpu_percent >= 0)
            snprintf(cpu, sizeof(cpu), "%.1f", r->cpu_percent);
        else
            snprintf(cpu, sizeof(cpu), "-");
        top_warning_words(r->warnings, "-", words, sizeof(words));
        if (s->rows == TASK_TOP_TASKS)
            fprintf(out, "%7" PRIu64, r->id);
        else
            fprintf(out, "%7zu", r->count);
        fprintf(out, " %5zu %5zu %5zu %6s %6.1f %6.1f %6.1f %7s  %-12s %s", r->states[TASK_IDLE],
                r->states[TASK_SCHEDULED], r->states[TASK_RUNNING], cpu, r->busy_percent, r->scheduled_percent,
                r->idle_percent, top_duration(r->await_s, await_s, sizeof(await_s)), words,
                r->root ? r->root : "[task entry unknown]");
        if (r->root_file)
            fprintf(out, " (%s:%u)", r->root_file, r->root_line);
        fprintf(out, " | %s |", top_row_await(r, where, sizeof(where))[0] ? where : "-");
        if (r->leaf)
            fprintf(out, " %s%s%s%s", r->leaf, r->detail[0] ? " (" : "", r->detail, r->detail[0] ? ")" : "");
        else
            fprintf(out, " -");
        fputc('\n', out);
    }
    if (f->n_notes) {
        fprintf(out, "\nwarnings:\n");
        for (size_t i = 0; i < f->n_notes; i++)
            fprintf(out, "  %s: %s\n", task_top_warning_word(f->notes[i].kind), f->notes[i].text);
    }
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}

static void put_percent(FILE *out, double v)
{
    if (v < 0)
        fputs("null", out);
    else
        fprintf(out, "%.2f", v);
}

static void put_states(FILE *out, const size_t *states)
{
    fputc('{', out);
    for (int k = 0; k <= TASK_CHANGING; k++)
        fprintf(out, "%s\"%s\": %zu", k ? ", " : "", state_names[k], states[k]);
    fputc('}', out);
}

static void put_row(FILE *out, const struct top_session *s, const struct task_top_row *r)
{
    fprintf(out, "{\"group\": %" PRIu32 ", ", r->group);
    if (s->rows == TASK_TOP_TASKS)
        fprintf(out, "\"task\": %" PRIu64 ", ", r->id);
    else
        fprintf(out, "\"task\": null, \"first_task\": %" PRIu64 ", ", r->id);
    fprintf(out, "\"count\": %zu, \"states\": ", r->count);
    put_states(out, r->states);
    fputs(", \"cpu_percent\": ", out);
    put_percent(out, r->cpu_percent);
    fprintf(out, ", \"busy_percent\": %.2f, \"scheduled_percent\": %.2f, \"idle_percent\": %.2f, \"await_s\": %.3f, "
            "\"root\": ", r->busy_percent, r->scheduled_percent, r->idle_percent, r->await_s);
    json_put_string(out, r->root);
    fputs(", \"root_file\": ", out);
    json_put_string(out, r->root_file);
    fputs(", \"root_line\": ", out);
    json_put_unsigned(out, r->root_line, 0);
    fputs(", \"await\": ", out);
    const struct task_frame *a = r->await_frame;
    if (a && a->function) {
        fputc('{', out);
        json_put_frame_fields(out, a);
        fputs(", \"macro\": ", out);
        json_put_string(out, a->macro);
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(", \"leaf\": ", out);
    json_put_string(out, r->leaf);
    fputs(", \"detail\": ", out);
    json_put_string(out, r->detail[0] ? r->detail : NULL);
    fputs(", \"warnings\": [", out);
    int k = 0;
    for (unsigned b = 1; b < (1u << TASK_TOP_WARNINGS); b <<= 1)
        if (r->warnings & b) {
            fprintf(out, "%s", k++ ? ", " : "");
            json_put_string(out, task_top_warning_word(b));
        }
    fputs("], \"hot_frames\": [", out);
    const char *names[HOT_IN_JSON];
    uint64_t samples[HOT_IN_JSON];
    size_t n = task_top_hot_frames(s->model, r->group, names, samples, HOT_IN_JSON);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"function\": " : "{\"function\": ", out);
        json_put_string(out, names[i]);
        fprintf(out, ", \"samples\": %" PRIu64 "}", samples[i]);
    }
    fputs("]}", out);
}

int top_print_json(FILE *out, const struct top_session *s, const struct task_top_frame *f, size_t shown)
{
    fprintf(out, "{\"schema\": 1, \"frame\": %" PRIu64 ", \"uptime_s\": %.3f, \"interval_s\": %.3f, \"pid\": %d, "
            "\"runtime\": ", f->number, f->uptime_s, f->interval_s, (int)s->pid);
    json_put_string(out, f->runtime);
    fprintf(out, ", \"tasks\": %zu, \"states\": ", f->tasks);
    put_states(out, f->states);
    fprintf(out, ", \"spawned\": %" PRIu64 ", \"ended\": %" PRIu64 ", \"spawned_exact\": %s, \"workers\": [",
            f->spawned, f->ended, f->spawned_known ? "true" : "false");
    for (size_t i = 0; i < f->n_workers; i++) {
        const struct task_top_worker *w = &f->workers[i];
        fprintf(out, "%s{\"tid\": %d, \"name\": ", i ? ", " : "", (int)w->tid);
        json_put_string(out, w->name);
        fputs(", \"index\": ", out);
        json_put_signed(out, w->index, -1);
        fputs(", \"task\": ", out);
        json_put_unsigned(out, w->task, 0);
        fputs(", \"local_queue\": ", out);
        json_put_signed(out, w->local_queue, -1);
        fprintf(out, ", \"busy_percent\": %.2f}", w->busy_percent);
    }
    fputs("], \"global_queue\": ", out);
    json_put_signed(out, f->global_queue, -1);
    fputs(", \"blocking_threads\": ", out);
    json_put_signed(out, f->blocking_threads, -1);
    fputs(", \"blocking_idle\": ", out);
    json_put_signed(out, f->blocking_idle, -1);
    fputs(", \"cpu_percent\": ", out);
    put_percent(out, f->cpu_percent);
    fputs(", \"cpu_in_tasks_percent\": ", out);
    put_percent(out, f->cpu_in_tasks_percent);
    fputs(", \"cpu_unlisted_percent\": ", out);
    put_percent(out, f->cpu_unlisted_percent);
    fputs(", \"sample_frequency\": ", out);
    json_put_unsigned(out, s->frequency, 0);
    fprintf(out, ", \"rows_are\": \"%s\", \"rows\": [", s->rows == TASK_TOP_TASKS ? "tasks" : "groups");
    for (size_t i = 0; i < shown; i++) {
        if (i)
            fputs(", ", out);
        put_row(out, s, &f->rows[i]);
    }
    fputs("], \"warnings\": [", out);
    for (size_t i = 0; i < f->n_notes; i++) {
        const struct task_top_note *n = &f->notes[i];
        fprintf(out, "%s{\"kind\": \"%s\", \"task\": ", i ? ", " : "", task_top_warning_word(n->kind));
        json_put_unsigned(out, n->task, 0);
        fprintf(out, ", \"group\": %" PRIu32 ", \"text\": ", n->group);
        json_put_string(out, n->text);
        fputc('}', out);
    }
    fprintf(out, "], \"target_exited\": %s}\n", f->target_gone ? "true" : "false");
    return ferror(out) ? -1 : 0;
}
