/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmlinux-min.h — the few kernel types the BPF programs read, for CO-RE. Each field is found by
 * name in the running kernel's BTF when the program loads, so the layout here does not matter
 * and no vmlinux.h of the build machine's kernel is needed.
 */
#pragma once

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
typedef int pid_t;
#define true 1
#define false 0

enum bpf_map_type {
        BPF_MAP_TYPE_HASH = 1,
        BPF_MAP_TYPE_ARRAY = 2,
        BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
        BPF_ANY = 0,
        BPF_NOEXIST = 1,
};

struct sched_info {
        unsigned long pcount;
        unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct task_struct {
        int pid;
        int tgid;
        char comm[16];
        struct sched_info sched_info;
} __attribute__((preserve_access_index));

struct irq_data {
        unsigned int irq;
} __attribute__((preserve_access_index));

struct cpumask;
struct sched_param;
struct sched_attr;
