/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* error-class.c — what a kernel error means for each kind of action, as one table */

#include <errno.h>
#include <limits.h>

#include "sriovd/core/error-class.h"
#include "sriovd/shared/macro.h"

#define K(k) ACTION_KINDS(ACTION_SET_##k)
#define T ERROR_TRANSIENT
#define U ERROR_UNMANAGED
#define F ERROR_FATAL

_Static_assert(_ACTION_KIND_MAX <= 32, "ErrorClassRow.kinds holds one bit per ActionKind");

/* NAPI threads and per-CPU kernel threads are found again by name each cycle, like irq/N- threads. */
#define KTHREADS (K(NAPI_PIN) | K(NAPI_SCHED) | K(KTHREAD_SCHED))
#define ETHTOOL (K(COALESCE) | K(OFFLOADS) | K(CHANNELS))

static const char NEEDS_ROOT[] = "not permitted: sriovd needs root";
static const char NEEDS_NICE[] = "not permitted: sriovd needs CAP_SYS_NICE";
static const char NEEDS_NET_ADMIN[] = "not permitted: sriovd needs CAP_NET_ADMIN";
static const char IRQ_BUSY[] = "the IRQ is being set up or moved; retried next cycle";
static const char THREAD_REFUSED[] = "the scheduler refuses changes to this thread";
static const char NETDEV_GONE[] = "the netdev went away (driver reload)";
static const char PF_NETDEV_GONE[] = "the PF netdev went away (driver reload); redone when it is back";
static const char VF_LINK_REFUSED[] = "the PF driver refuses the value (VLAN, rate or MAC out of its range)";
static const char DRIVER_REFUSES[] = "the driver refuses this value";
static const char KERNEL_REFUSES[] = "the kernel refuses this value";
static const char VF_COUNT_REFUSED[] = "the PF refuses this VF count";
static const char PF_GONE[] = "the PF or its driver went away (reload or hot-unplug)";
static const char NO_SRIOV[] = "the PF driver does not support SR-IOV";
static const char BUSY[] = "busy; retried on the next cycle";

static const ErrorClassRow table[] = {
        { K(IRQ_AFFINITY), ENOENT, T, "the IRQ went away (device reset or driver reload); re-read next cycle" },
        { K(IRQ_AFFINITY), EBUSY, T, IRQ_BUSY },
        { K(IRQ_AFFINITY), EINVAL, T, IRQ_BUSY },
        { K(IRQ_AFFINITY), ERANGE, T, IRQ_BUSY },
        { K(IRQ_AFFINITY), ENOMEM, T, IRQ_BUSY },
        { K(IRQ_AFFINITY), EAGAIN, T, IRQ_BUSY },
        { K(IRQ_AFFINITY), ENOSPC, F, "vector space on the target CPUs is exhausted; widen the class's CPU set or "
                                      "spread fewer IRQs there" },
        { K(IRQ_AFFINITY), EIO, U, "kernel-managed IRQ: its affinity is not ours to set" },
        { K(IRQ_AFFINITY), EPERM, F, NEEDS_ROOT },
        { K(IRQ_AFFINITY), EACCES, F, NEEDS_ROOT },
        { K(IRQ_AFFINITY), 0, U, "the kernel refuses this IRQ's affinity; left alone from now on" },

        { K(IRQ_THREAD), ESRCH, T, "the handler thread is gone (driver reload); found again next cycle" },
        { K(IRQ_THREAD), EPERM, F, NEEDS_NICE },
        { K(IRQ_THREAD), EINVAL, F, "the scheduler refuses this priority" },
        { K(IRQ_THREAD), 0, U, THREAD_REFUSED },

        { KTHREADS, ESRCH, T, "the kernel thread is gone (threaded NAPI switched, netdev reloaded, CPU offline); "
                              "found again next cycle" },
        { KTHREADS, EPERM, F, NEEDS_NICE },
        { KTHREADS, EINVAL, F, "the scheduler refuses this priority or CPU set" },
        { KTHREADS, 0, U, THREAD_REFUSED },

        { K(NAPI_THREADED), ENOENT, U, "this kernel has no threaded NAPI (/sys/class/net/DEV/threaded, Linux 5.12)" },
        { K(NAPI_THREADED), EOPNOTSUPP, U, "the netdev has no NAPI instances to thread (driver or link down)" },

        { K(NAPI_PARAMS), EOPNOTSUPP, U, "unavailable: this kernel has no per-NAPI settings (netdev genl napi-set, "
                                         "Linux 6.13)" },
        { K(NAPI_PARAMS), ENOENT, T, "the NAPI is gone (channel change or driver reload); found again next cycle" },
        { K(NAPI_PARAMS), EIO, U, "the kernel accepted but reads back something else; not retried" },
        { K(NAPI_PARAMS), EINVAL, F, KERNEL_REFUSES },
        { K(NAPI_PARAMS), ERANGE, F, KERNEL_REFUSES },
        { K(NAPI_PARAMS), ENODEV, T, NETDEV_GONE },
        { K(NAPI_PARAMS), EPERM, F, NEEDS_NET_ADMIN },
        { K(NAPI_PARAMS), EACCES, F, NEEDS_NET_ADMIN },

        { K(CHANNELS), EINVAL, F, "the driver refuses this channel count (above its maximum, or a kind it does "
                                  "not have)" },
        { K(CHANNELS), EBUSY, T, "the driver cannot change channels now (XDP, AF_XDP or RSS context in use); "
                                 "retried next cycle" },

        { K(VF_LINK), EOPNOTSUPP, U, "the PF driver cannot set this on its VFs; not tried again on this PF" },
        { K(VF_LINK), EINVAL, F, VF_LINK_REFUSED },
        { K(VF_LINK), ERANGE, F, VF_LINK_REFUSED },
        { K(VF_LINK), ENODEV, T, PF_NETDEV_GONE },
        { K(VF_LINK), ENOENT, T, PF_NETDEV_GONE },
        { K(VF_LINK), EPERM, F, NEEDS_NET_ADMIN },
        { K(VF_LINK), EACCES, F, NEEDS_NET_ADMIN },

        { K(COALESCE), EINVAL, U, "the driver refuses a value (what it takes was applied); recorded, not retried "
                                  "until reload" },

        { ETHTOOL, EOPNOTSUPP, U, "the driver does not support this; recorded, not retried" },
        { ETHTOOL, EIO, U, "the driver accepted but reads back something else (rounded or refused silently); not "
                           "retried" },
        { ETHTOOL, EINVAL, F, DRIVER_REFUSES },
        { ETHTOOL, ERANGE, F, DRIVER_REFUSES },
        { ETHTOOL, ENODEV, T, NETDEV_GONE },
        { ETHTOOL, EPERM, F, NEEDS_NET_ADMIN },
        { ETHTOOL, EACCES, F, NEEDS_NET_ADMIN },

        { K(VF_DRIVER), ENOENT, F, "the driver is not loaded (load vfio-pci, e.g. in modules-load.d)" },
        { K(VF_DRIVER), ENODEV, T, "the VF went away (PF reset or driver reload)" },
        { K(VF_DRIVER), EINVAL, F, "the driver refuses the VF (for vfio-pci: no usable IOMMU group?)" },

        { K(NUM_VFS), EBUSY, T, "VFs are in use or the PF is resetting; the count can change only after they are "
                                "released" },
        { K(NUM_VFS), ENOSPC, F, "MSI-X vector or PCI bus number space exhausted; ask for fewer VFs or enlarge it "
                                 "in firmware" },
        { K(NUM_VFS), ERANGE, F, VF_COUNT_REFUSED },
        { K(NUM_VFS), EINVAL, F, VF_COUNT_REFUSED },
        { K(NUM_VFS), ENOENT, T, PF_GONE },
        { K(NUM_VFS), ENODEV, T, PF_GONE },
        { K(NUM_VFS), EOPNOTSUPP, U, NO_SRIOV },
        { K(NUM_VFS), ENOSYS, U, NO_SRIOV },

        { K(CPU_IDLE) | K(CPU_GOVERNOR), ENOENT, T, "the CPU went offline or lost the file; read again next "
                                                    "cycle" },
        { K(CPU_GOVERNOR), EINVAL, F, "the kernel does not have this governor (cpufreq driver or module)" },
        { K(CPU_IDLE) | K(CPU_GOVERNOR), EBUSY, T, BUSY },

        /* Every kind. */
        { 0, EPERM, F, NEEDS_ROOT },
        { 0, EACCES, F, NEEDS_ROOT },
        { 0, EROFS, F, "read-only file system (ProtectKernelTunables= or a read-only /sys mount?)" },
        { 0, ENOENT, U, "this kernel does not have the setting" },
        { 0, EAGAIN, T, BUSY },
        { 0, EINTR, T, BUSY },
        { 0, EBUSY, T, BUSY },
        { 0, EIO, U, "the kernel manages this itself" },
        { 0, 0, T, "unexpected kernel error" },
};

const ErrorClassRow *error_class_table(size_t *ret_n) {
        *ret_n = ELEMENTSOF(table);
        return table;
}

static bool row_matches(const ErrorClassRow *row, ActionKind kind, int e) {
        return (row->kinds == 0 || (row->kinds & ACTION_KINDS(kind))) && (row->error == 0 || row->error == e);
}

const ErrorClassRow *error_class_lookup(ActionKind kind, int error) {
        int e = error == INT_MIN ? INT_MAX : error < 0 ? -error : error;

        for (size_t i = 0; i < ELEMENTSOF(table) - 1; i++)
                if (row_matches(&table[i], kind, e))
                        return &table[i];
        /* The last row matches everything. */
        return &table[ELEMENTSOF(table) - 1];
}

ErrorInfo kernel_error_classify(ActionKind kind, int error) {
        const ErrorClassRow *row = error_class_lookup(kind, error);
        return (ErrorInfo) { row->class, row->meaning };
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

void action_set_result(Action *a, int r) {
        a->result = r;
        a->error = r < 0 ? kernel_error_classify(a->kind, r) : (ErrorInfo) {};
}
