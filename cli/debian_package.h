/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debian_package.h: which Debian package installed a file, from dpkg's file lists (what `dpkg -S` reads), so that
 * the summary can name the -dbgsym package that holds an object's debug file. */
#ifndef TASKSPY_DEBIAN_PACKAGE_H
#define TASKSPY_DEBIAN_PACKAGE_H

#include <stdbool.h>
#include <stddef.h>

/* The package (without its ":arch") that lists path in ROOT/var/lib/dpkg/info/PKG.list (root: "" or the
 * target's "/proc/PID/root"). A path under /usr also matches its merged-/usr alias (/usr/lib/x.so listed as
 * /lib/x.so) and the other way round. False when no list has it (not a Debian system, or not a packaged file). */
bool debian_package_of(const char *root, const char *path, char *package, size_t len);

#endif
