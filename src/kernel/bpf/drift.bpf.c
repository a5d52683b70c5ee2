/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * drift.bpf.c — each change that another process makes to an IRQ's affinity or to a watched
 * thread's scheduling, as an event in a ring buffer
 *
 * The hooks are at the exits of the kernel functions that every such write goes through, so the
 * change is done when sriovd reads it. sriovd's own writes are left out: they are never drift.
 */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define TRACK_MAX 8192

char LICENSE[] SEC("license") = "GPL";

/* The kinds, as in bpf-events.h's BpfEventKind. */
#define EVENT_IRQ_AFFINITY 0
#define EVENT_SCHED 1

struct drift_event {
        __u32 kind;
        __u32 id;
        __u32 writer;
        char comm[16];
        __u64 ktime_ns;
};

/* sriovd's process, set before the programs load */
const volatile __u32 self_tgid = 0;

/* pid -> BPF_TRACK_* flags, written by sriovd */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, __u32);
} watched SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 64 * 1024);
} events SEC(".maps");

/* [0]: events dropped because the ring buffer was full */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u64);
} lost SEC(".maps");

static __always_inline void emit(__u32 kind, __u32 id) {
        struct drift_event *e;
        __u64 tgid_pid = bpf_get_current_pid_tgid();
        __u32 zero = 0;
        __u64 *n;

        if ((__u32) (tgid_pid >> 32) == self_tgid)
                return;
        e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
        if (!e) {
                n = bpf_map_lookup_elem(&lost, &zero);
                if (n)
                        __sync_fetch_and_add(n, 1);
                return;
        }
        e->kind = kind;
        e->id = id;
        e->writer = (__u32) (tgid_pid >> 32);
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        e->ktime_ns = bpf_ktime_get_ns();
        bpf_ringbuf_submit(e, 0);
}

static __always_inline void emit_sched(pid_t pid) {
        __u32 key = pid > 0 ? (__u32) pid : (__u32) bpf_get_current_pid_tgid();
        __u32 *flags = bpf_map_lookup_elem(&watched, &key);

        if (flags && (*flags & 2))
                emit(EVENT_SCHED, key);
}

/* Every affinity write, from /proc/irq/N/smp_affinity or irq_set_affinity(), passes here. */
SEC("fexit/irq_set_affinity_locked")
int BPF_PROG(on_irq_affinity, struct irq_data *data, const struct cpumask *mask, bool force, int ret) {
        if (ret == 0)
                emit(EVENT_IRQ_AFFINITY, data->irq);
        return 0;
}

/*
 * sched_setscheduler(2), sched_setparam(2) and sched_setattr(2), chrt's calls, all pass here. The
 * exported sched_setscheduler() and sched_setattr() do not see them: Debian's 6.1 kernels inline
 * both into the system calls, and keep the copies only for modules.
 */
SEC("fexit/__sched_setscheduler")
int BPF_PROG(on_setscheduler, struct task_struct *p, const struct sched_attr *attr, bool user, bool pi, int ret) {
        if (ret == 0)
                emit_sched(p->pid);
        return 0;
}

/* sched_setaffinity(2), taskset: a NAPI thread's CPUs */
SEC("fexit/sched_setaffinity")
int BPF_PROG(on_setaffinity, pid_t pid, const struct cpumask *in_mask, long ret) {
        if (ret == 0)
                emit_sched(pid);
        return 0;
}
