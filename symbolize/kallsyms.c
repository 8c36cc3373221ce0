/* SPDX-License-Identifier: GPL-3.0-or-later */
/* kallsyms.c: kernel text symbols from /proc/kallsyms ("ADDR TYPE NAME [MODULE]"), sorted by address,
 * for the nearest symbol at or below a kernel address. With kptr_restrict every address reads as zero:
 * that is recorded and every lookup then fails. */
#include "symbolize/symbolize_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_text_type(char type)
{
    return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int cmp_entry(const void *a, const void *b)
{
    const struct kallsyms_entry *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return strcmp(x->name, y->name);   /* aliases: a fixed order, so a run always picks the same name */
}

/* Parses one line; returns false for lines that are not text symbols. name/module point into line. */
static bool parse_line(char *line, uint64_t *addr, char **name, char **module)
{
    char *end = NULL;
    errno = 0;
    unsigned long long a = strtoull(line, &end, 16);
    if (errno || end == line || *end != ' ' || !end[1] || end[2] != ' ')
        return false;
    if (!is_text_type(end[1]))
        return false;
    char *n = end + 3;
    n[strcspn(n, "\n")] = '\0';
    char *tab = strchr(n, '\t');
    *module = NULL;
    if (tab) {
        *tab = '\0';
        char *mod = tab + 1;
        if (*mod == '[') {
            mod++;
            mod[strcspn(mod, "]")] = '\0';
        }
        *module = mod;
    }
    if (!*n)
        return false;
    *addr = a;
    *name = n;
    return true;
}

int kallsyms_load(struct kallsyms *k, const char *path, struct string_pool *pool)
{
    k->loaded = true;
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char *line = NULL;
    size_t line_cap = 0;
    bool any_nonzero = false;
    int rc = 0;
    while (getline(&line, &line_cap, f) > 0) {
        uint64_t addr;
        char *name, *module;
        if (!parse_line(line, &addr, &name, &module))
            continue;
        if (addr)
            any_nonzero = true;
        const char *iname = string_pool_intern(pool, name);
        const char *imod = module ? string_pool_intern(pool, module) : NULL;
        struct kallsyms_entry *e = iname && (!module || imod) ? vec_push(&k->entries) : NULL;
        if (!e) {
            rc = -1;
            break;
        }
        *e = (struct kallsyms_entry){ .addr = addr, .name = iname, .module = imod };
    }
    free(line);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    k->restricted = k->entries.n > 0 && !any_nonzero;
    if (k->entries.n)
        qsort(k->entries.v, k->entries.n, sizeof(*k->entries.v), cmp_entry);
    return rc;
}

const struct kallsyms_entry *kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
    if (k->restricted || !k->entries.n)
        return NULL;
    size_t lo = 0, hi = k->entries.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->entries.v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &k->entries.v[lo - 1] : NULL;
}

void kallsyms_free(struct kallsyms *k)
{
    vec_free(&k->entries);
    memset(k, 0, sizeof(*k));
}
