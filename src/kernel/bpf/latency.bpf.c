/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency.bpf.c — wakeup-to-run latency of the threads sriovd places, one histogram each
 *
 * A thread becomes runnable when it is woken, or when it is preempted while still runnable. It
 * runs when sched_switch picks it. The time between goes into its histogram. These hooks run at
 * every wakeup and context switch of the machine, so a thread that is not tracked costs one bit
 * test in an array, which the verifier inlines: no call, no hashing.
 */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sriovd/latency-hist.h"
#include "latency-map.h"

#define TRACK_MAX 8192
#define TASK_RUNNING 0

char LICENSE[] SEC("license") = "GPL";

/* Bit pid % 64 of word pid / 64 is set while pid is tracked, written by sriovd. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, LATENCY_PID_WORDS);
        __type(key, __u32);
        __type(value, __u64);
} tracked SEC(".maps");

/* pid -> when it became runnable and its histogram, created by sriovd when it tracks the thread */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, LatencyEntry);
} hists SEC(".maps");

static __always_inline LatencyEntry *entry_of(__u32 pid) {
        __u32 word = pid / 64;
        __u64 *bits = bpf_map_lookup_elem(&tracked, &word);

        if (!bits || !((*bits >> (pid % 64)) & 1))
                return NULL;
        return bpf_map_lookup_elem(&hists, &pid);
}

static __always_inline void mark_runnable(__u32 pid) {
        LatencyEntry *e = entry_of(pid);

        if (e)
                e->since_ns = bpf_ktime_get_ns();
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
        LatencyEntry *e;
        __u64 delta, slot;

        if (prev_state == TASK_RUNNING)
                mark_runnable(prev->pid);
        e = entry_of(next->pid);
        if (!e || e->since_ns == 0)
                return 0;
        delta = bpf_ktime_get_ns() - e->since_ns;
        e->since_ns = 0;
        /*
         * latency_slot() is already below LATENCY_SLOTS, but the compiler may test one register
         * and index with a copy, which the 6.1 verifier refuses as unbounded. The barrier hides
         * the bound from the compiler, so the test stays, on the register that indexes.
         */
        slot = latency_slot(delta);
        asm volatile("" : "+r"(slot));
        if (slot >= LATENCY_SLOTS)
                return 0;
        /*
         * Plain adds, not atomic ones: a thread is switched in on one CPU at a time, so only one
         * program writes its histogram at once. sriovd reads it whole, and a read torn between
         * two switches is off by one sample.
         */
        e->hist.count++;
        e->hist.sum_ns += delta;
        e->hist.slots[slot]++;
        return 0;
}
