/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_task_decode.c: libFuzzer target for the task dump's readers (tasks/): tokio's layout and a real
 * program's DWARF (the current-tokio fixture, build/fixtures/tokio_current, or TASKSPY_FUZZ_TOKIO), target
 * memory from the fuzzer. The input is an address space: its bytes sit at BASE, any 8 of them may be a
 * pointer into it or anywhere else (reads outside fail, as process_vm_readv's would). The first byte picks
 * which raw::poll<T, S> (so which future type) decodes the task at BASE; the same bytes are then read as a
 * task header, a thread's CONTEXT and a runtime handle. Garbage pointers, cycles and enum values that match
 * no variant must end in a clean answer, never a crash or a hang; the tree decoded must be whole (check_tree: its
 * preorder, parents, child counts and subtree sizes agree, its first path is its frames). The fixture's --trees
 * mode gives the decoder select!'s, join!'s, join_all's, FuturesUnordered's, select_all's and JoinSet's types. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "tasks/tasks_internal.h"

#define BASE 0x10000000ull

struct plans {
    struct task_plan *v;
    size_t n, cap;
};

struct fuzz_state {
    struct tokio_layout layout;
    struct string_pool pool;
    struct type_cache types;       /* kept across inputs, as a task reader keeps it across snapshots */
    struct plans plans;
};

static struct fuzz_state *state;

struct image {
    const uint8_t *data;
    size_t size;
};

static bool read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const struct image *im = ctx;
    if (addr < BASE || addr - BASE > im->size || len > im->size - (addr - BASE))
        return false;
    memcpy(buf, im->data + (addr - BASE), len);
    return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *path = getenv("TASKSPY_FUZZ_TOKIO");
    if (!path)
        path = "build/fixtures/tokio_current";
    state = calloc(1, sizeof(*state));
    char err[512];
    if (!state || tokio_layout_find(&state->layout, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_task_decode: %s (build the fixture first: make build/fixtures/tokio_current)\n",
                state ? err : "out of memory");
        exit(2);
    }
    /* every raw::poll<T, S> of the binary (link-time addresses: bias 0) */
    struct elf_file ef;
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    if (elf_file_open(&ef, path) != 0 || !elf_symbols_begin(&it, &ef, ".symtab"))
        exit(2);
    while (elf_symbols_next(&it, &sym)) {
        struct task_plan plan;
        if (sym.type == STT_FUNC && strstr(sym.name, "3raw4poll") &&
            task_plan_find(&state->layout, &state->pool, sym.value, &plan)) {
            struct task_plan *p = vec_push(&state->plans);
            if (p)
                *p = plan;
        }
    }
    elf_file_close(&ef);
    if (state->plans.n == 0) {
        fprintf(stderr, "fuzz_task_decode: no task plans in %s\n", path);
        exit(2);
    }
    return 0;
}

/* The tree's own consistency: any break is a decoder bug, reported as a crash. */
static void check_tree(const struct decoded_future *out)
{
    size_t children = 0, first_path = 0;
    for (size_t i = 0; i < out->n_nodes; i++) {
        const struct task_node *n = &out->nodes[i];
        if ((i == 0) != (n->parent == TASK_NO_NODE) || (i > 0 && n->parent >= i) || n->subtree == 0 ||
            i + n->subtree > out->n_nodes)
            abort();
        size_t sum = 1, child = i + 1;
        for (uint32_t k = 0; k < n->n_children; k++) {
            if (child >= out->n_nodes || out->nodes[child].parent != i)
                abort();
            sum += out->nodes[child].subtree;
            child += out->nodes[child].subtree;
        }
        if (sum != n->subtree)
            abort();
        children += n->n_children;
    }
    if (out->n_nodes && children != out->n_nodes - 1)
        abort();
    for (size_t i = 0; i < out->n_nodes; i++) {
        if (out->nodes[i].frame.function)
            first_path++;
        if (out->nodes[i].n_children == 0)
            break;
    }
    if (first_path != out->n_frames)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct image im = { data + 1, size - 1 };
    const struct task_plan *plan = &state->plans.v[data[0] % state->plans.n];
    struct decode_limits limits = { 256, 1u << 20, (data[0] & 0x80) != 0, NULL };   /* leaves described, or not */
    struct decoded_future out = { 0 };
    future_decode(&state->layout, &state->pool, &state->types, &limits, read_image, &im, BASE, plan, &out);
    check_tree(&out);
    free(out.nodes);         /* (the frames are in the same block) */
    struct task_header h;
    tokio_read_header(&state->layout, read_image, &im, BASE, &h);
    struct thread_context c;
    tokio_thread_context(&state->layout, read_image, &im, BASE + 256, &c);
    uint64_t heads[8];
    tokio_owned_heads(&state->layout, read_image, &im, BASE, true, heads, 8);
    tokio_owned_heads(&state->layout, read_image, &im, BASE, false, heads, 8);
    tokio_local_queue(&state->layout, read_image, &im, BASE, data[0] % 4);
    return 0;
}
