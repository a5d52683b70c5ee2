/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* apply.h — the effectors that carry out planned actions */
#pragma once

#include "sriovd/core/error-class.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"

typedef struct RouteNl RouteNl;
typedef struct EthtoolNl EthtoolNl;
typedef struct NetdevNl NetdevNl;

/* The kernel interfaces that actions act on. */
typedef struct Kernel {
        RootFs *root;
        /*
         * route is NULL when the netdevs in the root's sysfs are not this host's, as in a
         * fixture. VF link changes are skipped then.
         */
        RouteNl *route;
        EthtoolNl *ethtool;       /* NULL likewise, and coalescing, offload and channel changes are skipped */
        /*
         * netdev is NULL in a fixture or without netdev genl, which came in Linux 6.5. napi-set is
         * skipped then.
         */
        NetdevNl *netdev;
} Kernel;

/*
 * Runs one action and sets a->applied and a->result. Returns 1 when it changed something, 0 when
 * it was already so, and a negative errno on failure. a->result holds the same value.
 */
int action_apply(Kernel *k, Action *a);
