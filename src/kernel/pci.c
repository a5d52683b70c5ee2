/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci.c — PCI functions and their names through libpci, on the RootFs root */

#include <pci/pci.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include "sriovd/kernel.h"

/*
 * libpci's error callback must not return (it is declared noreturn and its
 * default calls exit()). We jump back to the scan that called libpci instead;
 * the jump buffer is per thread because the callback takes no user data.
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

/* Held by the caller: a longjmp out of libpci must not leak what was collected so far. */
typedef struct PciScan {
        PciFunction *fns;
        size_t n, allocated;
} PciScan;

static int pci_scan_access(struct pci_access *a, PciScan *scan) {
        pci_init(a);
        pci_scan_bus(a);

        for (struct pci_dev *d = a->devices; d; d = d->next) {
                PciFunction *f;
                const char *s;

                pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_NUMA_NODE |
                                         PCI_FILL_DRIVER | PCI_FILL_IOMMU_GROUP);

                if (GREEDY_REALLOC(scan->fns, scan->allocated, scan->n + 1) < 0)
                        return -ENOMEM;
                f = &scan->fns[scan->n++];
                *f = (PciFunction) { .iommu_group = -1 };
                snprintf(f->addr, sizeof(f->addr), "%04x:%02x:%02x.%d", d->domain, d->bus,
                         d->dev, d->func);
                f->vendor = d->vendor_id;
                f->device = d->device_id;
                f->class = d->device_class;
                f->numa_node = d->numa_node;
                s = pci_get_string_property(d, PCI_FILL_DRIVER);
                if (s)
                        strscpy(f->driver, sizeof(f->driver), s);
                s = pci_get_string_property(d, PCI_FILL_IOMMU_GROUP);
                if (s)
                        f->iommu_group = atoi(s);
                if (!pci_lookup_name(a, f->name, sizeof(f->name),
                                     PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE, d->vendor_id,
                                     d->device_id))
                        snprintf(f->name, sizeof(f->name), "%04x:%04x", f->vendor, f->device);
        }

        qsort_safe(scan->fns, scan->n, sizeof(*scan->fns), pci_function_cmp);
        return 0;
}

static int pci_scan_once(RootFs *root, PciFunction **ret, size_t *ret_n) {
        _cleanup_free_ char *sysfs = NULL;
        PciScan scan = {};
        struct pci_access *a;
        sigjmp_buf jmp;
        int r;

        if (asprintf(&sysfs, "%s/sys/bus/pci", rootfs_is_real(root) ? "" : rootfs_path(root)) < 0)
                return -ENOMEM;

        a = pci_alloc();
        if (!a)
                return -ENOMEM;
        /* Forced: the automatic method silently falls back to the host's /proc/bus/pci. */
        a->method = PCI_ACCESS_SYS_BUS_PCI;
        a->error = pci_error_cb;
        a->warning = pci_quiet_cb;
        a->debug = pci_quiet_cb;
        pci_set_param(a, "sysfs.path", sysfs);

        pci_error_jmp = &jmp;
        if (sigsetjmp(jmp, 0) == 0)
                r = pci_scan_access(a, &scan);
        else
                r = -EIO;   /* libpci gave up on the tree (unreadable, malformed, or a device left mid-scan) */
        pci_error_jmp = NULL;

        pci_cleanup(a);
        if (r < 0) {
                free(scan.fns);
                return r;
        }
        *ret = scan.fns;
        *ret_n = scan.n;
        return 0;
}

int pci_scan(RootFs *root, PciFunction **ret, size_t *ret_n) {
        int r = -EIO;

        /* A driver reload removes dozens of VFs while we read: what vanished mid-scan is a retry. */
        for (unsigned i = 0; i < 3 && r == -EIO; i++)
                r = pci_scan_once(root, ret, ret_n);
        return r;
}
