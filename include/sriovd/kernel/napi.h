/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi.h — the threaded NAPI of a netdev in sysfs */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * Reads /sys/class/net/DEV/threaded into *ret as 0 or 1. Returns -ENOENT when there is no such
 * netdev, or on a kernel before 5.12, which has no such file.
 */
int netdev_threaded_read(RootFs *root, const char *netdev, int *ret);
/*
 * Writes the threaded file. Returns 1 when it changed it, and 0 when it was already so. The
 * kernel starts or stops the napi/ threads at once.
 */
int netdev_threaded_set(RootFs *root, const char *netdev, bool on);
