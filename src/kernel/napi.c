/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi.c — threaded NAPI of a netdev, through /sys/class/net/DEV/threaded */

#include <string.h>

#include "sriovd/kernel/napi.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

/* The name came from a directory listing of a tree that may be hostile.
 * It must never be a path of its own. */
static bool netdev_name_ok(const char *netdev) {
        return path_component_valid(netdev) && strlen(netdev) < IF_NAMESIZE;
}

int netdev_threaded_read(RootFs *root, const char *netdev, int *ret) {
        long v;
        int r;

        if (!netdev_name_ok(netdev))
                return -EINVAL;
        r = rootfs_read_long(root, &v, "/sys/class/net/%s/threaded", netdev);
        if (r < 0)
                return r;
        /* Kernels from 6.17 on may say 2, which means threaded busy polling. That is threaded NAPI as well. */
        if (v < 0 || v > 2)
                return -EBADMSG;
        *ret = v != 0;
        return 0;
}

int netdev_threaded_set(RootFs *root, const char *netdev, bool on) {
        int cur, r;

        r = netdev_threaded_read(root, netdev, &cur);
        if (r < 0)
                return r;
        if (cur == on)
                return 0;
        r = rootfs_write(root, on ? "1" : "0", "/sys/class/net/%s/threaded", netdev);
        return r < 0 ? r : 1;
}
