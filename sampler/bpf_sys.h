/* bpf_sys.h: the few bpf(2) commands taskspy uses (no libbpf in Debian's build of taskspy's card): create a
 * map, load a program run at uprobes, look a map element up. Each returns what bpf(2) returns (an fd, 0) or
 * -1 with errno. */
#ifndef TASKSPY_BPF_SYS_H
#define TASKSPY_BPF_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bpf.h>

int bpf_sys_map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size, uint32_t max_entries);
/* A BPF_MAP_TYPE_ARRAY_OF_MAPS of max_entries maps shaped like the map inner_fd. */
int bpf_sys_map_create_array_of_maps(uint32_t max_entries, int inner_fd);
int bpf_sys_map_update(int map_fd, const void *key, const void *value);
/* A BPF_PROG_TYPE_KPROBE program: for perf's kprobe and uprobe events (uprobe_multi false), or for a
 * uprobe_multi link (kernel 6.6+). The verifier's reasons, when it refuses, go into log (may be NULL). */
int bpf_sys_prog_load_probe(const struct bpf_insn *insns, size_t n, bool uprobe_multi, char *log, size_t logsz);
/* A uprobe_multi link running prog at one file offset of path (a uretprobe with retprobe), with the
 * semaphore at ref_ctr_offset raised (0: none), only in process pid. Closing the fd removes the probe. */
int bpf_sys_uprobe_link(int prog_fd, const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool retprobe,
                        pid_t pid);
int bpf_sys_map_lookup(int map_fd, const void *key, void *value);

#endif
