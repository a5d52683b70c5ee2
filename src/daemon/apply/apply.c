/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* apply.c — carry out planned actions through the kernel modules */

#include "sriovd/kernel/bind.h"
#include "sriovd/kernel/cpu-power.h"
#include "sriovd/kernel/ethtool.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/napi.h"
#include "sriovd/kernel/netdev-genl.h"
#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/topology.h"
#include "sriovd/kernel/vf-netlink.h"
#include "apply.h"

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
        case ACTION_SET_CPU_IDLE:
                /* Under --root this writes the fixture's file, as every sysfs setter does. */
                r = cpu_idle_set_disable(root, a->cpu, a->idle_state, a->after != 0);
                break;
        case ACTION_SET_CPU_GOVERNOR:
                r = cpu_governor_set(root, a->cpu, a->governor_after);
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
        action_set_result(a, r);
        return r;
}
