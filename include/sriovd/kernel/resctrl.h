/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resctrl.h — L3 cache allocation groups (Intel CAT) in /sys/fs/resctrl */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/cache-partition.h"
#include "rootfs.h"

/* The longest group name that sriovd makes, "sriovd-" and a libvirt domain name cut short. */
#define RESCTRL_GROUP_NAME_MAX 64

/*
 * Parses the "L3:" line of a schemata file, such as "L3:0=fffff;1=fffff", into ids and masks of
 * at most max domains. Other lines, such as "MB:", are passed over. It does no I/O. Returns
 * -ENOENT when there is no L3 line, and -EINVAL when it cannot be parsed.
 */
int resctrl_l3_parse(const char *schemata, unsigned *ids, uint64_t *masks, size_t max, size_t *ret_n);
/*
 * Reads info/L3 and the default group's L3 line, and counts the control groups. Returns
 * -EOPNOTSUPP when /sys/fs/resctrl/info/L3 is absent: the CPU has no CAT, or resctrl is not
 * mounted.
 */
int resctrl_info_read(RootFs *r, CacheInfo *ret);
/* Returns 1 when the control group exists, 0 when not, or a negative errno. */
int resctrl_group_exists(RootFs *r, const char *group);
/*
 * Makes the control group. Returns 1 when it made it, 0 when it existed, or a negative errno:
 * -ENOSPC when the kernel has no free CLOSID.
 */
int resctrl_group_create(RootFs *r, const char *group);
/*
 * Gives the group mask on every L3 domain of info. It reads the group's schemata first. Returns 1
 * when it wrote, 0 when the group had the mask already, or a negative errno.
 */
int resctrl_group_set_l3(RootFs *r, const char *group, const CacheInfo *info, uint64_t mask);
/*
 * Moves thread tid into the group. The tasks file takes one TID per write. Returns 1 when it moved
 * it, 0 when the thread was in the group already, or -ESRCH when the thread is gone.
 */
int resctrl_group_add_task(RootFs *r, const char *group, pid_t tid);
/*
 * Removes the group. Its threads go back to the default group, as the kernel does at rmdir().
 * Returns 1 when it removed it, 0 when there was none, or a negative errno.
 */
int resctrl_group_remove(RootFs *r, const char *group);
