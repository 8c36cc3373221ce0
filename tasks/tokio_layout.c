/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokio_layout.c: the one place that knows how tokio lays out its runtime, as named member paths found in the
 * program's DWARF (never offsets per version): the CONTEXT thread-local (its current task id, the runtime
 * handle it holds, the worker it runs), the runtime handle's owned-task lists and workers' run queues, the
 * task header, its vtable and trailer. Where tokio versions differ, each alternative is a path of its own,
 * tried in order; a failure names the path that did not match. Read by task_reader.c and future_decode.c; the
 * sampler's zero-probe route places CONTEXT.current_task_id through tokio_task_id_place_find (tasks.h), so that
 * CONTEXT is found and decoded here only. */
#include "tasks/tasks_internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_SYMBOL "5tokio7runtime7context7CONTEXT"          /* tokio::runtime::context::CONTEXT */
#define WORKER_SYMBOL "12multi_thread6worker7CURRENT"            /* tokio 1.24's worker::CURRENT */
#define CURRENT_SYMBOL "14current_thread7CURRENT"                 /* tokio 1.24's current_thread::CURRENT */
#define NEXT_ID_SYMBOL "4task2id2Id4next7NEXT_ID"                 /* tokio::runtime::task::id::Id::next::NEXT_ID */
#define TLS_STORAGE "__RUST_STD_INTERNAL_VAL"                    /* std's thread_local! storage */
#define MAX_SEARCH_DEPTH 8
#define CONTEXT_DEPTH 12                                         /* CONTEXT's Context in its storage */
#define MAX_READ 4096
#define MAX_SHARDS 65536

/* ---- small readers --------------------------------------------------------------------------------------- */

static bool read_u64(elf_memory_reader read, void *rctx, uint64_t addr, uint64_t *v)
{
    return read(rctx, addr, v, 8);
}

/* an unsigned integer of the given size (1, 2, 4 or 8) */
static bool read_uint(elf_memory_reader read, void *rctx, uint64_t addr, int64_t size, uint64_t *v)
{
    *v = 0;
    return size >= 1 && size <= 8 && read(rctx, addr, v, (size_t)size);
}

/* the pointee type of a pointer type (or of a NonNull / Box-like single "pointer" member struct) */
static bool pointee(Dwarf_Die *type, Dwarf_Die *out)
{
    Dwarf_Die t = *type;
    struct dwarf_member m;
    for (int i = 0; i < 4 && dwarf_tag(&t) == DW_TAG_structure_type; i++) {
        if (!dwarf_member(&t, "pointer", &m) && !dwarf_member(&t, "__0", &m))
            return false;
        t = m.type;
    }
    return (dwarf_tag(&t) == DW_TAG_pointer_type || dwarf_tag(&t) == DW_TAG_reference_type) && dwarf_type_of(&t, out);
}

/* A member named name anywhere inside type, through inline members only (no pointer), depth first. */
static bool find_inline(Dwarf_Die *type, const char *name, int depth, struct dwarf_member *out)
{
    if (dwarf_member(type, name, out))
        return true;
    struct dwarf_member m;
    for (size_t i = 0; depth < MAX_SEARCH_DEPTH && dwarf_member_at(type, i, &m); i++) {
        int tag = dwarf_tag(&m.type);
        if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) && find_inline(&m.type, name, depth + 1, out)) {
            out->offset += m.offset;
            return true;
        }
    }
    return false;
}

/* The integer inside an atomic or cell wrapper (AtomicUsize { v: UnsafeCell { value } }): its offset, size */
static bool inner_integer(Dwarf_Die *type, uint64_t *offset, int64_t *size)
{
    Dwarf_Die t = *type;
    *offset = 0;
    for (int i = 0; i < 6; i++) {
        if (dwarf_tag(&t) == DW_TAG_base_type) {
            *size = dwarf_type_size(&t);
            return *size > 0 && *size <= 8;
        }
        struct dwarf_member m;
        if (dwarf_member_count(&t) != 1 || !dwarf_member_at(&t, 0, &m))
            return false;
        *offset += m.offset;
        t = m.type;
    }
    return false;
}

/* The value of an enum (Option, scheduler::Handle, ...) at addr: its variant's member (name, payload) */
static bool read_variant(elf_memory_reader read, void *rctx, Dwarf_Die *type, uint64_t addr, struct dwarf_member *out)
{
    int64_t size = dwarf_type_size(type);
    uint8_t bytes[MAX_READ];
    if (size <= 0 || size > MAX_READ || !read(rctx, addr, bytes, (size_t)size))
        return false;
    return dwarf_variant_of(type, bytes, (size_t)size, out);
}

/* the payload (member __0) of the variant at addr if it is named variant: its address and type */
static bool variant_payload(elf_memory_reader read, void *rctx, Dwarf_Die *type, uint64_t addr, const char *variant,
                            uint64_t *at, Dwarf_Die *payload)
{
    struct dwarf_member v, p;
    const char *n;
    if (!read_variant(read, rctx, type, addr, &v) || !(n = dwarf_diename(&v.die)) || strcmp(n, variant) != 0 ||
        !dwarf_member(&v.type, "__0", &p))
        return false;
    *at = addr + v.offset + p.offset;
    *payload = p.type;
    return true;
}

/* Arc<T> at addr: the address and type of its T (ArcInner's data) */
static bool arc_data(elf_memory_reader read, void *rctx, Dwarf_Die *arc, uint64_t addr, uint64_t *data, Dwarf_Die *type)
{
    struct dwarf_member ptr, inner_data;
    const char *failed;
    Dwarf_Die inner;
    uint64_t p;
    if (!dwarf_member_path(arc, "ptr.pointer", &ptr, &failed) || !pointee(&ptr.type, &inner) ||
        !dwarf_member(&inner, "data", &inner_data) || !read_u64(read, rctx, addr + ptr.offset, &p) || p == 0)
        return false;
    *data = p + inner_data.offset;
    *type = inner_data.type;
    return true;
}

/* ---- finding the layout ---------------------------------------------------------------------------------- */

#define MAX_NEAR 4

struct tls_symbol {
    uint64_t value, size;
    char name[1024];
    uint64_t near[MAX_NEAR];    /* functions of the variable's module: the DWARF unit that defines it holds them */
    size_t n_near;
};

/* The length of a Rust symbol's (legacy mangling: _ZN<len><ident>...) module path: its components up to the
   first that names an item (not all lower case: CONTEXT, Scoped$LT$T$GT$, _$u7b$$u7b$closure...); 0 when none. */
static size_t module_prefix_len(const char *name)
{
    if (strncmp(name, "_ZN", 3) != 0)
        return 0;
    const char *at = name + 3, *module_end = NULL;
    while (*at >= '1' && *at <= '9') {
        char *ident;
        unsigned long len = strtoul(at, &ident, 10);
        if (len == 0 || strnlen(ident, len) < len)
            return 0;
        for (unsigned long i = 0; i < len; i++)
            if (!((ident[i] >= 'a' && ident[i] <= 'z') || (ident[i] >= '0' && ident[i] <= '9') || ident[i] == '_') ||
                (i == 0 && ident[i] == '_'))
                return module_end ? (size_t)(module_end - name) : 0;
        at = module_end = ident + len;
    }
    return 0;
}

/* Whether name is a function directly in the module prefix[0, len): the prefix, one identifier, rustc's hash */
static bool in_module(const char *name, const char *prefix, size_t len)
{
    if (strncmp(name, prefix, len) != 0)
        return false;
    char *ident;
    unsigned long n = strtoul(name + len, &ident, 10);
    if (n == 0 || ident == name + len || strnlen(ident, n) < n)
        return false;
    const char *hash = ident + n;
    if (strncmp(hash, "17h", 3) != 0 || hash[19] != 'E' || hash[20] != '\0')
        return false;
    for (int i = 3; i < 19; i++)
        if (!((hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f')))
            return false;
    return true;
}

/* Up to MAX_NEAR functions defined directly in sym's module, from the symbol table: where its DWARF is */
static void near_functions(const struct elf_file *ef, struct tls_symbol *sym)
{
    size_t len = module_prefix_len(sym->name);
    struct elf_symbol_iter it;
    struct elf_symbol f;
    if (len == 0 || !elf_symbols_begin(&it, ef, ".symtab"))
        return;
    while (sym->n_near < MAX_NEAR && elf_symbols_next(&it, &f))
        if (f.type == STT_FUNC && f.section != SHN_UNDEF && f.value && in_module(f.name, sym->name, len))
            sym->near[sym->n_near++] = f.value;
}

static bool tokio_tls_symbol(const struct elf_file *ef, const char *part, struct tls_symbol *out)
{
    const char *tables[] = { ".symtab", ".dynsym" };
    for (int t = 0; t < 2; t++) {
        struct elf_symbol_iter it;
        struct elf_symbol sym;
        if (!elf_symbols_begin(&it, ef, tables[t]))
            continue;
        while (elf_symbols_next(&it, &sym))
            if (sym.type == STT_TLS && sym.section != SHN_UNDEF && strstr(sym.name, part) &&
                strstr(sym.name, TLS_STORAGE)) {
                out->value = sym.value;
                out->size = sym.size;
                snprintf(out->name, sizeof(out->name), "%s", sym.name);
                out->n_near = 0;
                near_functions(ef, out);
                return true;
            }
    }
    return false;
}

/* x86-64 TLS variant II: the executable's block ends at the thread pointer */
static bool tp_offset(const struct elf_file *ef, uint64_t st_value, int64_t *out)
{
    const Elf64_Phdr *tls = elf_file_segment(ef, PT_TLS);
    if (!tls)
        return false;
    *out = elf_tls_tp_offset(st_value, tls->p_memsz, tls->p_align, tls->p_vaddr);
    return true;
}

/* tokio's Context inside a thread-local's storage type: a struct named Context with current_task_id (std's
   LocalKey storage wraps it in a few layers: searched to CONTEXT_DEPTH) */
static bool find_context(Dwarf_Die *type, int depth, Dwarf_Die *context, uint64_t *offset)
{
    const char *n = dwarf_diename(type);
    struct dwarf_member m;
    if (dwarf_tag(type) == DW_TAG_structure_type && n && strcmp(n, "Context") == 0 &&
        dwarf_member(type, "current_task_id", &m)) {
        *context = *type;
        *offset = 0;
        return true;
    }
    for (size_t i = 0; depth < CONTEXT_DEPTH && dwarf_member_at(type, i, &m); i++) {
        uint64_t inner;
        if (find_context(&m.type, depth + 1, context, &inner)) {
            *offset = m.offset + inner;
            return true;
        }
    }
    return false;
}

/* Context.current_task_id (Cell<Option<task::Id>>, through Cell's and UnsafeCell's value to the Option): where
   the id is (an integer inside task::Id, itself a u64 or a NonZeroU64) and how the Option says Some. The Option
   either has a discriminant of its own (tokio 1.24 to 1.40), or is niche-encoded (1.41 on: Id holds a
   NonZeroU64): the id is its own discriminant, 0 None. */
static bool find_task_id_field(Dwarf_Die *context, struct tokio_id_field *out)
{
    memset(out, 0, sizeof(*out));
    struct dwarf_member m, some, id, discr;
    if (!dwarf_member(context, "current_task_id", &m))
        return false;
    uint64_t base = m.offset;
    Dwarf_Die option = m.type;
    for (int i = 0; i < 4 && dwarf_member(&option, "value", &m); i++) {
        base += m.offset;
        option = m.type;
    }
    uint64_t inner;
    int64_t size;
    if (!dwarf_variant_named(&option, "Some", &some) || !dwarf_member(&some.type, "__0", &id) ||
        !inner_integer(&id.type, &inner, &size))
        return false;
    out->id_offset = base + some.offset + id.offset + inner;
    out->id_size = (uint32_t)size;
    bool has_value;
    uint64_t value;
    if (!dwarf_variant_discr(&option, "Some", &discr, &has_value, &value))
        return true;                       /* no discriminant at all: 0 is None */
    if (!has_value)                        /* Some is the default variant: a niche, the id itself */
        return base + discr.offset == out->id_offset;
    int64_t tag_size = dwarf_type_size(&discr.type);
    if (tag_size != 1 && tag_size != 2 && tag_size != 4 && tag_size != 8)
        return false;
    out->has_tag = true;
    out->tag_offset = base + discr.offset;
    out->tag_size = (uint32_t)tag_size;
    out->some_value = value;
    return true;
}

/* CONTEXT in the DWARF: its Context struct (context), where that is in the storage (within), and the task id
   field. False when the DWARF does not describe it this way. */
static bool context_in_dwarf(struct dwarf_types *d, struct tls_symbol *sym, Dwarf_Die *context, uint64_t *within,
                             struct tokio_id_field *field)
{
    Dwarf_Die storage;
    return dwarf_variable_by_linkage(d, sym->name, sym->near, sym->n_near, &storage) &&
           find_context(&storage, 0, context, within) && find_task_id_field(context, field);
}

/* "tokio 1.54.1" from the directory tokio was compiled in (".../tokio-1.54.1"), else "tokio" */
static void version_of(Dwarf_Die *context, char *version, size_t len)
{
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    const char *dir = dwarf_diecu(context, &cu, NULL, NULL) ? dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr))
                                                             : NULL;
    const char *file = dir && strstr(dir, "/tokio-") ? dir : dwarf_decl_file(context);
    const char *at = file ? strstr(file, "/tokio-") : NULL;
    size_t n = at ? strcspn(at + strlen("/tokio-"), "/") : 0;
    if (n == 0 || n > 40)
        snprintf(version, len, "tokio");
    else
        snprintf(version, len, "tokio %.*s", (int)n, at + strlen("/tokio-"));
}

/* The link-time address of a defined data symbol whose name holds part, of size bytes; 0 when none. */
static uint64_t data_symbol(const struct elf_file *ef, const char *part, uint64_t size)
{
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    if (!elf_symbols_begin(&it, ef, ".symtab"))
        return 0;
    while (elf_symbols_next(&it, &sym))
        if (sym.type == STT_OBJECT && sym.section != SHN_UNDEF && sym.size == size && strstr(sym.name, part))
            return sym.value;
    return 0;
}

/* A scoped thread-local of tokio 1.24 (worker::CURRENT, current_thread::CURRENT: a Cell<*const Context> in std's
   LocalKey storage): *tp_offset moved to the cell's value, the Context's type (type_name) in out. */
static bool scoped_context(struct dwarf_types *d, struct tls_symbol *sym, const char *type_name, int64_t *tp_offset,
                           Dwarf_Die *out)
{
    Dwarf_Die storage;
    struct dwarf_member cell;
    if (!dwarf_variable_by_linkage(d, sym->name, sym->near, sym->n_near, &storage) ||
        !find_inline(&storage, "value", 0, &cell) || !dwarf_type_by_name(d, type_name, out))
        return false;
    *tp_offset += (int64_t)cell.offset;
    return true;
}

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
    snprintf(err, errlen, "tokio's %s does not match taskspy's layout (no %s in the DWARF)", what, path);
    return -1;
}

int tokio_layout_find(struct tokio_layout *out, const char *exe, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct elf_file ef;
    if (elf_file_open(&ef, exe) != 0) {
        snprintf(err, errlen, "cannot read %s", exe);
        return -1;
    }
    struct tls_symbol context_sym, worker_sym;
    bool have_context = tokio_tls_symbol(&ef, CONTEXT_SYMBOL, &context_sym);
    bool have_worker = tokio_tls_symbol(&ef, WORKER_SYMBOL, &worker_sym);
    bool placed = have_context && tp_offset(&ef, context_sym.value, &out->context_tp_offset);
    if (have_worker && !tp_offset(&ef, worker_sym.value, &out->worker_tp_offset))
        have_worker = false;
    struct tls_symbol current_sym;
    bool have_current = tokio_tls_symbol(&ef, CURRENT_SYMBOL, &current_sym) &&
                        tp_offset(&ef, current_sym.value, &out->current_tp_offset);
    out->next_id = data_symbol(&ef, NEXT_ID_SYMBOL, 8);
    elf_file_close(&ef);
    if (!placed) {
        snprintf(err, errlen, "no tokio runtime in %s (no tokio::runtime::context::CONTEXT thread-local)", exe);
        return -1;
    }
    int rc = dwarf_types_open(&out->dwarf, exe);
    uint64_t within;
    bool found = rc == 0 && context_in_dwarf(out->dwarf, &context_sym, &out->context, &within, &out->task_id);
    /* (whether the DWARF has types at all is asked only when CONTEXT's is not found: a walk of its own) */
    if (!found && (rc != 0 || !dwarf_types_has_types(out->dwarf))) {
        snprintf(err, errlen, "tokio's task structures need DWARF types, and %s has %s (build with debug = 2, or keep "
                 "the debug file)", exe, rc < 0 ? "none readable" : rc > 0 ? "no debug info" : "line tables only");
        tokio_layout_free(out);
        return -1;
    }
    if (!found) {
        tokio_layout_free(out);
        return fail(err, errlen, "CONTEXT thread-local", "Context struct with current_task_id: Option<Id>");
    }
    out->context_tp_offset += (int64_t)within;
    version_of(&out->context, out->version, sizeof(out->version));
    /* worker::CURRENT's storage: a Cell<*const Context> (std's LocalKey storage may wrap it) */
    if (have_worker && !scoped_context(out->dwarf, &worker_sym, "tokio::runtime::scheduler::multi_thread::worker::Context",
                                       &out->worker_tp_offset, &out->worker_context))
        out->worker_tp_offset = 0;
    /* current_thread::CURRENT's storage: the same Cell<*const Context> */
    if (!have_current || !scoped_context(out->dwarf, &current_sym, "tokio::runtime::scheduler::current_thread::Context",
                                         &out->current_tp_offset, &out->current_context))
        out->current_tp_offset = 0;
    const char *failed;
    if (!dwarf_type_by_name(out->dwarf, "tokio::runtime::task::core::Header", &out->header) ||
        !dwarf_member(&out->header, "state", &out->header_state) ||
        !dwarf_member(&out->header, "vtable", &out->header_vtable)) {
        tokio_layout_free(out);
        return fail(err, errlen, "task header", "tokio::runtime::task::core::Header with state and vtable");
    }
    if (!dwarf_type_by_name(out->dwarf, "tokio::runtime::task::raw::Vtable", &out->vtable) ||
        !dwarf_member(&out->vtable, "poll", &out->vtable_poll) ||
        !dwarf_member(&out->vtable, "trailer_offset", &out->vtable_trailer_offset) ||
        !dwarf_member(&out->vtable, "id_offset", &out->vtable_id_offset)) {
        tokio_layout_free(out);
        return fail(err, errlen, "task vtable", "tokio::runtime::task::raw::Vtable with poll, trailer_offset, id_offset");
    }
    struct dwarf_member next, prev;
    if (!dwarf_type_by_name(out->dwarf, "tokio::runtime::task::core::Trailer", &out->trailer) ||
        !dwarf_member_path(&out->trailer, "owned.inner.value.next", &next, &failed) ||
        !dwarf_member_path(&out->trailer, "owned.inner.value.prev", &prev, &failed)) {
        tokio_layout_free(out);
        return fail(err, errlen, "task trailer", "tokio::runtime::task::core::Trailer.owned.inner.value.next and prev");
    }
    out->trailer_next = next.offset;
    out->trailer_prev = prev.offset;
    out->has_handle_multi =
        dwarf_type_by_name(out->dwarf, "tokio::runtime::scheduler::multi_thread::handle::Handle", &out->handle_multi);
    out->has_handle_current =
        dwarf_type_by_name(out->dwarf, "tokio::runtime::scheduler::current_thread::Handle", &out->handle_current);
    return 0;
}

void tokio_layout_free(struct tokio_layout *l)
{
    dwarf_types_close(l->dwarf);
    l->dwarf = NULL;
}

int tokio_task_id_place_find(const char *path, struct tokio_task_id_place *out)
{
    memset(out, 0, sizeof(*out));
    struct elf_file ef;
    if (elf_file_open(&ef, path) != 0)
        return -1;
    struct tls_symbol sym;
    bool placed = tokio_tls_symbol(&ef, CONTEXT_SYMBOL, &sym) && tp_offset(&ef, sym.value, &out->context_tp_offset);
    elf_file_close(&ef);
    if (!placed)
        return 0;
    snprintf(out->symbol, sizeof(out->symbol), "%s", sym.name);
    out->context_size = sym.size;
    struct dwarf_types *d;
    if (dwarf_types_open(&d, path) != 0)
        return 0;
    Dwarf_Die context;
    uint64_t within;
    struct tokio_id_field f;
    bool found = context_in_dwarf(d, &sym, &context, &within, &f);
    dwarf_types_close(d);
    if (!found)
        return 0;
    int64_t at = out->context_tp_offset + (int64_t)within;
    out->found = true;
    out->id_tp_offset = at + (int64_t)f.id_offset;
    out->id_size = f.id_size;
    out->has_tag = f.has_tag;
    out->tag_tp_offset = f.has_tag ? at + (int64_t)f.tag_offset : 0;
    out->tag_size = f.tag_size;
    out->some_value = f.some_value;
    return 1;
}

/* ---- reading a thread's CONTEXT -------------------------------------------------------------------------- */

/* the Option<Id> current_task_id of the Context at context: the id, 0 for None */
static uint64_t read_task_id(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t context)
{
    const struct tokio_id_field *f = &l->task_id;
    uint64_t tag, id;
    if (f->has_tag && (!read_uint(read, rctx, context + f->tag_offset, f->tag_size, &tag) || tag != f->some_value))
        return 0;
    return read_uint(read, rctx, context + f->id_offset, f->id_size, &id) ? id : 0;
}

/* the runtime handle in the thread's Context: tokio 1.54's current.handle, or 1.24's handle */
static bool read_handle(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t context,
                        struct thread_context *out)
{
    static const char *const paths[] = { "current.handle", "handle" };   /* RefCell<Option<scheduler::Handle>> */
    struct dwarf_member m, inner;
    const char *failed;
    Dwarf_Die context_type = l->context;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (!dwarf_member_path(&context_type, paths[i], &m, &failed))
            continue;
        /* through RefCell's and UnsafeCell's value to the Option */
        for (int k = 0; k < 3 && !dwarf_has_variants(&m.type) && dwarf_member(&m.type, "value", &inner); k++) {
            m.offset += inner.offset;
            m.type = inner.type;
        }
        uint64_t at;
        Dwarf_Die handle;
        if (!variant_payload(read, rctx, &m.type, context + m.offset, "Some", &at, &handle))
            return false;          /* None: this thread is in no runtime */
        static const char *const kinds[] = { "MultiThread", "CurrentThread" };
        for (int k = 0; k < 2; k++) {
            uint64_t arc_at, data;
            Dwarf_Die arc, data_type;
            if (variant_payload(read, rctx, &handle, at, kinds[k], &arc_at, &arc) &&
                arc_data(read, rctx, &arc, arc_at, &data, &data_type)) {
                out->handle = data;
                out->multi_thread = k == 0;
                return true;
            }
        }
        return false;
    }
    return false;
}

/* the thread's scheduler Context (a multi-thread worker's, or a current-thread runtime's): tokio 1.54's
   CONTEXT.scheduler (a Scoped<scheduler::Context>: MultiThread(Context) or CurrentThread(Context)), or 1.24's
   worker::CURRENT / current_thread::CURRENT (a pointer to the Context). Its address and type; false when the thread
   is in none (not inside the scheduler: a block_on thread of a multi-thread runtime, or between its polls). */
static bool scheduler_context(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t fsbase,
                              uint64_t context, bool multi_thread, uint64_t *at, Dwarf_Die *type)
{
    struct dwarf_member m, inner;
    const char *failed;
    Dwarf_Die ctx_type, context_type = l->context;
    bool scoped = dwarf_member_path(&context_type, "scheduler.inner", &m, &failed);   /* Cell<*const Context> */
    for (int k = 0; scoped && k < 3 && dwarf_tag(&m.type) != DW_TAG_pointer_type && dwarf_member(&m.type, "value", &inner);
         k++) {
        m.offset += inner.offset;
        m.type = inner.type;
    }
    uint64_t p;
    if (scoped && pointee(&m.type, &ctx_type))
        return read_u64(read, rctx, context + m.offset, &p) && p != 0 &&
               variant_payload(read, rctx, &ctx_type, p, multi_thread ? "MultiThread" : "CurrentThread", at, type);
    int64_t tp = multi_thread ? l->worker_tp_offset : l->current_tp_offset;
    if (tp == 0 || !read_u64(read, rctx, fsbase + (uint64_t)tp, at) || *at == 0)
        return false;
    *type = multi_thread ? l->worker_context : l->current_context;
    return true;
}

/* the worker's index: its scheduler Context's worker (an Arc<Worker>)'s index */
static int64_t read_worker(elf_memory_reader read, void *rctx, uint64_t at, Dwarf_Die *type)
{
    struct dwarf_member worker, index;
    uint64_t data, v;
    Dwarf_Die worker_type;
    if (!dwarf_member(type, "worker", &worker) ||
        !arc_data(read, rctx, &worker.type, at + worker.offset, &data, &worker_type) ||
        !dwarf_member(&worker_type, "index", &index) || !read_u64(read, rctx, data + index.offset, &v))
        return -1;
    return (int64_t)v;
}

/* the scheduler core: Context.core (a RefCell<Option<Box<Core>>>: Some while the thread polls a task, or parks),
   its address and type into out; and its tick (Core.tick: a u32 both schedulers advance at each turn of their
   loop), -1 when not read */
static int64_t read_core(elf_memory_reader read, void *rctx, uint64_t at, Dwarf_Die *type, struct thread_context *out)
{
    struct dwarf_member core, tick;
    uint64_t offset = 0, p, v;
    int64_t size;
    Dwarf_Die core_type;
    if (!dwarf_member(type, "core", &core) || !type_pointer_inside(&core.type, &offset, &core_type) ||
        !read_u64(read, rctx, at + core.offset + offset, &p) || p == 0)
        return -1;
    out->core = p;
    out->core_type = core_type;
    if (!dwarf_member(&core_type, "tick", &tick) || !inner_integer(&tick.type, &offset, &size) ||
        !read_uint(read, rctx, p + tick.offset + offset, size, &v))
        return -1;
    return (int64_t)v;
}

bool tokio_thread_context(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t fsbase,
                          struct thread_context *out)
{
    memset(out, 0, sizeof(*out));
    out->worker_index = -1;
    uint64_t context = fsbase + (uint64_t)l->context_tp_offset;
    uint8_t probe;
    if (!read(rctx, context, &probe, 1))
        return false;
    out->current_task = read_task_id(l, read, rctx, context);
    out->tick = -1;
    uint64_t at;
    Dwarf_Die type;
    if (read_handle(l, read, rctx, context, out) &&
        scheduler_context(l, read, rctx, fsbase, context, out->multi_thread, &at, &type)) {
        if (out->multi_thread)
            out->worker_index = read_worker(read, rctx, at, &type);
        out->tick = read_core(read, rctx, at, &type, out);
    }
    return true;
}

/* ---- the runtime's lists and queues ---------------------------------------------------------------------- */

/* the runtime handle's type (found at open) */
static bool handle_type(const struct tokio_layout *l, bool multi_thread, Dwarf_Die *out)
{
    *out = multi_thread ? l->handle_multi : l->handle_current;
    return multi_thread ? l->has_handle_multi : l->has_handle_current;
}

size_t tokio_owned_heads(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                         bool multi_thread, uint64_t *heads, size_t max)
{
    Dwarf_Die type;
    struct dwarf_member owned, lists, data_ptr, length, head;
    const char *failed;
    if (!handle_type(l, multi_thread, &type) || !dwarf_member_path(&type, "shared.owned", &owned, &failed))
        return 0;
    uint64_t base = handle + owned.offset;
    size_t n = 0;
    Dwarf_Die shard;
    if (dwarf_member_path(&owned.type, "list.lists", &lists, &failed) &&
        dwarf_member(&lists.type, "data_ptr", &data_ptr) && dwarf_member(&lists.type, "length", &length) &&
        pointee(&data_ptr.type, &shard) && find_inline(&shard, "head", 0, &head)) {
        /* tokio 1.38 and later: a sharded list, Box<[Mutex<LinkedList>]> */
        uint64_t ptr, count;
        int64_t stride = dwarf_type_size(&shard);
        if (stride <= 0 || !read_u64(read, rctx, base + lists.offset + data_ptr.offset, &ptr) ||
            !read_u64(read, rctx, base + lists.offset + length.offset, &count) || count > MAX_SHARDS)
            return 0;          /* tokio has a few shards per worker: more is a list read mid-change */
        for (uint64_t i = 0; i < count && n < max; i++)
            if (read_u64(read, rctx, ptr + i * (uint64_t)stride + head.offset, &heads[n]) && heads[n])
                n++;
    } else if (find_inline(&owned.type, "head", 0, &head)) {
        /* one list behind a mutex (tokio 1.24: inner: Mutex<OwnedTasksInner { list }>) */
        if (read_u64(read, rctx, base + head.offset, &heads[0]) && heads[0] && max > 0)
            n = 1;
    }
    return n;
}

int64_t tokio_local_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                          int64_t index)
{
    Dwarf_Die type, remote, inner_type;
    struct dwarf_member remotes, data_ptr, length, steal, head, tail;
    const char *failed;
    uint64_t ptr, count, inner, h, t, hoff, toff;
    int64_t remote_size, hsize, tsize;
    if (index < 0 || !handle_type(l, true, &type) || !dwarf_member_path(&type, "shared.remotes", &remotes, &failed) ||
        !dwarf_member(&remotes.type, "data_ptr", &data_ptr) || !dwarf_member(&remotes.type, "length", &length) ||
        !pointee(&data_ptr.type, &remote) || (remote_size = dwarf_type_size(&remote)) <= 0 ||
        !dwarf_member_path(&remote, "steal.__0", &steal, &failed) ||
        !read_u64(read, rctx, handle + remotes.offset + data_ptr.offset, &ptr) ||
        !read_u64(read, rctx, handle + remotes.offset + length.offset, &count) || (uint64_t)index >= count ||
        !arc_data(read, rctx, &steal.type, ptr + (uint64_t)index * (uint64_t)remote_size + steal.offset, &inner,
                  &inner_type) ||
        !dwarf_member(&inner_type, "head", &head) || !dwarf_member(&inner_type, "tail", &tail) ||
        !inner_integer(&head.type, &hoff, &hsize) || !inner_integer(&tail.type, &toff, &tsize) ||
        !read_uint(read, rctx, inner + head.offset + hoff, hsize, &h) ||
        !read_uint(read, rctx, inner + tail.offset + toff, tsize, &t))
        return -1;
    /* head packs (steal, real) halves; the real head is the low half, as wide as tail */
    uint64_t mask = tsize >= 8 ? UINT64_MAX : (1ull << (tsize * 8)) - 1;
    return (int64_t)((t - (h & mask)) & mask);
}

bool tokio_read_header(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t header,
                       struct task_header *out)
{
    memset(out, 0, sizeof(*out));
    /* the header's state and vtable words in one read, the vtable's three fields in another */
    uint64_t head_end = (l->header_state.offset > l->header_vtable.offset ? l->header_state.offset
                                                                           : l->header_vtable.offset) + 8;
    uint64_t vt_end = l->vtable_poll.offset;
    if (l->vtable_trailer_offset.offset > vt_end)
        vt_end = l->vtable_trailer_offset.offset;
    if (l->vtable_id_offset.offset > vt_end)
        vt_end = l->vtable_id_offset.offset;
    vt_end += 8;
    uint8_t head[MAX_READ], vt[MAX_READ];
    if (head_end > MAX_READ || vt_end > MAX_READ || !read(rctx, header, head, head_end))
        return false;
    memcpy(&out->state, head + l->header_state.offset, 8);
    memcpy(&out->vtable, head + l->header_vtable.offset, 8);
    if (out->vtable == 0 || !read(rctx, out->vtable, vt, vt_end))
        return false;
    memcpy(&out->poll, vt + l->vtable_poll.offset, 8);
    memcpy(&out->trailer_offset, vt + l->vtable_trailer_offset.offset, 8);
    memcpy(&out->id_offset, vt + l->vtable_id_offset.offset, 8);
    return out->trailer_offset <= (1u << 24) && out->id_offset <= (1u << 24) &&
           read_u64(read, rctx, header + out->id_offset, &out->id) &&
           read_u64(read, rctx, header + out->trailer_offset + l->trailer_next, &out->next) &&
           read_u64(read, rctx, header + out->trailer_offset + l->trailer_prev, &out->prev);
}

bool tokio_read_state(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t header,
                      uint64_t *state)
{
    return read_u64(read, rctx, header + l->header_state.offset, state);
}

/* ---- the runtime's figures for a live view ------------------------------------------------------------------ */

/* The integer at path within the runtime handle at handle (through Arcs where arcs says: "blocking_spawner.inner"
   then "metrics.num_threads"), -1 when a step does not match. */
static int64_t handle_integer(elf_memory_reader read, void *rctx, Dwarf_Die *handle_type, uint64_t handle,
                              const char *const *steps, size_t n_steps, const char *variant)
{
    Dwarf_Die type = *handle_type;
    uint64_t at = handle;
    const char *failed;
    for (size_t i = 0; i < n_steps; i++) {
        struct dwarf_member m;
        if (!dwarf_member_path(&type, steps[i], &m, &failed))
            return -1;
        at += m.offset;
        type = m.type;
        if (i + 1 == n_steps)
            break;
        /* between two steps: an enum's variant (its payload), or an Arc (its data) */
        Dwarf_Die next;
        if (variant && dwarf_has_variants(&type)) {
            if (!variant_payload(read, rctx, &type, at, variant, &at, &next))
                return -1;
        } else if (!arc_data(read, rctx, &type, at, &at, &next)) {
            return -1;
        }
        type = next;
    }
    uint64_t offset, v;
    int64_t size;
    if (!inner_integer(&type, &offset, &size) || !read_uint(read, rctx, at + offset, size, &v))
        return -1;
    return (int64_t)v;
}

int64_t tokio_global_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                           bool multi_thread)
{
    /* the inject queue's length, by version: each a path of its own (variant steps: the enum's variant) */
    static const struct {
        const char *steps[2];
        const char *variant;
    } paths[] = {
        { { "shared.inject.len" }, NULL },                          /* 1.24 multi-thread: Inject { pointers, len } */
        { { "shared.inject.shared.len" }, NULL },                   /* current-thread since 1.2x: Inject { shared } */
        { { "shared.inject.value", "shared.len" }, "Locked" },      /* 1.54 multi-thread: CachePadded<InjectQueue> */
        { { "shared.queue.data.value", "len" }, "Some" },           /* 1.24 current-thread: Mutex<Option<VecDeque>> */
    };
    Dwarf_Die type;
    if (!handle_type(l, multi_thread, &type))
        return -1;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        size_t n = paths[i].steps[1] ? 2 : 1;
        int64_t v = handle_integer(read, rctx, &type, handle, paths[i].steps, n, paths[i].variant);
        if (v >= 0)
            return v;
    }
    return -1;
}

bool tokio_blocking_threads(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                            bool multi_thread, int64_t *threads, int64_t *idle)
{
    /* the blocking pool's own counts (tokio 1.24 and 1.54): Handle.blocking_spawner.inner (an Arc<Inner>), its
       metrics' num_threads and num_idle_threads */
    static const char *const all[] = { "blocking_spawner.inner", "metrics.num_threads" };
    static const char *const idle_ones[] = { "blocking_spawner.inner", "metrics.num_idle_threads" };
    Dwarf_Die type;
    if (!handle_type(l, multi_thread, &type))
        return false;
    *threads = handle_integer(read, rctx, &type, handle, all, 2, NULL);
    *idle = handle_integer(read, rctx, &type, handle, idle_ones, 2, NULL);
    return *threads >= 0 && *idle >= 0;
}

uint64_t tokio_next_task_id(const struct tokio_layout *l, elf_memory_reader read, void *rctx)
{
    uint64_t v;
    return l->next_id && read_u64(read, rctx, l->next_id + l->bias, &v) ? v : 0;
}

/* ---- the tasks queued on a scheduler core --------------------------------------------------------------------- */

/* The task headers of a multi-thread worker's local run queue (Core.run_queue.inner, an Arc<queue::Inner>: its
   buffer's entries from the real head, the low half of head, to tail), appended to out. */
static size_t local_queue_headers(elf_memory_reader read, void *rctx, const struct thread_context *c, uint64_t *out,
                                  size_t max)
{
    Dwarf_Die core_type = c->core_type, inner_type, array, element;
    struct dwarf_member local, head, tail, buffer;
    const char *failed;
    uint64_t inner, hoff, toff, h, t, boff = 0, elements;
    int64_t hsize, tsize, array_size, element_size;
    if (!dwarf_member_path(&core_type, "run_queue.inner", &local, &failed) ||
        !arc_data(read, rctx, &local.type, c->core + local.offset, &inner, &inner_type) ||
        !dwarf_member(&inner_type, "head", &head) || !dwarf_member(&inner_type, "tail", &tail) ||
        !dwarf_member(&inner_type, "buffer", &buffer) || !inner_integer(&head.type, &hoff, &hsize) ||
        !inner_integer(&tail.type, &toff, &tsize) || !type_pointer_inside(&buffer.type, &boff, &array) ||
        !dwarf_type_of(&array, &element) || (array_size = dwarf_type_size(&array)) <= 0 ||
        (element_size = dwarf_type_size(&element)) != 8 ||
        !read_uint(read, rctx, inner + head.offset + hoff, hsize, &h) ||
        !read_uint(read, rctx, inner + tail.offset + toff, tsize, &t) ||
        !read_u64(read, rctx, inner + buffer.offset + boff, &elements) || elements == 0)
        return 0;
    uint64_t capacity = (uint64_t)(array_size / element_size);
    uint64_t mask = tsize >= 8 ? UINT64_MAX : (1ull << (tsize * 8)) - 1;
    uint64_t real = h & mask, queued = (t - real) & mask, n = 0;
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 || queued > capacity)
        return 0;               /* (read mid-change, or not the ring taskspy knows) */
    for (uint64_t i = 0; i < queued && n < max; i++)
        if (read_u64(read, rctx, elements + ((real + i) & (capacity - 1)) * 8, &out[n]) && out[n])
            n++;
    return n;
}

/* The task headers of a current-thread runtime's queue (Core.tasks, a VecDeque<Notified>: its buffer's len entries
   from head, wrapping at its capacity), appended to out. */
static size_t deque_headers(elf_memory_reader read, void *rctx, const struct thread_context *c, uint64_t *out,
                            size_t max)
{
    static const char *const pointers[] = { "tasks.buf.inner.ptr", "tasks.buf.ptr" };   /* std's RawVec, by version */
    static const char *const capacities[] = { "tasks.buf.inner.cap", "tasks.buf.cap" };
    Dwarf_Die core_type = c->core_type, target;
    struct dwarf_member ptr, cap, head, len;
    const char *failed;
    uint64_t poff = 0, coff, hoff, loff, elements, capacity, h, n_queued, n = 0;
    int64_t csize, hsize, lsize;
    size_t k = 0;
    while (k < 2 && !dwarf_member_path(&core_type, pointers[k], &ptr, &failed))
        k++;
    if (k == 2 || !dwarf_member_path(&core_type, capacities[k], &cap, &failed) ||
        !dwarf_member_path(&core_type, "tasks.head", &head, &failed) ||
        !dwarf_member_path(&core_type, "tasks.len", &len, &failed) || !type_pointer_inside(&ptr.type, &poff, &target) ||
        !inner_integer(&cap.type, &coff, &csize) || !inner_integer(&head.type, &hoff, &hsize) ||
        !inner_integer(&len.type, &loff, &lsize) || !read_u64(read, rctx, c->core + ptr.offset + poff, &elements) ||
        !read_uint(read, rctx, c->core + cap.offset + coff, csize, &capacity) ||
        !read_uint(read, rctx, c->core + head.offset + hoff, hsize, &h) ||
        !read_uint(read, rctx, c->core + len.offset + loff, lsize, &n_queued) || capacity == 0 || n_queued > capacity ||
        h >= capacity)
        return 0;
    for (uint64_t i = 0; i < n_queued && n < max; i++)
        if (read_u64(read, rctx, elements + ((h + i) % capacity) * 8, &out[n]) && out[n])
            n++;
    return n;
}

size_t tokio_core_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx,
                        const struct thread_context *c, uint64_t *out, size_t max)
{
    (void)l;
    if (!c->core || max == 0)
        return 0;
    size_t n = 0;
    Dwarf_Die core_type = c->core_type;
    struct dwarf_member lifo, some, header;
    const char *failed;
    if (c->multi_thread) {      /* the LIFO slot (an Option<Notified>, Notified(Task { raw: RawTask { ptr } }): its
                                   header pointer, 0 None), then the ring */
        if (dwarf_member(&core_type, "lifo_slot", &lifo) && dwarf_variant_named(&lifo.type, "Some", &some) &&
            dwarf_member_path(&some.type, "__0.__0.raw.ptr", &header, &failed) &&
            read_u64(read, rctx, c->core + lifo.offset + some.offset + header.offset, &out[n]) && out[n])
            n++;
        return n + local_queue_headers(read, rctx, c, out + n, max - n);
    }
    return deque_headers(read, rctx, c, out, max);
}
