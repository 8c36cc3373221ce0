/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_view.h: what `taskspy top`'s files share (SPEC section 3c): the session (the view's model in tasks/, how
 * frames are made and when the view ends), the order and filter of a frame's rows, and the two ways a frame is
 * shown: printed (batch mode, cli/top_print.c: text, or one JSON object a line) and drawn full-screen
 * (cli/top_screen.c, ncurses). */
#ifndef TASKSPY_TOP_VIEW_H
#define TASKSPY_TOP_VIEW_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "tasks/tasks.h"

enum top_sort { TOP_SORT_CPU, TOP_SORT_COUNT, TOP_SORT_WAIT, TOP_SORT_ID };
#define TOP_SORT_NAMES "cpu, count, wait, id"

struct top_session {
    pid_t pid;
    struct task_top *model;
    double interval_s;               /* between frames */
    unsigned frequency;              /* CPU samples a second (0: not sampling) */
    const char *sampling_note;       /* why there are no CPU shares, or NULL */
    enum task_top_rows rows;
    enum top_sort sort;
    char filter[128];                /* rows whose root, await point or leaf hold it ("" all) */
    volatile sig_atomic_t *stop;     /* set by SIGINT / SIGTERM / SIGHUP, or when the sampler ends */
    /* true when the target exited (its process gone, or the snapshot loop saw it go) */
    bool (*target_gone)(struct top_session *s);
};

/* The frame's rows in the session's order (the largest first; ties by id), those that do not match the filter
 * moved after the others: returns how many match. */
size_t top_arrange_rows(const struct top_session *s, struct task_top_row *rows, size_t n);
/* A row's await point ("fn @ file:line (select!)") into buf, "" when it has none. */
const char *top_row_await(const struct task_top_row *r, char *buf, size_t len);
/* A row's warnings as words ("lost-waker,blocking"), none when it has none; returns buf. */
const char *top_warning_words(unsigned bits, const char *none, char *buf, size_t len);
/* A duration as the table shows it: "850ms", "12.3s", "4m05s", "2h07m". */
const char *top_duration(double s, char *buf, size_t len);

/* One frame printed: text (the header's lines, the table, the warnings) or one JSON object on one line (SPEC
 * section 3c). Returns 0, or -1 when writing failed. */
int top_print_text(FILE *out, const struct top_session *s, const struct task_top_frame *f, size_t shown);
int top_print_json(FILE *out, const struct top_session *s, const struct task_top_frame *f, size_t shown);

/* The full-screen view until q, a stop signal or the target's exit; the terminal as it was after. Returns 0, or
 * -1 with a line in err (no terminal, or one curses cannot drive). */
int top_screen_run(struct top_session *s, char *err, size_t errlen);

#endif
