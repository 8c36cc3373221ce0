/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_gzip.c: a zlib deflate stream with the gzip wrapper, written to a FILE chunk by chunk. */
#include "flamegraph/export_internal.h"

#include <errno.h>
#include <string.h>

int gzip_sink_open(struct gzip_sink *g, FILE *out)
{
    memset(&g->z, 0, sizeof(g->z));
    g->out = out;
    /* 15 + 16: the largest window, with a gzip header and trailer; fastest level, as Go's runtime/pprof */
    if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        g->open = false;
        errno = ENOMEM;
        return -1;
    }
    g->open = true;
    return 0;
}

/* Run deflate with flush until it has taken all input (and, finishing, written the end). */
static int pump(struct gzip_sink *g, int flush)
{
    for (;;) {
        g->z.next_out = g->chunk;
        g->z.avail_out = sizeof(g->chunk);
        int rc = deflate(&g->z, flush);
        if (rc == Z_STREAM_ERROR) {
            errno = EINVAL;
            return -1;
        }
        size_t have = sizeof(g->chunk) - g->z.avail_out;
        if (have && fwrite(g->chunk, 1, have, g->out) != have)
            return -1;
        if (flush == Z_FINISH ? rc == Z_STREAM_END : g->z.avail_in == 0 && g->z.avail_out != 0)
            return 0;
    }
}

int gzip_sink_write(struct gzip_sink *g, const void *data, size_t len)
{
    const unsigned char *at = data;
    while (len > 0) {
        uInt part = len > (1u << 30) ? (1u << 30) : (uInt)len;
        g->z.next_in = (unsigned char *)at;
        g->z.avail_in = part;
        if (pump(g, Z_NO_FLUSH) != 0)
            return -1;
        at += part;
        len -= part;
    }
    return 0;
}

int gzip_sink_finish(struct gzip_sink *g)
{
    g->z.next_in = NULL;
    g->z.avail_in = 0;
    int rc = pump(g, Z_FINISH);
    gzip_sink_abort(g);
    return rc;
}

void gzip_sink_abort(struct gzip_sink *g)
{
    if (g->open)
        deflateEnd(&g->z);
    g->open = false;
}
