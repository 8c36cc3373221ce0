/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_writer.c: renders a profile as one self-contained interactive SVG flame graph (or icicle graph):
 * title, optional subtitle and header, one <g> per drawn frame carrying its sample offset, count and depth
 * as data attributes for the embedded script (svg_script.js), which does zoom, search and the URL state.
 * The frames are laid out (svg_layout.c) a chunk at a time on this thread, and formatted and written on a
 * second one (base/handoff), so the two overlap. A differential graph (diff_profile.c) gives each frame its
 * colour and the end of its tooltip (svg_frame_style). */
#include "flamegraph/svg_internal.h"

#include "base/handoff.h"
#include "base/vec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char svg_script[] =
#include "svg_script.js.inc"
;

#define SVG_XPAD 10.0
#define SVG_FONT_SIZE 12.0
#define SVG_FONT_WIDTH 0.59          /* average glyph width per px of font size (Verdana) */
#define SVG_TITLE_SIZE 17.0
#define SVG_LINE 18.0                /* height of a subtitle or header line */
#define SVG_BOTTOM (SVG_FONT_SIZE * 2 + 10)
#define SVG_TEXT_DY (SVG_FONT_SIZE * 0.35)  /* label baseline below the middle of its frame */

void svg_options_init(struct svg_options *o)
{
    memset(o, 0, sizeof(*o));
    o->title = "Flame Graph";
    o->width = 1200;
    o->frame_height = 16;
    o->min_width = 0.1;
    o->colors = "taskspy";
    o->count_name = "samples";
}

/* Geometry of one rendering, computed once. */
struct svg_geometry {
    double width, height, chart_width, top, frame_height;
    double char_width;               /* px per label character */
    bool inverted;
};

static void write_text(FILE *out, const char *s)
{
    svg_write_escaped(out, s, strlen(s));
}

static void write_head(FILE *out, const struct svg_options *o, const struct svg_geometry *g, uint64_t total)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "xmlns=\"http://www.w3.org/2000/svg\" data-total=\"%llu\" data-countname=\"",
            g->width, g->height, g->width, g->height, (unsigned long long)total);
    write_text(out, o->count_name);
    fprintf(out, "\" data-xpad=\"%.0f\" data-chart=\"%.2f\" data-charw=\"%.4f\" data-textdy=\"%.2f\" "
                 "data-inverted=\"%d\">\n",
            SVG_XPAD, g->chart_width, g->char_width, SVG_TEXT_DY, g->inverted ? 1 : 0);
    fprintf(out,
            "<style type=\"text/css\"><![CDATA[\n"
            "text { font-family: Verdana, sans-serif; font-size: %.0fpx; fill: #000; }\n"
            "#title { font-size: %.0fpx; text-anchor: middle; }\n"
            "#subtitle, #header { text-anchor: middle; fill: #555; }\n"
            "#search, #ignorecase, #matched { text-anchor: end; }\n"
            "#frames > g { cursor: pointer; }\n"
            "#frames > g:hover > rect { stroke: #000; stroke-width: 0.5; }\n"
            "#frames text { pointer-events: none; }\n"
            ".button { cursor: pointer; opacity: 0.6; }\n"
            ".button:hover { opacity: 1; }\n"
            ".active { font-weight: bold; opacity: 1; }\n"
            ".hide { display: none; }\n"
            ".dim { opacity: 0.5; }\n"
            "]]></style>\n"
            "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
            "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%%\"/>"
            "</linearGradient></defs>\n"
            "<script type=\"text/ecmascript\"><![CDATA[\n",
            SVG_FONT_SIZE, SVG_TITLE_SIZE);
    fputs(svg_script, out);
    fputs("]]></script>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#background)\"/>\n",
            g->width, g->height);

    double y = SVG_FONT_SIZE * 2;
    fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"%.0f\">", g->width / 2, y);
    write_text(out, o->title ? o->title : "Flame Graph");
    fputs("</text>\n", out);
    if (o->subtitle) {
        y += SVG_LINE;
        fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", g->width / 2, y);
        write_text(out, o->subtitle);
        fputs("</text>\n", out);
    }
    if (o->header) {
        y += SVG_LINE;
        fprintf(out, "<text id=\"header\" x=\"%.1f\" y=\"%.0f\">", g->width / 2, y);
        write_text(out, o->header);
        fputs("</text>\n", out);
    }
    /* The right-hand controls end at the chart's right edge (text-anchor: end), whatever their text
     * ("Search" / "Reset Search", "Matched: 100.00%"), so none runs past the image. */
    double bottom_y = g->height - SVG_BOTTOM / 2;
    double right = g->width - SVG_XPAD;
    fprintf(out,
            "<text id=\"unzoom\" class=\"button hide\" x=\"%.0f\" y=\"%.0f\">Reset Zoom</text>\n"
            "<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"%.0f\">Search</text>\n"
            "<text id=\"ignorecase\" class=\"button\" x=\"%.0f\" y=\"%.0f\">ic</text>\n"
            "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
            "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
            SVG_XPAD, SVG_FONT_SIZE * 2, right - 2 * SVG_FONT_SIZE, SVG_FONT_SIZE * 2, right, SVG_FONT_SIZE * 2,
            SVG_XPAD, bottom_y, right, bottom_y);
}

/* Number formatting into a line buffer: printf's floating-point path is the writer's main cost otherwise. */
static void put_str(char **at, const char *s)
{
    size_t n = strlen(s);
    memcpy(*at, s, n);
    *at += n;
}

static void put_u64(char **at, uint64_t v)
{
    char digits[20];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *(*at)++ = digits[--n];
}

/* v >= 0 with one or two decimals, rounded half up */
static void put_fixed(char **at, double v, unsigned decimals)
{
    uint64_t scale = decimals == 1 ? 10 : 100;
    uint64_t scaled = (uint64_t)(v * (double)scale + 0.5);
    put_u64(at, scaled / scale);
    *(*at)++ = '.';
    uint64_t fraction = scaled % scale;
    if (decimals == 2 && fraction < 10)
        *(*at)++ = '0';
    put_u64(at, fraction);
}

/* A count, or count / divisor with three decimals when divisor > 1 (microseconds shown as ms). */
static void put_count(char **at, uint64_t count, unsigned divisor)
{
    put_u64(at, divisor > 1 ? count / divisor : count);
    if (divisor <= 1)
        return;
    uint64_t thousandths = count % divisor * 1000 / divisor;
    *(*at)++ = '.';
    *(*at)++ = (char)('0' + thousandths / 100);
    *(*at)++ = (char)('0' + thousandths / 10 % 10);
    *(*at)++ = (char)('0' + thousandths % 10);
}

static void put_hex6(char **at, uint32_t color)
{
    static const char hex[] = "0123456789abcdef";
    for (int shift = 20; shift >= 0; shift -= 4)
        *(*at)++ = hex[color >> shift & 0xf];
}

/* Frames are formatted straight into one big buffer, written out when nearly full. */
#define SVG_BUFFER (256u << 10)
#define SVG_FRAME_FIXED 512u         /* the fixed parts of one frame, at most ~300 bytes */
#define SVG_PREFETCH 8u              /* frames ahead whose names are fetched into cache */

/* What a frame shows of its name below depth 1 (where a frame's colour says task or thread root): its colour,
 * the bytes shown (the annotation cut) and those escaped. Made once per name: a big graph draws many frames of
 * few names (100,000 random stacks of a real program's frames: 47,093 frames of 2,806 names). */
struct name_text {
    uint32_t color;                  /* unless a style colours the frames */
    uint32_t shown;
    size_t escaped, escaped_len;     /* where in svg_out's escaped text */
};

struct svg_out {
    FILE *out;
    char *buf;                       /* SVG_BUFFER bytes, written out when nearly full */
    size_t len;
    VEC_OF(char) big;                /* for a frame that does not fit buf (a name of many kilobytes) */
    char *count_name;                /* escaped once */
    size_t count_name_len;
    const struct svg_frame_style *style;   /* a differential graph's colours and tooltips, or NULL */
    uint32_t *text_of;               /* per frame id: its name_text's number + 1, 0 = not made yet; NULL:
                                        none are kept (no memory) */
    size_t n_frame_ids;
    VEC_OF(struct name_text) texts;
    VEC_OF(char) escaped;
};

static int write_all(FILE *out, const char *data, size_t len)
{
    if (len > 0 && fwrite_unlocked(data, 1, len, out) != len) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static int out_flush(struct svg_out *o)
{
    size_t len = o->len;
    o->len = 0;
    return write_all(o->out, o->buf, len);
}

/* The name_text of f's name (depth 2 and deeper), made when first asked for; NULL when it cannot be kept. */
static const struct name_text *name_text_of(struct svg_out *o, const struct svg_frame *f, const char *name,
                                            size_t len, const struct svg_options *opts)
{
    if (!o->text_of || f->depth < 2 || f->frame >= o->n_frame_ids)
        return NULL;
    uint32_t *slot = &o->text_of[f->frame];
    if (*slot)
        return &o->texts.v[*slot - 1];
    size_t shown = svg_shown_length(name, len);
    if (o->texts.n >= UINT32_MAX - 1 || vec_reserve(&o->escaped, o->escaped.n + SVG_ESCAPE_MAX * shown) != 0)
        return NULL;
    struct name_text *t = vec_push(&o->texts);
    if (!t)
        return NULL;
    t->color = o->style ? 0 : svg_frame_color(opts->colors, svg_classify(name, len, f->depth), name, len);
    t->shown = (uint32_t)shown;
    t->escaped = o->escaped.n;
    t->escaped_len = svg_escape_into(o->escaped.v + o->escaped.n, name, shown);
    o->escaped.n += t->escaped_len;
    *slot = (uint32_t)o->texts.n;
    return t;
}

/* One frame's element into dst, which has room for frame_room(). Returns the bytes written. */
static size_t format_frame(char *dst, struct svg_out *o, const struct svg_frame *f, const char *name,
                           size_t len, const struct svg_geometry *g, uint64_t total, const struct svg_options *opts)
{
    double px = g->chart_width / (double)total;
    double x = SVG_XPAD + (double)f->start * px;
    double w = (double)f->total * px;
    double y = g->inverted ? g->top + f->depth * g->frame_height
                           : g->height - SVG_BOTTOM - (f->depth + 1) * g->frame_height;
    const struct name_text *t = name_text_of(o, f, name, len, opts);
    uint32_t color = o->style ? o->style->fill(o->style->ctx, f->node)
                     : t ? t->color
                     : svg_frame_color(opts->colors, svg_classify(name, len, f->depth), name, len);
    len = t ? t->shown : svg_shown_length(name, len);   /* the annotation picked the colour; it is not shown */
    char *at = dst;

    put_str(&at, "<g data-s=\"");
    put_u64(&at, f->start);
    put_str(&at, "\" data-n=\"");
    put_u64(&at, f->total);
    put_str(&at, "\" data-d=\"");
    put_u64(&at, f->depth);
    put_str(&at, "\"><title>");
    const char *escaped_name = at;
    if (t) {
        escaped_name = o->escaped.v + t->escaped;
        memcpy(at, escaped_name, t->escaped_len);
        at += t->escaped_len;
    } else {
        at += svg_escape_into(at, name, len);
    }
    size_t escaped_len = t ? t->escaped_len : (size_t)(at - escaped_name);
    put_str(&at, " (");
    put_count(&at, f->total, opts->count_divisor);
    *at++ = ' ';
    memcpy(at, o->count_name, o->count_name_len);
    at += o->count_name_len;
    put_str(&at, ", ");
    put_fixed(&at, 100.0 * (double)f->total / (double)total, 2);
    *at++ = '%';
    if (o->style)
        at += o->style->title_tail(o->style->ctx, f->node, at);
    put_str(&at, ")</title><rect x=\"");
    put_fixed(&at, x, 2);
    put_str(&at, "\" y=\"");
    put_fixed(&at, y, 1);
    put_str(&at, "\" width=\"");
    put_fixed(&at, w, 2);
    put_str(&at, "\" height=\"");
    put_fixed(&at, g->frame_height - 1, 1);
    put_str(&at, "\" fill=\"#");
    put_hex6(&at, color);
    put_str(&at, "\" rx=\"2\" ry=\"2\"/>");
    /* frames too narrow for a label get no <text>: the script adds one when a zoom makes room */
    double fit = (w - 3) / g->char_width;
    bool truncated = false;
    size_t label = 0;
    if (fit >= 3)                    /* a name of no more bytes than fit characters fits whole */
        label = (double)len <= fit ? len : svg_label_bytes(name, len, (size_t)fit, &truncated);
    if (label > 0) {
        put_str(&at, "<text x=\"");
        put_fixed(&at, x + 3, 2);
        put_str(&at, "\" y=\"");
        put_fixed(&at, y + (g->frame_height - 1) / 2 + SVG_TEXT_DY, 1);
        put_str(&at, "\">");
        if (label == len) {
            memmove(at, escaped_name, escaped_len);
            at += escaped_len;
        } else {
            at += svg_escape_into(at, name, label);
        }
        if (truncated)
            put_str(&at, "..");
        put_str(&at, "</text>");
    }
    put_str(&at, "</g>\n");
    return (size_t)(at - dst);
}

/* Room for a frame named len bytes: the fixed parts, the name escaped twice (title, label), the count name,
 * a differential tooltip's tail. */
static size_t frame_room(const struct svg_out *o, size_t len)
{
    return SVG_FRAME_FIXED + 2 * SVG_ESCAPE_MAX * len + o->count_name_len + (o->style ? SVG_TITLE_TAIL_MAX : 0);
}

static int write_frame(struct svg_out *o, const struct svg_frame *f, const struct svg_geometry *g,
                       uint64_t total, const struct svg_options *opts)
{
    const char *name = f->depth == 0 ? "all" : f->name;
    size_t len = strlen(name);
    size_t room = frame_room(o, len);
    if (room <= SVG_BUFFER) {
        if (o->len + room > SVG_BUFFER && out_flush(o) != 0)
            return -1;
        o->len += format_frame(o->buf + o->len, o, f, name, len, g, total, opts);
        return 0;
    }
    if (vec_reserve(&o->big, room) != 0) {
        errno = ENOMEM;
        return -1;
    }
    if (out_flush(o) != 0)
        return -1;
    return write_all(o->out, o->big.v, format_frame(o->big.v, o, f, name, len, g, total, opts));
}

/* Chunks of laid-out frames, handed from the layout (this thread) to the formatting and writing (another). */
#define SVG_CHUNK 1024u              /* frames in a chunk */
#define SVG_CHUNKS 4u                /* chunks laid out ahead of the formatting at most */

struct frame_chunks {
    struct svg_frame *frames[SVG_CHUNKS];
    size_t n[SVG_CHUNKS];
    struct svg_out *o;
    const struct svg_geometry *g;
    uint64_t total;
    const struct svg_options *opts;
};

/* The formatting thread's work: one chunk's frames into the output. Returns 0 or an errno value. */
static int format_chunk(void *ctx, size_t slot)
{
    struct frame_chunks *c = ctx;
    const struct svg_frame *frames = c->frames[slot];
    size_t n = c->n[slot];
    for (size_t i = 0; i < n; i++) {
        if (i + SVG_PREFETCH < n && frames[i + SVG_PREFETCH].name)
            __builtin_prefetch(frames[i + SVG_PREFETCH].name);
        errno = 0;
        if (write_frame(c->o, &frames[i], c->g, c->total, c->opts) != 0)
            return errno ? errno : EIO;
    }
    return 0;
}

static int write_frames(FILE *out, struct svg_layout *layout, size_t n_frame_ids, const struct svg_geometry *g,
                        uint64_t total, const struct svg_options *opts, const struct svg_frame_style *style)
{
    size_t count_len = strlen(opts->count_name);
    struct svg_out o = { .out = out, .count_name = malloc(SVG_ESCAPE_MAX * count_len + 1), .style = style,
                         .buf = malloc(SVG_BUFFER), .n_frame_ids = n_frame_ids };
    struct frame_chunks c = { .o = &o, .g = g, .total = total, .opts = opts };
    int rc = -1, error = ENOMEM;
    bool ready = o.count_name && o.buf;
    for (size_t i = 0; i < SVG_CHUNKS; i++)
        ready = (c.frames[i] = malloc(SVG_CHUNK * sizeof(*c.frames[i]))) && ready;
    if (ready) {
        o.count_name_len = svg_escape_into(o.count_name, opts->count_name, count_len);
        o.text_of = calloc(n_frame_ids ? n_frame_ids : 1, sizeof(*o.text_of));   /* NULL: each frame's made anew */
        struct handoff h;
        (void)handoff_open(&h, SVG_CHUNKS, format_chunk, &c);   /* without a thread: formatted as handed on */
        error = 0;
        for (;;) {
            size_t slot = handoff_slot(&h, &error);
            if (error || (c.n[slot] = svg_layout_next(layout, c.frames[slot], SVG_CHUNK)) == 0)
                break;
            if ((error = handoff_submit(&h)) != 0)
                break;
        }
        int closed = handoff_close(&h);
        if (!error)
            error = closed;
        if (!error)
            error = out_flush(&o) != 0 ? errno : 0;
        rc = error ? -1 : 0;
    }
    for (size_t i = 0; i < SVG_CHUNKS; i++)
        free(c.frames[i]);
    vec_free(&o.big);
    vec_free(&o.texts);
    vec_free(&o.escaped);
    free(o.text_of);
    free(o.count_name);
    free(o.buf);
    errno = error;
    return rc;
}

static bool options_valid(const struct svg_options *o)
{
    return o->width >= 2 * SVG_XPAD + 10 && o->width <= 1000000 && o->frame_height >= 1 &&
           o->frame_height <= 1000 && !isnan(o->min_width) && o->min_width >= 0 &&
           (o->colors == NULL || svg_palette_known(o->colors)) && o->count_name != NULL;
}

static int write_svg(const struct profile *p, FILE *out, const struct svg_options *o,
                     const struct svg_frame_style *style)
{
    struct svg_geometry g = {
        .width = o->width,
        .chart_width = o->width - 2 * SVG_XPAD,
        .frame_height = o->frame_height,
        .char_width = SVG_FONT_SIZE * SVG_FONT_WIDTH,
        .inverted = o->inverted,
        .top = SVG_FONT_SIZE * 3 + (o->subtitle ? SVG_LINE : 0) + (o->header ? SVG_LINE : 0),
    };
    struct svg_layout *layout = svg_layout_open(p, g.chart_width, o->min_width);
    if (!layout)
        return -1;
    size_t n_nodes = 0;
    const struct profile_node *nodes = profile_nodes(p, &n_nodes);
    uint64_t total = n_nodes ? nodes[0].total : 0;
    g.height = g.top + (svg_layout_max_depth(layout) + 1) * g.frame_height + SVG_BOTTOM;

    write_head(out, o, &g, total);
    fputs("<g id=\"frames\">\n", out);
    int rc = write_frames(out, layout, profile_frame_count(p), &g, total, o, style);
    int saved = errno;
    svg_layout_free(layout);
    errno = saved;
    if (rc != 0)
        return -1;
    fputs("</g>\n</svg>\n", out);
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int svg_write_styled(const struct profile *p, FILE *out, const struct svg_options *opts,
                     const struct svg_frame_style *style)
{
    struct svg_options defaults;
    if (!opts) {
        svg_options_init(&defaults);
        opts = &defaults;
    }
    if (!options_valid(opts) || (style && opts->reverse)) {
        errno = EINVAL;
        return -1;
    }
    if (!opts->reverse)
        return write_svg(p, out, opts, style);
    struct profile *reversed = svg_reversed_profile(p);
    if (!reversed)
        return -1;
    int rc = write_svg(reversed, out, opts, NULL);
    int saved = errno;
    profile_free(reversed);
    errno = saved;
    return rc;
}

int profile_write_svg(const struct profile *p, FILE *out, const struct svg_options *opts)
{
    return svg_write_styled(p, out, opts, NULL);
}
