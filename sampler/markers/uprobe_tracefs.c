/* SPDX-License-Identifier: GPL-3.0-or-later */
/* uprobe_tracefs.c: dynamic uprobe events in tracefs: define, open as tracepoint, find arg0 in the raw
 * record, remove (also from a signal handler and for dead taskspy processes). */
#include "sampler/markers/uprobe_tracefs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GROUP_PREFIX "taskspy_"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int uprobe_tracefs_init_at(struct uprobe_tracefs *tf, const char *root, pid_t group_pid)
{
    memset(tf, 0, sizeof(*tf));
    int n1 = snprintf(tf->root, sizeof(tf->root), "%s", root);
    int n2 = snprintf(tf->events_file, sizeof(tf->events_file), "%s/uprobe_events", root);
    int n3 = snprintf(tf->group, sizeof(tf->group), GROUP_PREFIX "%d", (int)group_pid);
    int n4 = snprintf(tf->remove_group_cmd, sizeof(tf->remove_group_cmd), "-:%s/\n", tf->group);
    if (n1 < 0 || (size_t)n1 >= sizeof(tf->root) || n2 < 0 || (size_t)n2 >= sizeof(tf->events_file) ||
        n3 < 0 || (size_t)n3 >= sizeof(tf->group) || n4 < 0 || (size_t)n4 >= sizeof(tf->remove_group_cmd)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int uprobe_tracefs_find(struct uprobe_tracefs *tf)
{
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    char path[300];
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        snprintf(path, sizeof(path), "%s/uprobe_events", roots[i]);
        if (access(path, W_OK) == 0)
            return uprobe_tracefs_init_at(tf, roots[i], getpid());
    }
    errno = ENOENT;
    return -1;
}

int uprobe_tracefs_init(struct uprobe_tracefs *tf, char *err, size_t errlen)
{
    static const char mount_point[] = "/sys/kernel/tracing";
    char path[300];
    if (uprobe_tracefs_find(tf) == 0)
        return 0;
    if (mount("nodev", mount_point, "tracefs", 0, NULL) != 0) {
        int mount_errno = errno;
        if (mount_errno == EBUSY)      /* mounted already, but its uprobe_events not ours to write */
            set_err(err, errlen, "tracefs at %s is not writable by this user: markers whose argument is in "
                                 "heap memory are left out", mount_point);
        else
            set_err(err, errlen, "cannot mount tracefs at %s: %s", mount_point, strerror(mount_errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/uprobe_events", mount_point);
    if (access(path, W_OK) != 0) {
        set_err(err, errlen, "%s: %s (kernel without CONFIG_UPROBE_EVENTS?)", path, strerror(errno));
        return -1;
    }
    return uprobe_tracefs_init_at(tf, mount_point, getpid());
}

int uprobe_tracefs_format_probe(const char *group, const char *name, const char *path, uint64_t offset,
                                uint64_t ref_ctr_offset, const struct usdt_arg *arg, bool retprobe, char *buf,
                                size_t bufsz)
{
    if (!path || !*path)
        return -1;
    for (const char *p = path; *p; p++)
        if (isspace((unsigned char)*p))
            return -1;
    char fetch[96] = "";
    if (arg && arg->kind != USDT_ARG_IMM) {
        if (!usdt_arg_kernel_fetchable(arg))
            return -1;
        const char *reg = usdt_reg_kernel_name(arg->reg);
        if (arg->kind == USDT_ARG_REG) {
            /* the low arg->size bytes of the register */
            snprintf(fetch, sizeof(fetch), " arg0=%%%s:u%u", reg, arg->size * 8);
        } else {
            char disp[32];
            if (arg->imm < 0)
                snprintf(disp, sizeof(disp), "-%llu", (unsigned long long)(0 - (uint64_t)arg->imm));
            else
                snprintf(disp, sizeof(disp), "+%llu", (unsigned long long)arg->imm);
            snprintf(fetch, sizeof(fetch), " arg0=%s(%%%s):u%u", disp, reg, arg->size * 8);
        }
    }
    char refctr[32] = "";
    if (ref_ctr_offset)
        snprintf(refctr, sizeof(refctr), "(0x%llx)", (unsigned long long)ref_ctr_offset);
    int n = snprintf(buf, bufsz, "%c:%s/%s %s:0x%llx%s%s", retprobe ? 'r' : 'p', group, name, path,
                     (unsigned long long)offset, refctr, fetch);
    return n < 0 || (size_t)n >= bufsz ? -1 : 0;
}

int uprobe_tracefs_format_def(const char *group, const char *name, const char *path, uint64_t offset,
                              uint64_t ref_ctr_offset, const struct usdt_arg *arg, char *buf, size_t bufsz)
{
    if (!arg || arg->kind != USDT_ARG_MEM)
        return -1;
    return uprobe_tracefs_format_probe(group, name, path, offset, ref_ctr_offset, arg, false, buf, bufsz);
}

int uprobe_tracefs_parse_format(const char *text, uint32_t *offset, uint32_t *size)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[256];
        if (len < sizeof(buf)) {
            memcpy(buf, line, len);
            buf[len] = '\0';
            const char *f = strstr(buf, "field:");
            const char *semi = f ? strchr(f, ';') : NULL;
            /* the field's declaration ends with " arg0;" */
            if (semi && semi - f >= 5 && memcmp(semi - 4, "arg0", 4) == 0 &&
                (semi[-5] == ' ' || semi[-5] == '\t')) {
                const char *o = strstr(semi, "offset:");
                const char *s = strstr(semi, "size:");
                unsigned ov, sv;
                if (o && s && sscanf(o, "offset:%u;", &ov) == 1 && sscanf(s, "size:%u;", &sv) == 1 &&
                    ov < 65536 && sv > 0 && sv <= 8) {
                    *offset = ov;
                    *size = sv;
                    return 0;
                }
                return -1;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}

static int write_events_file(const char *file, const char *cmd)
{
    int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(cmd);
    ssize_t n = write(fd, cmd, len);
    int e = errno;
    close(fd);
    if (n != (ssize_t)len) {
        errno = n < 0 ? e : EIO;
        return -1;
    }
    return 0;
}

static int read_text(const char *path, char *buf, size_t bufsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off + 1 < bufsz) {
        ssize_t n = read(fd, buf + off, bufsz - 1 - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        off += (size_t)n;
    }
    buf[off] = '\0';
    close(fd);
    return 0;
}

int uprobe_tracefs_create(struct uprobe_tracefs *tf, const char *path, uint64_t offset, uint64_t ref_ctr_offset,
                          const struct usdt_arg *arg, bool retprobe, const char *hint, struct uprobe_tracefs_event *ev,
                          struct uprobe_arg_plan *plan, char *err, size_t errlen)
{
    memset(ev, 0, sizeof(*ev));
    bool fetches = plan->method == UPROBE_ARG_TRACEFS;
    if (fetches != (arg && arg->kind != USDT_ARG_IMM)) {
        errno = EINVAL;
        set_err(err, errlen, "internal: tracefs plan and argument disagree");
        return -1;
    }
    /* event name: the hint's [A-Za-z0-9_] characters, then _<serial> */
    char clean[40];
    size_t n = 0;
    for (const char *p = hint ? hint : "probe"; *p && n + 1 < sizeof(clean); p++)
        clean[n++] = isalnum((unsigned char)*p) ? *p : '_';
    clean[n] = '\0';
    if (n == 0 || isdigit((unsigned char)clean[0]))
        snprintf(clean, sizeof(clean), "probe");
    snprintf(ev->name, sizeof(ev->name), "%s_%u", clean, tf->next_serial++);
    snprintf(ev->remove_cmd, sizeof(ev->remove_cmd), "-:%s/%s\n", tf->group, ev->name);
    char def[4400];
    if (uprobe_tracefs_format_probe(tf->group, ev->name, path, offset, ref_ctr_offset, fetches ? arg : NULL,
                                    retprobe, def, sizeof(def) - 1) != 0) {
        errno = EINVAL;
        set_err(err, errlen, "cannot express probe at %s:0x%llx as a uprobe_events definition", path,
                (unsigned long long)offset);
        return -1;
    }
    strcat(def, "\n");
    if (write_events_file(tf->events_file, def) != 0) {
        set_err(err, errlen, "writing %s: %s", tf->events_file, strerror(errno));
        return -1;
    }
    char file[512], text[4096];
    snprintf(file, sizeof(file), "%s/events/%s/%s/id", tf->root, tf->group, ev->name);
    int e = 0;
    if (read_text(file, text, sizeof(text)) != 0 || (ev->tp_id = atoi(text)) <= 0) {
        e = errno ? errno : EINVAL;
        set_err(err, errlen, "reading %s: %s", file, strerror(e));
    } else if (fetches) {
        snprintf(file, sizeof(file), "%s/events/%s/%s/format", tf->root, tf->group, ev->name);
        if (read_text(file, text, sizeof(text)) != 0 ||
            uprobe_tracefs_parse_format(text, &ev->raw_offset, &ev->raw_size) != 0) {
            e = errno ? errno : EINVAL;
            set_err(err, errlen, "no arg0 field in %s", file);
        } else if (ev->raw_size != arg->size) {
            e = EINVAL;
            set_err(err, errlen, "arg0 in %s has size %u, expected %u", file, ev->raw_size, arg->size);
        }
    }
    if (e) {
        write_events_file(tf->events_file, ev->remove_cmd);
        errno = e;
        return -1;
    }
    plan->raw_offset = ev->raw_offset;
    plan->raw_size = ev->raw_size;
    return 0;
}

void uprobe_tracefs_attr(const struct uprobe_tracefs_event *ev, const struct uprobe_arg_plan *plan, bool inherit,
                         bool disabled, void *attr_out)
{
    struct perf_event_attr *attr = attr_out;
    memset(attr, 0, sizeof(*attr));
    attr->size = sizeof(*attr);
    attr->type = PERF_TYPE_TRACEPOINT;
    attr->config = (uint64_t)ev->tp_id;
    attr->sample_period = 1;
    attr->sample_type = plan->sample_type;
    if (plan->sample_type & PERF_SAMPLE_REGS_USER)
        attr->sample_regs_user = plan->regs_mask;
    if (plan->sample_type & PERF_SAMPLE_STACK_USER)
        attr->sample_stack_user = plan->stack_size;
    attr->inherit = inherit;
    attr->disabled = disabled;
    attr->sample_id_all = 1;
    attr->watermark = 1;              /* no wake-up per record: see uprobe_event_attr */
    attr->wakeup_watermark = UPROBE_WAKEUP_BYTES;
    attr->use_clockid = 1;            /* the clock of taskspy's sampling events (see uprobe_pmu.c) */
    attr->clockid = CLOCK_MONOTONIC;
}

int uprobe_tracefs_open(const struct uprobe_tracefs_event *ev, const struct uprobe_arg_plan *plan, pid_t tid,
                        int cpu, bool inherit, bool disabled, int group_fd)
{
    struct perf_event_attr attr;
    uprobe_tracefs_attr(ev, plan, inherit, disabled, &attr);
    long fd = syscall(SYS_perf_event_open, &attr, tid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
}

int uprobe_tracefs_remove(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *ev)
{
    return write_events_file(tf->events_file, ev->remove_cmd);
}

void uprobe_tracefs_cleanup(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *evs, size_t n)
{
    uprobe_tracefs_cleanup_signal_safe(tf, evs, n);
}

void uprobe_tracefs_cleanup_signal_safe(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *evs,
                                        size_t n)
{
    int saved = errno;
    int fd = open(tf->events_file, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        size_t len = 0;
        while (tf->remove_group_cmd[len])
            len++;
        /* group removal fails with ENOENT when the group is already gone or the kernel lacks it; then
         * each event is removed on its own (those fail harmlessly when already removed) */
        if (write(fd, tf->remove_group_cmd, len) != (ssize_t)len) {
            for (size_t i = 0; i < n; i++) {
                size_t l = 0;
                while (evs[i].remove_cmd[l])
                    l++;
                if (l && write(fd, evs[i].remove_cmd, l) < 0)
                    continue;
            }
        }
        close(fd);
    }
    errno = saved;
}

static bool pid_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int uprobe_tracefs_remove_stale(const struct uprobe_tracefs *tf)
{
    char dir[320];
    snprintf(dir, sizeof(dir), "%s/events", tf->root);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0)
            continue;
        const char *num = de->d_name + strlen(GROUP_PREFIX);
        char *end;
        errno = 0;
        long pid = strtol(num, &end, 10);
        if (end == num || *end || errno || pid <= 0 || pid == (long)getpid() || pid_alive(pid))
            continue;
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "-:%s/\n", de->d_name);
        if (write_events_file(tf->events_file, cmd) != 0) {
            /* no group removal in this kernel: remove the group's events one by one */
            char gdir[600];
            snprintf(gdir, sizeof(gdir), "%s/%s", dir, de->d_name);
            DIR *g = opendir(gdir);
            if (!g)
                continue;
            struct dirent *ee;
            while ((ee = readdir(g)) != NULL) {
                if (ee->d_type != DT_DIR || ee->d_name[0] == '.')
                    continue;
                int len = snprintf(cmd, sizeof(cmd), "-:%s/%s\n", de->d_name, ee->d_name);
                if (len > 0 && (size_t)len < sizeof(cmd))
                    write_events_file(tf->events_file, cmd);
            }
            closedir(g);
        }
        removed++;
    }
    closedir(d);
    return removed;
}
