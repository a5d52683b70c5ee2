/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-placement.h — where an RT guest's vCPUs, emulator, I/O threads and memory go, from its RT CPU booking */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/shared/cpuset.h"
#include "allocator.h"
#include "inventory.h"
#include "policy.h"

/*
 * One placement per RT guest, as R11 in docs/REQUIREMENTS.md asks. Each of the guest's RT vCPUs,
 * 0 to n_rt-1, runs on one booked RT CPU at the class's SCHED_FIFO priority. Its other vCPUs,
 * the emulator thread and the I/O threads run on the housekeeping CPUs of the same NUMA node.
 * Its memory is on that node. For irq_cpus = vcpu, the VF's IRQs go on vCPU 0's CPU, which is
 * rt_cpus[0], as R5 asks.
 */
typedef struct GuestPlacement {
        unsigned n_rt;                              /* vCPUs 0..n_rt-1 pinned to rt_cpus[i] */
        uint16_t rt_cpus[ALLOC_RT_CPUS_MAX];
        CpuSet housekeeping;                        /* every other vCPU, the emulator, the I/O threads */
        int fifo_priority;                          /* the RT vCPUs' SCHED_FIFO; 0 leaves it, -1 removes it */
        int memory_node;                            /* numatune strict to this node; -1 leaves it */
        int node;                                   /* the booking's node, or -1 when unknown */
} GuestPlacement;

/*
 * Computes the placement of a guest of class cls with the booking rt of n_rt CPUs. It does no
 * I/O. An n_rt of 0 means nothing is booked yet. Then every vCPU goes on housekeeping CPUs, with
 * no FIFO until a CPU is booked. Returns -EINVAL when cls does not pin vCPUs, as with
 * vcpu_pinning = none. It also returns -EINVAL when there is nowhere to put the housekeeping work.
 */
int guest_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                    unsigned n_rt, GuestPlacement *ret);
/*
 * Returns the CPU that vCPU i is to run on in p, which is rt_cpus[i] for an RT vCPU. Returns -1 for
 * the others, which run on a set.
 */
int guest_placement_vcpu_cpu(const GuestPlacement *p, unsigned i);

/*
 * Where a virtio-net tenant's vhost workers go. They are the host side of its packet path, the
 * host vNIC thread, and they go beside the guest. With vhost_cpus = housekeeping they go on the
 * housekeeping CPUs of the guest's node. That node is the RT booking's, else numa_node. When
 * neither is known, they go on all housekeeping CPUs. With vhost_cpus = rt they go on the
 * guest's booked RT CPUs, or on housekeeping CPUs while the guest waits for a booking.
 */
typedef struct VhostPlacement {
        bool pin;                                   /* false leaves the CPUs as they are */
        CpuSet cpus;
        int fifo_priority;                          /* 0 leaves it */
} VhostPlacement;

/*
 * Computes the vhost placement of a tenant of class cls. It does no I/O. Returns false when cls
 * leaves the vhost workers alone, with vhost_cpus = leave and vhost_priority = 0.
 */
bool vhost_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                     unsigned n_rt, int numa_node, VhostPlacement *ret);
