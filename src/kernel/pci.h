/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci.h — PCI functions read through libpci, on the same root as RootFs */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

typedef struct PciFunction {
        char addr[PCI_ADDR_MAX];
        uint16_t vendor, device;
        uint32_t class;                /* base class << 8 | subclass */
        int numa_node;
        char name[PCI_NAME_MAX];
        char driver[DRIVER_MAX];
        int iommu_group;
} PciFunction;

/* The kernel's MAX_NUMNODES, with a NODES_SHIFT of 10. A numa_node at or beyond it is not a node. */
#define KERNEL_MAX_NUMNODES 1024
/* PCI's limit on VFs per PF, because TotalVFs is a 16-bit register. */
#define PCI_MAX_VFS 65535

/*
 * Reads every PCI function under ROOT/sys/bus/pci/devices into *ret, sorted by address. The
 * caller frees *ret. A function is left out and recorded in problems when its vendor, device or
 * class is unreadable. The same happens when its driver or iommu_group is not a link that the
 * kernel would write. A numa_node that is unreadable or impossible is recorded and taken as -1.
 * It fails only without /sys/bus/pci/devices, or with -ENOMEM.
 */
int pci_scan(RootFs *root, HostProblems *problems, PciFunction **ret, size_t *ret_n);
/*
 * Reads into buf the name that a function's link, such as "driver" or "iommu_group", points at.
 * buf is "" when there is no link. Returns 1 when it is not a link, is longer than PATH_MAX, or
 * has a name that does not fit. That is recorded in problems, and the caller leaves the function
 * out. Returns -ENOMEM when memory runs out.
 */
int pci_read_link_name(RootFs *root, const char *addr, const char *link, HostProblems *problems, char *buf,
                       size_t size);
/* Reads the function's IOMMU group, or -1 for none. It returns 1 and -ENOMEM as pci_read_link_name() does. */
int pci_read_iommu_group(RootFs *root, const char *addr, HostProblems *problems, int *ret);
