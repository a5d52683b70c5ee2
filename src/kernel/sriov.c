/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriov.c — reads the SR-IOV attributes, VFs, netdevs and MSI vectors of PCI functions in sysfs */

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "pci.h"

#define PCI_DEV "/sys/bus/pci/devices/%s"

int pci_read_irqs(RootFs *root, const char *addr, unsigned **ret, size_t *ret_n) {
        int r = rootfs_list_numbers(root, ret, ret_n, PCI_DEV "/msi_irqs", addr);

        if (r == -ENOENT) {
                /* The function has no MSI or MSI-X enabled yet. It has no vectors, and that is not an error. */
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        return r;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(a, b);
}

int pci_read_netdevs(RootFs *root, const char *addr, char (**ret)[IF_NAMESIZE], size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char(*names)[IF_NAMESIZE] = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, PCI_DEV "/net", addr);
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;

        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
                        continue;
                if (GREEDY_REALLOC(names, allocated, n + 1) < 0)
                        return -ENOMEM;
                strscpy(names[n++], IF_NAMESIZE, de->d_name);
        }
        qsort_safe(names, n, sizeof(*names), name_cmp);
        *ret = TAKE_PTR(names);
        *ret_n = n;
        return 0;
}

static int vf_cmp(const void *a, const void *b) {
        const Vf *x = a, *y = b;
        return (x->index > y->index) - (x->index < y->index);
}

/* Sorts by address, then by index, so that duplicates sit next to each other with the lowest index first. */
static int vf_addr_cmp(const void *a, const void *b) {
        const Vf *x = a, *y = b;
        int c = strcmp(x->addr, y->addr);
        return c ?: vf_cmp(a, b);
}

/* Returns 0 when the VF was read and 1 when it is left out with a host problem that says why.
 * Returns a negative errno such as -ENOMEM on failure. */
static int sriov_read_vf(RootFs *root, const char *pf_addr, HostProblems *problems, Vf *vf) {
        _cleanup_free_ char(*netdevs)[IF_NAMESIZE] = NULL;
        size_t n_netdevs = 0;
        int r;

        r = pci_read_link_name(root, vf->addr, "driver", problems, vf->driver, sizeof(vf->driver));
        if (r != 0)
                return r;
        r = pci_read_iommu_group(root, vf->addr, problems, &vf->iommu_group);
        if (r != 0)
                return r;

        r = pci_read_netdevs(root, vf->addr, &netdevs, &n_netdevs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf_addr, r, "VF %u (%s): net/ unreadable (%m): VF left out",
                                        vf->index, vf->addr) ?: 1;
        if (n_netdevs > 0) {
                long v;

                strscpy(vf->netdev, sizeof(vf->netdev), netdevs[0]);
                if (rootfs_read_long(root, &v, PCI_DEV "/net/%s/ifindex", vf->addr, netdevs[0]) >= 0 && v > 0 &&
                    v <= INT32_MAX)
                        vf->ifindex = (int) v;
                /* An addr_assign_type of 1 is NET_ADDR_RANDOM from include/linux/netdevice.h.
                 * Such a MAC is the driver's own random pick and belongs to nobody. */
                if (rootfs_read_long(root, &v, PCI_DEV "/net/%s/addr_assign_type", vf->addr, netdevs[0]) >= 0 &&
                    v == 1) {
                        _cleanup_free_ char *mac = NULL;
                        if (rootfs_read(root, &mac, PCI_DEV "/net/%s/address", vf->addr, netdevs[0]) >= 0)
                                vf->have_random_mac = mac_parse(mac, vf->random_mac);
                }
        }

        r = pci_read_irqs(root, vf->addr, &vf->irqs, &vf->n_irqs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf_addr, r, "VF %u (%s): msi_irqs unreadable (%m): VF left out",
                                        vf->index, vf->addr) ?: 1;
        return 0;
}

/* Returns N for a name "virtfnN" as the kernel writes it, with no sign and no leading zeros.
 * N must be below total. Returns -1 for any other name. */
static long virtfn_index(const char *name, unsigned total) {
        const char *p = name + 6;
        unsigned long index;
        char *end;

        if (strncmp(name, "virtfn", 6) != 0 || !isdigit((unsigned char) *p) || (p[0] == '0' && p[1]))
                return -1;
        errno = 0;
        index = strtoul(p, &end, 10);
        if (errno || *end || index >= total)
                return -1;
        return (long) index;
}

/*
 * Checks whether virtfnN of pf names a VF of pf. The kernel links both ways: virtfnN points
 * to the VF, and the VF's physfn points back to the PF. A link in one direction only means a
 * broken tree. Such a link could put one VF under two PFs, or the PF under itself, and then
 * the VF would be handed out twice.
 */
static int sriov_check_vf_link(RootFs *root, const Pf *pf, const char *link, const char *target,
                               HostProblems *problems) {
        _cleanup_free_ char *physfn = NULL;
        int r;

        if (!pci_addr_valid(target))
                return host_problem_add(problems, pf->addr, 0, "%s does not point at a PCI function: left out", link)
                               ?: 1;
        if (streq(target, pf->addr))
                return host_problem_add(problems, pf->addr, 0, "%s points at the PF itself: left out", link) ?: 1;
        r = rootfs_readlink_base(root, &physfn, PCI_DEV "/physfn", target);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf->addr, r,
                                        "%s points at %s, which has no physfn link (%m): not a VF, left out", link,
                                        target) ?: 1;
        if (!streq(physfn, pf->addr))
                return host_problem_add(problems, pf->addr, 0,
                                        "%s points at %s, whose physfn names %.16s: kept only under that PF", link,
                                        target, physfn) ?: 1;
        return 0;
}

static int sriov_read_vfs(RootFs *root, Pf *pf, HostProblems *problems) {
        _cleanup_closedir_ DIR *d = NULL;
        size_t allocated = 0, k;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, PCI_DEV, pf->addr);
        if (r < 0)
                return r;

        while ((de = readdir(d))) {
                _cleanup_free_ char *target = NULL;
                long index;
                Vf *vf;

                if (strncmp(de->d_name, "virtfn", 6) != 0)
                        continue;
                index = virtfn_index(de->d_name, pf->total_vfs);
                if (index < 0) {
                        r = host_problem_add(problems, pf->addr, 0,
                                             "%.32s is not a virtfn link of a PF with %u VFs at most: left out",
                                             de->d_name, pf->total_vfs);
                        if (r < 0)
                                return r;
                        continue;
                }

                /* sd-device does not expose virtfnN, so the symlink to ../ADDR is read directly. */
                r = rootfs_readlink_base(root, &target, PCI_DEV "/%s", pf->addr, de->d_name);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        r = sriov_check_vf_link(root, pf, de->d_name, target, problems);
                else
                        r = host_problem_add(problems, pf->addr, r, "%s is not a readable link (%m): left out",
                                             de->d_name) ?: 1;
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;

                if (GREEDY_REALLOC(pf->vfs, allocated, pf->n_vfs + 1) < 0)
                        return -ENOMEM;
                vf = &pf->vfs[pf->n_vfs];
                *vf = (Vf) { .index = (unsigned) index, .iommu_group = -1 };
                strscpy(vf->addr, sizeof(vf->addr), target);
                r = sriov_read_vf(root, pf->addr, problems, vf);
                if (r != 0) {
                        free(vf->irqs);
                        if (r < 0)
                                return r;
                        continue;
                }
                pf->n_vfs++;
        }

        /* When two virtfn links name one VF, the lowest index keeps it, so that the VF address is handed out once. */
        qsort_safe(pf->vfs, pf->n_vfs, sizeof(*pf->vfs), vf_addr_cmp);
        k = 0;
        r = 0;
        for (size_t i = 0; i < pf->n_vfs; i++) {
                if (k > 0 && streq(pf->vfs[k - 1].addr, pf->vfs[i].addr)) {
                        if (r == 0)
                                r = host_problem_add(problems, pf->addr, 0, "virtfn%u and virtfn%u both name %s: "
                                                     "virtfn%u left out", pf->vfs[k - 1].index, pf->vfs[i].index,
                                                     pf->vfs[i].addr, pf->vfs[i].index);
                        free(pf->vfs[i].irqs);
                        continue;
                }
                pf->vfs[k++] = pf->vfs[i];
        }
        pf->n_vfs = k;
        qsort_safe(pf->vfs, pf->n_vfs, sizeof(*pf->vfs), vf_cmp);
        return r;
}

/* virtfnN of pf named addr. Checks the VF and reads it into *ret, as sriov_read_vfs() does. */
static int read_vf_at(RootFs *root, const Pf *pf, const char *link, unsigned index, const char *addr,
                      HostProblems *problems, Vf *ret) {
        int r = sriov_check_vf_link(root, pf, link, addr, problems);

        if (r != 0)
                return r < 0 ? r : -ENOENT;
        *ret = (Vf) { .index = index, .iommu_group = -1 };
        strscpy(ret->addr, sizeof(ret->addr), addr);
        r = sriov_read_vf(root, pf->addr, problems, ret);
        if (r != 0) {
                ret->irqs = mfree(ret->irqs);
                ret->n_irqs = 0;
                return r < 0 ? r : -ENOENT;
        }
        return 0;
}

/* Returns the index at which SR-IOV puts addr among pf's VFs, or -1 when addr cannot be one of them.
 * VF i sits at the PF's routing ID + First VF Offset + i * VF Stride.
 * The PF's sriov_offset and sriov_stride files hold the offset and the stride. */
static long vf_index_by_rid(RootFs *root, const Pf *pf, const char *addr) {
        unsigned pf_domain, pf_rid, domain, rid;
        long offset, stride, d;

        if (pci_addr_rid(pf->addr, &pf_domain, &pf_rid) < 0 || pci_addr_rid(addr, &domain, &rid) < 0 ||
            domain != pf_domain)
                return -1;
        if (rootfs_read_long(root, &offset, PCI_DEV "/sriov_offset", pf->addr) < 0 ||
            rootfs_read_long(root, &stride, PCI_DEV "/sriov_stride", pf->addr) < 0 || offset < 1 ||
            offset > 0xffff || stride < 0 || stride > 0xffff)
                return -1;
        d = (long) rid - (long) pf_rid - offset;
        if (d < 0 || (stride == 0 ? d != 0 : d % stride != 0))
                return -1;
        d = stride == 0 ? 0 : d / stride;
        return d < (long) pf->total_vfs ? d : -1;
}

/*
 * Reads one new VF for a hotplug, with the same checks that sriov_read_vfs() makes. It checks
 * the PF's virtfnN link that names the VF and gives its index, then the VF's physfn link back
 * to the PF, then the VF itself. The index comes from SR-IOV's offset and stride, and that one
 * link confirms it. So a PF with 64 VFs does not have its links read one by one, unless the
 * arithmetic misses.
 */
int sriov_read_vf_of(RootFs *root, const Pf *pf, const char *addr, HostProblems *problems, Vf *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        long index;
        int r;

        if (!pci_addr_valid(addr))
                return -EINVAL;
        index = vf_index_by_rid(root, pf, addr);
        if (index >= 0) {
                _cleanup_free_ char *target = NULL;
                char link[32];

                snprintf(link, sizeof(link), "virtfn%ld", index);
                r = rootfs_readlink_base(root, &target, PCI_DEV "/%s", pf->addr, link);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && streq(target, addr))
                        return read_vf_at(root, pf, link, (unsigned) index, addr, problems, ret);
        }
        r = rootfs_opendir(root, &d, PCI_DEV, pf->addr);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_free_ char *target = NULL;

                index = virtfn_index(de->d_name, pf->total_vfs);
                if (index < 0)
                        continue;
                r = rootfs_readlink_base(root, &target, PCI_DEV "/%s", pf->addr, de->d_name);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !streq(target, addr))
                        continue;
                return read_vf_at(root, pf, de->d_name, (unsigned) index, addr, problems, ret);
        }
        return -ENOENT;
}

int sriov_read_pf(RootFs *root, Pf *pf, HostProblems *problems) {
        _cleanup_free_ char *cpus = NULL;
        long v;
        int r;

        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_totalvfs", pf->addr);
        if (r == -ENOENT || r == -ENOMEM)
                return r;   /* -ENOENT means not SR-IOV capable, and the caller skips the function */
        if (r < 0)
                return host_problem_add(problems, pf->addr, r, "sriov_totalvfs unreadable (%m): PF left out") ?: 1;
        if (v < 0 || v > PCI_MAX_VFS)
                return host_problem_add(problems, pf->addr, 0,
                                        "sriov_totalvfs %ld is beyond PCI's 0-%d: PF left out", v, PCI_MAX_VFS) ?: 1;
        pf->total_vfs = (unsigned) v;

        /* sriovd never acts on a VF count that it cannot read, because changing the count destroys every VF. */
        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_numvfs", pf->addr);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf->addr, r, "sriov_numvfs unreadable (%m): PF left out") ?: 1;
        if (v < 0)
                return host_problem_add(problems, pf->addr, 0, "sriov_numvfs %ld is negative: PF left out", v) ?: 1;
        if (v > (long) pf->total_vfs) {
                /* The kernel refuses more than sriov_totalvfs VFs. Every loop over the VFs relies on that bound. */
                r = host_problem_add(problems, pf->addr, 0, "sriov_numvfs %ld is beyond sriov_totalvfs %u: taken as %u",
                                     v, pf->total_vfs, pf->total_vfs);
                if (r < 0)
                        return r;
                v = pf->total_vfs;
        }
        pf->num_vfs = (unsigned) v;

        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_drivers_autoprobe", pf->addr);
        pf->drivers_autoprobe = r >= 0 && (v == 0 || v == 1) ? (int) v : -1;

        cpuset_clear(&pf->local_cpus);
        if (rootfs_read(root, &cpus, PCI_DEV "/local_cpulist", pf->addr) >= 0)
                (void) cpuset_parse_list(cpus, &pf->local_cpus);

        r = pci_read_netdevs(root, pf->addr, &pf->netdevs, &pf->n_netdevs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf->addr, r, "net/ unreadable (%m): PF left out") ?: 1;
        if (pf->n_netdevs > 0) {
                _cleanup_free_ char *mac = NULL;

                /* VFs are configured through the PF netdev. It is found by ifindex, because udev may rename it. */
                if (rootfs_read_long(root, &v, PCI_DEV "/net/%s/ifindex", pf->addr, pf->netdevs[0]) >= 0 &&
                    v > 0 && v <= INT32_MAX)
                        pf->ifindex = (int) v;
                if (rootfs_read(root, &mac, PCI_DEV "/net/%s/address", pf->addr, pf->netdevs[0]) >= 0)
                        pf->have_mac = mac_parse(mac, pf->mac);
        }
        pf->admin_down = false;
        if (pf->n_netdevs > 0) {
                _cleanup_free_ char *flags = NULL;
                char *end;
                unsigned long f;

                /* The file holds the netdev's flags in hex, such as "0x1003". IFF_UP is 0x1. */
                if (rootfs_read(root, &flags, PCI_DEV "/net/%s/flags", pf->addr, pf->netdevs[0]) >= 0) {
                        errno = 0;
                        f = strtoul(flags, &end, 16);
                        if (errno == 0 && end != flags)
                                pf->admin_down = !(f & 0x1);
                }
        }
        r = pci_read_irqs(root, pf->addr, &pf->irqs, &pf->n_irqs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf->addr, r, "msi_irqs unreadable (%m): PF left out") ?: 1;
        r = sriov_read_vfs(root, pf, problems);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, pf->addr, r, "its directory unreadable (%m): PF left out") ?: 1;
        return 0;
}

int sriov_set_num_vfs(RootFs *root, const char *addr, unsigned n) {
        char buf[16];
        long cur;
        int r;

        r = rootfs_read_long(root, &cur, PCI_DEV "/sriov_numvfs", addr);
        if (r < 0)
                return r;
        if (cur == (long) n)
                return 0;

        /* The kernel refuses a new non-zero count with EBUSY while VFs exist, so the count goes to 0 first. */
        if (cur != 0 && n != 0) {
                r = rootfs_write(root, "0", PCI_DEV "/sriov_numvfs", addr);
                if (r < 0)
                        return r;
        }
        snprintf(buf, sizeof(buf), "%u", n);
        r = rootfs_write(root, buf, PCI_DEV "/sriov_numvfs", addr);
        return r < 0 ? r : 1;
}

int sriov_set_drivers_autoprobe(RootFs *root, const char *addr, bool on) {
        long cur;
        int r;

        r = rootfs_read_long(root, &cur, PCI_DEV "/sriov_drivers_autoprobe", addr);
        if (r < 0)
                return r;
        if ((cur != 0) == on)
                return 0;
        r = rootfs_write(root, on ? "1" : "0", PCI_DEV "/sriov_drivers_autoprobe", addr);
        return r < 0 ? r : 1;
}
