/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci.c — reads PCI functions from sysfs through the RootFs and their names from libpci's ID database */

#include <ctype.h>
#include <pci/pci.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "pci.h"

#define PCI_DEV "/sys/bus/pci/devices/%s"

/*
 * sriovd reads the functions' attributes itself and asks libpci only for names.
 * docs/ARCHITECTURE.md lists the libraries and why each one is used. libpci's sysfs back end
 * has three problems here:
 * - It opens paths with plain open() and realpath(). A symlink in the tree, such as
 *   numa_node -> /etc/..., is then followed out of --root.
 * - In libpci 3.9, its sysfs_deref_link() overflows a stack buffer on a driver or
 *   iommu_group link of 1024 bytes or more.
 * - It reports a malformed tree through the error callback, which must not return. It calls
 *   the callback from places that hold an open DIR or FILE, which a longjmp can never release.
 * The rooted reads below stay beneath the root through RESOLVE_IN_ROOT. They refuse FIFOs and
 * directories, and a bad attribute fails one function, not the whole scan.
 */

/*
 * libpci's error callback must not return. It is declared noreturn, and the default one
 * calls exit(). Name lookups reach it only when pci.ids itself is broken or memory runs out.
 * The callback then jumps back, and the functions keep their numeric names. The jump buffer
 * is per thread because the callback takes no user data.
 */
static __thread sigjmp_buf *pci_error_jmp;

_printf_(1, 2) __attribute__((noreturn)) static void pci_error_cb(char *msg, ...) {
        siglongjmp(*pci_error_jmp, 1);
}

_printf_(1, 2) static void pci_quiet_cb(char *msg, ...) {
}

static int pci_function_cmp(const void *a, const void *b) {
        return strcmp(((const PciFunction *) a)->addr, ((const PciFunction *) b)->addr);
}

/* Reads an ID attribute such as "0x15b3". The attribute is required, and its value may be at most max. */
static int read_id(RootFs *root, const char *addr, const char *attr, long max, HostProblems *problems,
                   uint32_t *ret) {
        long v;
        int r;

        r = rootfs_read_long(root, &v, PCI_DEV "/%s", addr, attr);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, addr, r, "%s unreadable (%m): function left out", attr) ?: 1;
        if (v < 0 || v > max)
                return host_problem_add(problems, addr, 0, "%s 0x%lx is out of range: function left out", attr, v)
                               ?: 1;
        *ret = (uint32_t) v;
        return 0;
}

/*
 * Reads the last component of a link that the kernel writes as "../../../bus/pci/drivers/NAME"
 * or "../../../kernel/iommu_groups/N". The name is "" when the link is absent. Returns 1, with a
 * host problem, when the path is not a link, is too long to be one, or its name does not fit.
 * The target is only read, never followed.
 */
int pci_read_link_name(RootFs *root, const char *addr, const char *link, HostProblems *problems, char *buf,
                       size_t size) {
        _cleanup_free_ char *s = NULL;
        int r;

        buf[0] = 0;
        r = rootfs_readlink_base(root, &s, PCI_DEV "/%s", addr, link);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return host_problem_add(problems, addr, r, "%s is not a readable link (%m): function left out", link)
                               ?: 1;
        if (!path_component_valid(s) || strlen(s) >= size)
                return host_problem_add(problems, addr, 0,
                                        "%s link names \"%.32s%s\", not a %s: function left out", link, s,
                                        strlen(s) > 32 ? "..." : "", link) ?: 1;
        strscpy(buf, size, s);
        return 0;
}

int pci_read_iommu_group(RootFs *root, const char *addr, HostProblems *problems, int *ret) {
        char buf[16], *end;
        long g;
        int r;

        r = pci_read_link_name(root, addr, "iommu_group", problems, buf, sizeof(buf));
        if (r != 0)
                return r;
        if (!buf[0]) {
                *ret = -1;
                return 0;
        }
        errno = 0;
        g = strtol(buf, &end, 10);
        if (errno || *end || !isdigit((unsigned char) buf[0]) || g > INT32_MAX)
                return host_problem_add(problems, addr, 0,
                                        "iommu_group link names \"%s\", not a group number: function left out",
                                        buf) ?: 1;
        *ret = (int) g;
        return 0;
}

static int pci_read_numa_node(RootFs *root, const char *addr, HostProblems *problems, int *ret) {
        long v;
        int r;

        *ret = -1;
        r = rootfs_read_long(root, &v, PCI_DEV "/numa_node", addr);
        if (r == -ENOENT)
                return 0;   /* the kernel has no NUMA support */
        if (r == -ENOMEM)
                return r;
        /* The node only helps place IRQs and VFs, and every user already handles an unknown node. */
        if (r < 0)
                return host_problem_add(problems, addr, r, "numa_node unreadable (%m): taken as unknown");
        if (v < -1 || v >= KERNEL_MAX_NUMNODES)
                return host_problem_add(problems, addr, 0,
                                        "numa_node %ld is beyond the kernel's %d nodes: taken as unknown", v,
                                        KERNEL_MAX_NUMNODES);
        *ret = (int) v;
        return 0;
}

/* Returns 0 when the function was read and 1 when it is left out with a host problem that says why.
 * Returns a negative errno such as -ENOMEM on failure. */
static int pci_read_function(RootFs *root, const char *addr, HostProblems *problems, PciFunction *f) {
        uint32_t vendor, device, class;
        int r;

        *f = (PciFunction) { .iommu_group = -1, .numa_node = -1 };
        strscpy(f->addr, sizeof(f->addr), addr);

        r = read_id(root, addr, "vendor", 0xffff, problems, &vendor);
        if (r != 0)
                return r;
        r = read_id(root, addr, "device", 0xffff, problems, &device);
        if (r != 0)
                return r;
        r = read_id(root, addr, "class", 0xffffff, problems, &class);
        if (r != 0)
                return r;
        f->vendor = (uint16_t) vendor;
        f->device = (uint16_t) device;
        f->class = class >> 8;

        r = pci_read_numa_node(root, addr, problems, &f->numa_node);
        if (r < 0)
                return r;
        r = pci_read_link_name(root, addr, "driver", problems, f->driver, sizeof(f->driver));
        if (r != 0)
                return r;
        return pci_read_iommu_group(root, addr, problems, &f->iommu_group);
}

/*
 * The names are cached by ID for the life of the process. Loading pci.ids, 1.3 MB parsed into
 * libpci's hash, takes about 10 ms. That was most of a cycle on a small host, and it came before
 * a new VF's IRQs could be pinned. A host has few IDs, and their names never change while it
 * runs, so pci.ids is read again only for an ID not seen before. The cache is per thread, like
 * the jump buffer. It is bounded, and lookups beyond NAME_CACHE_MAX IDs are simply not kept.
 */
#define NAME_CACHE_MAX 256
typedef struct PciName {
        uint16_t vendor, device;
        char name[PCI_NAME_MAX];
} PciName;
static __thread PciName *name_cache;
static __thread size_t n_name_cache;

static int pci_name_cmp(const void *a, const void *b) {
        const PciName *x = a, *y = b;

        return x->vendor != y->vendor ? (int) x->vendor - (int) y->vendor : (int) x->device - (int) y->device;
}

static const PciName *name_cache_find(uint16_t vendor, uint16_t device) {
        PciName key = { .vendor = vendor, .device = device };

        return bsearch_safe(&key, name_cache, n_name_cache, sizeof(key), pci_name_cmp);
}

/* Adds an ID to the few, unsorted IDs to look up, unless it is cached or listed already. */
static void ids_add(PciName *ids, size_t *n, size_t max, uint16_t vendor, uint16_t device) {
        if (name_cache_find(vendor, device))
                return;
        for (size_t k = 0; k < *n; k++)
                if (ids[k].vendor == vendor && ids[k].device == device)
                        return;
        if (*n < max)
                ids[(*n)++] = (PciName) { .vendor = vendor, .device = device };
}

static void name_cache_add(const PciName *ids, size_t n) {
        PciName *c;

        if (n == 0 || n_name_cache + n > NAME_CACHE_MAX)
                return;
        c = reallocarray(name_cache, n_name_cache + n, sizeof(*c));
        if (!c)
                return;   /* the IDs are looked up again next time */
        memcpy(c + n_name_cache, ids, n * sizeof(*c));
        name_cache = c;
        n_name_cache += n;
        qsort_safe(name_cache, n_name_cache, sizeof(*name_cache), pci_name_cmp);
}

/* Looks up ids in pci.ids, with the hwdb off. Returns how many were resolved, counted from the
 * start. The rest stay unresolved when pci.ids is broken or memory runs out. */
static size_t pci_lookup_ids(PciName *ids, size_t n) {
        struct pci_access *a;
        sigjmp_buf jmp;
        /* i is volatile because it is read after a longjmp out of libpci. */
        volatile size_t i = 0;

        a = pci_alloc();
        if (!a)
                return 0;
        /* There is no pci_init(), so libpci has no access method and never touches sysfs itself. */
        a->error = pci_error_cb;
        a->warning = pci_quiet_cb;
        a->debug = pci_quiet_cb;
        /*
         * Only pci.ids is used. Where udev's hwdb.bin is missing, libpci 3.9 makes a new udev
         * context for every name that pci.ids lacks, and it leaks the one before.
         */
        pci_set_param(a, "hwdb.disable", "1");

        pci_error_jmp = &jmp;
        if (sigsetjmp(jmp, 0) == 0)
                for (; i < n; i++) {
                        PciName *id = &ids[i];
                        char name[PCI_NAME_MAX];

                        if (pci_lookup_name(a, name, sizeof(name), PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE, id->vendor,
                                            id->device))
                                strscpy(id->name, sizeof(id->name), name);
                }
        /* If the jump was taken, pci.ids is broken or memory ran out. The rest keep their numeric names. */
        pci_error_jmp = NULL;
        pci_cleanup(a);
        return i;
}

/* Names the functions from pci.ids, with a numeric name where pci.ids has none. */
static void pci_lookup_names(RootFs *root, PciFunction *fns, size_t n) {
        /* Each function may bring its own ID and the ID of its VFs. */
        _cleanup_free_ PciName *ids = n > 0 ? calloc(2 * n, sizeof(*ids)) : NULL;
        size_t n_ids = 0, n_found;

        for (size_t k = 0; k < n; k++) {
                PciFunction *f = &fns[k];
                long vf_device;

                if (name_cache_find(f->vendor, f->device))
                        continue;
                ids_add(ids, &n_ids, ids ? 2 * n : 0, f->vendor, f->device);
                /* The VFs' ID is looked up in the same load, so the first VF to appear is named at once. */
                if (rootfs_read_long(root, &vf_device, PCI_DEV "/sriov_vf_device", f->addr) >= 0 &&
                    vf_device > 0 && vf_device <= UINT16_MAX)
                        ids_add(ids, &n_ids, ids ? 2 * n : 0, f->vendor, (uint16_t) vf_device);
        }
        for (size_t k = 0; k < n_ids; k++)
                snprintf(ids[k].name, sizeof(ids[k].name), "%04x:%04x", ids[k].vendor, ids[k].device);
        if (n_ids > 0) {
                n_found = pci_lookup_ids(ids, n_ids);
                name_cache_add(ids, n_found);
        }

        for (size_t k = 0; k < n; k++) {
                PciFunction *f = &fns[k];
                const PciName *c = name_cache_find(f->vendor, f->device);

                if (!c)   /* a full cache, no memory or a broken pci.ids kept the name out, so use this scan's */
                        for (size_t j = 0; j < n_ids && !c; j++)
                                if (ids[j].vendor == f->vendor && ids[j].device == f->device)
                                        c = &ids[j];
                if (c)
                        strscpy(f->name, sizeof(f->name), c->name);
                else
                        snprintf(f->name, sizeof(f->name), "%04x:%04x", f->vendor, f->device);
        }
}

int pci_scan(RootFs *root, HostProblems *problems, PciFunction **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ PciFunction *fns = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, "/sys/bus/pci/devices");
        if (r < 0)
                return r;   /* a host without a PCI bus is not one that sriovd can read */

        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                /*
                 * sriovd cannot name this entry. It is junk or a VMD domain with 5 hex digits.
                 * A VMD domain holds NVMe drives, never SR-IOV NICs, so it is left out without a note.
                 */
                if (!pci_addr_valid(de->d_name))
                        continue;
                if (GREEDY_REALLOC(fns, allocated, n + 1) < 0)
                        return -ENOMEM;
                r = pci_read_function(root, de->d_name, problems, &fns[n]);
                if (r < 0)
                        return r;
                if (r == 0)
                        n++;
        }
        qsort_safe(fns, n, sizeof(*fns), pci_function_cmp);
        pci_lookup_names(root, fns, n);
        *ret = TAKE_PTR(fns);
        *ret_n = n;
        return 0;
}
