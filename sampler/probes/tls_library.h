/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_library.h: the TLS task marker (tls_marker.h) in a shared library. A library loaded at start has its
 * TLS block in the static TLS area, at a fixed distance below the thread pointer that the dynamic linker
 * computed from the TLS segments of the startup objects in their module order (glibc's
 * _dl_determine_tlsoffset, x86-64 TLS variant II). taskspy recomputes it: the module order from the dynamic
 * linker's link_map (r_debug, found through the executable's DT_DEBUG, read from the target's memory), the
 * segments from the files. A library dlopen()ed later has a dynamically allocated block: not readable at
 * samples, and said so. */
#ifndef TASKSPY_TLS_LIBRARY_H
#define TASKSPY_TLS_LIBRARY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One object's TLS segment (PT_TLS), in module order. */
struct tls_module {
    uint64_t memsz, align, vaddr;
};

/* The static TLS layout: offsets[i] is how far below the thread pointer module i's block starts (its
 * variable at st_value is at tp - offsets[i] + st_value). */
void tls_static_layout(const struct tls_module *modules, size_t n, uint64_t *offsets);

/* Where the marker is. */
struct tls_library_place {
    char library[512];         /* the library that defines it (as the target names it) */
    int64_t tp_offset;         /* the variable at thread pointer + tp_offset */
};

/* Before the target runs: the first of exe's DT_NEEDED libraries (searched in its DT_RPATH/DT_RUNPATH, with
 * $ORIGIN, then the system's library directories; not LD_LIBRARY_PATH) that defines the marker, and its
 * place as the dynamic linker will lay out static TLS (to be confirmed by tls_library_place once loaded:
 * LD_PRELOAD or another search path may change it). Returns 1 with *out filled, 0 when none does. */
int tls_library_find_needed(const char *exe, struct tls_library_place *out);

/* In the running process pid (files opened under root, "/proc/PID/root"). Returns 1 with *out filled (a
 * library loaded at start), 0 when the link map is not ready yet (the dynamic
 * linker is still loading), no loaded library defines the marker or the target's memory cannot be read
 * (out->library ""), or -1 with a reason in err (the library's TLS block is dynamic: dlopen()ed). */
int tls_library_place(pid_t pid, const char *root, struct tls_library_place *out, char *err, size_t errlen);

#endif
