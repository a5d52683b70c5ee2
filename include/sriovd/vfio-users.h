/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfio-users.h — the processes that hold a PCI function through vfio (its group or its device open) */
#pragma once

#include <sys/types.h>

#include "sriovd/rootfs.h"
#include "sriovd/util.h"

typedef enum VfioFdKind {
        VFIO_FD_GROUP,                /* /dev/vfio/N: IOMMU group N (the legacy container interface) */
        VFIO_FD_DEVICE,               /* /dev/vfio/devices/vfioN: one device (the iommufd cdev interface) */
} VfioFdKind;

typedef struct VfioFd {
        VfioFdKind kind;
        unsigned number;
} VfioFd;

/*
 * Pure: what an open file's /proc/PID/fd/N link target names. 0 and *ret for a vfio group or
 * device node; -EINVAL for anything else (/dev/vfio/vfio, the container, says nothing of a
 * group; sockets, pipes, anon inodes, regular files; a deleted node, " (deleted)").
 */
int vfio_fd_target_parse(const char *target, VfioFd *ret);
/*
 * Pure: /proc/PID/comm as the operator may read it: the trailing newline dropped, every byte that
 * is not printable ASCII (a process names itself as it likes) replaced by '?', cut to size - 1.
 */
void proc_comm_clean(const char *comm, char *buf, size_t size);

/* A function to look for: its IOMMU group and its vfio device node (-1: none). */
typedef struct VfioDevice {
        char addr[PCI_ADDR_MAX];
        int group;
        int device;
} VfioDevice;

/* One process that holds a function. */
typedef struct VfioUser {
        char addr[PCI_ADDR_MAX];
        pid_t pid;
        char comm[64];                /* proc_comm_clean()ed; "?" when unreadable */
} VfioUser;

/*
 * The N of the function's vfio device node, ROOT/sys/bus/pci/devices/ADDR/vfio-dev/vfioN, in
 * *ret; -ENOENT when it has none (not on vfio-pci, or a kernel without vfio cdevs).
 */
int vfio_read_device(RootFs *root, const char *addr, int *ret);
/*
 * One walk over ROOT/proc/[0-9]*\/fd: every process with the group or device node of one of
 * devs open, one entry per (function, process), sorted by address then PID. Processes that end
 * during the walk are skipped; those whose fds cannot be read (EACCES without root) are
 * counted in *ret_n_unreadable. Fails only without ROOT/proc, or on -ENOMEM.
 */
int vfio_users_scan(RootFs *root, const VfioDevice *devs, size_t n_devs, VfioUser **ret, size_t *ret_n,
                    unsigned *ret_n_unreadable);
