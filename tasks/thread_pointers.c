/* SPDX-License-Identifier: GPL-3.0-or-later */
/* thread_pointers.c: every thread of a running process and its thread pointer, without stopping it: glibc's
 * libthread_db walks the C library's own thread list (as gdb does), reading the target's memory through the
 * proc_service callbacks below (process_vm_readv) and finding glibc's symbols in the target's mapped objects
 * (the ELF reader). On x86-64 a thread's pthread_t is its thread pointer (the TCB sits at %fs:0). The
 * callbacks that would need a stopped thread (registers) answer that they cannot. A core whose registers lack
 * the thread pointers (target_core.c) is listed the same way, its memory read from the core. */
#include "tasks/tasks_internal.h"

#include <proc_service.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <thread_db.h>

#include "base/vec.h"

#define MAX_CACHED_SYMBOLS 64

struct cached_symbol {
    char name[64];
    uint64_t addr;             /* 0: not found */
};

/* libthread_db's view of the target (its type is ours to define), with the symbols it asked for */
struct ps_prochandle {
    pid_t pid;
    const char *root;
    const struct target_maps *maps;
    struct cached_symbol symbols[MAX_CACHED_SYMBOLS];
    size_t n_symbols;
    elf_memory_reader read;    /* how a listing reads the target (NULL: process_vm_readv itself) */
    void *read_ctx;
    elf_memory_reader default_read;   /* how it is read outside a listing (NULL: process_vm_readv) */
    void *default_ctx;
};

struct thread_lister {
    struct ps_prochandle ph;
    td_thragent_t *agent;
};

ps_err_e ps_pdread(struct ps_prochandle *ph, psaddr_t addr, void *buf, size_t len)
{
    uint64_t at = (uint64_t)(uintptr_t)addr;
    bool ok;
    if (ph->read) {
        ok = ph->read(ph->read_ctx, at, buf, len);
    } else {
        struct iovec local = { buf, len };
        struct iovec remote = { addr, len };
        ok = len == 0 || process_vm_readv(ph->pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
    }
    return ok ? PS_OK : PS_ERR;
}

ps_err_e ps_pdwrite(struct ps_prochandle *ph, psaddr_t addr, const void *buf, size_t len)
{
    (void)ph, (void)addr, (void)buf, (void)len;
    return PS_ERR;             /* never write the target */
}

ps_err_e ps_lgetregs(struct ps_prochandle *ph, lwpid_t lwp, prgregset_t regs)
{
    (void)ph, (void)lwp, (void)regs;
    return PS_ERR;             /* registers need a stopped thread */
}

ps_err_e ps_lsetregs(struct ps_prochandle *ph, lwpid_t lwp, const prgregset_t regs)
{
    (void)ph, (void)lwp, (void)regs;
    return PS_ERR;
}

ps_err_e ps_lgetfpregs(struct ps_prochandle *ph, lwpid_t lwp, prfpregset_t *regs)
{
    (void)ph, (void)lwp, (void)regs;
    return PS_ERR;
}

ps_err_e ps_lsetfpregs(struct ps_prochandle *ph, lwpid_t lwp, const prfpregset_t *regs)
{
    (void)ph, (void)lwp, (void)regs;
    return PS_ERR;
}

pid_t ps_getpid(struct ps_prochandle *ph)
{
    return ph->pid;
}

ps_err_e ps_get_thread_area(struct ps_prochandle *ph, lwpid_t lwp, int idx, void **base)
{
    (void)ph, (void)lwp, (void)idx, (void)base;
    return PS_ERR;
}

/* symbol in the object at path (its .dynsym, else .symtab), as a runtime address */
static bool lookup_in(struct ps_prochandle *ph, const char *path, const char *symbol, uint64_t *addr)
{
    char full[4096];
    snprintf(full, sizeof(full), "%s%s", ph->root, path);
    struct elf_file ef;
    if (elf_file_open(&ef, full) != 0)
        return false;
    bool found = false;
    uint64_t bias;
    const char *tables[] = { ".dynsym", ".symtab" };
    for (int t = 0; t < 2 && !found; t++) {
        struct elf_symbol_iter it;
        struct elf_symbol sym;
        if (!elf_symbols_begin(&it, &ef, tables[t]))
            continue;
        while (elf_symbols_next(&it, &sym))
            if (sym.section != SHN_UNDEF && strcmp(sym.name, symbol) == 0) {
                found = target_maps_bias(ph->maps, path, &ef, &bias);
                *addr = sym.value + bias;
                break;
            }
    }
    elf_file_close(&ef);
    return found;
}

/* libthread_db names the object it wants (libpthread's or the dynamic linker's); since glibc 2.34 libpthread
   is libc itself, so every mapped object is searched, the named one first */
static bool lookup_any(struct ps_prochandle *ph, const char *object, const char *name, uint64_t *at)
{
    const char *seen = NULL;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < ph->maps->n; i++) {
            const char *path = ph->maps->v[i].path;
            if (!path || ph->maps->v[i].offset != 0 || (seen && strcmp(seen, path) == 0))
                continue;
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            bool named = object && strcmp(base, object) == 0;
            if ((pass == 0) != named)
                continue;
            seen = path;
            if (lookup_in(ph, path, name, at))
                return true;
        }
    return false;
}

/* libthread_db names the object it wants (libpthread's or the dynamic linker's); since glibc 2.34 libpthread
   is libc itself, so every mapped object is searched, the named one first; each answer is kept */
ps_err_e ps_pglobal_lookup(struct ps_prochandle *ph, const char *object, const char *name, psaddr_t *addr)
{
    for (size_t i = 0; i < ph->n_symbols; i++)
        if (strcmp(ph->symbols[i].name, name) == 0) {
            *addr = (psaddr_t)(uintptr_t)ph->symbols[i].addr;
            return ph->symbols[i].addr ? PS_OK : PS_NOSYM;
        }
    uint64_t at = 0;
    bool found = lookup_any(ph, object, name, &at);
    if (ph->n_symbols < MAX_CACHED_SYMBOLS && strlen(name) < sizeof(ph->symbols[0].name)) {
        struct cached_symbol *c = &ph->symbols[ph->n_symbols++];
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->addr = found ? at : 0;
    }
    if (!found)
        return PS_NOSYM;
    *addr = (psaddr_t)(uintptr_t)at;
    return PS_OK;
}

struct iter_ctx {
    struct thread_pointer_list *out;
    bool failed;
};

static int each_thread(const td_thrhandle_t *th, void *arg)
{
    struct iter_ctx *c = arg;
    td_thrinfo_t info;
    if (td_thr_get_info(th, &info) != TD_OK)
        return 0;
    struct thread_pointer *p = vec_push(c->out);
    if (!p) {
        c->failed = true;
        return 1;
    }
    p->tid = info.ti_lid;
    p->fsbase = (uint64_t)info.ti_tid;
    return 0;
}

int thread_lister_open(struct thread_lister **out, pid_t pid, const char *root, const struct target_maps *maps,
                       elf_memory_reader read, void *read_ctx, char *err, size_t errlen)
{
    struct thread_lister *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->ph = (struct ps_prochandle){ .pid = pid, .root = root, .maps = maps, .read = read, .read_ctx = read_ctx,
                                    .default_read = read, .default_ctx = read_ctx };
    td_err_e rc = td_ta_new(&t->ph, &t->agent);
    if (rc != TD_OK) {
        snprintf(err, errlen, "cannot list the threads of %d through glibc's libthread_db (td_ta_new: error %d%s)",
                 (int)pid, (int)rc, rc == TD_NOLIBTHREAD || rc == TD_VERSION ? ": not a glibc program, or another "
                 "glibc than taskspy's" : "");
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int thread_lister_list(struct thread_lister *t, elf_memory_reader read, void *read_ctx, struct thread_pointer_list *out,
                       char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct iter_ctx c = { out, false };
    t->ph.read = read ? read : t->ph.default_read;
    t->ph.read_ctx = read ? read_ctx : t->ph.default_ctx;
    td_err_e rc = td_ta_thr_iter(t->agent, each_thread, &c, TD_THR_ANY_STATE, TD_THR_LOWEST_PRIORITY, TD_SIGNO_MASK,
                                 TD_THR_ANY_USER_FLAGS);
    t->ph.read = t->ph.default_read;
    t->ph.read_ctx = t->ph.default_ctx;
    if (rc != TD_OK || c.failed) {
        snprintf(err, errlen, "cannot list the threads of %d through glibc's libthread_db (%s)", (int)t->ph.pid,
                 c.failed ? "out of memory" : "its thread list changed or could not be read");
        vec_free(out);
        return -1;
    }
    return 0;
}

void thread_lister_close(struct thread_lister *t)
{
    if (!t)
        return;
    td_ta_delete(t->agent);
    free(t);
}
