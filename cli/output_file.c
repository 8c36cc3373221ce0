/* output_file.c: atomic output files (temp file in the destination's directory + rename). */
#include "cli/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int output_file_open(struct output_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    if (strcmp(path, "-") == 0) {
        o->stream = stdout;
        return 0;
    }
    if (strlen(path) + 16 >= sizeof(o->temp_path)) {
        snprintf(err, errlen, "output path too long: %s", path);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s: it is a directory", path);
        return -1;
    }
    snprintf(o->final_path, sizeof(o->final_path), "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(o->temp_path, sizeof(o->temp_path), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
    else
        snprintf(o->temp_path, sizeof(o->temp_path), ".%s.XXXXXX", path);
    int fd = mkostemp(o->temp_path, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        o->temp_path[0] = '\0';
        return -1;
    }
    /* mkstemp makes it 0600; give it the mode a plain create would (0666 & ~umask). */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return -1;
    }
    o->stream = fdopen(fd, "w");
    if (!o->stream) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return -1;
    }
    return 0;
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
    int failed = ferror(o->stream);
    int e = errno;
    if (fclose(o->stream) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->stream = NULL;
    if (failed) {
        snprintf(err, errlen, "cannot write %s: %s", o->final_path, strerror(e ? e : EIO));
        unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return -1;
    }
    if (rename(o->temp_path, o->final_path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", o->final_path, strerror(errno));
        unlink(o->temp_path);
        o->temp_path[0] = '\0';
        return -1;
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
