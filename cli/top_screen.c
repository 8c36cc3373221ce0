/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_screen.c: `taskspy top`'s full-screen view (ncurses): the header (runtime, tasks by state, spawned and
 * ended, workers, queues, CPU), the table (a row per await point or per task, the selected one highlighted), the
 * warnings panel and a line of keys; Enter shows the selected row's tree and its hottest on-CPU frames. A new
 * frame every interval; keys are read every 100 ms between. The terminal is left as it was on q, on a stop signal
 * (Ctrl-C) and when the target exits. Lines are ASCII (the tree's branches too), cut at the screen's width. */
#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/task_dump.h"
#include "cli/top_view.h"

#define KEY_WAIT_MS 100
#define HOT_SHOWN 10
#define NOTES_SHOWN 6
#define KEY_ESCAPE 27

struct screen {
    struct top_session *s;
    struct task_top_frame frame;
    bool have_frame;
    size_t shown;                     /* the frame's rows that match the filter (first in it) */
    size_t selected, top;             /* the selected row, the first row drawn */
    bool detail;                      /* the selected row's tree and hottest frames */
    struct task_top_row row;          /* (that row, as it was when Enter was pressed) */
    bool editing;                     /* typing a filter after '/' */
    char edit[sizeof(((struct top_session *)0)->filter)];
};

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Line y: text cut at the screen's width, the rest of the line cleared. */
static void line(int y, int attributes, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(int y, int attributes, const char *fmt, ...)
{
    if (y >= LINES)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (char *c = buf; *c; c++)          /* (the target's names: what is not printable ASCII shown as '?') */
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
    attrset(attributes);
    mvaddnstr(y, 0, buf, COLS);
    clrtoeol();
    attrset(A_NORMAL);
}

static const char *sort_name(enum top_sort k)
{
    static const char *const names[] = { "cpu", "count", "wait", "id" };
    return names[k];
}

static int draw_header(struct screen *sc)
{
    const struct top_session *s = sc->s;
    const struct task_top_frame *f = &sc->frame;
    int y = 0;
    line(y++, A_BOLD, "taskspy top: pid %d, %s, %.0f s  [sort %s, rows %s%s%s%s]", (int)s->pid,
         f->runtime ? f->runtime : "tokio", f->uptime_s, sort_name(s->sort),
         s->rows == TASK_TOP_TASKS ? "tasks" : "groups", s->filter[0] ? ", filter \"" : "", s->filter,
         s->filter[0] ? "\"" : "");
    line(y++, A_NORMAL, "tasks %zu: %zu idle, %zu scheduled, %zu running, %zu complete; %s%" PRIu64 " spawned, %" PRIu64
         " ended since the view began", f->tasks, f->states[TASK_IDLE], f->states[TASK_SCHEDULED],
         f->states[TASK_RUNNING], f->states[TASK_COMPLETE], f->spawned_known ? "" : "at least ", f->spawned, f->ended);
    char workers[900];
    size_t at = 0;
    workers[0] = '\0';
    for (size_t i = 0; i < f->n_workers && at + 80 < sizeof(workers); i++) {
        const struct task_top_worker *w = &f->workers[i];
        char task[32] = "-";
        if (w->task)
            snprintf(task, sizeof(task), "%" PRIu64, w->task);
        if (w->index >= 0)
            at += (size_t)snprintf(workers + at, sizeof(workers) - at, "%sw%" PRId64 " task %s q %" PRId64 " busy %.0f%%",
                                   at ? " | " : "", w->index, task, w->local_queue, w->busy_percent);
        else
            at += (size_t)snprintf(workers + at, sizeof(workers) - at, "%sblock_on %d task %s busy %.0f%%",
                                   at ? " | " : "", (int)w->tid, task, w->busy_percent);
    }
    line(y++, A_NORMAL, "workers: %s", workers[0] ? workers : "none polling");
    char global[32] = "?", blocking[48] = "?";
    if (f->global_queue >= 0)
        snprintf(global, sizeof(global), "%" PRId64, f->global_queue);
    if (f->blocking_threads >= 0)
        snprintf(blocking, sizeof(blocking), "%" PRId64 " (%" PRId64 " idle)", f->blocking_threads, f->blocking_idle);
    if (f->cpu_percent >= 0)
        line(y++, A_NORMAL, "global queue %s, blocking threads %s; cpu %.1f%% (%.1f%% in tasks) at %u Hz", global,
             blocking, f->cpu_percent, f->cpu_in_tasks_percent, s->frequency);
    else
        line(y++, A_NORMAL, "global queue %s, blocking threads %s; cpu not sampled (%s)", global, blocking,
             s->sampling_note ? s->sampling_note : "no samples yet");
    if (f->target_gone)
        line(y++, A_BOLD, "the target exited");
    return y;
}

static void draw_row(int y, const struct screen *sc, const struct task_top_row *r, bool selected)
{
    char cpu[16] = "-", await_s[16], words[96], where[400];
    if (r->cpu_percent >= 0)
        snprintf(cpu, sizeof(cpu), "%.1f", r->cpu_percent);
    top_warning_words(r->warnings, "", words, sizeof(words));
    char first[24];
    snprintf(first, sizeof(first), sc->s->rows == TASK_TOP_TASKS ? "%6" PRIu64 : "%6zu",
             sc->s->rows == TASK_TOP_TASKS ? r->id : (uint64_t)r->count);
    line(y, selected ? A_REVERSE : A_NORMAL, "%s %4zu %5zu %4zu %6s %5.0f %5.0f %5.0f %7s  %-11s %s | %s | %s%s%s%s",
         first, r->states[TASK_IDLE], r->states[TASK_SCHEDULED], r->states[TASK_RUNNING], cpu, r->busy_percent,
         r->scheduled_percent, r->idle_percent, top_duration(r->await_s, await_s, sizeof(await_s)), words,
         r->root ? r->root : "[task entry unknown]", top_row_await(r, where, sizeof(where))[0] ? where : "-",
         r->leaf ? r->leaf : "-", r->detail[0] ? " (" : "", r->detail, r->detail[0] ? ")" : "");
}

static void draw_table(struct screen *sc, int y)
{
    const struct task_top_frame *f = &sc->frame;
    size_t notes = f->n_notes < NOTES_SHOWN ? f->n_notes : NOTES_SHOWN;
    int bottom = LINES - 1 - (notes ? (int)notes + 1 : 0);      /* the keys' line, the warnings panel */
    line(y++, A_BOLD, "%6s %4s %5s %4s %6s %5s %5s %5s %7s  %-11s %s", sc->s->rows == TASK_TOP_TASKS ? "ID" : "COUNT",
         "IDLE", "SCHED", "RUN", "CPU%", "BUSY%", "SCHD%", "IDLE%", "AWAIT", "WARNINGS", "ROOT | AWAIT POINT | LEAF");
    int room = bottom - y;
    if (sc->selected >= sc->shown)
        sc->selected = sc->shown ? sc->shown - 1 : 0;
    if (sc->selected < sc->top)
        sc->top = sc->selected;
    if (room > 0 && sc->selected >= sc->top + (size_t)room)
        sc->top = sc->selected - (size_t)room + 1;
    for (int k = 0; k < room; k++) {
        size_t i = sc->top + (size_t)k;
        if (i < sc->shown)
            draw_row(y + k, sc, &f->rows[i], i == sc->selected);
        else
            line(y + k, A_NORMAL, "%s", i == 0 && k == 0 ? (sc->s->filter[0] ? "(no row matches the filter)" : "(no tasks)")
                                                         : "");
    }
    if (notes) {
        line(bottom, A_BOLD, "warnings (%zu):", f->n_notes);
        for (size_t i = 0; i < notes; i++)
            line(bottom + 1 + (int)i, A_NORMAL, " %s: %s", task_top_warning_word(f->notes[i].kind), f->notes[i].text);
    }
}

/* The tree's lines as task_dump_tree draws them, in ASCII. */
static int draw_tree(struct screen *sc, int y, int bottom)
{
    const struct task_node *nodes;
    size_t n = task_top_tree(sc->s->model, sc->row.group, &nodes);
    struct task_info t = { .id = sc->row.id, .root = sc->row.root, .nodes = (struct task_node *)nodes, .n_nodes = n };
    const struct task_info *one[1] = { &t };
    struct task_group g = { .tasks = one, .n = 1 };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return y;
    task_dump_tree(out, &g, "    ");
    fclose(out);
    static const char *const from[] = { "\u251c\u2500 ", "\u2514\u2500 ", "\u2502  " }, *const to[] = { "|- ", "`- ", "|  " };
    for (char *l = text; l && *l && y < bottom;) {
        char *end = strchr(l, '\n');
        if (end)
            *end = '\0';
        char ascii[1024];
        size_t o = 0;
        for (const char *c = l; *c && o + 4 < sizeof(ascii);) {
            size_t k = 0;
            while (k < 3 && strncmp(c, from[k], strlen(from[k])) != 0)
                k++;
            if (k < 3) {
                memcpy(ascii + o, to[k], 3);
                o += 3;
                c += strlen(from[k]);
            } else {
                ascii[o++] = *c++;
            }
        }
        ascii[o] = '\0';
        line(y++, A_NORMAL, "%s", ascii);
        l = end ? end + 1 : l + strlen(l);
    }
    free(text);
    return y;
}

static void draw_detail(struct screen *sc, int y)
{
    const struct task_top_row *r = &sc->row;
    int bottom = LINES - 1;
    char where[400], await_s[16];
    if (sc->s->rows == TASK_TOP_TASKS)
        line(y++, A_BOLD, "task %" PRIu64 ": %s", r->id, r->root ? r->root : "[task entry unknown]");
    else
        line(y++, A_BOLD, "%zu task%s of %s", r->count, r->count == 1 ? "" : "s",
             r->root ? r->root : "[task entry unknown]");
    if (r->root_file)
        line(y++, A_NORMAL, "root future declared at %s:%u", r->root_file, r->root_line);
    line(y++, A_NORMAL, "at %s for %s", top_row_await(r, where, sizeof(where))[0] ? where : "no await point read",
         top_duration(r->await_s, await_s, sizeof(await_s)));
    line(y++, A_NORMAL, "%s", "");
    line(y++, A_BOLD, "async backtrace (tree):");
    y = draw_tree(sc, y, bottom);
    line(y++, A_NORMAL, "%s", "");
    const char *names[HOT_SHOWN];
    uint64_t samples[HOT_SHOWN];
    size_t n = task_top_hot_frames(sc->s->model, r->group, names, samples, HOT_SHOWN);
    line(y++, A_BOLD, "hottest on-CPU frames of %s (samples since the view began):",
         sc->s->rows == TASK_TOP_TASKS ? "the tasks at this await point" : "these tasks");
    if (n == 0)
        line(y++, A_NORMAL, "    %s", sc->s->frequency ? "(no sample in these tasks)" : "(not sampled)");
    for (size_t i = 0; i < n && y < bottom; i++)
        line(y++, A_NORMAL, "    %8" PRIu64 "  %s", samples[i], names[i]);
    const struct task_top_frame *f = &sc->frame;
    for (size_t i = 0; i < f->n_notes && y < bottom; i++)
        if (f->notes[i].group == r->group)
            line(y++, A_NORMAL, "%s: %s", task_top_warning_word(f->notes[i].kind), f->notes[i].text);
    while (y < bottom)
        line(y++, A_NORMAL, "%s", "");
}

static void draw(struct screen *sc)
{
    if (!sc->have_frame) {
        line(0, A_BOLD, "taskspy top: pid %d: reading tasks...", (int)sc->s->pid);
        for (int y = 1; y < LINES; y++)
            line(y, A_NORMAL, "%s", "");
    } else {
        int y = draw_header(sc);
        line(y++, A_NORMAL, "%s", "");
        if (sc->detail)
            draw_detail(sc, y);
        else
            draw_table(sc, y);
    }
    if (sc->editing)
        line(LINES - 1, A_REVERSE, "filter: %s_   (Enter: apply, Esc: cancel)", sc->edit);
    else if (sc->detail)
        line(LINES - 1, A_REVERSE, "Enter/Esc: back  q: quit");
    else
        line(LINES - 1, A_REVERSE, "c/n/w/i: sort by cpu/count/wait/id  t: %s  /: filter  Enter: tree and hot frames  "
             "q: quit", sc->s->rows == TASK_TOP_TASKS ? "rows per await point" : "rows per task");
    refresh();
}

static void take_frame(struct screen *sc)
{
    if (task_top_frame(sc->s->model, sc->s->rows, &sc->frame) != 0)
        return;
    sc->have_frame = true;
    sc->shown = top_arrange_rows(sc->s, sc->frame.rows, sc->frame.n_rows);
}

/* A key while a filter is typed. */
static void edit_key(struct screen *sc, int ch)
{
    size_t n = strlen(sc->edit);
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        snprintf(sc->s->filter, sizeof(sc->s->filter), "%s", sc->edit);
        sc->editing = false;
        sc->selected = sc->top = 0;
        sc->shown = top_arrange_rows(sc->s, sc->frame.rows, sc->frame.n_rows);
    } else if (ch == KEY_ESCAPE) {
        sc->editing = false;
    } else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n > 0) {
        sc->edit[n - 1] = '\0';
    } else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(sc->edit)) {
        sc->edit[n] = (char)ch;
        sc->edit[n + 1] = '\0';
    }
}

/* A key of the table or the detail view; false: quit. */
static bool table_key(struct screen *sc, int ch)
{
    struct top_session *s = sc->s;
    enum top_sort sorts[] = { TOP_SORT_CPU, TOP_SORT_COUNT, TOP_SORT_WAIT, TOP_SORT_ID };
    const char *sort_keys = "cnwi";
    const char *sort = ch > 0 && ch < 0x80 ? strchr(sort_keys, ch) : NULL;
    if (ch == 'q' || ch == 'Q')
        return false;
    if (sc->detail) {
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == KEY_ESCAPE || ch == KEY_LEFT)
            sc->detail = false;
        return true;
    }
    if (sort && *sort) {
        s->sort = sorts[sort - sort_keys];
        sc->shown = top_arrange_rows(s, sc->frame.rows, sc->frame.n_rows);
    } else if (ch == 't') {
        s->rows = s->rows == TASK_TOP_TASKS ? TASK_TOP_GROUPS : TASK_TOP_TASKS;
        sc->selected = sc->top = 0;
        take_frame(sc);
    } else if (ch == '/') {
        sc->editing = true;
        snprintf(sc->edit, sizeof(sc->edit), "%s", s->filter);
    } else if ((ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == KEY_RIGHT) && sc->selected < sc->shown) {
        sc->row = sc->frame.rows[sc->selected];
        sc->detail = true;
    } else if ((ch == KEY_DOWN || ch == 'j') && sc->selected + 1 < sc->shown) {
        sc->selected++;
    } else if ((ch == KEY_UP || ch == 'k') && sc->selected > 0) {
        sc->selected--;
    } else if (ch == KEY_NPAGE) {
        sc->selected = sc->selected + 10 < sc->shown ? sc->selected + 10 : (sc->shown ? sc->shown - 1 : 0);
    } else if (ch == KEY_PPAGE) {
        sc->selected = sc->selected > 10 ? sc->selected - 10 : 0;
    } else if (ch == KEY_HOME) {
        sc->selected = 0;
    }
    return true;
}

int top_screen_run(struct top_session *s, char *err, size_t errlen)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(err, errlen, "top: the full-screen view needs a terminal (for scripts: taskspy top -b)");
        return -1;
    }
    SCREEN *screen = newterm(NULL, stdout, stdin);
    if (!screen) {
        snprintf(err, errlen, "top: cannot drive the terminal (TERM=%s); taskspy top -b prints frames instead",
                 getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    set_term(screen);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(50);
    curs_set(0);
    timeout(KEY_WAIT_MS);
    struct screen *sc = calloc(1, sizeof(*sc));
    int rc = 0;
    if (!sc) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    uint64_t period = (uint64_t)(s->interval_s * 1e9), next = monotonic_ns() + period;
    bool running = sc != NULL;
    if (sc)
        sc->s = s;
    while (running && !*s->stop) {
        if (monotonic_ns() >= next) {
            if (s->target_gone(s))
                task_top_target_gone(s->model);
            take_frame(sc);
            next += period;
            if (sc->frame.target_gone) {
                draw(sc);
                break;
            }
        }
        draw(sc);
        int ch = getch();
        if (ch == KEY_RESIZE || ch == ERR)
            continue;
        if (sc->editing)
            edit_key(sc, ch);
        else
            running = table_key(sc, ch);
    }
    endwin();
    delscreen(screen);
    free(sc);
    return rc;
}
