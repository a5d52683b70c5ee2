/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency.bpf.c — wakeup-to-run latency of the threads sriovd places, one histogram each
 *
 * A thread becomes runnable when it is woken, or when it is preempted while still runnable. It
 * runs when sched_switch picks it. The time between goes into its histogram. Only threads in
 * the tracked map are looked at: any other thread costs one hash lookup per event.
 */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sriovd/latency-hist.h"

#define TRACK_MAX 8192
#define TASK_RUNNING 0

char LICENSE[] SEC("license") = "GPL";

/* pid -> BPF_TRACK_* flags, written by sriovd */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, __u32);
} tracked SEC(".maps");

/* pid -> when it became runnable, in ns */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, __u64);
} runnable SEC(".maps");

/* pid -> its histogram, created by sriovd when it tracks the thread */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, LatencyHist);
} hists SEC(".maps");

static __always_inline void mark_runnable(__u32 pid) {
        __u32 *flags = bpf_map_lookup_elem(&tracked, &pid);
        __u64 now;

        if (!flags || !(*flags & 1))
                return;
        now = bpf_ktime_get_ns();
        bpf_map_update_elem(&runnable, &pid, &now, BPF_ANY);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p) {
        mark_runnable(p->pid);
        return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p) {
        mark_runnable(p->pid);
        return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) {
        __u32 pid = next->pid;
        LatencyHist *h;
        __u64 *since, delta, slot;

        if (prev_state == TASK_RUNNING)
                mark_runnable(prev->pid);
        since = bpf_map_lookup_elem(&runnable, &pid);
        if (!since)
                return 0;
        delta = bpf_ktime_get_ns() - *since;
        bpf_map_delete_elem(&runnable, &pid);
        h = bpf_map_lookup_elem(&hists, &pid);
        if (!h)
                return 0;
        /*
         * latency_slot() is already below LATENCY_SLOTS, but the compiler may test one register
         * and index with a copy, which the 6.1 verifier refuses as unbounded. The barrier hides
         * the bound from the compiler, so the test stays, on the register that indexes.
         */
        slot = latency_slot(delta);
        asm volatile("" : "+r"(slot));
        if (slot >= LATENCY_SLOTS)
                return 0;
        __sync_fetch_and_add(&h->count, 1);
        __sync_fetch_and_add(&h->sum_ns, delta);
        __sync_fetch_and_add(&h->slots[slot], 1);
        return 0;
}
