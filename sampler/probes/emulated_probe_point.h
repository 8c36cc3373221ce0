/* SPDX-License-Identifier: GPL-3.0-or-later */
/* emulated_probe_point.h: where in a function a uprobe costs least. x86 uprobes emulate a few instructions
 * (branches, calls, push, nop) and single-step every other one out of line, which costs two more traps per
 * hit (measured in this VM: ~6 us of the target's CPU per hit on tokio's waker functions, whose first
 * instructions are a mov and a sub). A probe that only needs a register the function receives (its first
 * argument, %rdi) can sit at the first instruction the kernel emulates instead, when every instruction before
 * it runs on every call (no branch, no return) and leaves %rdi alone. */
#ifndef TASKSPY_EMULATED_PROBE_POINT_H
#define TASKSPY_EMULATED_PROBE_POINT_H

#include <stdint.h>

#include "elf/elf_file.h"

/* The file offset at or after entry_offset (a function's entry in ef) of the first instruction that x86
 * uprobes emulate, reached on every call with %rdi as at entry; entry_offset itself when there is none within
 * the first few instructions (or they cannot be decoded). */
uint64_t emulated_probe_point(const struct elf_file *ef, uint64_t entry_offset);
/* The same over code bytes (tests): the offset into code. */
uint64_t emulated_probe_point_in(const uint8_t *code, uint64_t size);

#endif
