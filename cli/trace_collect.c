/* SPDX-License-Identifier: GPL-3.0-or-later */
/* trace_collect.c: the polls and samples `record` keeps for a Chrome trace, and their task roots. */
#include "cli/trace_collect.h"

#include "base/u64_map.h"

#include <string.h>

void trace_collect_init(struct trace_collect *c, size_t cap)
{
    memset(c, 0, sizeof(*c));
    c->cap = cap;
}

void trace_collect_free(struct trace_collect *c)
{
    vec_free(&c->poll_starts);
    vec_free(&c->polls);
    vec_free(&c->samples);
    vec_free(&c->waits);
    vec_free(&c->wait_doubtful);
    vec_free(&c->pending);
    vec_free(&c->threads);
}

int trace_collect_thread(struct trace_collect *c, uint32_t thread, uint32_t tid, uint32_t name)
{
    if (thread == SAMPLER_NO_THREAD || vec_reserve(&c->threads, (size_t)thread + 1) != 0)
        return -1;
    while (c->threads.n <= thread)
        c->threads.v[c->threads.n++] = (struct trace_thread){ .tid = 0, .name = PROFILE_NO_FRAME };
    c->threads.v[thread] = (struct trace_thread){ .tid = tid, .name = name };
    return 0;
}

/* Room for one more event under the cap? Counts the ones left out. */
static bool under_cap(struct trace_collect *c)
{
    if (c->polls.n + c->samples.n + c->waits.n < c->cap)
        return true;
    c->left_out++;
    return false;
}

int trace_collect_poll(struct trace_collect *c, const struct sampler_poll *p)
{
    if (!under_cap(c))
        return 0;
    struct trace_poll *poll = vec_push(&c->polls);
    uint64_t *start = poll ? vec_push(&c->poll_starts) : NULL;
    if (!start)
        return -1;
    *poll = (struct trace_poll){ .start_ns = p->start_ns, .end_ns = p->end_ns, .task_id = p->task_id,
                                 .tid = p->tid, .root = PROFILE_NO_FRAME };
    *start = p->start_addr;
    return 0;
}

int trace_collect_sample(struct trace_collect *c, uint32_t tid, uint64_t time_ns, uint32_t node, uint64_t task_id)
{
    if (!under_cap(c))
        return 0;
    struct trace_sample *s = vec_push(&c->samples);
    if (!s)
        return -1;
    *s = (struct trace_sample){ .time_ns = time_ns, .tid = tid, .node = node };
    if (node != PROFILE_NO_NODE)
        return 0;
    struct trace_pending_sample *pending = vec_push(&c->pending);
    if (!pending)
        return -1;
    *pending = (struct trace_pending_sample){ .index = c->samples.n - 1, .task_id = task_id };
    return 0;
}

int trace_collect_rooted_wait(struct trace_collect *c, const struct wait_interval *iv, uint32_t root)
{
    if (!under_cap(c))
        return 0;
    struct trace_wait *w = vec_push(&c->waits);
    bool *doubtful = w ? vec_push(&c->wait_doubtful) : NULL;
    if (!doubtful)
        return -1;
    *w = (struct trace_wait){ .start_ns = iv->start_ns, .woken_ns = iv->woken_ns, .end_ns = iv->end_ns,
                              .task_id = iv->task_id, .root = root, .site = iv->site };
    *doubtful = iv->doubtful;
    return 0;
}

int trace_collect_wait(struct trace_collect *c, const struct wait_interval *iv)
{
    return trace_collect_rooted_wait(c, iv, PROFILE_NO_FRAME);   /* named by its task's root at the end */
}

/* The root of task_id, looked up once per task (roots: task id -> root frame). PROFILE_NO_FRAME: no memory. */
static uint32_t root_of(struct u64_map *roots, struct task_stacks *stacks, uint64_t task_id)
{
    uint32_t root;
    if (u64_map_get(roots, task_id, &root))
        return root;
    root = task_stacks_task_root(stacks, task_id);
    if (root == PROFILE_NO_FRAME || u64_map_put(roots, task_id, root) != 0)
        return PROFILE_NO_FRAME;
    return root;
}

/* Each poll's and wait's task root; the doubtful waits left out unless kept. */
static int name_polls_and_waits(struct trace_collect *c, struct task_stacks *stacks, bool keep_doubtful_waits)
{
    struct u64_map roots;
    if (u64_map_init(&roots, 1024) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < c->polls.n && rc == 0; i++) {
        struct trace_poll *poll = &c->polls.v[i];
        const char *entry;
        /* a task no sample named: this poll by the function that polled it (one id may be several tasks' in
           turn: tokio reuses a finished task's header, the probes' id of a task) */
        if (!task_stacks_entry_known(stacks, poll->task_id) && c->name_poll && i < c->poll_starts.n &&
            c->poll_starts.v[i] && (entry = c->name_poll(c->name_poll_ctx, c->poll_starts.v[i])))
            poll->root = task_stacks_root_for(stacks, poll->task_id, entry);
        else
            poll->root = root_of(&roots, stacks, poll->task_id);
        if (poll->root == PROFILE_NO_FRAME)
            rc = -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < c->waits.n && rc == 0; i++) {
        if (c->wait_doubtful.v[i] && !keep_doubtful_waits)
            continue;
        c->waits.v[kept] = c->waits.v[i];
        if (c->waits.v[kept++].root == PROFILE_NO_FRAME &&
            (c->waits.v[kept - 1].root = root_of(&roots, stacks, c->waits.v[i].task_id)) == PROFILE_NO_FRAME)
            rc = -1;
    }
    c->waits.n = kept;
    c->wait_doubtful.n = 0;      /* (kept waits are certain or kept: the flags are done with) */
    u64_map_free(&roots);
    return rc;
}

/* Held-back samples were added by task_stacks_finish as a stack of their task's root alone: point them at
 * that node (a child of the tree's root). */
static int root_pending_samples(struct trace_collect *c, struct task_stacks *stacks, const struct profile *p)
{
    if (c->pending.n == 0)
        return 0;
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(p, &n_nodes);
    struct u64_map top;          /* frame id -> node, for the children of the tree's root */
    if (u64_map_init(&top, 256) != 0)
        return -1;
    int rc = 0;
    for (size_t n = 1; n < n_nodes && rc == 0; n++) {
        if (nodes[n].parent == 0)
            rc = u64_map_put(&top, nodes[n].frame, (uint32_t)n);
    }
    for (size_t i = 0; i < c->pending.n && rc == 0; i++) {
        uint32_t root = task_stacks_task_root(stacks, c->pending.v[i].task_id), node;
        if (root == PROFILE_NO_FRAME)
            rc = -1;
        else if (u64_map_get(&top, root, &node))
            c->samples.v[c->pending.v[i].index].node = node;
    }
    u64_map_free(&top);
    return rc;
}

int trace_collect_finish(struct trace_collect *c, struct task_stacks *stacks, const struct profile *p, uint32_t pid,
                         uint64_t start_ns, bool keep_doubtful_waits, struct trace_events *ev)
{
    if (name_polls_and_waits(c, stacks, keep_doubtful_waits) != 0 || root_pending_samples(c, stacks, p) != 0)
        return -1;
    *ev = (struct trace_events){
        .pid = pid, .start_ns = start_ns, .threads = c->threads.v, .n_threads = c->threads.n,
        .polls = c->polls.v, .n_polls = c->polls.n, .samples = c->samples.v, .n_samples = c->samples.n,
        .waits = c->waits.v, .n_waits = c->waits.n,
        .left_out = c->left_out,
    };
    return 0;
}
