/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_lines.c: one compilation unit's line table (.debug_line, DWARF 2 to 5), decoded once and kept in
 * compact arrays: per sequence its rows (address, file, line) in address order. The rows are the ones libbfd
 * keeps, in its order, so that a lookup answers what libbfd's bfd_find_nearest_line answered: of consecutive
 * rows at one address the last is kept, a row out of address order goes before the rows of its address,
 * sequences are sorted by start (the longest first) and nested ones dropped, overlapping ones trimmed; file
 * names are built as libbfd builds them (the unit's DW_AT_comp_dir, the row's directory, its name; "<unknown>"
 * for a bad file number), each once. The section bytes are the caller's (libdw's, mapped). */
#include "symbolize/symbolize_internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ROW UINT32_MAX
#define FILE_NONE 0u                   /* a row without a file name */
#define FILE_UNKNOWN UINT32_MAX        /* "<unknown>": a file number the table did not have when the row was made */
#define UNKNOWN_FILE_NAME "<unknown>"
#define LNS_EXTENDED_OP 0                  /* (elfutils' dwarf.h names neither) */
#define LNE_HP_SOURCE_FILE_CORRELATION 0x80

struct line_file {
    const char *name;                  /* NULL: none (an empty name) */
    uint64_t dir;
    char *path;                        /* built on first use */
};

struct line_sequence {
    uint64_t low_pc;                   /* after trimming */
    uint32_t first, n;                 /* its rows in rows[], address order; the last ends the sequence */
};

struct line_table {
    const char *comp_dir;
    bool dir_and_file_0;               /* DWARF 5: file and directory 0 are used (before: numbers start at 1) */
    VEC_OF(const char *) dirs;         /* NULL entries: an empty name */
    VEC_OF(struct line_file) files;
    VEC_OF(struct line_sequence) sequences;
    VEC_OF(struct line_row) rows;
    line_range_vec covered; /* each sequence's lowest to highest row address, before sorting */
    size_t program_bytes;              /* the table's size in .debug_line */
    char *unknown;                     /* "<unknown>", owned */
};

/* ---- reading bytes (every read is bounds-checked; past the end reads 0, as libbfd's safe reads do) ---- */
struct cursor {
    const uint8_t *p, *end;
};

static uint64_t read_n(struct cursor *c, size_t n)
{
    return dwarf_bytes_fixed(&c->p, c->end, n);
}

static uint64_t read_uleb(struct cursor *c)
{
    return dwarf_bytes_uleb(&c->p, c->end);
}

static int64_t read_sleb(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    while (c->p < c->end) {
        b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A NUL-terminated string at the cursor; NULL for an empty one (or one running past the end). */
static const char *read_cstring(struct cursor *c)
{
    const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
    if (!nul) {
        c->p = c->end;
        return NULL;
    }
    const char *s = (const char *)c->p;
    c->p = nul + 1;
    return *s ? s : NULL;
}

/* The string at offset in a string section; NULL when empty or out of bounds. */
static const char *section_string(const uint8_t *data, size_t size, uint64_t offset)
{
    if (!data || offset >= size || !memchr(data + offset, 0, size - offset))
        return NULL;
    const char *s = (const char *)data + offset;
    return *s ? s : NULL;
}

/* ---- the header's directory and file tables --------------------------------------------------------- */
/* One value of form at the cursor (DWARF 5 entry formats): a string (*str) or a number (*num); false when the
 * form is not one a line table header can use. */
static bool read_form(struct cursor *c, const struct line_unit_info *u, unsigned form, const char **str,
                      uint64_t *num)
{
    *str = NULL;
    *num = 0;
    switch (form) {
    case DW_FORM_string:
        *str = read_cstring(c);
        return true;
    case DW_FORM_line_strp:
        *str = section_string(u->line_str, u->line_str_size, read_n(c, u->offset_size));
        return true;
    case DW_FORM_strp:                 /* read, but libbfd takes no string of this form here */
        read_n(c, u->offset_size);
        return true;
    case DW_FORM_strx: case DW_FORM_udata:
        *num = read_uleb(c);
        return true;
    case DW_FORM_strx1: case DW_FORM_data1:
        *num = read_n(c, 1);
        return true;
    case DW_FORM_strx2: case DW_FORM_data2:
        *num = read_n(c, 2);
        return true;
    case DW_FORM_strx3:
        *num = read_n(c, 3);
        return true;
    case DW_FORM_strx4: case DW_FORM_data4:
        *num = read_n(c, 4);
        return true;
    case DW_FORM_data8:
        *num = read_n(c, 8);
        return true;
    case DW_FORM_data16:
        read_n(c, 8);
        read_n(c, 8);
        return true;
    case DW_FORM_block: {
        uint64_t len = read_uleb(c);
        c->p = len <= (uint64_t)(c->end - c->p) ? c->p + len : c->end;
        return true;
    }
    default:
        return false;
    }
}

/* DWARF 5's directory or file name entries. Strings of the strx forms are not read (NULL): libbfd reads them
 * through the unit's string offsets, which no producer here uses in a line table. */
static bool read_entries(struct cursor *c, const struct line_unit_info *u, struct line_table *t, bool files)
{
    uint8_t n_formats = (uint8_t)read_n(c, 1);
    struct cursor formats = *c;
    for (unsigned i = 0; i < n_formats; i++) {
        read_uleb(c);
        read_uleb(c);
    }
    uint64_t count = read_uleb(c);
    if ((n_formats == 0 && count != 0) || count > (uint64_t)(c->end - c->p))
        return false;
    for (uint64_t k = 0; k < count; k++) {
        struct cursor f = formats;
        const char *name = NULL;
        uint64_t dir = 0;
        for (unsigned i = 0; i < n_formats; i++) {
            uint64_t content = read_uleb(&f), form = read_uleb(&f);
            const char *s;
            uint64_t num;
            if (content != DW_LNCT_path && content != DW_LNCT_directory_index && content != DW_LNCT_timestamp &&
                content != DW_LNCT_size && content != DW_LNCT_MD5)
                return false;
            if (!read_form(c, u, (unsigned)form, &s, &num))
                return false;
            if (content == DW_LNCT_path && (form == DW_FORM_string || form == DW_FORM_line_strp))
                name = s;
            else if (content == DW_LNCT_directory_index &&
                     (form == DW_FORM_data1 || form == DW_FORM_data2 || form == DW_FORM_data4 ||
                      form == DW_FORM_data8 || form == DW_FORM_udata))
                dir = (uint32_t)num;
        }
        if (files) {
            struct line_file *fe = vec_push(&t->files);
            if (!fe)
                return false;
            fe->name = name;
            fe->dir = dir;
        } else {
            const char **d = vec_push(&t->dirs);
            if (!d)
                return false;
            *d = name;
        }
    }
    return true;
}

/* ---- rows as libbfd keeps them ---------------------------------------------------------------------- */
struct temp_row {
    uint64_t address;
    uint32_t file;
    uint32_t line;
    uint32_t prev;                     /* the row before it (lower or equal address), NO_ROW */
    uint8_t op_index;
    bool end_sequence;
};

struct temp_sequence {
    uint64_t low_pc;
    uint32_t last;                     /* its row with the highest address (the list runs back from it) */
    uint32_t order;                    /* position in libbfd's list: the newest sequence first */
};

struct decoder {
    VEC_OF(struct temp_row) rows;
    VEC_OF(struct temp_sequence) seqs;
    uint32_t lcl_head;                 /* libbfd's "local head": where out-of-order rows were put last */
    struct line_range seen;            /* the current sequence's lowest and highest row address */
};

static bool sorts_after(const struct temp_row *a, const struct temp_row *b)
{
    return a->address > b->address || (a->address == b->address && a->op_index > b->op_index);
}

/* libbfd's add_line_info: append, keep the list sorted, replace a row at the same place as the last. */
static bool add_row(struct decoder *d, uint64_t address, uint8_t op_index, uint32_t file, uint32_t line,
                    bool end_sequence)
{
    struct temp_row *info = vec_push(&d->rows);
    if (!info || d->rows.n >= NO_ROW)
        return false;
    d->seen.low = address < d->seen.low ? address : d->seen.low;
    d->seen.high = address > d->seen.high ? address : d->seen.high;
    uint32_t at = (uint32_t)(d->rows.n - 1);
    *info = (struct temp_row){ .address = address, .file = file, .line = line, .prev = NO_ROW,
                               .op_index = op_index, .end_sequence = end_sequence };
    struct temp_sequence *seq = d->seqs.n ? &d->seqs.v[d->seqs.n - 1] : NULL;
    struct temp_row *rows = d->rows.v;
    if (seq && rows[seq->last].address == address && rows[seq->last].op_index == op_index &&
        rows[seq->last].end_sequence == end_sequence) {
        if (d->lcl_head == seq->last)
            d->lcl_head = at;
        rows[at].prev = rows[seq->last].prev;
        seq->last = at;
    } else if (!seq || rows[seq->last].end_sequence) {
        seq = vec_push(&d->seqs);
        if (!seq)
            return false;
        *seq = (struct temp_sequence){ .low_pc = address, .last = at };
        d->lcl_head = at;
    } else if (end_sequence || sorts_after(&rows[at], &rows[seq->last])) {
        rows[at].prev = seq->last;
        seq->last = at;
        if (d->lcl_head == NO_ROW)
            d->lcl_head = at;
    } else if (!sorts_after(&rows[at], &rows[d->lcl_head]) &&
               (rows[d->lcl_head].prev == NO_ROW || sorts_after(&rows[at], &rows[rows[d->lcl_head].prev]))) {
        rows[at].prev = rows[d->lcl_head].prev;
        rows[d->lcl_head].prev = at;
    } else {
        uint32_t li2 = seq->last, li1 = rows[li2].prev;
        while (li1 != NO_ROW) {
            if (!sorts_after(&rows[at], &rows[li2]) && sorts_after(&rows[at], &rows[li1]))
                break;
            li2 = li1;
            li1 = rows[li1].prev;
        }
        d->lcl_head = li2;
        rows[at].prev = rows[li2].prev;
        rows[li2].prev = at;
        if (address < seq->low_pc)
            seq->low_pc = address;
    }
    return true;
}

static const struct temp_row *seq_last(const struct decoder *d, const struct temp_sequence *s)
{
    return &d->rows.v[s->last];
}

static int cmp_sequences(const void *a, const void *b, void *ctx)
{
    const struct decoder *d = ctx;
    const struct temp_sequence *x = a, *y = b;
    if (x->low_pc != y->low_pc)
        return x->low_pc < y->low_pc ? -1 : 1;
    const struct temp_row *lx = seq_last(d, x), *ly = seq_last(d, y);
    if (lx->address != ly->address)
        return lx->address < ly->address ? 1 : -1;      /* the longest first */
    if (lx->op_index != ly->op_index)
        return lx->op_index < ly->op_index ? 1 : -1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Sequences sorted, nested ones dropped, overlapping ones trimmed; each one's rows copied in address order. */
static bool finish(struct decoder *d, struct line_table *t)
{
    size_t n = d->seqs.n;
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        d->seqs.v[i].order = (uint32_t)(n - 1 - i);   /* libbfd's list holds the newest first */
    qsort_r(d->seqs.v, n, sizeof(*d->seqs.v), cmp_sequences, d);
    size_t kept = 1;
    uint64_t last_high = seq_last(d, &d->seqs.v[0])->address;
    for (size_t i = 1; i < n; i++) {
        struct temp_sequence *s = &d->seqs.v[i];
        uint64_t high = seq_last(d, s)->address;
        if (s->low_pc < last_high) {
            if (high <= last_high)
                continue;                                /* nested */
            s->low_pc = last_high;                        /* overlapping: trimmed */
        }
        last_high = high;
        d->seqs.v[kept++] = *s;
    }
    if (vec_reserve(&t->sequences, kept) != 0)
        return false;
    for (size_t i = 0; i < kept; i++) {
        const struct temp_sequence *s = &d->seqs.v[i];
        size_t count = 0;
        for (uint32_t r = s->last; r != NO_ROW; r = d->rows.v[r].prev)
            count++;
        if (count >= UINT32_MAX || t->rows.n + count >= UINT32_MAX || vec_reserve(&t->rows, t->rows.n + count) != 0)
            return false;
        size_t at = t->rows.n + count;
        for (uint32_t r = s->last; r != NO_ROW; r = d->rows.v[r].prev) {
            const struct temp_row *row = &d->rows.v[r];
            t->rows.v[--at] = (struct line_row){ .address = row->address, .file = row->file, .line = row->line };
        }
        t->sequences.v[t->sequences.n++] = (struct line_sequence){ .low_pc = s->low_pc,
                                                                  .first = (uint32_t)t->rows.n,
                                                                  .n = (uint32_t)count };
        t->rows.n += count;
    }
    return true;
}

/* The file a row names: its number checked against the files known now (FILE_UNKNOWN when bad). */
static uint32_t file_slot(const struct line_table *t, uint64_t number)
{
    if (!t->dir_and_file_0) {
        if (number == 0)
            return FILE_UNKNOWN;
        number--;
    }
    return number < t->files.n ? (uint32_t)number + 1 : FILE_UNKNOWN;
}

/* ---- the line number program ------------------------------------------------------------------------ */
struct header {
    uint16_t version;
    uint8_t min_insn_length, max_ops, line_range, opcode_base;
    int8_t line_base;
    const uint8_t *opcode_lengths;    /* opcode_base - 1 of them, for opcodes 1.. */
};

static bool run_program(struct cursor *c, const struct header *h, const struct line_unit_info *u,
                        struct line_table *t, struct decoder *d)
{
    while (c->p < c->end) {
        uint64_t address = 0;
        uint8_t op_index = 0;
        uint32_t file = t->files.n ? file_slot(t, t->dir_and_file_0 ? 0 : 1) : FILE_NONE;
        uint32_t line = 1;
        bool end_sequence = false;
        d->seen = (struct line_range){ UINT64_MAX, 0 };
        while (!end_sequence && c->p < c->end) {
            uint8_t op = (uint8_t)read_n(c, 1);
            if (op >= h->opcode_base) {
                uint8_t adj = (uint8_t)(op - h->opcode_base);
                if (h->line_range == 0)
                    return false;
                if (h->max_ops == 1) {
                    address += (uint64_t)(adj / h->line_range) * h->min_insn_length;
                } else {
                    address += (op_index + adj / h->line_range) / h->max_ops * h->min_insn_length;
                    op_index = (uint8_t)((op_index + adj / h->line_range) % h->max_ops);
                }
                line += (uint32_t)(h->line_base + adj % h->line_range);
                if (!add_row(d, address, op_index, file, line, false))
                    return false;
                continue;
            }
            switch (op) {
            case LNS_EXTENDED_OP: {
                uint64_t len = read_uleb(c);
                uint8_t ext = (uint8_t)read_n(c, 1);
                switch (ext) {
                case DW_LNE_end_sequence: {
                    end_sequence = true;
                    if (!add_row(d, address, op_index, file, line, true))
                        return false;
                    /* libbfd counts the sequence's addresses as the unit's (an empty one adds nothing) */
                    struct line_range *r = d->seen.low < d->seen.high ? vec_push(&t->covered) : NULL;
                    if (r)
                        *r = d->seen;
                    else if (d->seen.low < d->seen.high)
                        return false;
                    break;
                }
                case DW_LNE_set_address:
                    address = read_n(c, u->addr_size);
                    op_index = 0;
                    break;
                case DW_LNE_define_file: {
                    struct line_file *fe = vec_push(&t->files);
                    if (!fe)
                        return false;
                    fe->name = read_cstring(c);
                    fe->dir = (uint32_t)read_uleb(c);
                    read_uleb(c);
                    read_uleb(c);
                    break;
                }
                case DW_LNE_set_discriminator:
                    read_uleb(c);
                    break;
                case LNE_HP_SOURCE_FILE_CORRELATION:
                    c->p = len - 1 <= (uint64_t)(c->end - c->p) ? c->p + (len - 1) : c->end;
                    break;
                default:
                    return false;              /* libbfd: "mangled line number section" */
                }
                break;
            }
            case DW_LNS_copy:
                if (!add_row(d, address, op_index, file, line, false))
                    return false;
                break;
            case DW_LNS_advance_pc:
                if (h->max_ops == 1) {
                    address += h->min_insn_length * read_uleb(c);
                } else {
                    uint64_t adjust = read_uleb(c);
                    address = (op_index + adjust) / h->max_ops * h->min_insn_length;   /* (as libbfd has it) */
                    op_index = (uint8_t)((op_index + adjust) % h->max_ops);
                }
                break;
            case DW_LNS_advance_line:
                line += (uint32_t)read_sleb(c);
                break;
            case DW_LNS_set_file:
                file = file_slot(t, read_uleb(c));
                break;
            case DW_LNS_set_column:
                read_uleb(c);
                break;
            case DW_LNS_negate_stmt: case DW_LNS_set_basic_block:
                break;
            case DW_LNS_const_add_pc:
                if (h->line_range == 0)
                    return false;
                if (h->max_ops == 1) {
                    address += (uint64_t)h->min_insn_length * ((255u - h->opcode_base) / h->line_range);
                } else {
                    uint64_t adjust = (255u - h->opcode_base) / h->line_range;
                    address += h->min_insn_length * ((op_index + adjust) / h->max_ops);
                    op_index = (uint8_t)((op_index + adjust) % h->max_ops);
                }
                break;
            case DW_LNS_fixed_advance_pc:
                address += read_n(c, 2);
                op_index = 0;
                break;
            default:
                for (unsigned i = 0; i < h->opcode_lengths[op - 1]; i++)
                    read_uleb(c);
                break;
            }
        }
    }
    return true;
}

struct line_table *line_table_decode(const struct line_unit_info *u)
{
    if (!u->line || u->line_size < 16 || u->offset >= u->line_size)
        return NULL;
    struct cursor c = { u->line + u->offset, u->line + u->line_size };
    uint64_t length = read_n(&c, 4);
    unsigned offset_size = 4;
    if (length == 0xffffffff) {
        length = read_n(&c, 8);
        offset_size = 8;
    } else if (length == 0 && u->addr_size == 8) {
        length = read_n(&c, 4);
        offset_size = 8;
    }
    if (length > (uint64_t)(c.end - c.p))
        return NULL;
    c.end = c.p + length;
    struct header h = { .version = (uint16_t)read_n(&c, 2) };
    if (h.version < 2 || h.version > 5)
        return NULL;
    if ((size_t)(c.end - c.p) <= offset_size + (h.version >= 5 ? 8u : h.version >= 4 ? 6u : 5u))
        return NULL;
    if (h.version >= 5) {
        read_n(&c, 1);                            /* address size (libbfd reads the unit's) */
        if (read_n(&c, 1) != 0)                   /* segment selector size */
            return NULL;
    }
    read_n(&c, offset_size);                      /* header length: libbfd reads on from here regardless */
    h.min_insn_length = (uint8_t)read_n(&c, 1);
    h.max_ops = h.version >= 4 ? (uint8_t)read_n(&c, 1) : 1;
    if (h.max_ops == 0)
        return NULL;
    read_n(&c, 1);                                /* default_is_stmt: every row counts */
    h.line_base = (int8_t)read_n(&c, 1);
    h.line_range = (uint8_t)read_n(&c, 1);
    h.opcode_base = (uint8_t)read_n(&c, 1);
    if (h.opcode_base == 0 || (size_t)(c.end - c.p) <= (size_t)(h.opcode_base - 1))
        return NULL;
    h.opcode_lengths = c.p;
    c.p += h.opcode_base - 1;

    struct line_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->comp_dir = u->comp_dir;
    t->program_bytes = (size_t)(c.end - (u->line + u->offset));
    struct line_unit_info unit = *u;
    unit.offset_size = (uint8_t)offset_size;
    bool ok;
    if (h.version >= 5) {
        t->dir_and_file_0 = true;
        ok = read_entries(&c, &unit, t, false) && read_entries(&c, &unit, t, true);
    } else {
        ok = true;
        for (const char *dir; ok && (dir = read_cstring(&c));) {
            const char **d = vec_push(&t->dirs);
            ok = d && (*d = dir);
        }
        for (const char *name; ok && (name = read_cstring(&c));) {
            struct line_file *fe = vec_push(&t->files);
            if (!(ok = fe != NULL))
                break;
            fe->name = name;
            fe->dir = (uint32_t)read_uleb(&c);
            read_uleb(&c);
            read_uleb(&c);
        }
    }
    struct decoder d = { .lcl_head = NO_ROW };
    ok = ok && run_program(&c, &h, u, t, &d) && finish(&d, t);
    vec_free(&d.rows);
    vec_free(&d.seqs);
    if (!ok) {
        line_table_free(t);
        return NULL;
    }
    return t;
}

void line_table_free(struct line_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->files.n; i++)
        free(t->files.v[i].path);
    vec_free(&t->files);
    vec_free(&t->dirs);
    vec_free(&t->sequences);
    vec_free(&t->rows);
    vec_free(&t->covered);
    free(t->unknown);
    free(t);
}

static bool is_absolute(const char *path)
{
    return path[0] == '/';
}

/* libbfd's concat_filename for a checked file number (an index into files). */
static const char *file_path(struct line_table *t, uint32_t index)
{
    struct line_file *fe = &t->files.v[index];
    if (fe->path)
        return fe->path;
    if (!fe->name)
        return line_table_unknown(t);
    const char *dir = NULL, *subdir = NULL;
    if (!is_absolute(fe->name)) {
        uint64_t d = fe->dir;
        if (!t->dir_and_file_0)
            d--;                               /* 0 wraps past every directory: none */
        if (d < t->dirs.n)
            subdir = t->dirs.v[d];
        if (!subdir || !is_absolute(subdir))
            dir = t->comp_dir;
        if (!dir) {
            dir = subdir;
            subdir = NULL;
        }
    }
    char *path = NULL;
    int rc = !dir ? ((path = strdup(fe->name)) ? 0 : -1)
             : subdir ? asprintf(&path, "%s/%s/%s", dir, subdir, fe->name)
                      : asprintf(&path, "%s/%s", dir, fe->name);
    if (rc < 0)
        return NULL;
    fe->path = path;
    return path;
}

const char *line_table_unknown(struct line_table *t)
{
    if (!t->unknown)
        t->unknown = strdup(UNKNOWN_FILE_NAME);
    return t->unknown;
}

const char *line_table_file(struct line_table *t, uint64_t number)
{
    uint32_t slot = file_slot(t, number);
    return slot == FILE_UNKNOWN ? line_table_unknown(t) : file_path(t, slot - 1);
}

bool line_table_lookup(struct line_table *t, uint64_t addr, const char **file, unsigned *line)
{
    *file = NULL;
    *line = 0;
    size_t lo = 0, hi = t->sequences.n;
    const struct line_sequence *seq = NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        seq = &t->sequences.v[mid];
        if (addr < seq->low_pc)
            hi = mid;
        else if (addr >= t->rows.v[seq->first + seq->n - 1].address)
            lo = mid + 1;
        else
            break;
    }
    if (!seq || addr < seq->low_pc || addr >= t->rows.v[seq->first + seq->n - 1].address)
        return false;
    const struct line_row *rows = &t->rows.v[seq->first];
    lo = 0;
    hi = seq->n;
    size_t mid = 0;
    const struct line_row *info = NULL;
    while (lo < hi) {
        mid = (lo + hi) / 2;
        info = &rows[mid];
        if (addr < info->address)
            hi = mid;
        else if (mid + 1 < seq->n && addr >= rows[mid + 1].address)
            lo = mid + 1;
        else
            break;
    }
    /* (the sequence's last row, which ends it, names no line) */
    if (!info || addr < info->address || mid + 1 >= seq->n || addr >= rows[mid + 1].address)
        return false;
    *file = info->file == FILE_NONE ? NULL : info->file == FILE_UNKNOWN ? line_table_unknown(t)
                                                                         : file_path(t, info->file - 1);
    *line = info->line;
    return true;
}

size_t line_table_bytes(const struct line_table *t)
{
    return t ? t->program_bytes : 0;
}

bool line_table_covers_any(const struct line_table *t)
{
    return t->covered.n > 0;
}

bool line_table_covers(const struct line_table *t, uint64_t addr)
{
    for (size_t i = 0; i < t->covered.n; i++)
        if (addr >= t->covered.v[i].low && addr < t->covered.v[i].high)
            return true;
    return false;
}
