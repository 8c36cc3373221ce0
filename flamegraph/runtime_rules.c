/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runtime_rules.c: the async runtimes taskspy knows, as data. Each rule says which frames poll one task (the
 * boundary: everything from the thread's start down to it is the scheduler's), which frames the runtime
 * inlines between that boundary and the task's own future (glue, cut too), and which frames show that a
 * boundary is running a whole worker loop rather than a task (tokio's blocking pool runs each worker as
 * Harness<BlockingTask<Launch>>::poll), and after which frame the task's own future begins. Adding a
 * runtime is adding a row. */
#include "flamegraph/runtime_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct runtime_rule {
    const char *runtime;
    const char *boundary;
    const char *glue;
    const char *worker_loop;
    const char *entry_after;   /* or NULL: then the task starts at the first frame that is not glue */
    const char *after_future;  /* or NULL: what entry_after frames call after the future (not the task's) */
    const char *id_guard;      /* or NULL: what entry_after frames call before the future (not the task's) */
    const char *waker;         /* or NULL: the waker machinery a leaf future calls to register its waker */
};

static const struct runtime_rule rules[] = {
    {
        /* Rust legacy demangling prints "tokio::...::Harness<T,S>::poll", v0 "<tokio::...::Harness<..>>::poll" */
        .runtime = "tokio",
        /* Harness<T,S>::poll, and raw::poll<T,S> (the task vtable's poll entry, which calls or inlines it:
         * the frame that fired a probe on it, and the boundary where Harness::poll has no frame of its own) */
        .boundary = "^<?tokio::runtime::task::(harness::Harness<.*>>?::poll|raw::poll(::)?(<.*>)?)$",
        .glue = "^<?(tokio::runtime::task::(harness::(poll_future|Harness<.*>>?::poll_inner)"
                "|core::(Core<.*>>?::poll|TaskIdGuard)|raw::RawTask>?::poll)"
                "|tokio::runtime::context::(set_current_task_id|with)"
                "|tokio::loom::std::unsafe_cell::UnsafeCell<.*>>?::with_mut"
                "|std::panicking::(try|catch_unwind)|std::panic::catch_unwind"
                "|<?core::panic::unwind_safe::AssertUnwindSafe<.*> as core::ops::function::FnOnce<.*>>::call_once)",
        .worker_loop = "^<?tokio::runtime::scheduler::(multi_thread::worker::(Launch>?::launch|run)"
                       "|current_thread::CoreGuard)",
        /* Core::poll (and its closure) polls the task's future; frames of Harness::poll that do not reach
         * it (complete, wakeups) are the runtime's work inside the poll */
        .entry_after = "^<?tokio::runtime::task::core::Core<.*>>?::poll",
        /* Core::poll drops the future once it is ready: the task's completion, not a frame of its own; and
         * its TaskIdGuard, dropped after the poll, puts the previous task id back (still inside the poll as
         * CONTEXT.current_task_id tells it: zero-probe attribution sees these samples in the task) */
        .after_future = "^(<?tokio::runtime::task::core::Core<.*>>?::(drop_future_or_output|set_stage|store_output)"
                        "|core::ptr::drop_in_place<tokio::runtime::task::core::TaskIdGuard>)",
        /* ... and before polling it, its TaskIdGuard puts the task's id in CONTEXT.current_task_id (a sample
         * there, down in the thread-local's access, is inside the poll with no frame of the task's) */
        .id_guard = "^<?tokio::runtime::(task::core::TaskIdGuard>?::enter|context::set_current_task_id)",
        /* what a leaf future calls to register its waker, down to the waker vtable (clone_waker); yield_now
         * hands its waker to the worker's defer list */
        .waker = "^<?(tokio::runtime::task::(waker::|raw::RawTask>?::ref_inc|state::State>?::ref_inc)"
                 "|tokio::runtime::(context::(with_defer|defer)|defer::)"
                 "|tokio::sync::task::atomic_waker::(AtomicWaker>?::(register|do_register)|.*WakerRef)"
                 "|core::task::wake::(Waker|RawWaker)|&?core::task::wake::Waker as )",
    },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

int runtime_rules_compile(struct runtime_rules *r, const char *user_boundary, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < N_RULES; i++) {
        const char *patterns[7] = { rules[i].boundary, rules[i].glue, rules[i].worker_loop, rules[i].entry_after,
                                    rules[i].after_future, rules[i].waker, rules[i].id_guard };
        const uint8_t kinds[7] = { RUNTIME_BOUNDARY, RUNTIME_GLUE, RUNTIME_WORKER_LOOP, RUNTIME_ENTRY_AFTER,
                                   RUNTIME_AFTER_FUTURE, RUNTIME_WAKER, RUNTIME_ID_GUARD };
        for (int k = 0; k < 7; k++) {
            if (!patterns[k])
                continue;
            if (r->n >= RUNTIME_RULES_MAX) {
                snprintf(err, errlen, "internal error: too many runtime rules");
                runtime_rules_free(r);
                return -1;
            }
            if (regcomp(&r->regex[r->n], patterns[k], REG_EXTENDED | REG_NOSUB) != 0) {
                snprintf(err, errlen, "internal error: bad %s rule pattern %s", rules[i].runtime, patterns[k]);
                runtime_rules_free(r);
                return -1;
            }
            r->kind[r->n++] = (uint8_t)(kinds[k] | (k == 0 && rules[i].entry_after ? RUNTIME_ENTRY_RULE : 0));
        }
    }
    if (user_boundary) {
        int rc = regcomp(&r->regex[r->n], user_boundary, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[128];
            regerror(rc, &r->regex[r->n], why, sizeof(why));
            snprintf(err, errlen, "bad --task-boundary regular expression '%s': %s", user_boundary, why);
            runtime_rules_free(r);
            return -1;
        }
        r->kind[r->n++] = RUNTIME_BOUNDARY;
    }
    return 0;
}

uint8_t runtime_rules_classify(const struct runtime_rules *r, const char *function)
{
    uint8_t flags = 0;
    for (size_t i = 0; i < r->n; i++)
        if ((flags & r->kind[i]) != r->kind[i] && regexec(&r->regex[i], function, 0, NULL, 0) == 0)
            flags |= r->kind[i];
    return flags;
}

void runtime_rules_free(struct runtime_rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        regfree(&r->regex[i]);
    r->n = 0;
}
