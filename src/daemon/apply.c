/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* apply.c — carry out planned actions through the kernel modules and classify the kernel's errors */

#include "sriovd/apply.h"
#include "sriovd/kernel.h"
#include "sriovd/ethtool.h"
#include "sriovd/netdev-genl.h"
#include "sriovd/netlink.h"

ErrorInfo kernel_error_classify(ActionKind kind, int error) {
        int e = error < 0 ? -error : error;

        if (kind == ACTION_SET_IRQ_AFFINITY)
                switch (e) {
                case ENOENT:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the IRQ went away (device reset or driver reload); re-read next cycle" };
                case EBUSY:
                case EINVAL:
                case ERANGE:
                case ENOMEM:
                case EAGAIN:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the IRQ is being set up or moved; retried next cycle" };
                case ENOSPC:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "vector space on the target CPUs is exhausted; widen "
                                             "the class's CPU set or spread fewer IRQs there" };
                case EIO:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "kernel-managed IRQ: its affinity is not ours to set" };
                case EPERM:
                case EACCES:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs root" };
                default:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the kernel refuses this IRQ's affinity; left alone from now on" };
                }

        if (kind == ACTION_SET_IRQ_THREAD)
                switch (e) {
                case ESRCH:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the handler thread is gone (driver reload); found again next cycle" };
                case EPERM:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs CAP_SYS_NICE" };
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL, "the scheduler refuses this priority" };
                default:
                        return (ErrorInfo) { ERROR_UNMANAGED, "the scheduler refuses changes to this thread" };
                }

        /* NAPI threads and per-CPU kernel threads are found again by name each cycle, like irq/N- threads. */
        if (kind == ACTION_SET_NAPI_PIN || kind == ACTION_SET_NAPI_SCHED || kind == ACTION_SET_KTHREAD_SCHED)
                switch (e) {
                case ESRCH:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the kernel thread is gone (threaded NAPI switched, netdev "
                                             "reloaded, CPU offline); found again next cycle" };
                case EPERM:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs CAP_SYS_NICE" };
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL, "the scheduler refuses this priority or CPU set" };
                default:
                        return (ErrorInfo) { ERROR_UNMANAGED, "the scheduler refuses changes to this thread" };
                }

        if (kind == ACTION_SET_NAPI_THREADED)
                switch (e) {
                case ENOENT:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "this kernel has no threaded NAPI (/sys/class/net/DEV/threaded, "
                                             "Linux 5.12)" };
                case EOPNOTSUPP:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the netdev has no NAPI instances to thread (driver or link down)" };
                }

        if (kind == ACTION_SET_NAPI_PARAMS)
                switch (e) {
                case EOPNOTSUPP:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "unavailable: this kernel has no per-NAPI settings (netdev genl "
                                             "napi-set, Linux 6.13)" };
                case ENOENT:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the NAPI is gone (channel change or driver reload); found again "
                                             "next cycle" };
                case EIO:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the kernel accepted but reads back something else; not retried" };
                case EINVAL:
                case ERANGE:
                        return (ErrorInfo) { ERROR_FATAL, "the kernel refuses this value" };
                case ENODEV:
                        return (ErrorInfo) { ERROR_TRANSIENT, "the netdev went away (driver reload)" };
                case EPERM:
                case EACCES:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs CAP_NET_ADMIN" };
                }

        if (kind == ACTION_SET_CHANNELS)
                switch (e) {
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "the driver refuses this channel count (above its maximum, or a "
                                             "kind it does not have)" };
                case EBUSY:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the driver cannot change channels now (XDP, AF_XDP or RSS "
                                             "context in use); retried next cycle" };
                }

        if (kind == ACTION_SET_VF_LINK)
                switch (e) {
                case EOPNOTSUPP:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the PF driver cannot set this on its VFs; not tried again on this PF" };
                case EINVAL:
                case ERANGE:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "the PF driver refuses the value (VLAN, rate or MAC out of its range)" };
                case ENODEV:
                case ENOENT:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the PF netdev went away (driver reload); redone when it is back" };
                case EPERM:
                case EACCES:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs CAP_NET_ADMIN" };
                }

        if (kind == ACTION_SET_COALESCE)
                switch (e) {
                case EINVAL:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the driver refuses a value (what it takes was applied); "
                                             "recorded, not retried until reload" };
                }

        if (kind == ACTION_SET_COALESCE || kind == ACTION_SET_OFFLOADS || kind == ACTION_SET_CHANNELS)
                switch (e) {
                case EOPNOTSUPP:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the driver does not support this; recorded, not retried" };
                case EIO:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the driver accepted but reads back something else (rounded or "
                                             "refused silently); not retried" };
                case EINVAL:
                case ERANGE:
                        return (ErrorInfo) { ERROR_FATAL, "the driver refuses this value" };
                case ENODEV:
                        return (ErrorInfo) { ERROR_TRANSIENT, "the netdev went away (driver reload)" };
                case EPERM:
                case EACCES:
                        return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs CAP_NET_ADMIN" };
                }

        if (kind == ACTION_SET_VF_DRIVER)
                switch (e) {
                case ENOENT:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "the driver is not loaded (load vfio-pci, e.g. in modules-load.d)" };
                case ENODEV:
                        return (ErrorInfo) { ERROR_TRANSIENT, "the VF went away (PF reset or driver reload)" };
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "the driver refuses the VF (for vfio-pci: no usable IOMMU group?)" };
                }

        if (kind == ACTION_SET_NUM_VFS)
                switch (e) {
                case EBUSY:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "VFs are in use or the PF is resetting; the count "
                                             "can change only after they are released" };
                case ENOSPC:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "MSI-X vector or PCI bus number space exhausted; "
                                             "ask for fewer VFs or enlarge it in firmware" };
                case ERANGE:
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL, "the PF refuses this VF count" };
                case ENOENT:
                case ENODEV:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the PF or its driver went away (reload or hot-unplug)" };
                case EOPNOTSUPP:
                case ENOSYS:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the PF driver does not support SR-IOV" };
                }

        switch (e) {
        case EPERM:
        case EACCES:
                return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs root" };
        case EROFS:
                return (ErrorInfo) { ERROR_FATAL,
                                     "read-only file system (ProtectKernelTunables= or a "
                                     "read-only /sys mount?)" };
        case ENOENT:
                return (ErrorInfo) { ERROR_UNMANAGED, "this kernel does not have the setting" };
        case EAGAIN:
        case EINTR:
        case EBUSY:
                return (ErrorInfo) { ERROR_TRANSIENT, "busy; retried on the next cycle" };
        case EIO:
                return (ErrorInfo) { ERROR_UNMANAGED, "the kernel manages this itself" };
        }
        return (ErrorInfo) { ERROR_TRANSIENT, "unexpected kernel error" };
}

const char *error_class_to_string(ErrorClass c) {
        switch (c) {
        case ERROR_TRANSIENT:
                return "transient";
        case ERROR_UNMANAGED:
                return "unmanaged";
        case ERROR_FATAL:
                return "fatal";
        }
        return "unknown";
}

/* Marks an action as deliberately not carried out.
 * An effect text already set, such as the tenant or class the action served, is kept. */
static void action_skip(Action *a, const char *why) {
        a->skipped = true;
        if (!a->effect[0])
                snprintf(a->effect, sizeof(a->effect), "skipped: %s", why);
}

int action_apply(Kernel *k, Action *a) {
        RootFs *root = k->root;
        int r = -EOPNOTSUPP;

        switch (a->kind) {
        case ACTION_SET_AUTOPROBE:
                r = sriov_set_drivers_autoprobe(root, a->target, a->after != 0);
                break;
        case ACTION_SET_NUM_VFS:
                r = sriov_set_num_vfs(root, a->target, (unsigned) a->after);
                break;
        case ACTION_SET_VF_LINK: {
                NlError err;

                if (!k->route) {
                        action_skip(a, "netdevs under --root are not this host's");
                        return 0;
                }
                /* The plan came from a fresh read and holds only the fields that differ.
                 * So a success always changed something. */
                r = route_nl_set_vf(k->route, a->ifindex, &a->link_after, &err);
                if (r >= 0)
                        r = 1;
                else
                        strscpy(a->kernel_message, sizeof(a->kernel_message), err.message);
                break;
        }
        case ACTION_SET_PF_LINK: {
                NlError err;

                if (!k->route) {
                        action_skip(a, "netdevs under --root are not this host's");
                        return 0;
                }
                /* The plan came from a fresh read that showed the link down. So a success always changed it. */
                r = route_nl_set_link_up(k->route, a->ifindex, a->after != 0, &err);
                if (r >= 0)
                        r = 1;
                else
                        strscpy(a->kernel_message, sizeof(a->kernel_message), err.message);
                break;
        }
        case ACTION_SET_VF_DRIVER:
                r = a->driver_after[0] ? pci_driver_bind(root, a->target, a->driver_after)
                                       : pci_driver_restore(root, a->target, "");
                break;
        case ACTION_SET_COALESCE:
        case ACTION_SET_OFFLOADS: {
                NlError err;

                if (!k->ethtool) {
                        action_skip(a, "netdevs under --root are not this host's");
                        return 0;
                }
                /* Both setters read the current values first, send only what differs, and read the result back. */
                r = a->kind == ACTION_SET_COALESCE
                            ? ethtool_coalesce_set(k->ethtool, a->netdev_ifindex, &a->coalesce_after, &err)
                            : ethtool_features_set(k->ethtool, a->netdev_ifindex, a->offloads_after, &err);
                if (r < 0)
                        strscpy(a->kernel_message, sizeof(a->kernel_message), err.message);
                break;
        }
        case ACTION_SET_RTNET_PRIO:
                r = sysctl_set_rtnet_prio(root, a->after);
                break;
        case ACTION_SET_IRQ_DEFAULT:
                r = irq_set_default_affinity(root, &a->cpus_after);
                break;
        case ACTION_SET_IRQ_AFFINITY:
                r = irq_set_affinity(root, a->irq, &a->cpus_after);
                break;
        case ACTION_SET_IRQ_THREAD:
                if (!rootfs_sched_live(root)) {
                        /* A PID in a fixture tree names whatever process has that number on this host.
                         * So sriovd must not touch it. */
                        action_skip(a, "PIDs under --root are not this host's");
                        return 0;
                }
                r = sched_thread_set(root, a->pid, a->irq, a->policy_after, (int) a->after);
                break;
        case ACTION_SET_NAPI_THREADED:
                r = netdev_threaded_set(root, a->netdev, a->after != 0);
                break;
        case ACTION_SET_NAPI_PIN:
        case ACTION_SET_NAPI_SCHED:
        case ACTION_SET_KTHREAD_SCHED:
                if (!rootfs_sched_live(root)) {
                        action_skip(a, "PIDs under --root are not this host's");
                        return 0;
                }
                r = a->kind == ACTION_SET_NAPI_PIN
                            ? sched_kthread_set(root, a->pid, a->thread_name, &a->cpus_after, 0, -1)
                            : sched_kthread_set(root, a->pid, a->thread_name, NULL, a->policy_after, (int) a->after);
                break;
        case ACTION_SET_CHANNELS: {
                NlError err;

                if (!k->ethtool) {
                        action_skip(a, "netdevs under --root are not this host's");
                        return 0;
                }
                /* The setter reads first, sends only what differs, and reads back.
                 * The driver then requests its IRQs again, and the next pass plans where they go. */
                r = ethtool_channels_set(k->ethtool, a->netdev_ifindex, &a->channels_after, &err);
                if (r < 0)
                        strscpy(a->kernel_message, sizeof(a->kernel_message), err.message);
                break;
        }
        case ACTION_SET_NAPI_PARAMS: {
                NlError err;

                if (!k->netdev) {
                        action_skip(a, k->route ? "the kernel has no netdev netlink (before Linux 6.5)"
                                                : "netdevs under --root are not this host's");
                        return 0;
                }
                r = netdev_nl_napi_set(k->netdev, a->napi_id, &a->napi_after, &err);
                if (r < 0)
                        strscpy(a->kernel_message, sizeof(a->kernel_message), err.message);
                break;
        }
        case ACTION_SET_VCPU_PIN:
        case ACTION_SET_EMULATOR_PIN:
        case ACTION_SET_IOTHREAD_PIN:
        case ACTION_SET_VCPU_SCHED:
        case ACTION_SET_NUMATUNE:
        case ACTION_SET_VCPU_THREAD:
        case ACTION_SET_VHOST_PIN:
        case ACTION_SET_VHOST_SCHED:
                /* Guest placement goes through libvirt and its QEMU in guests.c, never through here. */
        case _ACTION_KIND_MAX:
                break;
        }
        a->applied = true;
        a->result = r;
        return r;
}
