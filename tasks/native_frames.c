/* SPDX-License-Identifier: GPL-3.0-or-later */
/* native_frames.c: a running task's worker stack (the return addresses task_reader_options.worker_stack read) as
 * frames, innermost first: an address in the executable through the DWARF the reader already holds (its inline
 * chain with lines, dwarf_frames_at: no second reading of the debug information), another (the C library's
 * system-call wrappers) by the function symbol of its object that holds it; async suffixes removed as every
 * output names functions; cut where tokio's task module polls the task (what is below is the runtime's); the
 * closure a macro polls its branches in left out (its function's own frame, further out, has the line). */
#include "tasks/tasks_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

#define MAX_NAME 2048
#define TOKIO_TASK "tokio::runtime::task::"   /* tokio's poll of a task: raw::poll, the harness, the core */

struct frame_sink {
    struct string_pool *pool;
    struct task_frame *out;
    size_t n, max;
    bool done;                 /* the runtime's poll of the task reached */
};

static void put_frame(void *ctx, const char *name, const char *path, uint32_t line)
{
    struct frame_sink *s = ctx;
    if (s->done || s->n == s->max)
        return;
    if (strncmp(name, TOKIO_TASK, strlen(TOKIO_TASK)) == 0) {
        s->done = true;
        return;
    }
    char plain[MAX_NAME];
    snprintf(plain, sizeof(plain), "%s", name);
    bool async = strstr(plain, "::{") != NULL;
    tasks_strip_async(plain);
    if (async && path && symbolize_macro_of(path))
        return;                /* a macro's closure */
    const char *slash = path ? strrchr(path, '/') : NULL;
    s->out[s->n++] = (struct task_frame){ .function = string_pool_intern(s->pool, plain),
                                          .file = path ? string_pool_intern(s->pool, slash ? slash + 1 : path) : NULL,
                                          .line = line };
}

/* the function symbol of the object mapped at m that holds addr */
static void symbol_frame(struct frame_sink *s, const struct target_mapping *m, const char *root, uint64_t addr)
{
    char path[4200];
    struct elf_file ef;
    uint64_t bias;
    snprintf(path, sizeof(path), "%s%s", root, m->path);
    if (elf_file_open(&ef, path) != 0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    const char *best = NULL;
    if (elf_file_load_bias(&ef, m->start, m->offset, false, page > 0 ? (uint64_t)page : 4096, &bias)) {
        static const char *const tables[] = { ".symtab", ".dynsym" };
        for (size_t t = 0; t < 2 && !best; t++) {
            struct elf_symbol_iter it;
            struct elf_symbol sym;
            if (!elf_symbols_begin(&it, &ef, tables[t]))
                continue;
            while (elf_symbols_next(&it, &sym))
                if (sym.type == STT_FUNC && sym.value && addr - bias >= sym.value && addr - bias < sym.value + sym.size)
                    best = sym.name;
        }
    }
    if (best) {
        char *demangled = symbolize_demangle(best);
        put_frame(s, demangled ? demangled : best, NULL, 0);
        free(demangled);
    }
    elf_file_close(&ef);
}

size_t native_frames(const struct tokio_layout *l, const struct target_maps *maps, const char *exe, const char *root,
                     struct string_pool *pool, const uint64_t *ips, size_t n, struct task_frame *out, size_t max)
{
    struct frame_sink s = { pool, out, 0, max, false };
    for (size_t i = 0; i < n && !s.done && s.n < max; i++) {
        uint64_t pc = i > 0 ? ips[i] - 1 : ips[i];     /* (a return address: the call before it) */
        const struct target_mapping *m = NULL;
        for (size_t k = 0; k < maps->n && !m; k++)
            if (pc >= maps->v[k].start && pc < maps->v[k].end)
                m = &maps->v[k];
        if (!m || !m->path)
            continue;
        if (exe && strcmp(m->path, exe) == 0) {
            if (dwarf_frames_at(l->dwarf, pc - l->bias, put_frame, &s) == 0)
                put_frame(&s, "[unknown]", NULL, 0);
        } else {
            symbol_frame(&s, m, root, pc);
        }
    }
    return s.n;
}
