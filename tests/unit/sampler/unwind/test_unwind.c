/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_unwind.c: unit tests for the DWARF unwinder over copied stacks. The realistic cases capture this
 * process's own registers and stack inside a known call chain (compiled without frame pointers, so only
 * the .eh_frame tables can get the unwinder through) and check every returned address lies in the right
 * function, using the symbol table of /proc/self/exe for function sizes. */
#pragma GCC optimize("omit-frame-pointer")
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <asm/perf_regs.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "sampler/target/proc_maps.h"
#include "sampler/unwind/unwind.h"
#include "sampler/unwind/unwind_objects.h"

#define MAX_IPS 256

/* What one capture produced: the sampled registers and a copy of the stack from SP upwards. */
struct capture {
    uint64_t regs[PERF_REG_X86_64_MAX];
    struct proc_maps maps;
    uint8_t *stack;
    size_t len, max_len;
    bool reached_stack_end;    /* the copy runs to the end of the stack mapping */
};

/* Store rip (of the next instruction), rsp and the callee-saved registers, all at one point. */
#define CAPTURE_REGS(regs)                                                                                 \
    __asm__ volatile("lea 0(%%rip), %%rax\n\t"                                                             \
                     "mov %%rax, %c1(%0)\n\t"                                                              \
                     "mov %%rsp, %c2(%0)\n\t"                                                              \
                     "mov %%rbp, %c3(%0)\n\t"                                                              \
                     "mov %%rbx, %c4(%0)\n\t"                                                              \
                     "mov %%r12, %c5(%0)\n\t"                                                              \
                     "mov %%r13, %c6(%0)\n\t"                                                              \
                     "mov %%r14, %c7(%0)\n\t"                                                              \
                     "mov %%r15, %c8(%0)\n\t"                                                              \
                     :                                                                                     \
                     : "r"(regs), "i"(PERF_REG_X86_IP * 8), "i"(PERF_REG_X86_SP * 8),                      \
                       "i"(PERF_REG_X86_BP * 8), "i"(PERF_REG_X86_BX * 8), "i"(PERF_REG_X86_R12 * 8),      \
                       "i"(PERF_REG_X86_R13 * 8), "i"(PERF_REG_X86_R14 * 8), "i"(PERF_REG_X86_R15 * 8)     \
                     : "rax", "memory")

/* Copy the stack above the captured SP (ASan must not check: it spans other frames' redzones). */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(struct capture *cap)
{
    uint64_t sp = cap->regs[PERF_REG_X86_SP];
    /* Loaded after the capture, so the main thread's [stack] already covers SP. */
    assert_int_equal(proc_maps_load(&cap->maps, getpid()), 0);
    const struct proc_map *m = proc_maps_find(&cap->maps, sp);
    assert_non_null(m);
    size_t len = (size_t)(m->end - sp);
    cap->reached_stack_end = len <= cap->max_len;
    if (len > cap->max_len)
        len = cap->max_len;
    const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;
    for (size_t i = 0; i < len; i++)
        cap->stack[i] = src[i];
    cap->len = len;
}

__attribute__((noinline, noclone)) static int level_c(struct capture *cap)
{
    CAPTURE_REGS(cap->regs);
    copy_stack(cap);
    return (int)(cap->len & 1);
}

/* The work after each call keeps the calls from becoming tail jumps. */
__attribute__((noinline, noclone)) static int level_b(struct capture *cap)
{
    int r = level_c(cap);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noinline, noclone)) static int level_a(struct capture *cap)
{
    int r = level_b(cap);
    __asm__ volatile("" : "+r"(r));
    return r + 2;
}

/* A frame much larger than the short copies below, so they must end inside it. */
__attribute__((noinline, noclone)) static int big_frame(struct capture *cap)
{
    volatile char pad[8192];
    pad[0] = 1;
    pad[sizeof(pad) - 1] = 2;
    __asm__ volatile("" : : "r"(pad) : "memory"); /* the whole array escapes: it must really be there */
    int r = level_a(cap);
    __asm__ volatile("" : "+r"(r));
    return r + pad[0] + pad[sizeof(pad) - 1];
}

static void capture_init(struct capture *cap, size_t max_len)
{
    memset(cap, 0, sizeof(*cap));
    cap->max_len = max_len;
    cap->stack = malloc(max_len);
    assert_non_null(cap->stack);
}

static void capture_free(struct capture *cap)
{
    free(cap->stack);
    proc_maps_free(&cap->maps);
}

/* A function's runtime range, from the executable's symbol table. */
struct fn_range {
    uint64_t lo, hi;
};

static struct fn_range symbol_range(const char *name, const void *runtime_addr)
{
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, "/proc/self/exe"), 0);
    const Elf64_Shdr *symtab = elf_file_section(&ef, ".symtab");
    assert_non_null(symtab);
    assert_true(symtab->sh_link < ef.n_shdrs);
    size_t sym_size = 0, str_size = 0;
    const Elf64_Sym *syms = (const Elf64_Sym *)elf_file_section_data(&ef, symtab, &sym_size);
    const char *strs = (const char *)elf_file_section_data(&ef, &ef.shdrs[symtab->sh_link], &str_size);
    assert_non_null(syms);
    assert_non_null(strs);
    struct fn_range r = {0, 0};
    for (size_t i = 0; i < sym_size / sizeof(*syms); i++) {
        if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || syms[i].st_name >= str_size ||
            strcmp(strs + syms[i].st_name, name) != 0)
            continue;
        uint64_t bias = (uint64_t)(uintptr_t)runtime_addr - syms[i].st_value;
        r.lo = syms[i].st_value + bias;
        r.hi = r.lo + (syms[i].st_size ? syms[i].st_size : 1);
        break;
    }
    elf_file_close(&ef);
    assert_true(r.hi > r.lo);
    return r;
}

static bool in_range(uint64_t ip, struct fn_range r)
{
    return ip > r.lo && ip <= r.hi; /* a return address may sit right after a final call */
}

/* Address of a symbol of the executable by name (for main/_start), via a function we know the address
 * of: both live in the same object, so they share its load bias. */
static struct fn_range exe_symbol_range(const char *name)
{
    struct fn_range known = symbol_range("level_a", (const void *)level_a);
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, "/proc/self/exe"), 0);
    const Elf64_Shdr *symtab = elf_file_section(&ef, ".symtab");
    size_t sym_size = 0, str_size = 0;
    const Elf64_Sym *syms = (const Elf64_Sym *)elf_file_section_data(&ef, symtab, &sym_size);
    const char *strs = (const char *)elf_file_section_data(&ef, &ef.shdrs[symtab->sh_link], &str_size);
    uint64_t a_value = 0, value = 0, size = 0;
    for (size_t i = 0; i < sym_size / sizeof(*syms); i++) {
        if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || syms[i].st_name >= str_size)
            continue;
        if (strcmp(strs + syms[i].st_name, "level_a") == 0)
            a_value = syms[i].st_value;
        if (strcmp(strs + syms[i].st_name, name) == 0) {
            value = syms[i].st_value;
            size = syms[i].st_size;
        }
    }
    elf_file_close(&ef);
    assert_true(a_value != 0 && value != 0);
    struct fn_range r = {value + (known.lo - a_value), 0};
    r.hi = r.lo + (size ? size : 64);
    return r;
}

/* The first of the n_want frames that is not in its function (n_want when all are). ips[0] is the sampled
 * instruction itself: inside want[0], not after it; the others are return addresses. */
static size_t first_wrong_frame(const uint64_t *ips, size_t n, const struct fn_range *want, size_t n_want)
{
    for (size_t i = 0; i < n_want; i++)
        if (i >= n || (i == 0 ? !(ips[0] >= want[0].lo && ips[0] < want[0].hi) : !in_range(ips[i], want[i])))
            return i;
    return n_want;
}

static void assert_chain(const uint64_t *ips, size_t n, const struct fn_range *want, size_t n_want)
{
    assert_true(n >= n_want);
    size_t i = first_wrong_frame(ips, n, want, n_want);
    if (i < n_want)
        fail_msg("frame %zu: %#lx not in [%#lx, %#lx]", i, (unsigned long)ips[i], (unsigned long)want[i].lo,
                 (unsigned long)want[i].hi);
}

static void test_main_thread_unwinds_to_start(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 1u << 20);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    uint64_t ips[MAX_IPS];
    bool truncated = true;
    size_t n = unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, MAX_IPS, &truncated);
    struct fn_range want[] = {
        symbol_range("level_c", (const void *)level_c),
        symbol_range("level_b", (const void *)level_b),
        symbol_range("level_a", (const void *)level_a),
        symbol_range("test_main_thread_unwinds_to_start", (const void *)test_main_thread_unwinds_to_start),
    };
    assert_chain(ips, n, want, 4);
    struct fn_range main_range = exe_symbol_range("main");
    bool saw_main = false;
    for (size_t i = 4; i < n; i++)
        saw_main |= in_range(ips[i], main_range);
    assert_true(saw_main);
    assert_true(cap.reached_stack_end);
    assert_false(truncated);
    assert_true(in_range(ips[n - 1], exe_symbol_range("_start")));
    unwinder_free(u);
    capture_free(&cap);
}

/* Kills the calling process at its next rt_sigprocmask (seccomp). Returns false when the filter is refused. */
static bool forbid_sigprocmask(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigprocmask, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* The build links a libunwind without signal masking (GNUmakefile, "libunwind"): Debian's wraps each lock of
 * its cache in two rt_sigprocmask calls, two system calls per frame. A child process killed by seccomp at
 * its first rt_sigprocmask creates an unwinder and unwinds the same capture 200 times (cache misses, then
 * hits); it must exit normally with the right chain each time. */
static void test_unwinding_leaves_signal_mask_alone(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 1u << 20);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    struct fn_range want[] = {
        symbol_range("level_c", (const void *)level_c),
        symbol_range("level_b", (const void *)level_b),
        symbol_range("level_a", (const void *)level_a),
    };
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (!forbid_sigprocmask())
            _exit(2);
        struct unwinder *u = unwinder_new(&cap.maps, "");
        if (!u)
            _exit(3);
        for (int round = 0; round < 200; round++) {
            uint64_t ips[MAX_IPS];
            bool truncated = true;
            size_t n = unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, MAX_IPS, &truncated);
            if (n < 4 || truncated || first_wrong_frame(ips, n, want, 3) < 3)
                _exit(4);
        }
        unwinder_free(u);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        fail_msg("unwinding called rt_sigprocmask: the build linked a libunwind that masks signals");
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 2)
        fail_msg("seccomp filter refused");
    assert_int_equal(WEXITSTATUS(status), 0);
    capture_free(&cap);
}

/* A capture (65528 bytes of stack at most) taken by body on a thread of its own. */
static void capture_in_thread(struct capture *cap, void *(*body)(void *))
{
    capture_init(cap, 65528);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, body, cap), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void *thread_body(void *arg)
{
    int r = level_a(arg);
    __asm__ volatile("" : "+r"(r));
    return (void *)(intptr_t)r;
}

static void test_thread_unwinds_to_clone(void **state)
{
    (void)state;
    struct capture cap;
    capture_in_thread(&cap, thread_body);
    /* Objects opened through a root prefix, as for a target in another mount namespace. */
    struct unwinder *u = unwinder_new(&cap.maps, "/proc/self/root");
    assert_non_null(u);
    uint64_t ips[MAX_IPS];
    bool truncated = true;
    size_t n = unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, MAX_IPS, &truncated);
    struct fn_range want[] = {
        symbol_range("level_c", (const void *)level_c),
        symbol_range("level_b", (const void *)level_b),
        symbol_range("level_a", (const void *)level_a),
        symbol_range("thread_body", (const void *)thread_body),
    };
    assert_chain(ips, n, want, 4);
    assert_true(cap.reached_stack_end);
    assert_false(truncated);
    /* The outermost frames are libc's start_thread and clone3. */
    assert_true(n >= 6);
    const struct proc_map *m = proc_maps_find(&cap.maps, ips[n - 1]);
    assert_non_null(m);
    assert_non_null(strstr(m->path, "libc.so"));
    unwinder_free(u);
    capture_free(&cap);
}

static void test_short_copy_keeps_innermost_frames(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 1u << 20);
    int r = big_frame(&cap);
    __asm__ volatile("" : "+r"(r));
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    uint64_t full[MAX_IPS], ips[MAX_IPS];
    bool truncated = true;
    size_t n_full = unwinder_unwind(u, cap.regs, cap.stack, cap.len, full, MAX_IPS, &truncated);
    assert_false(truncated);
    struct fn_range want[] = {
        symbol_range("level_c", (const void *)level_c),
        symbol_range("level_b", (const void *)level_b),
        symbol_range("level_a", (const void *)level_a),
        symbol_range("big_frame", (const void *)big_frame),
    };
    assert_chain(full, n_full, want, 4);

    static const size_t lens[] = {0, 8, 2048, 6000};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        truncated = false;
        size_t n = unwinder_unwind(u, cap.regs, cap.stack, lens[k], ips, MAX_IPS, &truncated);
        assert_true(truncated);
        assert_true(n >= 1 && n < n_full);
        assert_memory_equal(ips, full, n * sizeof(ips[0]));
        if (lens[k] == 0)
            assert_int_equal(n, 1);
        if (lens[k] >= 2048)
            assert_int_equal(n, 4); /* c, b, a, big_frame; big_frame's own return address is beyond */
    }

    /* Stopping at max_ips is a truncation too, and keeps the innermost frames. */
    truncated = false;
    assert_int_equal(unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, 2, &truncated), 2);
    assert_true(truncated);
    assert_memory_equal(ips, full, 2 * sizeof(ips[0]));
    /* Exactly enough room for the whole chain is not a truncation. */
    assert_int_equal(unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, n_full, &truncated), n_full);
    assert_false(truncated);
    unwinder_free(u);
    capture_free(&cap);
}

static void test_no_unwind_info_and_zero_ip(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 65528);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    uint64_t ips[MAX_IPS];
    bool truncated = false;

    /* An IP in memory no object file backs (the heap): only the sampled address, truncated. */
    uint64_t regs[PERF_REG_X86_64_MAX];
    memcpy(regs, cap.regs, sizeof(regs));
    regs[PERF_REG_X86_IP] = (uint64_t)(uintptr_t)cap.stack;
    assert_int_equal(unwinder_unwind(u, regs, cap.stack, cap.len, ips, MAX_IPS, &truncated), 1);
    assert_true(truncated);
    assert_int_equal(ips[0], regs[PERF_REG_X86_IP]);

    truncated = false;
    regs[PERF_REG_X86_IP] = 0;
    assert_int_equal(unwinder_unwind(u, regs, cap.stack, cap.len, ips, MAX_IPS, &truncated), 0);
    assert_true(truncated);
    unwinder_free(u);
    capture_free(&cap);
}

/* Reused unwinders must follow map changes: reload the maps (bumping the generation) between unwinds. */
static void test_survives_map_reload(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 65528);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    uint64_t first[MAX_IPS], ips[MAX_IPS];
    bool truncated;
    size_t n = unwinder_unwind(u, cap.regs, cap.stack, cap.len, first, MAX_IPS, &truncated);
    assert_true(n >= 4);
    unsigned gen = cap.maps.generation;
    assert_int_equal(proc_maps_load(&cap.maps, getpid()), 0);
    assert_true(cap.maps.generation != gen);
    assert_int_equal(unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, MAX_IPS, &truncated), n);
    assert_memory_equal(ips, first, n * sizeof(ips[0]));
    unwinder_free(u);
    capture_free(&cap);
}

/* The sampler may know only the executable mappings (PERF_RECORD_MMAP2 without mmap_data): the
 * .eh_frame_hdr in a read-only segment must still be readable through the object. */
static void test_executable_mappings_only(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 65528);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    struct proc_maps exec_only = {0};
    for (size_t i = 0; i < cap.maps.n; i++) {
        const struct proc_map *m = &cap.maps.v[i];
        bool stack = m->start <= cap.regs[PERF_REG_X86_SP] && cap.regs[PERF_REG_X86_SP] < m->end;
        if (m->executable || stack)
            assert_int_equal(proc_maps_insert(&exec_only, m), 0);
    }
    assert_true(exec_only.n < cap.maps.n);
    struct unwinder *full_u = unwinder_new(&cap.maps, ""), *u = unwinder_new(&exec_only, "");
    assert_non_null(full_u);
    assert_non_null(u);
    uint64_t want[MAX_IPS], ips[MAX_IPS];
    bool truncated_full, truncated;
    size_t n_full = unwinder_unwind(full_u, cap.regs, cap.stack, cap.len, want, MAX_IPS, &truncated_full);
    size_t n = unwinder_unwind(u, cap.regs, cap.stack, cap.len, ips, MAX_IPS, &truncated);
    assert_true(n_full >= 4);
    assert_int_equal(n, n_full);
    assert_int_equal(truncated, truncated_full);
    assert_memory_equal(ips, want, n * sizeof(ips[0]));
    unwinder_free(u);
    unwinder_free(full_u);
    proc_maps_free(&exec_only);
    capture_free(&cap);
}

/* A sample at the entry of a vDSO function (no file behind it) unwinds into its caller. The caller here
 * is faked: the captured level_c IP pushed as the return address on top of the captured stack. */
static void test_vdso_frame(void **state)
{
    (void)state;
    struct capture cap;
    capture_init(&cap, 65528);
    int r = level_a(&cap);
    __asm__ volatile("" : "+r"(r));
    const struct proc_map *vdso = NULL;
    for (size_t i = 0; i < cap.maps.n; i++)
        if (strcmp(cap.maps.v[i].path, "[vdso]") == 0 && cap.maps.v[i].executable)
            vdso = &cap.maps.v[i];
    if (!vdso) {
        skip(); /* a kernel without a vDSO: nothing to test, reported as skipped */
        return;
    }
    struct unwind_objects objs;
    assert_int_equal(unwind_objects_init(&objs, ""), 0);
    struct unwind_object *o = unwind_objects_get(&objs, vdso);
    assert_non_null(o);
    assert_true(o->usable);
    assert_true(o->has_table);
    uint64_t bias;
    assert_true(unwind_object_bias(o, vdso, &bias));
    /* The first FDE of the search table: the entry of the lowest-addressed function with CFI. */
    int32_t first_entry;
    assert_true(unwind_object_read(o, (uint64_t)elf_file_vaddr_to_offset(&o->elf, o->hdr_vaddr) + o->table_offset,
                                   &first_entry, sizeof(first_entry)));
    uint64_t fn = bias + o->hdr_vaddr + (uint64_t)(int64_t)first_entry;
    assert_true(fn >= vdso->start && fn < vdso->end);
    unwind_objects_free(&objs);

    uint64_t regs[PERF_REG_X86_64_MAX];
    memcpy(regs, cap.regs, sizeof(regs));
    regs[PERF_REG_X86_IP] = fn;
    regs[PERF_REG_X86_SP] = cap.regs[PERF_REG_X86_SP] - 8;
    uint8_t *stack = malloc(cap.len + 8);
    assert_non_null(stack);
    memcpy(stack, &cap.regs[PERF_REG_X86_IP], 8);
    memcpy(stack + 8, cap.stack, cap.len);
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    uint64_t ips[MAX_IPS];
    bool truncated = true;
    size_t n = unwinder_unwind(u, regs, stack, cap.len + 8, ips, MAX_IPS, &truncated);
    assert_true(n >= 4);
    assert_int_equal(ips[0], fn);
    assert_int_equal(ips[1], cap.regs[PERF_REG_X86_IP]);
    assert_true(in_range(ips[2], symbol_range("level_b", (const void *)level_b)));
    assert_true(in_range(ips[3], symbol_range("level_a", (const void *)level_a)));
    assert_false(truncated);
    unwinder_free(u);
    free(stack);
    capture_free(&cap);
}

/* A minimal ELF image holding only program headers, for the load-bias arithmetic. */
static void fake_object(struct unwind_object *o, uint8_t *buf, size_t size, uint16_t type, const Elf64_Phdr *ph,
                        size_t n_ph)
{
    memset(buf, 0, size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_type = type;
    eh->e_phoff = sizeof(*eh);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = (uint16_t)n_ph;
    memcpy(buf + sizeof(*eh), ph, n_ph * sizeof(*ph));
    memset(o, 0, sizeof(*o));
    assert_int_equal(elf_file_from_memory(&o->elf, buf, size), 0);
    o->usable = true;
}

static void test_load_bias(void **state)
{
    (void)state;
    static _Alignas(8) uint8_t buf[0x3000];
    struct unwind_object o;
    uint64_t bias = 0;

    /* LLD layout: text's vaddr is one page past its file offset and shares a file page with rodata. */
    const Elf64_Phdr lld[] = {
        {.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0, .p_vaddr = 0, .p_filesz = 0x1234, .p_align = 0x1000},
        {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1234, .p_vaddr = 0x2234, .p_filesz = 0x500,
         .p_align = 0x1000},
    };
    fake_object(&o, buf, sizeof(buf), ET_DYN, lld, 2);
    struct proc_map text = {.start = 0x7f0000002000, .end = 0x7f0000003000, .pgoff = 0x1000, .executable = true};
    assert_true(unwind_object_bias(&o, &text, &bias));
    assert_int_equal(bias, 0x7f0000000000);
    struct proc_map rodata = {.start = 0x7f0000000000, .end = 0x7f0000002000, .pgoff = 0, .executable = false};
    assert_true(unwind_object_bias(&o, &rodata, &bias));
    assert_int_equal(bias, 0x7f0000000000);
    /* Reads go by file offset: what the text mapping shows at its start is file offset 0x1000. */
    memset(buf + 0x1000, 0xab, 8);
    uint64_t word = 0;
    assert_true(unwind_object_read(&o, text.pgoff, &word, sizeof(word)));
    assert_int_equal(word, 0xababababababababull);
    assert_true(unwind_object_read(&o, sizeof(buf) - 4, &word, sizeof(word))); /* tail reads as zero */
    assert_false(unwind_object_read(&o, sizeof(buf), &word, sizeof(word)));

    /* Non-PIE: linked at its runtime address, so the bias is 0. */
    const Elf64_Phdr exec[] = {
        {.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0, .p_vaddr = 0x400000, .p_filesz = 0x1000},
        {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000, .p_vaddr = 0x401000, .p_filesz = 0x800},
    };
    fake_object(&o, buf, sizeof(buf), ET_EXEC, exec, 2);
    struct proc_map exec_text = {.start = 0x401000, .end = 0x402000, .pgoff = 0x1000, .executable = true};
    assert_true(unwind_object_bias(&o, &exec_text, &bias));
    assert_int_equal(bias, 0);
    /* A mapping no PT_LOAD covers has no bias. */
    struct proc_map stray = {.start = 0x500000, .end = 0x501000, .pgoff = 0x9000, .executable = true};
    assert_false(unwind_object_bias(&o, &stray, &bias));
}

/* A function whose epilogue pops its callee-saved registers and then returns, with the unwind rules LLVM and
 * GCC emit: after each pop only the CFA moves, the registers keep their "saved at CFA-n" rules although
 * their slots are now below the stack pointer. perf copies the stack from SP upwards, so a sample at the
 * ret has those slots outside its copy. */
/* The frame both share (rbp as frame pointer, rbx and r12 saved) and the pops up to rbp's, labelled NAME_pop_rbx
 * and NAME_pop_rbp. */
#define EPILOGUE_FRAME(name)                                                        \
    ".text\n.type " name ",@function\n" name ":\n.cfi_startproc\n"                 \
    "push %rbp\n .cfi_def_cfa_offset 16\n .cfi_offset %rbp, -16\n"                  \
    "mov %rsp, %rbp\n .cfi_def_cfa_register %rbp\n"                                 \
    "push %rbx\n .cfi_offset %rbx, -24\n"                                           \
    "push %r12\n .cfi_offset %r12, -32\n"                                           \
    "xor %eax, %eax\n"                                                              \
    "pop %r12\n" name "_pop_rbx:\npop %rbx\n" name "_pop_rbp:\npop %rbp\n .cfi_def_cfa %rsp, 8\n"
extern const char epilogue_fn[], epilogue_fn_pop_rbx[], epilogue_fn_ret[];
__asm__(EPILOGUE_FRAME("epilogue_fn") "epilogue_fn_ret:\nret\n.cfi_endproc\n.size epilogue_fn, .-epilogue_fn\n");
/* The same epilogue ending in a tail call: the jmp leaves the stack as the ret would. */
extern const char tail_fn[], tail_fn_pop_rbx[], tail_fn_pop_rbp[], tail_fn_jmp[];
__asm__(EPILOGUE_FRAME("tail_fn") "tail_fn_jmp:\njmp epilogue_fn\n.cfi_endproc\n.size tail_fn, .-tail_fn\n");

/* The sample epilogue_fn would give at `at` had the captured function called it at its capture point: below cap's stack,
 * the slots the epilogue has not popped yet (saved rbx, rbp) and the return address into the captured
 * function; the registers already popped hold its values again. */
static size_t epilogue_sample(const struct capture *cap, const char *at, uint64_t *regs, uint8_t *stack)
{
    uint64_t sp0 = cap->regs[PERF_REG_X86_SP], ret = cap->regs[PERF_REG_X86_IP];
    memcpy(regs, cap->regs, sizeof(cap->regs));
    regs[PERF_REG_X86_IP] = (uint64_t)(uintptr_t)at;
    size_t below = 8;                                   /* at the ret: only the return address */
    if (at == epilogue_fn_pop_rbx || at == tail_fn_pop_rbx) {   /* saved rbx, saved rbp, return address */
        below = 24;
        uint64_t saved[2] = { cap->regs[PERF_REG_X86_BX], cap->regs[PERF_REG_X86_BP] };
        memcpy(stack, saved, 16);
        regs[PERF_REG_X86_BX] = 0x1111;                 /* epilogue_fn's own value, not popped yet */
        regs[PERF_REG_X86_BP] = sp0 - 16;               /* its frame pointer: where rbp was saved */
    } else if (at == tail_fn_pop_rbp) {                 /* saved rbp, return address; rbx popped */
        below = 16;
        memcpy(stack, &cap->regs[PERF_REG_X86_BP], 8);
        regs[PERF_REG_X86_BP] = sp0 - 16;
    }
    memcpy(stack + below - 8, &ret, 8);
    memcpy(stack + below, cap->stack, cap->len);
    regs[PERF_REG_X86_SP] = sp0 - below;
    return below + cap->len;
}

/* A capture in a function with a frame pointer: its CFA is rbp-based, so unwinding through it needs the rbp
 * that epilogue_fn saved. */
__attribute__((noinline, noclone, optimize("no-omit-frame-pointer"))) static int level_fp(struct capture *cap)
{
    CAPTURE_REGS(cap->regs);
    copy_stack(cap);
    return (int)(cap->len & 1);
}

static void *thread_body_fp(void *arg)
{
    int r = level_fp(arg);
    __asm__ volatile("" : "+r"(r));
    return (void *)(intptr_t)r;
}

static void test_sample_in_an_epilogue(void **state)
{
    (void)state;
    struct capture cap;
    capture_in_thread(&cap, thread_body_fp);
    struct unwinder *u = unwinder_new(&cap.maps, "");
    assert_non_null(u);
    struct fn_range want[] = {
        symbol_range("epilogue_fn", (const void *)epilogue_fn),
        symbol_range("level_fp", (const void *)level_fp),
        symbol_range("thread_body_fp", (const void *)thread_body_fp),
    };
    struct fn_range tail = symbol_range("tail_fn", (const void *)tail_fn);
    uint8_t *stack = malloc(cap.len + 64);
    assert_non_null(stack);
    const char *points[] = { epilogue_fn_ret, epilogue_fn_pop_rbx, tail_fn_jmp, tail_fn_pop_rbx, tail_fn_pop_rbp };
    for (size_t p = 0; p < 5; p++) {
        uint64_t regs[PERF_REG_X86_64_MAX], ips[MAX_IPS];
        want[0] = p < 2 ? symbol_range("epilogue_fn", (const void *)epilogue_fn) : tail;
        size_t len = epilogue_sample(&cap, points[p], regs, stack);
        bool truncated = true;
        size_t n = unwinder_unwind(u, regs, stack, len, ips, MAX_IPS, &truncated);
        assert_chain(ips, n, want, 3);
        assert_true(n >= 5);                            /* then libc's start_thread and clone3 */
        assert_false(truncated);
    }
    free(stack);
    unwinder_free(u);
    capture_free(&cap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_thread_unwinds_to_start),
        cmocka_unit_test(test_thread_unwinds_to_clone),
        cmocka_unit_test(test_unwinding_leaves_signal_mask_alone),
        cmocka_unit_test(test_short_copy_keeps_innermost_frames),
        cmocka_unit_test(test_no_unwind_info_and_zero_ip),
        cmocka_unit_test(test_survives_map_reload),
        cmocka_unit_test(test_executable_mappings_only),
        cmocka_unit_test(test_vdso_frame),
        cmocka_unit_test(test_load_bias),
        cmocka_unit_test(test_sample_in_an_epilogue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
