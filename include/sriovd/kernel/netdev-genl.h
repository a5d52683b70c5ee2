/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-genl.h — a netdev's NAPIs through napi-get and napi-set of the "netdev" generic netlink family */
#pragma once

#include <netlink/msg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/shared/macro.h"

/* One NETLINK_GENERIC socket, with the "netdev" family id resolved once. It is not for concurrent use. */
typedef struct NetdevNl NetdevNl;

/*
 * Opens the socket and resolves the family. Returns 0 and the socket in *ret, which the caller
 * frees with netdev_nl_free(). Returns -EOPNOTSUPP when the kernel has no such family, as before
 * Linux 6.5. The socket belongs to the caller's network namespace at the time of the call.
 */
int netdev_nl_open(NetdevNl **ret);
NetdevNl *netdev_nl_free(NetdevNl *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetdevNl *, netdev_nl_free);

/* What napi-get says of one NAPI. A field that the kernel left out is 0 for irq and pid, or -1 in params. */
typedef struct NapiInfo {
        unsigned id;
        int ifindex;
        unsigned irq;                /* NETDEV_A_NAPI_IRQ, from Linux 6.8 */
        pid_t pid;                   /* NETDEV_A_NAPI_PID, its napi/ thread when threaded, from 6.8 */
        /* defer-hard-irqs, and gro-flush-timeout and irq-suspend-timeout from 6.13 */
        NapiParams params;
} NapiInfo;

/*
 * Reads every NAPI of ifindex into *ret, sorted by id, with a dump filtered by ifindex. The caller
 * frees *ret. Returns -EOPNOTSUPP when the kernel has no napi-get, as before 6.8. Returns -ENODEV
 * when there is no such ifindex. err is filled in as netlink_transact() fills it.
 */
int netdev_nl_napi_list(NetdevNl *n, int ifindex, NapiInfo **ret, size_t *ret_n, NlError *err);

/*
 * Sends napi-set for the NAPI id with only the fields of want that are 0 or more. Then it reads
 * them back with napi-get by id. Returns 1 when it changed something, and 0 when it was already
 * so and nothing was sent. Returns -EOPNOTSUPP when the kernel has no napi-set or lacks a wanted
 * attribute, as before 6.13. Returns -EIO when the read-back differs. Any other failure is the
 * kernel's errno.
 */
int netdev_nl_napi_set(NetdevNl *n, unsigned id, const NapiParams *want, NlError *err);

/*
 * Whether the kernel takes napi-set, which it does when its policy lists the command. It is false
 * before 6.13.
 */
bool netdev_nl_has_napi_set(const NetdevNl *n);

/*
 * Parses a NETDEV_CMD_NAPI_GET reply. It does no I/O. Returns -EBADMSG for a malformed reply or one
 * without an id.
 */
int netdev_nl_napi_parse(const struct nlmsghdr *h, NapiInfo *ret);
/*
 * Builds the napi-set request for the fields of want that are 0 or more. The caller frees *ret
 * with nlmsg_free(). Returns -EINVAL for a family or id of 0, and -ENODATA when there is nothing
 * to set.
 */
int netdev_nl_build_napi_set(int family, unsigned id, const NapiParams *want, struct nl_msg **ret);
