/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind.c — moves a PCI function between drivers through driver_override, e.g. to vfio-pci for passthrough */

#include <string.h>

#include "sriovd/kernel/bind.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

#define PCI_DEV "/sys/bus/pci/devices/%s"
#define PCI_DRIVER "/sys/bus/pci/drivers/%s"
#define PCI_DRIVERS_PROBE "/sys/bus/pci/drivers_probe"

int pci_driver_read(RootFs *root, const char *addr, char *ret_driver, size_t driver_size, char *ret_override,
                    size_t override_size) {
        _cleanup_free_ char *driver = NULL, *override = NULL;
        int r;

        if (!pci_addr_valid(addr))
                return -EINVAL;
        r = rootfs_exists(root, PCI_DEV, addr);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENODEV;

        /* Every kernel since 3.16 has driver_override. Nothing in this file can work without it. */
        r = rootfs_read(root, &override, PCI_DEV "/driver_override", addr);
        if (r == -ENOENT)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;
        /* The kernel prints an unset override as "%s" of NULL, which reads "(null)". */
        if (streq(override, "(null)"))
                override[0] = 0;

        r = rootfs_readlink_base(root, &driver, PCI_DEV "/driver", addr);
        if (r == -ENOENT)
                driver = NULL;   /* the function has no driver */
        else if (r < 0)
                return r;
        else if (!path_component_valid(driver))
                return -EBADMSG; /* the name becomes part of the path drivers/NAME/unbind */

        if ((ret_driver && strlen(driver ?: "") >= driver_size) ||
            (ret_override && strlen(override) >= override_size))
                return -ENOBUFS;
        if (ret_driver)
                strscpy(ret_driver, driver_size, driver ?: "");
        if (ret_override)
                strscpy(ret_override, override_size, override);
        return 0;
}

static int driver_loaded(RootFs *root, const char *driver) {
        int r = rootfs_exists(root, PCI_DRIVER, driver);
        if (r < 0)
                return r;
        return r > 0 ? 0 : -ENOENT;
}

static int driver_unbind_and_probe(RootFs *root, const char *addr, const char *driver) {
        int r;

        if (*driver) {
                r = rootfs_write(root, addr, PCI_DRIVER "/unbind", driver);
                if (r < 0)
                        return r;
        }
        return rootfs_write(root, addr, PCI_DRIVERS_PROBE);
}

int pci_driver_bind(RootFs *root, const char *addr, const char *driver) {
        char cur[DRIVER_MAX], override[DRIVER_MAX];
        int r;

        if (!pci_addr_valid(addr) || !path_component_valid(driver))
                return -EINVAL;
        r = pci_driver_read(root, addr, cur, sizeof(cur), override, sizeof(override));
        if (r < 0)
                return r;
        r = driver_loaded(root, driver);
        if (r < 0)
                return r;
        if (streq(cur, driver) && streq(override, driver))
                return 0;

        /*
         * The override is written first. From then on, any probe of addr can pick only the
         * new driver, never the native one. That holds for the probe below and for one that a
         * driver load, a driver reload or a uevent causes meanwhile. Writing the override does
         * not unbind anything by itself.
         */
        if (!streq(override, driver)) {
                r = rootfs_write(root, driver, PCI_DEV "/driver_override", addr);
                if (r < 0)
                        return r;
        }
        /* The function may already have the driver, e.g. through new_id. The override now keeps it there. */
        if (streq(cur, driver))
                return 1;

        /* drivers_probe attaches a driver only to an unbound device, so a bound one is unbound first. */
        r = driver_unbind_and_probe(root, addr, cur);
        return r < 0 ? r : 1;
}

/* The kernel never picks a vfio driver from an ID table.
 * So a bound vfio driver means that passthrough left it there. */
static bool driver_is_vfio(const char *driver) {
        return strstr(driver, "vfio");
}

int pci_driver_restore(RootFs *root, const char *addr, const char *original) {
        char cur[DRIVER_MAX], override[DRIVER_MAX];
        bool settled;
        int r;

        if (!original)
                original = "";
        if (!pci_addr_valid(addr) || (*original && !path_component_valid(original)))
                return -EINVAL;
        r = pci_driver_read(root, addr, cur, sizeof(cur), override, sizeof(override));
        if (r < 0)
                return r;
        if (*original) {
                r = driver_loaded(root, original);
                if (r < 0)
                        return r;
        }

        settled = *original ? streq(cur, original) : *cur && !driver_is_vfio(cur);
        if (settled && !*override)
                return 0;

        if (!settled) {
                /* As in pci_driver_bind(), the override goes before the unbind, so the probe can pick only original. */
                if (!streq(override, original)) {
                        /* The write is "\n", not "", because 5.19 kernels took "" as an override that matches no driver. */
                        r = rootfs_write(root, *original ? original : "\n", PCI_DEV "/driver_override", addr);
                        if (r < 0)
                                return r;
                        strscpy(override, sizeof(override), original);
                }
                r = driver_unbind_and_probe(root, addr, cur);
                if (r < 0)
                        return r;
        }

        /* The override is cleared so that a later driver reload goes by the ID tables again. */
        if (*override) {
                r = rootfs_write(root, "\n", PCI_DEV "/driver_override", addr);
                if (r < 0)
                        return r;
        }
        return 1;
}
