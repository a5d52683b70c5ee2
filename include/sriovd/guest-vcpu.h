/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-vcpu.h — a running RT guest's vCPU threads at the scheduling its placement asks for */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/guest-placement.h"
#include "sriovd/plan.h"
#include "sriovd/rootfs.h"
#include "sriovd/virt.h"

/*
 * The PID of domain's QEMU, found by the domain's UUID (*qemu_hint: the PID found last time,
 * updated). -ENOENT: the domain has no QEMU here (not running, or another host's). err: libvirt's
 * words, when the failure was libvirt's.
 */
int guest_qemu_pid(RootFs *root, Virt *v, const char *domain, pid_t *qemu_hint, pid_t *ret, VirtError *err);

/*
 * The vCPU threads of domain's QEMU to p: its RT vCPUs at SCHED_FIFO p->fifo_priority, every other
 * vCPU (all of them for fifo_priority -1) off any RT policy; fifo_priority 0 leaves them. libvirt
 * applies <vcpusched> only when QEMU starts, so a guest running when its RT CPU is booked gets it
 * here. Each difference becomes an action appended to *actions, made (result set) or, with
 * dry_run, only planned; under a fixture root planned and marked skipped. 0 also when there is
 * no QEMU or no vCPU thread to place. vf: the tenant's VF, the actions' target (as for the pins).
 */
int guest_vcpu_threads_place(RootFs *root, Virt *v, const char *domain, const char *vf, const GuestPlacement *p,
                             bool dry_run, pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err);
