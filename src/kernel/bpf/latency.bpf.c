/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency.bpf.c — wakeup-to-run latency of the threads sriovd places, one histogram each
 *
 * The scheduler itself times how long each thread waits to run, from when it is woken or
 * preempted while runnable to when a CPU picks it, in the thread's sched_info (the run delay of
 * /proc/PID/schedstat). When a tracked thread leaves a CPU, its last wait is the growth of
 * that delay since it last left one, and goes into its histogram. So one hook, on
 * sched_switch, is enough: the wakeup tracepoints, which run as often, are not needed. A thread
 * that is not tracked costs one bit test in an array, which the verifier inlines.
 */

#include "vmlinux-min.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sriovd/core/latency-hist.h"
#include "latency-map.h"

#define TRACK_MAX 8192

char LICENSE[] SEC("license") = "GPL";

/* Bit pid % 64 of word pid / 64 is set while pid is tracked, written by sriovd. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, LATENCY_PID_WORDS);
        __type(key, __u32);
        __type(value, __u64);
} tracked SEC(".maps");

/* pid -> what its sched_info showed and its histogram, created by sriovd when it tracks the thread */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, TRACK_MAX);
        __type(key, __u32);
        __type(value, LatencyEntry);
} hists SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) {
        __u32 pid = prev->pid, word = pid / 64;
        __u64 *bits = bpf_map_lookup_elem(&tracked, &word);
        __u64 pcount, delay, runs, delta, slot;
        LatencyEntry *e;

        if (!bits || !((*bits >> (pid % 64)) & 1))
                return 0;
        e = bpf_map_lookup_elem(&hists, &pid);
        if (!e)
                return 0;
        /* The scheduler adds the wait to these when the thread arrives on a CPU, before it runs. */
        pcount = prev->sched_info.pcount;
        delay = prev->sched_info.run_delay;
        runs = pcount - e->pcount;
        delta = delay - e->run_delay_ns;
        e->pcount = pcount;
        e->run_delay_ns = delay;
        if (!e->primed) {
                e->primed = 1;
                return 0;
        }
        if (runs == 0)
                return 0;
        /* More than one wait since the last switch away is rare: each counts at their mean. */
        if (runs > 1)
                delta /= runs;
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
         * Plain adds, not atomic ones: a thread leaves one CPU at a time, so only one program
         * writes its histogram at once. sriovd reads it whole, and a read torn between two
         * switches is off by one sample.
         */
        e->hist.count += runs;
        e->hist.sum_ns += delta * runs;
        e->hist.slots[slot] += runs;
        return 0;
}
