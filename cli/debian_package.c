/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debian_package.c: the package that installed a file, by a line-by-line search of dpkg's file lists (one
 * file per package, one path per line), read only when the summary names an object without symbols. */
#include "cli/debian_package.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DPKG_INFO "/var/lib/dpkg/info"

/* Whether the list file holds one of the paths (a whole line). */
static bool list_has(const char *list, const char *const *paths, size_t n_paths)
{
    FILE *f = fopen(list, "re");
    if (!f)
        return false;
    char line[4200];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        for (size_t i = 0; i < n_paths && !found; i++)
            found = strcmp(line, paths[i]) == 0;
    }
    fclose(f);
    return found;
}

bool debian_package_of(const char *root, const char *path, char *package, size_t len)
{
    /* merged /usr: the file list may name /usr/lib/x as /lib/x, or /lib/x as /usr/lib/x */
    char alias[4200];
    if (strncmp(path, "/usr/", 5) == 0)
        snprintf(alias, sizeof(alias), "%s", path + 4);
    else
        snprintf(alias, sizeof(alias), "/usr%s", path);
    const char *paths[] = { path, alias };
    char dir_path[512];
    snprintf(dir_path, sizeof(dir_path), "%s%s", root ? root : "", DPKG_INFO);
    DIR *dir = opendir(dir_path);
    if (!dir)
        return false;
    bool found = false;
    struct dirent *d;
    while (!found && (d = readdir(dir))) {
        size_t n = strlen(d->d_name);
        if (n <= 5 || strcmp(d->d_name + n - 5, ".list") != 0)
            continue;
        char list[800];
        snprintf(list, sizeof(list), "%s/%s", dir_path, d->d_name);
        if (!list_has(list, paths, 2))
            continue;
        size_t name_len = strcspn(d->d_name, ":");
        if (name_len > n - 5)
            name_len = n - 5;
        snprintf(package, len, "%.*s", (int)name_len, d->d_name);
        found = true;
    }
    closedir(dir);
    return found;
}
