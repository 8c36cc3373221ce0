/* SPDX-License-Identifier: GPL-3.0-or-later */
/* option_table.h: a command's options, each described once (long and short name, argument, help line, how
 * its value is checked and where it is stored); getopt's tables, the parsing and the --help lines are made
 * from that one description. */
#ifndef TASKSPY_OPTION_TABLE_H
#define TASKSPY_OPTION_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum option_kind {
    OPTION_STRING,       /* const char *: the argument as given (refused if empty and .non_empty) */
    OPTION_FLAG,         /* bool: set */
    OPTION_REAL,         /* double: a finite number in [min, max] */
    OPTION_WHOLE,        /* unsigned: a whole number in [min, max] */
    OPTION_INT,          /* int (also pid_t): a whole number in [min, max] */
    OPTION_CHOICE,       /* int (also an enum): the value of one of .choices, by name */
    OPTION_ON_OFF,       /* bool: "on" or "off" */
    OPTION_CALL,         /* .call(field, argument): stores as it likes (a repeatable option, say) */
    OPTION_HELP,         /* -h / --help: parsing stops and says so */
};

struct option_choice {
    const char *name;
    int value;
};

struct option_spec {
    const char *name;                      /* long name, without "--" */
    char short_name;                       /* or 0 */
    const char *arg;                       /* the argument's name in --help ("PID"); NULL: takes none */
    const char *help;                      /* --help text ('\n' continues it aligned); NULL: a hidden option */
    const char *(*help_list)(void);        /* appended to the help line after ": " (the values), or NULL */
    enum option_kind kind;
    size_t offset;                         /* of the value in the command's options struct */
    double min, max;                       /* numbers */
    const struct option_choice *choices;   /* OPTION_CHOICE, ended by a NULL name */
    bool non_empty;                        /* OPTION_STRING */
    bool (*valid)(const char *arg);        /* OPTION_STRING: a further check, or NULL */
    /* OPTION_CALL: store arg at field; returns 0, or -1 with a message in err */
    int (*call)(void *field, const char *arg, char *err, size_t errlen);
    const char *bad_value;                 /* the error for a refused value, a format with one %s: the value */
};

struct option_table {
    const struct option_spec *specs;
    size_t n;
    bool stop_at_operand;                  /* options end at the first operand (a command and its own options) */
};

#define OPTION_TABLE_MAX 48                /* options in one table */

enum option_parse_result { OPTIONS_OK = 0, OPTIONS_HELP = 1, OPTIONS_ERROR = -1 };

/* Parse argv[1..argc) (argv[0] names the command) into the struct at into, whose other fields are left as
 * they are (defaults). *operands is the index of the first operand (argc if none). Returns OPTIONS_OK,
 * OPTIONS_HELP (-h or --help was given), or OPTIONS_ERROR with a one-line message in err. */
enum option_parse_result option_table_parse(const struct option_table *t, void *into, int argc, char **argv,
                                            int *operands, char *err, size_t errlen);
/* The help lines of the table's options, one each, aligned: "  -p, --pid PID            attach to ...". */
void option_table_help(const struct option_table *t, FILE *out);

/* A subcommand that takes only a table's options (and operands): its name, the usage lines printed before
 * the options' help lines, its table. */
struct option_command {
    const char *name;                      /* "flamegraph" */
    const char *usage;                     /* "usage: taskspy flamegraph ...\n...\n\n" */
    const struct option_table *table;
};
#define OPTION_USAGE_ERROR 2               /* the exit status of a usage error */
/* Print "taskspy: NAME: message (see 'taskspy NAME --help')" on stderr; returns OPTION_USAGE_ERROR. */
int option_command_usage_error(const struct option_command *c, const char *message);
/* option_table_parse for command c, which says what it found: --help prints the usage and the options on
 * stdout (OPTIONS_HELP), an error its usage error line (OPTIONS_ERROR). */
enum option_parse_result option_command_parse(const struct option_command *c, void *into, int argc, char **argv,
                                              int *operands);

#endif
