/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* latency-threads.h — the threads whose scheduling latency the daemon tracks, one list per cycle */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "config/config.h"
#include "guests/guests.h"
#include "monitor/sampler.h"
#include "tenants/tenants.h"

/* One QEMU process's vCPU threads and vhost workers, read once and kept while the QEMU lives. */
typedef struct LatencyQemu {
        pid_t qemu;
        unsigned full_read;              /* the inventory's full read when it was scanned */
        bool used;                       /* a tenant's guest still runs in it */
        pid_t *vcpus;                    /* indexed by vCPU number; 0 where there is none */
        size_t n_vcpus;
        pid_t *vhosts;
        size_t n_vhosts;
} LatencyQemu;

typedef struct LatencyThreads {
        LatencyThread *threads;
        size_t n_threads, allocated;
        LatencyQemu *qemus;
        size_t n_qemus;
} LatencyThreads;

/*
 * What the list is made from, as the last cycle left it. tenants and guests may be NULL.
 * full_read counts the inventory's full reads: a QEMU scanned before the last one is scanned
 * again, which also catches a vCPU hotplug.
 */
typedef struct LatencySources {
        RootFs *root;
        const Inventory *inv;
        const Config *config;
        const Tenants *tenants;
        const Guests *guests;
        unsigned full_read;
} LatencySources;

void latency_threads_done(LatencyThreads *t);

/*
 * Lists the threads whose latency matters: each RT tenant's vCPU threads, its VF's IRQ
 * threads, the NAPI threads of its netdev, its vhost workers if it is a virtio-net tenant, and
 * the ksoftirqd of each RT CPU. It reads /proc only for a QEMU that is new or when the
 * inventory was read whole. Returns -ENOMEM only.
 */
int latency_threads_list(LatencyThreads *t, const LatencySources *src);
