/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-placement.h — one placement per RT guest: its vCPUs, emulator, I/O threads and memory, from its RT CPU booking */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/allocator.h"
#include "sriovd/cpuset.h"
#include "sriovd/inventory.h"
#include "sriovd/policy.h"

/*
 * R11 in docs/REQUIREMENTS.md: the guest's RT vCPUs (0..n_rt-1) each on one booked RT CPU
 * at the class's SCHED_FIFO priority; its other vCPUs, the emulator thread and the I/O threads on
 * the housekeeping CPUs of the same NUMA node; its memory on that node. R5: the VF's IRQs
 * on vCPU 0's CPU (rt_cpus[0]) for irq_cpus = vcpu.
 */
typedef struct GuestPlacement {
        unsigned n_rt;                              /* vCPUs 0..n_rt-1 pinned to rt_cpus[i] */
        uint16_t rt_cpus[ALLOC_RT_CPUS_MAX];
        CpuSet housekeeping;                        /* every other vCPU, the emulator, I/O threads */
        int fifo_priority;                          /* RT vCPUs' SCHED_FIFO; 0 = leave, -1 = none (remove) */
        int memory_node;                            /* numatune strict to this node; -1 = leave */
        int node;                                   /* the booking's node, -1 = unknown */
} GuestPlacement;

/*
 * Pure. cls's guest with booking rt (n_rt CPUs; 0 = none yet: every vCPU on housekeeping CPUs,
 * no FIFO until one is booked). -EINVAL: cls does not pin vCPUs (vcpu_pinning = none), or there is
 * nowhere to put the housekeeping work.
 */
int guest_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                    unsigned n_rt, GuestPlacement *ret);
/* The CPU vCPU i is to run on in p: rt_cpus[i] for an RT vCPU; -1 for the others (a set). */
int guest_placement_vcpu_cpu(const GuestPlacement *p, unsigned i);

/*
 * Where a virtio-net tenant's vhost workers go: the host side of its packet path (the
 * host vNIC thread), beside the guest. vhost_cpus = housekeeping: the housekeeping CPUs of the
 * guest's node (the RT booking's, else numa_node; all of them when neither is known); rt: the
 * guest's booked RT CPUs, or housekeeping ones while it waits for a booking.
 */
typedef struct VhostPlacement {
        bool pin;                                   /* false: the CPUs are left as they are */
        CpuSet cpus;
        int fifo_priority;                          /* 0 = leave */
} VhostPlacement;

/* Pure. false: cls leaves the vhost workers alone (vhost_cpus = leave, vhost_priority = 0). */
bool vhost_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                     unsigned n_rt, int numa_node, VhostPlacement *ret);
