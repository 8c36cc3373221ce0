/* SPDX-License-Identifier: GPL-3.0-or-later */
/* symbolize.h: the whole interface of the symbolize layer. It turns a target address into the chain of
 * source frames executing there (the function and, when the compiler inlined calls, every inlined frame),
 * each with a demangled name and file:line, using libbfd on the mapped object files. Results are cached:
 * each distinct address is resolved once per mapping (a mapping replaced by another object, after an exec
 * or a dlclose + dlopen, resolves afresh), equal results share one pointer and one id, and the returned
 * pointers stay valid until symbolizer_free. */
#ifndef TASKSPY_SYMBOLIZE_H
#define TASKSPY_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

/* One source frame. */
struct sym_frame {
    const char *name;        /* demangled, e.g. "demo::worker::{{closure}}"; "[unknown]" if not found */
    const char *system_name; /* the name as the object has it (mangled symbol, DWARF name); never NULL */
    const char *file;        /* source file base name, or NULL if unknown */
    const char *path;        /* the source file as DWARF names it (full path when it has one), or NULL */
    unsigned line;           /* 0 if unknown */
    unsigned start_line;     /* the function's declaration line (DWARF DW_AT_decl_line), 0 if unknown:
                                looked up for the out-of-line function only, once per function */
    bool inlined;            /* this frame was inlined into the frame after it in the chain */
};

/* What an address resolves to. frames[0] is the innermost frame (the deepest inlined callee), frames[n-1]
 * the real (out-of-line) function. Never NULL, n >= 1. */
struct sym_result {
    const struct sym_frame *frames;
    size_t n;
    const char *object;      /* base name of the mapped object ("libc.so.6"), or NULL */
    uint64_t function_start; /* runtime address where the out-of-line function starts, or 0 */
    bool kernel;
    bool unsymbolized;       /* the object has no symbols beyond its exported ones, its own or a debug file's
                                (symbolize_object_report says where its debug file was looked for) */
    uint32_t id;             /* this distinct result's number (0, 1, 2... in order of first sight): callers
                                keep what they derive from a result in an array indexed by it */
};

struct debug_files;

struct symbolizer_options {
    bool kernel;             /* read /proc/kallsyms for kernel addresses */
    bool demangle;           /* demangle Rust (legacy, v0) and C++ names; normally true */
    struct debug_files *debug_files;   /* elf/'s shared debug-file lookup (debuginfod downloads happen here, as
                                          objects are opened); NULL: the local places alone */
};

struct symbolizer *symbolizer_new(const struct symbolizer_options *opts);
void symbolizer_free(struct symbolizer *s);

/* Tell it about a mapping of the target. root is a path prefix to open the file through (for targets in
 * other mount namespaces: "/proc/PID/root"), or "" / NULL. Later mappings over the same range replace
 * earlier ones. Returns 0, or -1 on allocation failure. */
int symbolizer_add_mapping(struct symbolizer *s, uint64_t start, uint64_t end, uint64_t pgoff,
                           const char *path, const char *root);

/* Resolve a user-space address. return_address: the address is a return address (the frame is
 * executing the call before it), so the line looked up is the call's. */
const struct sym_result *symbolize_user(struct symbolizer *s, uint64_t addr, bool return_address);
/* Resolve a kernel address through /proc/kallsyms. Frame names get no suffix here. */
const struct sym_result *symbolize_kernel(struct symbolizer *s, uint64_t addr);

/* The mapping of the target that holds a user address, as pprof's Mapping wants it. */
struct sym_mapping {
    uint64_t start, end, pgoff;   /* the address range and the file offset mapped at start */
    const char *path;             /* as the target maps it ("" for anonymous memory, "[vdso]"...) */
    const char *build_id;         /* the object's GNU build id in lowercase hex, or NULL */
    uint32_t generation;          /* the same for the same contents at the same place, new when replaced */
};
/* The mapping that holds addr (a return address: the call before it) now. Opens the object if no address
 * of it was resolved yet. False when no known mapping holds it. */
bool symbolize_user_mapping(struct symbolizer *s, uint64_t addr, bool return_address, struct sym_mapping *out);
/* The known mapping that starts nearest below addr (for telling where an address in no mapping lies), without
 * opening its object (build_id NULL). False when none starts below it. */
bool symbolize_mapping_below(struct symbolizer *s, uint64_t addr, struct sym_mapping *out);

/* An object whose frames came out unsymbolized (sym_result.unsymbolized), for telling the user why. */
struct sym_object_report {
    const char *path;             /* as the target maps it */
    const char *root;             /* the prefix it was opened through ("" or "/proc/PID/root") */
    const char *build_id;         /* lowercase hex, or NULL */
    bool dynamic_symbols;         /* its exported symbols name some of its frames */
    const struct debug_file_result *debug_file;   /* where its debug file was looked for (elf/elf_file.h) */
};
/* The first opened object named object (sym_result.object) that is unsymbolized. False when none is. */
bool symbolize_object_report(struct symbolizer *s, const char *object, struct sym_object_report *out);

/* Demangle a symbol (Rust legacy/v0, C++); returns a malloc'd string, or NULL if it is not mangled. */
char *symbolize_demangle(const char *mangled);
/* Remove a Rust legacy hash suffix ("::h0123456789abcdef") in place. */
void symbolize_strip_rust_hash(char *name);

/* The macro a source file defines ("select!" for tokio's macros/select.rs, futures-util's select_mod.rs; "join!",
 * "try_join!"), by its path as the DWARF names it (sym_frame.path); NULL for any other file. A frame positioned in
 * such a file is inside the macro's own code (macro_source.c). */
const char *symbolize_macro_of(const char *path);

#endif
