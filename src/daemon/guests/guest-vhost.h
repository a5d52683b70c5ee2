/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-vhost.h — a virtio-net guest's vhost workers, placed as its class says */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/virt/virt.h"

/*
 * Places the vhost workers of the domain's QEMU as p says. The QEMU is found by the domain's
 * UUID. *qemu_hint is the PID found last time, and it is updated. Every difference becomes an
 * action appended to *actions. The action is carried out and its result set, or, with dry_run,
 * only planned. Under a fixture root, whose PIDs are not this host's, actions are planned and
 * marked skipped. Returns 0 also when the QEMU or its workers are not there, because a guest
 * without vhost, or one not yet started, has nothing to place. When a failure was libvirt's,
 * err holds libvirt's words.
 */
int guest_vhost_place(RootFs *root, Virt *v, const char *domain, const VhostPlacement *p, bool dry_run,
                      pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err);
