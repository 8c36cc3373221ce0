/* SPDX-License-Identifier: GPL-3.0-or-later */
/* symbolize_parity.c: the DWARF reader of symbolize/ (dwarf_lookup.c) against libbfd's, which it replaces and
 * which stays as the reference: each object given is opened twice, once read each way, and the same addresses
 * are looked up in both in the same order (function, file:line, the inline chain, the function's start and
 * declaration line: everything bfd_object_lookup gives): a fixed set spread over every executable segment (a
 * stride that lands on all instruction offsets), in address order and again, in fresh objects, in a scrambled
 * order (libbfd's answers depend on what it read before). Prints TAP, one test per object and order, with the
 * first differences and each reader's CPU time. Built beside the fixtures (tests/fixtures/symbolize_parity.mk):
 * tests/e2e/symbolize_parity.t runs it over them.
 * usage: symbolize_parity [--addresses N] OBJECT... */
#include "elf/elf_file.h"
#include "symbolize/symbolize_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_ADDRESSES 40000
#define SHOWN_DIFFERENCES 5

struct address_set {
    uint64_t *v;
    size_t n, cap;
};

/* Link-time addresses over the object's executable PT_LOAD segments, about want of them. */
static int collect_addresses(const char *path, size_t want, struct address_set *out)
{
    struct elf_file ef;
    if (elf_file_open(&ef, path) != 0)
        return -1;
    uint64_t total = 0;
    for (size_t i = 0; i < ef.n_phdrs; i++)
        if (ef.phdrs[i].p_type == PT_LOAD && (ef.phdrs[i].p_flags & PF_X))
            total += ef.phdrs[i].p_memsz;
    uint64_t stride = total / (want ? want : 1);
    stride = stride < 1 ? 1 : stride | 1;        /* odd: every offset within an instruction comes up */
    for (size_t i = 0; i < ef.n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef.phdrs[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        for (uint64_t a = ph->p_vaddr; a < ph->p_vaddr + ph->p_memsz; a += stride) {
            if (vec_push(out) == NULL) {
                elf_file_close(&ef);
                return -1;
            }
            out->v[out->n - 1] = a;
        }
    }
    elf_file_close(&ef);
    return 0;
}

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_lookup(const struct raw_lookup *a, const struct raw_lookup *b)
{
    if (a->n != b->n || a->have_function != b->have_function || a->function_vaddr != b->function_vaddr ||
        a->function_line != b->function_line)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!same_string(a->frames[i].name, b->frames[i].name) || !same_string(a->frames[i].file, b->frames[i].file) ||
            a->frames[i].line != b->frames[i].line)
            return false;
    return true;
}

/* An inlined function without a linkage name (line-tables-only Rust, C++ helpers with internal linkage) is named by
 * libbfd after the symbol that holds the address the first time it is met, and by its DWARF name ever after
 * (binutils' dwarf2.c sets is_linkage once it has looked the symbol up, and keeps the symbol's name only where the
 * symbol starts where the function does). Which entry it meets first follows what was looked up before and which of
 * equally short ranges it picks, by their places on its heap (an ASan build's allocator, or a malloc that maps its
 * chunks, reverses that), so either reader may be the one that met the function before: the same answer but for
 * the innermost frame's name, one reader's the function's symbol and the other's a DWARF (unmangled) name. */
static bool named_once_by_symbol(const struct raw_lookup *by_symbol, const struct raw_lookup *by_dwarf)
{
    const char *symbol = by_symbol->frames[by_symbol->n - 1].name, *dwarf_name = by_dwarf->frames[0].name;
    return same_string(by_symbol->frames[0].name, symbol) && dwarf_name && !same_string(dwarf_name, symbol) &&
           strncmp(dwarf_name, "_Z", 2) != 0 && strncmp(dwarf_name, "_R", 2) != 0;
}

static bool later_lookup_name(const struct raw_lookup *ref, const struct raw_lookup *got)
{
    if (ref->n < 2 || ref->n != got->n || ref->have_function != got->have_function ||
        ref->function_vaddr != got->function_vaddr || ref->function_line != got->function_line)
        return false;
    if (!named_once_by_symbol(got, ref) && !named_once_by_symbol(ref, got))
        return false;
    if (!same_string(ref->frames[0].file, got->frames[0].file) || ref->frames[0].line != got->frames[0].line)
        return false;
    for (size_t i = 1; i < ref->n; i++)
        if (!same_string(ref->frames[i].name, got->frames[i].name) ||
            !same_string(ref->frames[i].file, got->frames[i].file) || ref->frames[i].line != got->frames[i].line)
            return false;
    return true;
}

/* libbfd's pick among nested inlined calls whose ranges holding the address are equally short follows its heap
 * (the one it allocated highest): where that was an outer one, up to ties levels out, its answer is
 * dwarf_lookup.c's without the inner frames (the outer one takes the innermost's file:line; its name is its own,
 * or the symbol's that holds the address where DWARF has no linkage name for it and libbfd met it first there: the
 * function's, or an alias at its address that dwarf_lookup.c named its own innermost frame by). */
static bool heap_tie(const struct raw_lookup *ref, const struct raw_lookup *got, unsigned ties)
{
    size_t k = got->n - ref->n;
    if (got->n <= ref->n || k > ties ||
        !(same_string(ref->frames[0].name, got->frames[k].name) ||
          same_string(ref->frames[0].name, ref->frames[ref->n - 1].name) ||
          same_string(ref->frames[0].name, got->frames[0].name)) ||
        !same_string(ref->frames[0].file, got->frames[0].file) || ref->frames[0].line != got->frames[0].line ||
        ref->have_function != got->have_function || ref->function_vaddr != got->function_vaddr ||
        ref->function_line != got->function_line)
        return false;
    for (size_t i = 1; i < ref->n; i++)
        if (!same_string(ref->frames[i].name, got->frames[i + k].name) ||
            !same_string(ref->frames[i].file, got->frames[i + k].file) || ref->frames[i].line != got->frames[i + k].line)
            return false;
    return true;
}

static void show_lookup(const char *who, const struct raw_lookup *r)
{
    fprintf(stderr, "#   %s: function 0x%" PRIx64 " (declared line %u), %zu frames\n", who, r->function_vaddr, r->function_line,
           r->n);
    for (size_t i = 0; i < r->n; i++)
        fprintf(stderr, "#     %s  %s:%u\n", r->frames[i].name ? r->frames[i].name : "(null)",
               r->frames[i].file ? r->frames[i].file : "(null)", r->frames[i].line);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The lookups of every address (in the order given) through one reader; ties: (own reader) how many levels of
 * libbfd's choice of function are up to its heap. */
static struct raw_lookup *lookups(const char *path, enum dwarf_reader reader, const uint64_t *addresses, size_t n,
                                  double *cpu, bool *own, unsigned *ties)
{
    struct raw_lookup *out = calloc(n ? n : 1, sizeof(*out));
    double start = cpu_now();
    struct bfd_object *o = bfd_object_open_as(NULL, path, NULL, reader);
    if (!o || !out) {
        free(out);
        bfd_object_close(o);
        return NULL;
    }
    *own = bfd_object_dwarf(o) != NULL;
    for (size_t i = 0; i < n; i++) {
        bfd_object_lookup(o, addresses[i], &out[i]);
        if (ties)
            ties[i] = *own ? dwarf_lookup_ties(bfd_object_dwarf(o), addresses[i]) : 0;
        /* the strings belong to the object: keep copies */
        for (size_t k = 0; k < out[i].n; k++) {
            out[i].frames[k].name = out[i].frames[k].name ? strdup(out[i].frames[k].name) : NULL;
            out[i].frames[k].file = out[i].frames[k].file ? strdup(out[i].frames[k].file) : NULL;
        }
    }
    bfd_object_close(o);
    *cpu = cpu_now() - start;
    return out;
}

static void free_lookups(struct raw_lookup *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        for (size_t k = 0; k < r[i].n; k++) {
            free((char *)r[i].frames[k].name);
            free((char *)r[i].frames[k].file);
        }
    free(r);
}

/* One TAP test: both readers over addresses in this order. */
static bool compare(int test, const char *path, const char *order, const uint64_t *addresses, size_t n)
{
    double cpu_bfd = 0, cpu_own = 0;
    bool own_bfd = false, own = false;
    unsigned *tied = calloc(n ? n : 1, sizeof(*tied));
    struct raw_lookup *ref = lookups(path, DWARF_LIBBFD_READER, addresses, n, &cpu_bfd, &own_bfd, NULL);
    struct raw_lookup *got = tied ? lookups(path, DWARF_OWN_READER, addresses, n, &cpu_own, &own, tied) : NULL;
    if (!ref || !got) {
        free(tied);
        printf("not ok %d - %s (%s): cannot be opened\n", test, path, order);
        free_lookups(ref, n);
        free_lookups(got, n);
        return false;
    }
    size_t differ = 0, inlined = 0, with_line = 0, ties = 0, later_names = 0, shown[SHOWN_DIFFERENCES];
    for (size_t i = 0; i < n; i++) {
        inlined += ref[i].n > 1;
        with_line += ref[i].n > 0 && ref[i].frames[0].line > 0;
        if (same_lookup(&ref[i], &got[i]))
            continue;
        if (heap_tie(&ref[i], &got[i], tied[i])) {
            ties++;
            continue;
        }
        if (later_lookup_name(&ref[i], &got[i])) {
            later_names++;
            continue;
        }
        if (differ < SHOWN_DIFFERENCES)
            shown[differ] = i;
        differ++;
    }
    bool ok = differ == 0 && own;
    printf("%s %d - %s, %s: %zu addresses (%zu with a line, %zu in inlined code) the same through libbfd and "
           "dwarf_lookup.c%s\n", ok ? "ok" : "not ok", test, path, order, n, with_line, inlined,
           own ? "" : " (dwarf_lookup.c declined the object)");
    if (!ok)
        fprintf(stderr, "# Failed test %d - %s, %s: %zu of %zu addresses differ%s\n", test, path, order, differ, n,
                own ? "" : " (dwarf_lookup.c declined the object)");
    /* under the failure, where a CI log's excerpt of it shows them */
    for (size_t d = 0; d < differ && d < SHOWN_DIFFERENCES; d++) {
        fprintf(stderr, "# %s: 0x%" PRIx64 " differs\n", path, addresses[shown[d]]);
        show_lookup("libbfd", &ref[shown[d]]);
        show_lookup("dwarf_lookup", &got[shown[d]]);
    }
    printf("# %s, %s: %zu differ, %zu where libbfd took an outer one of equally short inlined ranges (its heap's order), "
           "%zu where one reader named an inlined function without a linkage name by its symbol and the other by DWARF (met before); CPU: libbfd %.3f s, "
           "dwarf_lookup.c %.3f s\n", path, order, differ, ties, later_names, cpu_bfd, cpu_own);
    free(tied);
    free_lookups(ref, n);
    free_lookups(got, n);
    return ok;
}

int main(int argc, char **argv)
{
    size_t want = DEFAULT_ADDRESSES;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--addresses") == 0) {
        want = strtoul(argv[2], NULL, 10);
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: symbolize_parity [--addresses N] OBJECT...\n");
        return 2;
    }
    printf("1..%d\n", 2 * (argc - first));
    int test = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        struct address_set set = { 0 };
        if (collect_addresses(argv[i], want, &set) != 0 || set.n == 0) {
            printf("not ok %d - %s: no executable segment read\nnot ok %d - %s: no executable segment read\n",
                   test + 1, argv[i], test + 2, argv[i]);
            test += 2;
            failed += 2;
            vec_free(&set);
            continue;
        }
        failed += !compare(++test, argv[i], "in address order", set.v, set.n);
        /* a scrambled order, the same every run (a full-period LCG step over the indices) */
        uint64_t state = 12345;
        for (size_t k = set.n; k > 1; k--) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t j = (size_t)((state >> 33) % k);
            uint64_t t = set.v[k - 1];
            set.v[k - 1] = set.v[j];
            set.v[j] = t;
        }
        failed += !compare(++test, argv[i], "in a scrambled order", set.v, set.n);
        vec_free(&set);
    }
    return failed ? 1 : 0;
}
