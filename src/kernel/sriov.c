/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriov.c — SR-IOV attributes, VFs, netdevs and MSI vectors of PCI functions in sysfs */

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/kernel.h"

#define PCI_DEV "/sys/bus/pci/devices/%s"

bool pci_addr_valid(const char *s) {
        static const char pattern[] = "xxxx:xx:xx.x";

        if (!s || strlen(s) != sizeof(pattern) - 1)
                return false;
        for (size_t i = 0; pattern[i]; i++) {
                if (pattern[i] == 'x') {
                        if (!isxdigit((unsigned char) s[i]) || isupper((unsigned char) s[i]))
                                return false;
                } else if (s[i] != pattern[i])
                        return false;
        }
        /* device 0-1f, function 0-7 */
        return strtoul(s + 8, NULL, 16) <= 0x1f && s[11] <= '7';
}

int pci_read_irqs(RootFs *root, const char *addr, unsigned **ret, size_t *ret_n) {
        int r = rootfs_list_numbers(root, ret, ret_n, PCI_DEV "/msi_irqs", addr);

        if (r == -ENOENT) {
                /* No MSI/MSI-X enabled (yet): no vectors, not an error. */
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

static void read_link_base(RootFs *root, const char *addr, const char *link, char *buf, size_t size) {
        _cleanup_free_ char *s = NULL;

        buf[0] = 0;
        if (rootfs_readlink_base(root, &s, PCI_DEV "/%s", addr, link) >= 0)
                strscpy(buf, size, s);
}

static int read_iommu_group(RootFs *root, const char *addr) {
        char buf[32];
        char *end;
        long g;

        read_link_base(root, addr, "iommu_group", buf, sizeof(buf));
        g = strtol(buf, &end, 10);
        return buf[0] && !*end && g >= 0 && g <= INT32_MAX ? (int) g : -1;
}

static int vf_cmp(const void *a, const void *b) {
        const Vf *x = a, *y = b;
        return (x->index > y->index) - (x->index < y->index);
}

static int sriov_read_vf(RootFs *root, Vf *vf) {
        _cleanup_free_ char(*netdevs)[IF_NAMESIZE] = NULL;
        size_t n_netdevs = 0;
        int r;

        read_link_base(root, vf->addr, "driver", vf->driver, sizeof(vf->driver));
        vf->iommu_group = read_iommu_group(root, vf->addr);

        r = pci_read_netdevs(root, vf->addr, &netdevs, &n_netdevs);
        if (r < 0)
                return r;
        if (n_netdevs > 0) {
                long v;

                strscpy(vf->netdev, sizeof(vf->netdev), netdevs[0]);
                if (rootfs_read_long(root, &v, PCI_DEV "/net/%s/ifindex", vf->addr, netdevs[0]) >= 0 && v > 0 &&
                    v <= INT32_MAX)
                        vf->ifindex = (int) v;
        }

        return pci_read_irqs(root, vf->addr, &vf->irqs, &vf->n_irqs);
}

static int sriov_read_vfs(RootFs *root, Pf *pf) {
        _cleanup_closedir_ DIR *d = NULL;
        size_t allocated = 0;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, PCI_DEV, pf->addr);
        if (r < 0)
                return r;

        while ((de = readdir(d))) {
                _cleanup_free_ char *target = NULL;
                unsigned long index;
                char *end;
                Vf *vf;

                if (strncmp(de->d_name, "virtfn", 6) != 0 || !isdigit((unsigned char) de->d_name[6]))
                        continue;
                index = strtoul(de->d_name + 6, &end, 10);
                if (*end || index > 65535)
                        continue;

                /* sd-device does not expose virtfnN: it is a symlink to ../ADDR. */
                r = rootfs_readlink_base(root, &target, PCI_DEV "/%s", pf->addr, de->d_name);
                if (r < 0)
                        return r;
                if (!pci_addr_valid(target))
                        continue;

                if (GREEDY_REALLOC(pf->vfs, allocated, pf->n_vfs + 1) < 0)
                        return -ENOMEM;
                vf = &pf->vfs[pf->n_vfs++];
                *vf = (Vf) { .index = (unsigned) index, .iommu_group = -1 };
                strscpy(vf->addr, sizeof(vf->addr), target);
                r = sriov_read_vf(root, vf);
                if (r < 0)
                        return r;
        }
        qsort_safe(pf->vfs, pf->n_vfs, sizeof(*pf->vfs), vf_cmp);
        return 0;
}

int sriov_read_pf(RootFs *root, Pf *pf) {
        _cleanup_free_ char *cpus = NULL;
        long v;
        int r;

        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_totalvfs", pf->addr);
        if (r < 0)
                return r;   /* not SR-IOV capable: the caller skips it */
        pf->total_vfs = v > 0 ? (unsigned) v : 0;

        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_numvfs", pf->addr);
        pf->num_vfs = r >= 0 && v > 0 ? (unsigned) v : 0;

        r = rootfs_read_long(root, &v, PCI_DEV "/sriov_drivers_autoprobe", pf->addr);
        pf->drivers_autoprobe = r >= 0 ? v != 0 : -1;

        cpuset_clear(&pf->local_cpus);
        if (rootfs_read(root, &cpus, PCI_DEV "/local_cpulist", pf->addr) >= 0)
                (void) cpuset_parse_list(cpus, &pf->local_cpus);

        r = pci_read_netdevs(root, pf->addr, &pf->netdevs, &pf->n_netdevs);
        if (r < 0)
                return r;
        if (pf->n_netdevs > 0) {
                _cleanup_free_ char *mac = NULL;

                /* VFs are configured through the PF netdev, found by ifindex: names change under udev. */
                if (rootfs_read_long(root, &v, PCI_DEV "/net/%s/ifindex", pf->addr, pf->netdevs[0]) >= 0 &&
                    v > 0 && v <= INT32_MAX)
                        pf->ifindex = (int) v;
                if (rootfs_read(root, &mac, PCI_DEV "/net/%s/address", pf->addr, pf->netdevs[0]) >= 0)
                        pf->have_mac = mac_parse(mac, pf->mac);
        }
        r = pci_read_irqs(root, pf->addr, &pf->irqs, &pf->n_irqs);
        if (r < 0)
                return r;
        return sriov_read_vfs(root, pf);
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

        /* The kernel refuses (EBUSY) a new non-zero count while VFs exist. */
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
