/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_collect.c: the wait profile of `record`: sampler task events and stacks in, one output file out. */
#include "cli/wait_collect.h"

#include <errno.h>
#include <string.h>

int wait_collect_open(struct wait_collect *c, const char *path, enum output_format format, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->path = path;
    c->format = format;
    if (output_file_open(&c->file, path, err, errlen) != 0)
        return -1;
    c->file_open = true;
    return 0;
}

int wait_collect_start(struct wait_collect *c, struct task_stacks *stacks, const struct profile *names,
                       const struct wait_options *options)
{
    c->profile = wait_profile_new(stacks, names, options);
    return c->profile ? 0 : -1;
}

int wait_collect_event(struct wait_collect *c, const struct sampler_task_event *e)
{
    static const enum wait_event_kind kinds[] = {
        [SAMPLER_TASK_POLL_START] = WAIT_POLL_START, [SAMPLER_TASK_POLL_END] = WAIT_POLL_END,
        [SAMPLER_TASK_WAKE] = WAIT_WAKE, [SAMPLER_TASK_WAKER_REGISTERED] = WAIT_REGISTERED,
        [SAMPLER_TASK_TERMINATE] = WAIT_TERMINATE,
    };
    if ((size_t)e->kind >= sizeof(kinds) / sizeof(kinds[0]))
        return 0;
    c->events++;
    struct wait_event we = { .kind = kinds[e->kind], .task_id = e->task_id, .time_ns = e->time_ns, .thread = e->tid,
                             .call_site = e->call_site };
    return wait_profile_event(c->profile, &we);
}

int wait_collect_stack(struct wait_collect *c, const struct sampler_wait_stack *w, uint32_t thread_root,
                       const struct stack_frame *const *frames, size_t n, uint32_t key)
{
    c->stacks++;
    return wait_profile_stack(c->profile, w->task_id, w->time_ns, thread_root, frames, n, key, w->call_site);
}

int wait_collect_round(struct wait_collect *c, uint64_t until_ns)
{
    return wait_profile_round(c->profile, until_ns);
}

int wait_collect_finish(struct wait_collect *c, uint64_t stop_ns, bool ready_unless_registered)
{
    c->result = wait_profile_finish(c->profile, stop_ns, ready_unless_registered);
    return c->result ? 0 : -1;
}

const char *wait_collect_nothing(const struct wait_collect *c, const char *note)
{
    if (c->events == 0)
        return note ? note : "no task was polled or woken while recorded (no task events came)";
    if (!c->result || profile_total(c->result) == 0)
        return "no task waited after a poll while recorded";
    return NULL;
}

int wait_collect_write(struct wait_collect *c, const struct svg_options *svg, char *err, size_t errlen)
{
    struct output_content content = { .profile = c->result, .svg = svg };
    errno = 0;
    if (output_write(c->format, &content, c->file.stream) != 0 || fflush(c->file.stream) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", c->path, strerror(errno ? errno : EIO));
        return -1;
    }
    c->file_open = false;
    return output_file_commit(&c->file, err, errlen);
}

void wait_collect_free(struct wait_collect *c)
{
    if (c->file_open)
        output_file_abort(&c->file);
    c->file_open = false;
    wait_profile_free(c->profile);
    profile_free(c->result);
    c->profile = NULL;
    c->result = NULL;
}
