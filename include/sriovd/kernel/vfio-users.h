/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfio-users.h — the processes that hold a PCI function through vfio, by its group or its device open */
#pragma once

#include <sys/types.h>

#include "sriovd/shared/util.h"
#include "rootfs.h"

typedef enum VfioFdKind {
        VFIO_FD_GROUP,                /* /dev/vfio/N, IOMMU group N, of the legacy container interface */
        VFIO_FD_DEVICE,               /* /dev/vfio/devices/vfioN, one device, of the iommufd cdev interface */
} VfioFdKind;

typedef struct VfioFd {
        VfioFdKind kind;
        unsigned number;
} VfioFd;

/*
 * Parses what the /proc/PID/fd/N link target of an open file names. It does no I/O. Returns 0 and
 * fills *ret for a vfio group or device node. Returns -EINVAL for anything else. That includes
 * /dev/vfio/vfio, the container, which says nothing of a group. It includes sockets, pipes, anon
 * inodes and regular files. It also includes a deleted node, whose target ends in " (deleted)".
 */
int vfio_fd_target_parse(const char *target, VfioFd *ret);
/*
 * Writes /proc/PID/comm into buf in a form the operator may read. It does no I/O. The trailing
 * newline is dropped. A process names itself as it likes, so every byte that is not printable
 * ASCII is replaced by '?'. The text is cut to size - 1 bytes.
 */
void proc_comm_clean(const char *comm, char *buf, size_t size);

/* A function to look for, with its IOMMU group and its vfio device node. Either is -1 for none. */
typedef struct VfioDevice {
        char addr[PCI_ADDR_MAX];
        int group;
        int device;
} VfioDevice;

/* One process that holds a function. */
typedef struct VfioUser {
        char addr[PCI_ADDR_MAX];
        pid_t pid;
        char comm[64];                /* cleaned by proc_comm_clean(); "?" when unreadable */
} VfioUser;

/*
 * Puts in *ret the N of the function's vfio device node, ROOT/sys/bus/pci/devices/ADDR/vfio-dev/vfioN.
 * Returns -ENOENT when it has none. That happens when it is not on vfio-pci, or when the kernel has
 * no vfio cdevs.
 */
int vfio_read_device(RootFs *root, const char *addr, int *ret);
/*
 * Finds, in one walk over ROOT/proc/[0-9]*\/fd, every process that has the group or device node
 * of one of devs open. *ret gets one entry per pair of function and process, sorted by address
 * and then PID. The caller frees *ret. Processes that end during the walk are skipped. Those
 * whose fds cannot be read, as with EACCES without root, are counted in *ret_n_unreadable. It
 * fails only without ROOT/proc, or with -ENOMEM.
 */
int vfio_users_scan(RootFs *root, const VfioDevice *devs, size_t n_devs, VfioUser **ret, size_t *ret_n,
                    unsigned *ret_n_unreadable);
