/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-vcpu.h — a running RT guest's vCPU threads at the scheduling its placement asks for */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/virt/virt.h"

/*
 * Finds the PID of the domain's QEMU by the domain's UUID and puts it in *ret. *qemu_hint is the
 * PID found last time, and it is updated. Returns -ENOENT when the domain has no QEMU here,
 * because it is not running or runs on another host. When a failure was libvirt's, err holds
 * libvirt's words.
 */
int guest_qemu_pid(RootFs *root, Virt *v, const char *domain, pid_t *qemu_hint, pid_t *ret, VirtError *err);
/*
 * Reads the vCPU threads of the domain's QEMU into *ret, which the caller frees. *qemu_hint is
 * then that QEMU's PID, as guest_qemu_pid() leaves it. Finding none is not an error: a domain
 * without a QEMU here, or a QEMU that ended meanwhile, gives 0 threads.
 */
int guest_vcpu_threads(RootFs *root, Virt *v, const char *domain, pid_t *qemu_hint, VcpuThread **ret, size_t *ret_n,
                       VirtError *err);

/*
 * Sets the vCPU threads of the domain's QEMU as p says. The RT vCPUs run at SCHED_FIFO with
 * p->fifo_priority, and every other vCPU is taken off any RT policy. A fifo_priority of -1 takes
 * all of them off, and a fifo_priority of 0 leaves them as they are. libvirt applies <vcpusched>
 * only when QEMU starts, so a guest that is running when its RT CPU is booked gets it here.
 * Each difference becomes an action appended to *actions. The action is carried out and its
 * result set, or, with dry_run, only planned. Under a fixture root, actions are planned and
 * marked skipped. Returns 0 also when there is no QEMU or no vCPU thread to place. vf is the
 * tenant's VF, which becomes the actions' target, as it does for the pins.
 */
int guest_vcpu_threads_place(RootFs *root, Virt *v, const char *domain, const char *vf, const GuestPlacement *p,
                             bool dry_run, pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err);
