/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* apply.h — effectors: carry out planned actions, and what kernel errors mean */
#pragma once

#include "sriovd/plan.h"
#include "sriovd/rootfs.h"

typedef enum ErrorClass {
        ERROR_TRANSIENT,     /* try again next cycle */
        ERROR_UNMANAGED,     /* this device/feature cannot take it: record once, stop trying */
        ERROR_FATAL,         /* policy or host is wrong: an operator must act */
} ErrorClass;

typedef struct ErrorInfo {
        ErrorClass class;
        const char *meaning; /* for the operator; never NULL */
} ErrorInfo;

/* The one table of kernel errors per kind of action. */
ErrorInfo kernel_error_classify(ActionKind kind, int error);
const char *error_class_to_string(ErrorClass c);

typedef struct RouteNl RouteNl;
typedef struct EthtoolNl EthtoolNl;
typedef struct NetdevNl NetdevNl;

/* What actions act on. */
typedef struct Kernel {
        RootFs *root;
        /* NULL: the netdevs in the root's sysfs are not this host's (a fixture); VF link changes are skipped. */
        RouteNl *route;
        EthtoolNl *ethtool;       /* NULL likewise: coalescing, offload and channel changes are skipped */
        NetdevNl *netdev;         /* NULL: no netdev genl (before Linux 6.5), or a fixture: napi-set skipped */
} Kernel;

/* Run one action; sets a->applied and a->result (1 changed, 0 already so, <0 errno). */
int action_apply(Kernel *k, Action *a);
