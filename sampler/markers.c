/* markers.c: placeholder until USDT discovery lands: records with no markers (an ordinary CPU profiler). */
#include "sampler/markers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct markers {
    int unused;
};

int markers_open(struct markers **out, const char *spec, pid_t pid, const char *root, const int *cpus,
                 const int *cpu_fds, size_t n_cpus, char *err, size_t errlen)
{
    *out = NULL;
    if (!spec || strcmp(spec, "none") == 0 || strcmp(spec, "auto") == 0)
        return 0;
    *out = calloc(1, sizeof(**out));
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void markers_scan_object(struct markers *m, const char *path) {}
void markers_enable(struct markers *m, bool on) {}
int markers_decode(struct markers *m, const struct perf_event_header *rec, uint64_t id, struct marker_hit *hit)
{
    return 0;
}
size_t markers_count(const struct markers *m)
{
    return 0;
}
void markers_stats(struct markers *m, struct sampler_probe_stat **probes, size_t *n)
{
    *probes = NULL;
    *n = 0;
}
void markers_close(struct markers *m)
{
    free(m);
}
