/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriov.h — SR-IOV and device attributes in sysfs: a PF's VFs, their vectors and netdevs, the VF count */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * Reads the MSI and MSI-X vectors of a function from msi_irqs/ into *ret, sorted. The caller
 * frees *ret. Finding none is not an error.
 */
int pci_read_irqs(RootFs *root, const char *addr, unsigned **ret, size_t *ret_n);
/* Reads the names in the function's net/ directory into *ret, sorted. The caller frees *ret. */
int pci_read_netdevs(RootFs *root, const char *addr, char (**ret)[IF_NAMESIZE], size_t *ret_n);
/*
 * Fills the SR-IOV fields of pf and reads its VFs. pf's addr must be set. Returns -ENOENT when the
 * PF is not SR-IOV capable. Returns 1 when the PF is left out and recorded in problems. That
 * happens for an sriov_totalvfs or sriov_numvfs that is unreadable or impossible, and for
 * netdevs or vectors that are unreadable. A VF is kept only when its physfn link names this PF
 * and no other virtfn link of the PF named it first. An sriov_numvfs beyond sriov_totalvfs is
 * taken as sriov_totalvfs. Each of these cases is recorded. Any other negative errno, such as
 * -ENOMEM, is fatal. pf_done() frees what was filled either way.
 */
int sriov_read_pf(RootFs *root, Pf *pf, HostProblems *problems);
/*
 * Reads the VF at addr of pf into *ret, as sriov_read_pf() reads each VF. The caller frees
 * ret->irqs. Returns -ENOENT when no virtfn link of pf names it. It also returns -ENOENT for a VF
 * that sriov_read_pf() would leave out, and records that in problems. Other negative errnos are
 * as for sriov_read_pf().
 */
int sriov_read_vf_of(RootFs *root, const Pf *pf, const char *addr, HostProblems *problems, Vf *ret);
/*
 * Returns 1 when it wrote, and 0 when the count was already n. It writes 0 first when it changes a
 * count that is not zero.
 */
int sriov_set_num_vfs(RootFs *root, const char *addr, unsigned n);
int sriov_set_drivers_autoprobe(RootFs *root, const char *addr, bool on);
