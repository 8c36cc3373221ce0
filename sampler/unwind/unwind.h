/* SPDX-License-Identifier: GPL-3.0-or-later */
/* unwind.h: DWARF unwinding of one sample's copied user stack (PERF_SAMPLE_REGS_USER + STACK_USER) into
 * return addresses, with libunwind's remote API reading the copy and the target's mapped object files. */
#ifndef TASKSPY_UNWIND_H
#define TASKSPY_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/target/proc_maps.h"

struct unwinder;

/* maps: the target's mappings, owned by the caller and updated in place (watch maps->generation).
 * root: prefix to open object files through ("/proc/PID/root" for other mount namespaces) or "".
 * Returns NULL with errno set on failure. */
struct unwinder *unwinder_new(const struct proc_maps *maps, const char *root);
void unwinder_free(struct unwinder *u);

/* regs: indexed by PERF_REG_X86_* (asm/perf_regs.h), PERF_REG_X86_64_MAX entries (registers not sampled
 * are 0). stack: the bytes copied from the user stack starting at regs[PERF_REG_X86_SP], stack_len of them
 * (perf's dyn_size). Writes up to max_ips addresses, innermost first: ips[0] = regs IP, then each caller's
 * return address. *truncated = true when the unwind stopped for any reason other than reaching the
 * outermost frame (end of the stack copy, no unwind info, a bad step, max_ips reached).
 * Returns the number of addresses written (>= 1 if IP != 0 and max_ips > 0). */
size_t unwinder_unwind(struct unwinder *u, const uint64_t *regs, const uint8_t *stack, size_t stack_len,
                       uint64_t *ips, size_t max_ips, bool *truncated);

/* The start of the function (its unwind table entry's) holding ip; false when no unwind info covers it. */
bool unwinder_function_start(struct unwinder *u, uint64_t ip, uint64_t *start);

#endif
