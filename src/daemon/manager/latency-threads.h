/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* latency-threads.h — the threads whose scheduling latency the manager tracks, one list per cycle */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "monitor/sampler.h"

typedef struct Manager Manager;

/* One QEMU process's vCPU threads and vhost workers, read once and kept while the QEMU lives. */
typedef struct LatencyQemu {
        pid_t qemu;
        unsigned full_read;              /* the manager's full read when it was scanned */
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

void latency_threads_done(LatencyThreads *t);

/*
 * Lists, from the last inventory, the tenants and the guests, the threads whose latency matters:
 * each RT tenant's vCPU threads, its VF's IRQ threads, the NAPI threads of its netdev, its vhost
 * workers if it is a virtio-net tenant, and the ksoftirqd of each RT CPU. Then it hands their
 * TIDs to BPF when the set changed. It runs after each cycle. It reads /proc only for a QEMU
 * that is new or when the inventory was read whole. Returns -ENOMEM only.
 */
int manager_latency_track(Manager *m);

/*
 * Fills in the latency part of in for one period: the threads, and where their latency comes
 * from. With BPF, each thread's histogram is read now. The threads stay the manager's.
 */
void manager_latency_input(Manager *m, SamplerInput *in);
