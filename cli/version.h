/* SPDX-License-Identifier: GPL-3.0-or-later */
/* version.h: taskspy's version: `git describe --always --dirty` of the checkout it was built from (the
 * GNUmakefile passes TASKSPY_VERSION), else a fixed one. */
#ifndef TASKSPY_VERSION_H
#define TASKSPY_VERSION_H

#ifndef TASKSPY_VERSION
#define TASKSPY_VERSION "0.1"
#endif

#endif
