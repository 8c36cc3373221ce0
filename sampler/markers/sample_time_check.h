/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_time_check.h: a capability test for the TLS marker route (sampler/markers/tls_join.h), which joins
 * each perf sample with the record its BPF program wrote on the sample's exact time. That needs a kernel that
 * fills the sample's data (its time) before it runs the program (perf_prepare_sample before the BPF overflow
 * handler; Linux 6.3 and later). Tested by doing it, not by the version. */
#ifndef TASKSPY_SAMPLE_TIME_CHECK_H
#define TASKSPY_SAMPLE_TIME_CHECK_H

#include <stddef.h>

#include "sampler/bpf/sample_program.h"

/* kernel: the kernel offsets (off_*) the route's program uses; its other fields are not read. Returns 1 when
 * records carry their sample's time, 0 when they do not (the reason in err), -1 when the check could not run
 * (the reason in err). */
int sample_time_check(const struct bpf_sample_program_spec *kernel, char *err, size_t errlen);

#endif
