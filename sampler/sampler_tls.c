/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_tls.c: the sampler's side of the TLS marker route (sampler/markers/tls_join.h): which spec the
 * probes get, opening the route on the target's executable (falling back to poll probes, with a warning,
 * where BPF or BTF is missing), the program on every sampling event, and each sample's task. With
 * --markers auto the route is the default wherever it opens: it needs no probe, so none is attached unless
 * something needs poll events (poll durations, the wait profile); attribution still comes from the marker. */
#include "sampler/sampler_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/proc_exe.h"
#include "sampler/probes/tls_marker.h"
#include "tasks/tasks.h"

static void warn(struct sampler *s, const char *message)
{
    if (s->cfg.on_warning)
        s->cfg.on_warning(s->cfg.warning_ctx, message);
}

/* tokio's CONTEXT thread-local is there but its current_task_id could not be placed: say what was found.
 * Returns whether it was. */
static bool tokio_context(const char *exe, char *message, size_t len)
{
    struct tokio_task_id_place place;
    if (tokio_task_id_place_find(exe, &place) < 0 || !place.symbol[0])
        return false;
    snprintf(message, len, "tokio's CONTEXT layout needs DWARF types: its thread-local is there (%" PRIu64 " bytes "
             "at thread pointer %" PRId64 ") but no type describes current_task_id (built with debug = "
             "\"line-tables-only\" or without debug info, and no debug file found); using poll probes (debug = 2 "
             "or the debug file reads task ids with no probe)", place.context_size, place.context_tp_offset);
    return true;
}

void sampler_tls_open(struct sampler *s)
{
    bool want = false;
    tls_join_split_spec(s->cfg.markers, &want, s->probe_spec, sizeof(s->probe_spec));
    bool only_tls = want && strcmp(s->probe_spec, "none") == 0;
    bool automatic = !s->cfg.markers || strcmp(s->cfg.markers, "auto") == 0;
    if (!want)
        return;
    char exe[4096], target_path[4096] = "", err[512] = "", message[1024];
    const char *root = "";
    bool have_exe = true;
    if (!s->target.launched) {
        (void)proc_exe_path(s->target.pid, exe, sizeof(exe), target_path, sizeof(target_path));   /* the path the target sees ("" if gone) */
        root = s->root;
    } else if (!(have_exe = target_resolve_command(s->cfg.argv[0], s->cfg.search_path, exe, sizeof(exe)))) {
        snprintf(exe, sizeof(exe), "%.4000s", s->cfg.argv[0]);
    } else {
        snprintf(target_path, sizeof(target_path), "%s", exe);
    }
    struct tls_join_target t = { .tgid = s->target.pid, .exe = exe, .root = root,
                                 .target_path = target_path[0] == '/' ? target_path : NULL,
                                 .launched = s->target.launched, .debug_files = s->cfg.debug_files,
                                 .name_by_probes = s->cfg.wait_profile,     /* waits: the probes' ids only */
                                 .uncounted = s->cfg.long_running };
    int rc = have_exe ? tls_join_open(&s->tls, &t, err, sizeof(err)) : 0;
    if (rc == 1) {
        if (automatic && !s->cfg.poll_times && !s->cfg.wait_profile && !tls_join_needs_poll_probes(s->tls))
            snprintf(s->probe_spec, sizeof(s->probe_spec), "none");   /* nothing needs poll events */
        return;
    }
    if (rc < 0)
        snprintf(message, sizeof(message), "TLS task marker found but not readable at samples (%s); tasks come "
                 "from poll probes", err);
    else if (tokio_context(exe, message, sizeof(message)))
        only_tls = true;       /* said whatever the route: the program is tokio, the types are missing */
    else
        snprintf(message, sizeof(message), "no TLS task marker (%s) in %.900s; tasks come from poll probes",
                 TLS_MARKER_SYMBOL, exe);
    if (rc < 0 || only_tls)
        warn(s, message);
    if (only_tls && strcmp(s->probe_spec, "none") == 0)
        snprintf(s->probe_spec, sizeof(s->probe_spec), "auto");
}

void sampler_tls_attach(struct sampler *s, int event_fd)
{
    if (!s->tls)
        return;
    char err[512], message[700];
    if (tls_join_attach(s->tls, event_fd, err, sizeof(err)) == 0)
        return;
    /* Samples of this event would have no record: rather poll probes for everyone (while nothing was
     * recorded yet), else this thread's samples are [unknown task]. */
    if (tls_join_attached(s->tls) == 0) {
        snprintf(message, sizeof(message), "%s; tasks come from poll probes", err);
        tls_join_close(s->tls);
        s->tls = NULL;
        if (strcmp(s->probe_spec, "none") == 0)
            snprintf(s->probe_spec, sizeof(s->probe_spec), "auto");
    } else {
        snprintf(message, sizeof(message), "%s; that thread's samples are [unknown task]", err);
    }
    warn(s, message);
}

void sampler_tls_sample(struct sampler *s, uint32_t tid, uint64_t time_ns, enum sampler_task_state *state,
                        uint64_t *task_id, uint64_t *poll_probe_addr, bool *provisional)
{
    *provisional = false;
    if (s->tls)
        tls_join_sample(s->tls, tid, time_ns, markers_poll_starts(s->markers) > 0, state, task_id, poll_probe_addr,
                        provisional);
}

bool sampler_task_named_later(const struct sampler *s, uint64_t task_id, uint64_t *named)
{
    return s->tls && tls_join_probes_name(s->tls, task_id, named);
}

void sampler_tls_mapping(struct sampler *s, const char *path, uint64_t start, uint64_t end, uint64_t pgoff)
{
    if (!s->tls || path[0] != '/')
        return;
    char full[4200];
    snprintf(full, sizeof(full), "%s%s", s->root, path);
    tls_join_mapping(s->tls, full, start, end, pgoff);
}

bool sampler_tls_route(const struct sampler *s)
{
    return s->tls != NULL;
}

void sampler_tls_stats(struct sampler *s)
{
    if (!s->tls)
        return;
    const struct tls_join_stats *t = tls_join_stats(s->tls);
    s->stats.tls_marker = t->symbol;
    s->stats.tls_offset = t->tp_offset;
    s->stats.tls_program_store = t->program_store;
    s->stats.tls_debug_file = t->debug_file[0] ? t->debug_file : NULL;
    if (t->place_error[0])
        s->stats.tls_note = t->place_error;
    else if (t->place_corrected)
        s->stats.tls_note = "the library's TLS block was not where its DT_NEEDED order put it (LD_PRELOAD or "
                            "LD_LIBRARY_PATH?); samples before it was loaded may be misattributed";
    s->stats.tls_joined = t->joined;
    s->stats.tls_missing = t->missing;
    s->stats.tls_unreadable = t->unreadable;
    s->stats.tls_compared = t->probe_compared;
    s->stats.tls_disagreements = t->probe_disagreements;
}
