/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_native_stacks.c: a running task's worker stack as frames (see task_native_stacks.h): the thread's return
 * addresses from the sampler's thread stack reader, each symbolized (symbolize/, its executable mappings read
 * from /proc/PID/maps) into its inline chain, async suffixes removed as every output names functions, cut where
 * the runtime polls the task (flamegraph's runtime rules, through task_stacks_prepare's classification) and the
 * closure a macro polls its branches in left out (its function's own frame shows the line). */
#include "cli/task_native_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/string_pool.h"
#include "flamegraph/flamegraph.h"
#include "sampler/sampler.h"
#include "symbolize/symbolize.h"

#define MAX_IPS 128
/* stack_frame.runtime's flags where the task's own frames end: a frame that polls one task, a worker loop,
   the frame the task's future follows (flamegraph.h) */
#define TASK_BOUNDARY_FLAGS (1u | 4u | 8u)

struct task_native_stacks {
    struct thread_stack_reader *reader;
    struct symbolizer *symbolizer;
    struct profile *names;             /* where the classification interns its names */
    struct task_stacks *rules;
    struct string_pool pool;
};

/* the executable file mappings of pid, told to the symbolizer */
static int add_mappings(struct symbolizer *s, pid_t pid, const char *root)
{
    char path[64], line[4352];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        unsigned long long start, end, offset;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &at) < 4 || at == 0 ||
            perms[2] != 'x')
            continue;
        char *file = line + at;
        file[strcspn(file, "\n")] = '\0';
        if (file[0] == '/' || strcmp(file, "[vdso]") == 0)
            rc = symbolizer_add_mapping(s, start, end, offset, file, root);
    }
    fclose(f);
    return rc;
}

int task_native_stacks_open(struct task_native_stacks **out, pid_t pid, const char *root, char *err, size_t errlen)
{
    *out = NULL;
    struct task_native_stacks *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (thread_stack_reader_open(&s->reader, pid, root, err, errlen) != 0) {
        free(s);
        return -1;
    }
    s->symbolizer = symbolizer_new(&(struct symbolizer_options){ .demangle = true });
    s->names = profile_new();
    s->rules = s->names ? task_stacks_new(s->names, GROUP_BY_ENTRY, false, NULL, err, errlen) : NULL;
    if (!s->symbolizer || !s->rules || add_mappings(s->symbolizer, pid, root) != 0) {
        if (!err[0] || s->rules)
            snprintf(err, errlen, "cannot read process %d's mappings", (int)pid);
        task_native_stacks_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void task_native_stacks_close(struct task_native_stacks *s)
{
    if (!s)
        return;
    thread_stack_reader_close(s->reader);
    symbolizer_free(s->symbolizer);
    task_stacks_free(s->rules);
    profile_free(s->names);
    string_pool_free(&s->pool);
    free(s);
}

size_t task_native_stack(void *ctx, pid_t tid, struct task_frame *out, size_t max)
{
    struct task_native_stacks *s = ctx;
    uint64_t ips[MAX_IPS];
    enum thread_stack_source source;
    size_t n_ips = thread_stack_read(s->reader, tid, ips, MAX_IPS, &source), n = 0;
    for (size_t i = 0; i < n_ips && n < max; i++) {
        const struct sym_result *r = symbolize_user(s->symbolizer, ips[i], i > 0);
        for (size_t k = 0; k < r->n && n < max; k++) {      /* innermost first */
            const struct sym_frame *f = &r->frames[k];
            struct stack_frame classified;
            if (task_stacks_prepare(s->rules, f->name, f->file, f->line, false, &classified) != 0)
                return n;
            if (classified.runtime & TASK_BOUNDARY_FLAGS)
                return n;                  /* the runtime's poll of the task: the task's frames end here */
            char name[2048];
            snprintf(name, sizeof(name), "%s", f->name ? f->name : "[unknown]");
            bool async = task_stacks_strip_async_suffix(name);
            if (async && symbolize_macro_of(f->path))
                continue;                  /* a macro's closure: its function's frame further out has the line */
            out[n++] = (struct task_frame){ .function = string_pool_intern(&s->pool, name),
                                            .file = f->file ? string_pool_intern(&s->pool, f->file) : NULL,
                                            .line = f->line };
        }
    }
    return n;
}
