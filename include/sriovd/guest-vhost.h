/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-vhost.h — a virtio-net guest's vhost workers, placed as its class says */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/guest-placement.h"
#include "sriovd/plan.h"
#include "sriovd/rootfs.h"
#include "sriovd/virt.h"

/*
 * The vhost workers of domain's QEMU (found by the domain's UUID; *qemu_hint is the PID found
 * last time, and is updated) to p. Every difference becomes an action appended to *actions: made
 * (result set) or, with dry_run, only planned; under a fixture root (PIDs that are not this
 * host's) planned and marked skipped. 0 also when the QEMU or its workers are not there: a
 * guest without vhost (or not yet started) has nothing to place. err: libvirt's words, when
 * the failure was libvirt's.
 */
int guest_vhost_place(RootFs *root, Virt *v, const char *domain, const VhostPlacement *p, bool dry_run,
                      pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err);
