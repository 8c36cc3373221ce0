/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output_formats.c: the table of output formats (-f names, file extensions, writers) and output sets. */
#include "cli/output_formats.h"

#include <errno.h>
#include <string.h>

struct format_entry {
    enum output_format format;
    const char *name;                /* for -f */
    const char *alias;               /* another -f name, or NULL */
    const char *extensions[3];       /* file name endings that tell it, NULL-terminated */
};

static const struct format_entry formats[] = {
    { FORMAT_FLAMEGRAPH, "flamegraph", "svg", { ".svg", NULL } },
    { FORMAT_FOLDED, "folded", NULL, { ".folded", ".txt", NULL } },
    { FORMAT_SPEEDSCOPE, "speedscope", NULL, { ".speedscope.json", NULL } },
    { FORMAT_PPROF, "pprof", NULL, { ".pb.gz", ".pprof", NULL } },
    { FORMAT_TRACE, "chrometrace", NULL, { ".trace.json", NULL } },
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int output_format_of_path(const char *path, enum output_format *format)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        for (const char *const *e = formats[i].extensions; *e; e++)
            if (ends_with(path, *e)) {
                *format = formats[i].format;
                return 0;
            }
    return -1;
}

int output_list_add(struct output_list *l, const char *path, char *err, size_t errlen)
{
    if (l->n == MAX_OUTPUTS) {
        snprintf(err, errlen, "too many outputs: at most %d -o", MAX_OUTPUTS);
        return -1;
    }
    if (strcmp(path, "-") == 0)
        for (size_t i = 0; i < l->n; i++)
            if (strcmp(l->items[i].path, "-") == 0) {
                snprintf(err, errlen, "only one output can go to standard output ('-o -')");
                return -1;
            }
    l->items[l->n++] = (struct output_request){ .path = path };
    return 0;
}

int output_list_resolve(struct output_list *l, const char *format_name, char *err, size_t errlen)
{
    const struct format_entry *named = NULL;
    for (size_t i = 0; format_name && i < N_FORMATS && !named; i++)
        if (strcmp(format_name, formats[i].name) == 0 || (formats[i].alias && strcmp(format_name, formats[i].alias) == 0))
            named = &formats[i];
    if (format_name && !named) {
        snprintf(err, errlen, "unsupported format '%s' (flamegraph, folded, speedscope, pprof or chrometrace)", format_name);
        return -1;
    }
    if (l->n == 0) {
        snprintf(err, errlen, "no output file: give -o FILE (.svg, .folded, .speedscope.json, .pb.gz or .trace.json)");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (output_format_of_path(l->items[i].path, &l->items[i].format) == 0)
            continue;
        if (!named) {
            snprintf(err, errlen, "cannot tell the format of '%s': use .svg, .folded, .txt, .speedscope.json, "
                                  ".pb.gz, .pprof or .trace.json, or -f", l->items[i].path);
            return -1;
        }
        l->items[i].format = named->format;
    }
    return 0;
}

int output_write(enum output_format format, const struct output_content *content, FILE *out)
{
    switch (format) {
    case FORMAT_FOLDED: return profile_write_folded(content->profile, out);
    case FORMAT_FLAMEGRAPH: return profile_write_svg(content->profile, out, content->svg);
    case FORMAT_SPEEDSCOPE: return profile_write_speedscope(content->profile, out, content->info);
    case FORMAT_PPROF:
        return content->addresses ? profile_write_pprof_addresses(content->addresses, content->profile, out, content->info)
                                  : profile_write_pprof(content->profile, out, content->info);
    case FORMAT_TRACE:
        if (content->trace)
            return profile_write_trace(content->profile, content->trace, content->info, out, content->trace_report);
        break;     /* no times: nothing to write a trace from */
    }
    errno = EINVAL;
    return -1;
}

int output_set_open(struct output_set *s, const struct output_list *l, char *err, size_t errlen)
{
    s->n = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (output_file_open(&s->files[i], l->items[i].path, err, errlen) != 0) {
            output_set_abort(s);
            return -1;
        }
        s->n++;
    }
    return 0;
}

int output_set_write(struct output_set *s, const struct output_list *l, const struct output_content *content,
                     char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n; i++) {
        FILE *stream = s->files[i].stream;
        errno = 0;
        if (output_write(l->items[i].format, content, stream) != 0 || fflush(stream) != 0) {
            snprintf(err, errlen, "cannot write %s: %s", l->items[i].path, strerror(errno ? errno : EIO));
            output_set_abort(s);
            return -1;
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        if (output_file_commit(&s->files[i], err, errlen) != 0) {
            output_set_abort(s);
            return -1;
        }
    }
    return 0;
}

void output_set_abort(struct output_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        output_file_abort(&s->files[i]);
    s->n = 0;
}
