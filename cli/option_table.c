/* SPDX-License-Identifier: GPL-3.0-or-later */
/* option_table.c: parsing a command's options from its option table (through getopt_long, whose tables are
 * made from it) and writing the table's --help lines. */
#include "cli/option_table.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LONG_ONLY_BASE 256           /* getopt's value for an option without a short name: this + its index */
#define HELP_COLUMN 27               /* where help text starts */

/* A finite number in [min, max], the whole argument. */
static int parse_number(const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static bool parse_whole(const struct option_spec *s, const char *arg, double *v)
{
    return parse_number(arg, s->min, s->max, v) == 0 && *v == floor(*v);
}

static bool parse_choice(const struct option_spec *s, const char *arg, int *value)
{
    for (const struct option_choice *c = s->choices; c && c->name; c++) {
        if (strcmp(c->name, arg) == 0) {
            *value = c->value;
            return true;
        }
    }
    return false;
}

/* Check arg and store it where s says. Returns false if it is refused. */
static bool store(const struct option_spec *s, const char *arg, void *into)
{
    void *at = (char *)into + s->offset;
    double v;
    switch (s->kind) {
    case OPTION_STRING:
        if ((s->non_empty && !*arg) || (s->valid && !s->valid(arg)))
            return false;
        *(const char **)at = arg;
        return true;
    case OPTION_FLAG:
        *(bool *)at = true;
        return true;
    case OPTION_REAL:
        if (parse_number(arg, s->min, s->max, &v) != 0)
            return false;
        *(double *)at = v;
        return true;
    case OPTION_WHOLE:
        if (!parse_whole(s, arg, &v))
            return false;
        *(unsigned *)at = (unsigned)v;
        return true;
    case OPTION_INT:
        if (!parse_whole(s, arg, &v))
            return false;
        *(int *)at = (int)v;
        return true;
    case OPTION_CHOICE:
        return parse_choice(s, arg, (int *)at);
    case OPTION_ON_OFF:
        if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
            return false;
        *(bool *)at = strcmp(arg, "on") == 0;
        return true;
    case OPTION_CALL:
    case OPTION_HELP:
        return true;                 /* handled by the caller */
    }
    return false;
}

/* getopt_long's long options and short option string for t. */
static void getopt_tables(const struct option_table *t, struct option *longopts, char *shortopts)
{
    char *at = shortopts;
    if (t->stop_at_operand)
        *at++ = '+';
    *at++ = ':';                     /* a missing value is ':', not '?' */
    for (size_t i = 0; i < t->n; i++) {
        const struct option_spec *s = &t->specs[i];
        longopts[i] = (struct option){ s->name, s->arg ? required_argument : no_argument, NULL,
                                       s->short_name ? s->short_name : (int)(LONG_ONLY_BASE + i) };
        if (s->short_name) {
            *at++ = s->short_name;
            if (s->arg)
                *at++ = ':';
        }
    }
    longopts[t->n] = (struct option){ NULL, 0, NULL, 0 };
    *at = '\0';
}

static const struct option_spec *spec_of(const struct option_table *t, int c)
{
    if (c >= LONG_ONLY_BASE)
        return (size_t)(c - LONG_ONLY_BASE) < t->n ? &t->specs[c - LONG_ONLY_BASE] : NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->specs[i].short_name && t->specs[i].short_name == c)
            return &t->specs[i];
    return NULL;
}

enum option_parse_result option_table_parse(const struct option_table *t, void *into, int argc, char **argv,
                                            int *operands, char *err, size_t errlen)
{
    if (t->n > OPTION_TABLE_MAX) {
        snprintf(err, errlen, "too many options in one table (%zu)", t->n);
        return OPTIONS_ERROR;
    }
    struct option longopts[OPTION_TABLE_MAX + 1];
    char shortopts[2 + 2 * OPTION_TABLE_MAX + 1];
    getopt_tables(t, longopts, shortopts);
    optind = 0;   /* 0, not 1: makes glibc reinitialise getopt fully (a second parse in one process) */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const struct option_spec *s = c == ':' || c == '?' ? NULL : spec_of(t, c);
        if (c == ':') {
            snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
            return OPTIONS_ERROR;
        }
        if (!s) {
            const char *given = argv[optind - 1];
            if (strncmp(given, "--", 2) == 0 && optopt)      /* a known long option, given a value */
                snprintf(err, errlen, "option '%.*s' takes no value", (int)strcspn(given, "="), given);
            else if (strncmp(given, "--", 2) != 0 && optopt && optopt < LONG_ONLY_BASE)
                snprintf(err, errlen, "unknown option '-%c'", optopt);
            else
                snprintf(err, errlen, "unknown option '%s'", given);
            return OPTIONS_ERROR;
        }
        if (s->kind == OPTION_HELP)
            return OPTIONS_HELP;
        if (s->kind == OPTION_CALL) {
            if (s->call((char *)into + s->offset, optarg, err, errlen) != 0)
                return OPTIONS_ERROR;
            continue;
        }
        if (!store(s, optarg, into)) {
            if (s->bad_value)
                snprintf(err, errlen, s->bad_value, optarg);
            else
                snprintf(err, errlen, "invalid --%s '%s'", s->name, optarg);
            return OPTIONS_ERROR;
        }
    }
    *operands = optind;
    return OPTIONS_OK;
}

void option_table_help(const struct option_table *t, FILE *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct option_spec *s = &t->specs[i];
        if (!s->help)
            continue;
        char left[128];
        int w = snprintf(left, sizeof(left), "  %c%c%c --%s%s%s", s->short_name ? '-' : ' ',
                         s->short_name ? s->short_name : ' ', s->short_name ? ',' : ' ', s->name,
                         s->arg ? " " : "", s->arg ? s->arg : "");
        fprintf(out, "%s%*s", left, w < HELP_COLUMN - 2 ? HELP_COLUMN - w : 2, "");
        for (const char *at = s->help; *at; at++) {
            if (*at == '\n')
                fprintf(out, "\n%*s", HELP_COLUMN, "");
            else
                fputc(*at, out);
        }
        if (s->help_list)
            fprintf(out, ": %s", s->help_list());
        fputc('\n', out);
    }
}

int option_command_usage_error(const struct option_command *c, const char *message)
{
    fprintf(stderr, "taskspy: %s: %s (see 'taskspy %s --help')\n", c->name, message, c->name);
    return OPTION_USAGE_ERROR;
}

enum option_parse_result option_command_parse(const struct option_command *c, void *into, int argc, char **argv,
                                              int *operands)
{
    char err[512];
    enum option_parse_result rc = option_table_parse(c->table, into, argc, argv, operands, err, sizeof(err));
    if (rc == OPTIONS_HELP) {
        fputs(c->usage, stdout);
        option_table_help(c->table, stdout);
    } else if (rc != OPTIONS_OK) {
        option_command_usage_error(c, err);
    }
    return rc;
}
