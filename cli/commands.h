/* SPDX-License-Identifier: GPL-3.0-or-later */
/* commands.h: the taskspy subcommands, each a main-like entry point called by cli/taskspy.c. */
#ifndef TASKSPY_COMMANDS_H
#define TASKSPY_COMMANDS_H

/* taskspy record ...: argv[0] is "record". Returns the process exit status. */
int record_command(int argc, char **argv);
/* taskspy flamegraph ...: argv[0] is "flamegraph". Returns the process exit status. */
int flamegraph_command(int argc, char **argv);
/* taskspy diff ...: argv[0] is "diff". Returns the process exit status. */
int diff_command(int argc, char **argv);
/* taskspy tasks ...: argv[0] is "tasks". Returns the process exit status. */
int tasks_command(int argc, char **argv);
/* taskspy top ...: argv[0] is "top". Returns the process exit status. */
int top_command(int argc, char **argv);

#endif
