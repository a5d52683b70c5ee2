/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool.h — a netdev's interrupt coalescing, offload features and RSS channels over ethtool generic netlink */
#pragma once

#include <netlink/msg.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/shared/macro.h"

/* Coalesce, CoalesceChange, Offload and Features are declared in inventory.h. */

/*
 * Returns the kernel feature name of the offload, the first one when it has several, as
 * inventory.h lists them. Returns NULL when o is out of range.
 */
const char *offload_feature_name(Offload o);


/* One NETLINK_GENERIC socket, with the ethtool family id resolved once. It is not for concurrent use. */
typedef struct EthtoolNl EthtoolNl;

/*
 * Opens the socket and resolves the "ethtool" family. Returns -EOPNOTSUPP when the kernel has no
 * ethtool netlink, as with CONFIG_ETHTOOL_NETLINK off or before 5.6. The socket belongs to the
 * caller's network namespace at the time of the call. The caller frees *ret with
 * ethtool_nl_free(). *ret is untouched on failure.
 */
int ethtool_nl_open(EthtoolNl **ret);
EthtoolNl *ethtool_nl_free(EthtoolNl *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(EthtoolNl *, ethtool_nl_free);

/* Returns the resolved ethtool family id, for ethtool_build_*(). */
int ethtool_nl_family(const EthtoolNl *e);

/*
 * Returns how many SET requests this socket has sent to the kernel. Tests use it to check that
 * the idempotent setters skip the write.
 */
unsigned long ethtool_nl_writes(const EthtoolNl *e);

/*
 * Reads the coalescing of ifindex. Returns -ENODEV when there is no such ifindex, and also for an
 * ifindex of 0 or less. Returns -EOPNOTSUPP when the driver has no coalescing ops. Any other
 * failure is the kernel's errno. err may be NULL, and it is filled in as netlink_transact() fills
 * it. *ret is untouched on failure.
 */
int ethtool_coalesce_get(EthtoolNl *e, int ifindex, Coalesce *ret, NlError *err);

/*
 * Reads the coalescing, sends only the fields that differ, and reads it back to verify. When no
 * field differs, nothing is sent and it returns 0. Returns 1 when it changed something, and 0
 * when it was already so. Returns -EINVAL for values out of range, before anything is sent.
 * Otherwise a failure is the kernel's negative errno, and err holds the kernel's extack text.
 * Returns -EIO, which is also put in err->error, when the read-back differs from what was asked.
 * That means the driver rounded or refused silently. A field that the driver lacks is -1 in
 * Coalesce. It counts as differing, so the kernel says why it cannot be set.
 */
int ethtool_coalesce_set(EthtoolNl *e, int ifindex, const CoalesceChange *want, NlError *err);

/*
 * Reads the features of ifindex with FEATURES_GET, as bitsets with names. It fails as
 * ethtool_coalesce_get() does.
 */
int ethtool_features_get(EthtoolNl *e, int ifindex, Features *ret, NlError *err);

/*
 * Sets the offloads of ifindex. want[o] is -1 to leave an offload, 0 for off and 1 for on. It
 * keeps the same contract as ethtool_coalesce_set(). Features are compared per kernel feature,
 * and only the present features that differ are sent. Returns -EOPNOTSUPP, without sending, when
 * a feature that would have to change is not changeable. It does the same when on is wanted for
 * an offload that the device does not have, for which off is already so. Returns -EIO when the
 * kernel accepted a feature but did not activate it, as with TSO without scatter-gather. The
 * kernel keeps the wanted state recorded then, and the next call sends it again.
 */
int ethtool_features_set(EthtoolNl *e, int ifindex, const int want[_OFFLOAD_MAX], NlError *err);

/* Reads the RSS channels of ifindex with CHANNELS_GET. It fails as ethtool_coalesce_get() does. */
int ethtool_channels_get(EthtoolNl *e, int ifindex, Channels *ret, NlError *err);

/*
 * Sets the channel counts with the same contract as ethtool_coalesce_set(). Only the counts that
 * differ are sent, and then they are read back. Returns -EINVAL before sending for a count above
 * the driver's maximum, or for a kind of channel that the driver lacks. The driver requests its
 * IRQs anew, so the caller reads them again.
 */
int ethtool_channels_set(EthtoolNl *e, int ifindex, const ChannelsChange *want, NlError *err);

/*
 * Builds the CHANNELS_SET request for c, with only what c changes. It fails as
 * ethtool_build_coalesce_set() does.
 */
int ethtool_build_channels_set(int family, int ifindex, const ChannelsChange *c, struct nl_msg **ret);

/*
 * Builds the COALESCE_SET request for c, for message-level tests. It carries only the fields that
 * c changes. The caller frees *ret with nlmsg_free(). Returns -EINVAL for a family or ifindex of
 * 0 or less, or for values out of range. Returns -ENODATA when c asks for nothing.
 */
int ethtool_build_coalesce_set(int family, int ifindex, const CoalesceChange *c, struct nl_msg **ret);

/*
 * Builds the FEATURES_SET request for want. It carries ETHTOOL_A_FEATURES_WANTED as a bitset with
 * names, with one bit per kernel feature of each wanted offload. It uses names and not indexes,
 * because indexes are not stable across kernels. It also sets ETHTOOL_FLAG_OMIT_REPLY. It fails as
 * ethtool_build_coalesce_set() does. ethtool_features_set() sends the same format, narrowed to the
 * features that differ.
 */
int ethtool_build_features_set(int family, int ifindex, const int want[_OFFLOAD_MAX], struct nl_msg **ret);

/*
 * These parse a COALESCE_GET_REPLY, a FEATURES_GET_REPLY or a CHANNELS_GET_REPLY, or the matching
 * _NTF. They do no I/O. They return -EBADMSG for a malformed message.
 */
int ethtool_coalesce_parse(const struct nlmsghdr *h, Coalesce *ret);
int ethtool_features_parse(const struct nlmsghdr *h, Features *ret);
int ethtool_channels_parse(const struct nlmsghdr *h, Channels *ret);

/*
 * The ethtool monitor receives the notifications of the "monitor" multicast group in the caller's
 * network namespace. fn gets the ifindex of each COALESCE_NTF with "coalesce", each FEATURES_NTF
 * with "features" and each CHANNELS_NTF with "channels". Other notifications are dropped. When
 * the socket overflowed and notifications were lost, fn gets ifindex 0 and "lost". The caller
 * then reads everything again.
 */
typedef void (*EthtoolMonitorFn)(int ifindex, const char *what, void *userdata);
typedef struct EthtoolMonitor EthtoolMonitor;
int ethtool_monitor_new(EthtoolMonitorFn fn, void *userdata, EthtoolMonitor **ret);
EthtoolMonitor *ethtool_monitor_free(EthtoolMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(EthtoolMonitor *, ethtool_monitor_free);
/* Returns a non-blocking fd to poll for input. */
int ethtool_monitor_fd(const EthtoolMonitor *m);
/* Reads what is pending and calls fn for it. It never blocks. Returns 0 or a negative errno. */
int ethtool_monitor_dispatch(EthtoolMonitor *m);
