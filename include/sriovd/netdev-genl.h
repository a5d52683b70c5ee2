/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-genl.h — the NAPIs of a netdev over the "netdev" generic netlink family (napi-get, napi-set) */
#pragma once

#include <netlink/msg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/inventory.h"
#include "sriovd/macro.h"
#include "sriovd/netlink.h"

/* One NETLINK_GENERIC socket with the "netdev" family id resolved once; not for concurrent use. */
typedef struct NetdevNl NetdevNl;

/*
 * Open the socket and resolve the family. -EOPNOTSUPP when the kernel has none (before Linux
 * 6.5). The socket belongs to the caller's network namespace at the time of the call.
 */
int netdev_nl_open(NetdevNl **ret);
NetdevNl *netdev_nl_free(NetdevNl *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetdevNl *, netdev_nl_free);

/* What napi-get says of one NAPI; a field the kernel left out is 0 (irq, pid) or -1 (params). */
typedef struct NapiInfo {
        unsigned id;
        int ifindex;
        unsigned irq;                /* NETDEV_A_NAPI_IRQ (6.8+) */
        pid_t pid;                   /* NETDEV_A_NAPI_PID: its napi/ thread when threaded (6.8+) */
        NapiParams params;           /* defer-hard-irqs, gro-flush-timeout (6.13+), irq-suspend-timeout (6.13+) */
} NapiInfo;

/*
 * Every NAPI of ifindex (a dump filtered by ifindex), sorted by id. -EOPNOTSUPP: the kernel has
 * no napi-get (before 6.8); -ENODEV: no such ifindex. err as for netlink_transact().
 */
int netdev_nl_napi_list(NetdevNl *n, int ifindex, NapiInfo **ret, size_t *ret_n, NlError *err);

/*
 * napi-set on NAPI id: only the fields of want that are >= 0, then read back (napi-get by id).
 * 1 changed, 0 already so (nothing sent); -EOPNOTSUPP when the kernel has no napi-set or lacks
 * a wanted attribute (before 6.13); -EIO when the read-back differs; else the kernel's errno.
 */
int netdev_nl_napi_set(NetdevNl *n, unsigned id, const NapiParams *want, NlError *err);

/* Whether the kernel takes napi-set (its policy lists the command); false before 6.13. */
bool netdev_nl_has_napi_set(const NetdevNl *n);

/* Pure: a NETDEV_CMD_NAPI_GET reply; -EBADMSG if malformed or without an id. */
int netdev_nl_napi_parse(const struct nlmsghdr *h, NapiInfo *ret);
/* The napi-set request for want (only fields >= 0); -EINVAL for family or id 0, -ENODATA for nothing. */
int netdev_nl_build_napi_set(int family, unsigned id, const NapiParams *want, struct nl_msg **ret);
