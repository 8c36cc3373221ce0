/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output_file.c: outputs that appear whole or not at all: an unnamed O_TMPFILE file in the destination's
 * directory, linked into place on commit; a hidden named temporary file renamed into place where the
 * filesystem lacks O_TMPFILE. */
#include "cli/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(struct output_file *o, int error, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot write %s: %s", o->final_path, strerror(error ? error : EIO));
    return -1;
}

static int attach_stream(struct output_file *o, int fd, char *err, size_t errlen);

/* An existing destination that is not a regular file (/dev/null, a FIFO, a terminal): written as it is. A
 * temporary file linked or renamed into its place would replace the device itself (root's -o /dev/null would
 * leave a regular file there, which every later reader of /dev/null then reads). Returns 0, -1 on error. */
static int open_direct(struct output_file *o, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return fail(o, errno, err, errlen);
    o->direct = true;
    return attach_stream(o, fd, err, errlen);
}

/* Checks shared by both ways of opening. Returns 1 when the file is to be created, 0 for stdout or an
 * existing device written as it is, -1 on error. */
static int prepare(struct output_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    if (strcmp(path, "-") == 0) {
        o->stream = stdout;
        return 0;
    }
    if (strlen(path) + 32 >= sizeof(o->temp_path)) {
        snprintf(err, errlen, "output path too long: %s", path);
        return -1;
    }
    snprintf(o->final_path, sizeof(o->final_path), "%s", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s: it is a directory", path);
        return -1;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return open_direct(o, path, err, errlen);
    return 1;
}

static int attach_stream(struct output_file *o, int fd, char *err, size_t errlen)
{
    o->stream = fdopen(fd, "w");
    if (o->stream)
        return 0;
    int e = errno;
    close(fd);
    if (o->temp_path[0])
        unlink(o->temp_path);
    o->temp_path[0] = '\0';
    return fail(o, e, err, errlen);
}

int output_file_open_named(struct output_file *o, const char *path, char *err, size_t errlen)
{
    int rc = prepare(o, path, err, errlen);
    if (rc <= 0)
        return rc;
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(o->temp_path, sizeof(o->temp_path), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
    else
        snprintf(o->temp_path, sizeof(o->temp_path), ".%s.XXXXXX", path);
    int fd = mkostemp(o->temp_path, O_CLOEXEC);
    if (fd < 0) {
        o->temp_path[0] = '\0';
        return fail(o, errno, err, errlen);
    }
    /* mkstemp makes it 0600; give it the mode a plain create would (0666 & ~umask). */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return fail(o, e, err, errlen);
    }
    return attach_stream(o, fd, err, errlen);
}

int output_file_open(struct output_file *o, const char *path, char *err, size_t errlen)
{
    int rc = prepare(o, path, err, errlen);
    if (rc <= 0)
        return rc;
    char dir[sizeof(o->final_path)];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        /* EOPNOTSUPP: the filesystem has no O_TMPFILE; EISDIR: the kernel has none */
        if (errno == EOPNOTSUPP || errno == EISDIR)
            return output_file_open_named(o, path, err, errlen);
        return fail(o, errno, err, errlen);
    }
    o->unnamed = true;
    return attach_stream(o, fd, err, errlen);
}

/* Put the file named temp in place of final, which exists: the two are exchanged and the old file then
 * unlinked. A plain rename over an existing file costs more on ext4, whose auto_da_alloc heuristic makes it
 * allocate and start writing out the new file's data first (about 5 ms of an 11 MB SVG's, against 0.8 ms).
 * The new file's data then reach the disk as a new name's do, when the kernel writes them back. Where final
 * is not a regular file or the filesystem cannot exchange names, a rename. */
static int replace_with(const char *temp, const char *final)
{
    struct stat st;
    if (lstat(final, &st) == 0 && S_ISREG(st.st_mode) &&
        renameat2(AT_FDCWD, temp, AT_FDCWD, final, RENAME_EXCHANGE) == 0) {
        if (unlink(temp) == 0)
            return 0;
        /* what was final cannot be unlinked (it became a directory meanwhile): put it back, then rename */
        if (renameat2(AT_FDCWD, temp, AT_FDCWD, final, RENAME_EXCHANGE) != 0)
            return -1;
    }
    return rename(temp, final);
}

/* Give the unnamed file fd the name final. Where final exists, it is linked under a temporary name and put
 * in its place (only that instant leaves a name to clean up, should the process die in it). */
static int link_into_place(int fd, const char *final)
{
    char proc_path[64];
    snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc_path, AT_FDCWD, final, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno == ENOENT && linkat(fd, "", AT_FDCWD, final, AT_EMPTY_PATH) == 0)
        return 0;                    /* no /proc: needs CAP_DAC_READ_SEARCH */
    if (errno != EEXIST)
        return -1;
    char temp[4096 + 64];
    const char *slash = strrchr(final, '/');
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        if (slash)
            snprintf(temp, sizeof(temp), "%.*s/.%s.taskspy-%d-%u", (int)(slash - final), final, slash + 1,
                     (int)getpid(), attempt);
        else
            snprintf(temp, sizeof(temp), ".%s.taskspy-%d-%u", final, (int)getpid(), attempt);
        if (linkat(AT_FDCWD, proc_path, AT_FDCWD, temp, AT_SYMLINK_FOLLOW) != 0) {
            if (errno == EEXIST)
                continue;
            return -1;
        }
        if (replace_with(temp, final) != 0) {
            int e = errno;
            unlink(temp);
            errno = e;
            return -1;
        }
        return 0;
    }
    return -1;
}

int output_file_commit(struct output_file *o, char *err, size_t errlen)
{
    if (o->stream == stdout) {
        if (fflush(stdout) != 0) {
            snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    int e = 0;
    if (fflush(o->stream) != 0 || ferror(o->stream))
        e = errno ? errno : EIO;
    if (!e && o->direct) {
        if (fclose(o->stream) != 0)
            e = errno;
        o->stream = NULL;
        return e ? fail(o, e, err, errlen) : 0;
    }
    if (!e && o->unnamed && link_into_place(fileno(o->stream), o->final_path) != 0)
        e = errno;
    bool linked = !e && o->unnamed;
    if (fclose(o->stream) != 0 && !e)
        e = errno;
    o->stream = NULL;
    if (!e && !o->unnamed && rename(o->temp_path, o->final_path) != 0)
        e = errno;
    if (e) {
        if (linked)
            unlink(o->final_path);   /* closing reported a late write error: the file is not whole */
        if (o->temp_path[0])
            unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return fail(o, e, err, errlen);
    }
    o->temp_path[0] = '\0';
    return 0;
}

void output_file_abort(struct output_file *o)
{
    if (o->stream && o->stream != stdout)
        fclose(o->stream);
    o->stream = NULL;
    if (o->temp_path[0])
        unlink(o->temp_path);
    o->temp_path[0] = '\0';
}
