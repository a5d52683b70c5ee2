/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool.h — interrupt coalescing, offload features and RSS channels of a netdev over ethtool generic netlink */
#pragma once

#include <netlink/msg.h>
#include <stdint.h>

#include "sriovd/inventory.h"
#include "sriovd/macro.h"
#include "sriovd/netlink.h"

/* Coalesce, CoalesceChange, Offload and Features are in inventory.h. */

/* The offload's (first) kernel feature name, as above; NULL when o is out of range. */
const char *offload_feature_name(Offload o);


/* One NETLINK_GENERIC socket with the ethtool family id resolved once; not for concurrent use. */
typedef struct EthtoolNl EthtoolNl;

/*
 * Open the socket and resolve the "ethtool" family. -EOPNOTSUPP when the
 * kernel has no ethtool netlink (CONFIG_ETHTOOL_NETLINK off, before 5.6).
 * The socket belongs to the caller's network namespace at the time of the
 * call. *ret freed with ethtool_nl_free(); untouched on failure.
 */
int ethtool_nl_open(EthtoolNl **ret);
EthtoolNl *ethtool_nl_free(EthtoolNl *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(EthtoolNl *, ethtool_nl_free);

/* The resolved ethtool family id, for ethtool_build_*(). */
int ethtool_nl_family(const EthtoolNl *e);

/* How many SET requests this socket has sent to the kernel: idempotent setters skip the write. */
unsigned long ethtool_nl_writes(const EthtoolNl *e);

/*
 * Coalescing of ifindex. -ENODEV for no such ifindex (also ifindex <= 0),
 * -EOPNOTSUPP when the driver has no coalescing ops, else the kernel's errno;
 * err (may be NULL) as for netlink_transact(). *ret untouched on failure.
 */
int ethtool_coalesce_get(EthtoolNl *e, int ifindex, Coalesce *ret, NlError *err);

/*
 * Read, send only the fields that differ (none: nothing sent, 0), read back
 * to verify. 1 changed, 0 already so; -EINVAL for out-of-range values before
 * anything is sent; otherwise the kernel's negative errno with its extack
 * text in err, or -EIO (in err->error too) when the read-back differs from
 * what was asked: the driver rounded or refused silently. A field the driver
 * lacks (-1 in Coalesce) counts as differing, so the kernel says why not.
 */
int ethtool_coalesce_set(EthtoolNl *e, int ifindex, const CoalesceChange *want, NlError *err);

/* Features of ifindex (FEATURES_GET, bitsets with names). Errors as for ethtool_coalesce_get(). */
int ethtool_features_get(EthtoolNl *e, int ifindex, Features *ret, NlError *err);

/*
 * want[o] = -1 leave, 0 off, 1 on. Same contract as ethtool_coalesce_set():
 * compared per kernel feature, only the present features that differ are
 * sent. -EOPNOTSUPP, without sending, when a feature that would have to
 * change is not changeable or when on is wanted for an offload the device
 * does not have (off is then already so). -EIO when the kernel accepted but
 * did not activate (e.g. TSO without scatter-gather): the wanted state stays
 * recorded by the kernel, and the next call sends it again.
 */
int ethtool_features_set(EthtoolNl *e, int ifindex, const int want[_OFFLOAD_MAX], NlError *err);

/* RSS channels of ifindex (CHANNELS_GET). Errors as for ethtool_coalesce_get(). */
int ethtool_channels_get(EthtoolNl *e, int ifindex, Channels *ret, NlError *err);

/*
 * Same contract as ethtool_coalesce_set(): only the counts that differ are sent, then read
 * back. -EINVAL before sending for a count above the driver's maximum or for a kind the driver
 * lacks. The driver requests its IRQs anew: the caller re-reads them.
 */
int ethtool_channels_set(EthtoolNl *e, int ifindex, const ChannelsChange *want, NlError *err);

/* The CHANNELS_SET request for c (only what it changes); errors as for ethtool_build_coalesce_set(). */
int ethtool_build_channels_set(int family, int ifindex, const ChannelsChange *c, struct nl_msg **ret);

/*
 * The COALESCE_SET request for c, carrying only the fields c changes, for
 * message-level tests; freed by the caller with nlmsg_free(). -EINVAL for
 * family or ifindex <= 0 or values out of range, -ENODATA when c asks for
 * nothing.
 */
int ethtool_build_coalesce_set(int family, int ifindex, const CoalesceChange *c, struct nl_msg **ret);

/*
 * The FEATURES_SET request for want: ETHTOOL_A_FEATURES_WANTED as a bitset
 * with names (no indexes: they are not stable across kernels), one bit per
 * kernel feature of each wanted offload, and ETHTOOL_FLAG_OMIT_REPLY. Errors
 * as for ethtool_build_coalesce_set(). ethtool_features_set() sends the same
 * format, narrowed to the features that differ.
 */
int ethtool_build_features_set(int family, int ifindex, const int want[_OFFLOAD_MAX], struct nl_msg **ret);

/* Pure parsers of a COALESCE_GET_REPLY / FEATURES_GET_REPLY / CHANNELS_GET_REPLY (or _NTF); -EBADMSG if malformed. */
int ethtool_coalesce_parse(const struct nlmsghdr *h, Coalesce *ret);
int ethtool_features_parse(const struct nlmsghdr *h, Features *ret);
int ethtool_channels_parse(const struct nlmsghdr *h, Channels *ret);

/*
 * Ethtool notifications (the "monitor" multicast group) of the caller's
 * network namespace. fn gets the ifindex of each COALESCE_NTF ("coalesce"),
 * FEATURES_NTF ("features") and CHANNELS_NTF ("channels"); other
 * notifications are dropped. When the
 * socket overflowed and notifications were lost, fn gets ifindex 0 and
 * "lost": re-read everything.
 */
typedef void (*EthtoolMonitorFn)(int ifindex, const char *what, void *userdata);
typedef struct EthtoolMonitor EthtoolMonitor;
int ethtool_monitor_new(EthtoolMonitorFn fn, void *userdata, EthtoolMonitor **ret);
EthtoolMonitor *ethtool_monitor_free(EthtoolMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(EthtoolMonitor *, ethtool_monitor_free);
/* A non-blocking fd to poll for input. */
int ethtool_monitor_fd(const EthtoolMonitor *m);
/* Drain what is pending, calling fn; 0 or negative errno. Never blocks. */
int ethtool_monitor_dispatch(EthtoolMonitor *m);
