/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel.h — the kernel interface modules: PCI, SR-IOV sysfs, IRQs, host topology */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/inventory.h"
#include "sriovd/rootfs.h"
#include "sriovd/util.h"

/* pci.c — libpci on the same root as RootFs. */
typedef struct PciFunction {
        char addr[PCI_ADDR_MAX];
        uint16_t vendor, device;
        uint32_t class;                /* base class << 8 | subclass */
        int numa_node;
        char name[PCI_NAME_MAX];
        char driver[DRIVER_MAX];
        int iommu_group;
} PciFunction;

/* The kernel's MAX_NUMNODES (NODES_SHIFT 10): a numa_node at or beyond it is not one. */
#define KERNEL_MAX_NUMNODES 1024
/* PCI's limit on VFs per PF (TotalVFs is a 16-bit register). */
#define PCI_MAX_VFS 65535

/*
 * Every PCI function under ROOT/sys/bus/pci/devices, sorted by address. A function
 * whose vendor, device or class is unreadable, or whose driver or iommu_group is not a
 * link the kernel would write, is left out and recorded in problems; an unreadable or
 * impossible numa_node is recorded and taken as -1. Fails only without
 * /sys/bus/pci/devices, or on -ENOMEM.
 */
int pci_scan(RootFs *root, HostProblems *problems, PciFunction **ret, size_t *ret_n);
/*
 * The name a function's link ("driver", "iommu_group") points at into buf: "" when
 * there is no link; 1 when it is not a link, longer than PATH_MAX, or its name does not
 * fit (recorded in problems: the caller leaves the function out); -ENOMEM.
 */
int pci_read_link_name(RootFs *root, const char *addr, const char *link, HostProblems *problems, char *buf,
                       size_t size);
/* The function's IOMMU group, -1 for none; 1 and -ENOMEM as pci_read_link_name(). */
int pci_read_iommu_group(RootFs *root, const char *addr, HostProblems *problems, int *ret);

/* sriov.c — SR-IOV and device attributes in sysfs. */
/* MSI/MSI-X vectors of a function (msi_irqs/), sorted; none is not an error. */
int pci_read_irqs(RootFs *root, const char *addr, unsigned **ret, size_t *ret_n);
/* Names in the function's net/ directory, sorted. */
int pci_read_netdevs(RootFs *root, const char *addr, char (**ret)[IF_NAMESIZE], size_t *ret_n);
/*
 * Fill the SR-IOV fields of pf (addr must be set) and read its VFs. -ENOENT: not SR-IOV
 * capable. 1: left out, recorded in problems (an unreadable or impossible
 * sriov_totalvfs or sriov_numvfs, netdevs or vectors unreadable). A VF is kept only when
 * its physfn link names this PF and no other virtfn link of the PF named it first;
 * sriov_numvfs beyond sriov_totalvfs is taken as sriov_totalvfs; each is recorded.
 * Other negative errno (-ENOMEM) is fatal. pf_done() frees what was filled either way.
 */
int sriov_read_pf(RootFs *root, Pf *pf, HostProblems *problems);
/*
 * The VF at addr of pf, read as sriov_read_pf() reads each (vf->irqs is the caller's to free).
 * -ENOENT: no virtfn link of pf names it, or it is one sriov_read_pf() would leave out (then in
 * problems); other negative errno as sriov_read_pf().
 */
int sriov_read_vf_of(RootFs *root, const Pf *pf, const char *addr, HostProblems *problems, Vf *ret);
/* Returns 1 when written, 0 when already at n; writes 0 first when changing a non-zero count. */
int sriov_set_num_vfs(RootFs *root, const char *addr, unsigned n);
int sriov_set_drivers_autoprobe(RootFs *root, const char *addr, bool on);

/* proc-stat.c — /proc/PID/stat and IRQ thread names, parsed. */
typedef struct ProcStat {
        pid_t pid;
        char comm[64];
        unsigned long flags;
        unsigned rt_priority;
        unsigned policy;
        uint64_t utime, stime;         /* clock ticks (USER_HZ) */
        uint64_t start_time;           /* clock ticks after boot */
} ProcStat;
#define PF_KTHREAD 0x00200000UL
/* A /proc/PID/stat line: 52 fields of at most 20 digits and a 16-byte name, under 1,100 bytes. */
#define PROC_STAT_MAX 2048

/* Pure parser of /proc/PID/stat. */
int proc_stat_parse(const char *buf, ProcStat *ret);
/* IRQ number of a thread named "irq/N-...", or -EINVAL. */
int irq_thread_name_parse(const char *comm);

/* proc-threads.c — the threads under a /proc directory, with their stat. */
/* Pure: a /proc entry's name as a PID (> 0, decimal digits only); -EINVAL otherwise. */
int proc_pid_parse(const char *s, pid_t *ret);
/* Thread tid's stat under dir; -ESRCH when it is gone, or what is there is no stat; -EMFILE, -ENFILE, -ENOMEM. */
int proc_thread_stat(RootFs *root, const char *dir, pid_t tid, ProcStat *ret);
typedef int (*ProcThreadFn)(RootFs *root, const char *dir, pid_t tid, const ProcStat *st, void *userdata);
/*
 * fn for each thread under dir ("/proc/QEMU/task", or "/proc" for kernel threads) but skip, with
 * its stat; one gone meanwhile, or whose stat does not parse, is passed over. fn < 0 ends the walk.
 */
int proc_threads_each(RootFs *root, const char *dir, pid_t skip, ProcThreadFn fn, void *userdata);

/* irq.c — /proc/irq and the IRQ handler threads. */
/* Affinity, effective affinity and writability of one IRQ; thread fields left 0. */
int irq_read(RootFs *root, unsigned irq, Irq *ret);
/* effective_affinity_list alone (a kernel before 4.15 has none: -ENOENT). */
int irq_read_effective(RootFs *root, unsigned irq, CpuSet *ret);

typedef struct IrqThread {
        unsigned irq;
        pid_t pid;
        int policy, priority;
} IrqThread;
/*
 * One walk over /proc: all irq/N- kernel threads (PF_KTHREAD only: user space
 * can fake the name), sorted by irq; the other kernel threads sriovd places
 * (Kthread: napi/, ksoftirqd/, ktimers/, rcuc/), sorted by kind, num, pid, with
 * each NAPI thread's allowed CPUs; and whether irqbalance runs.
 */
int irq_threads_scan(RootFs *root, IrqThread **ret, size_t *ret_n, Kthread **ret_kthreads, size_t *ret_n_kthreads,
                     bool *ret_irqbalance);
/*
 * Pure: what a kernel thread's name says: "napi/DEV-ID" (KTHREAD_NAPI, num = ID, netdev = DEV),
 * "ksoftirqd/N", "ktimers/N", "rcuc/N" (num = N, netdev ""). -EINVAL: none of these. Older
 * kernels cut names at 15 characters: a NAPI name cut inside its ID parses with the wrong one,
 * which napi_pair_by_queues() refuses to pair (the ids repeat).
 */
int kthread_name_parse(const char *comm, KthreadKind *ret_kind, unsigned *ret_num, char ret_netdev[static IF_NAMESIZE]);

/*
 * irq-files.c — the smp_affinity_list files a drift check reads, held open on the real /proc (up
 * to budget files; a fixture's are read by path). irq_files_read_affinity() is
 * rootfs_read_attr() of /proc/irq/IRQ/smp_affinity_list, through the held file when there is one
 * (one that fails is dropped and the path read instead); f NULL: by path. irq_files_prune()
 * closes the files of IRQs the inventory no longer has.
 */
typedef struct IrqFiles IrqFiles;
int irq_files_new(size_t budget, IrqFiles **ret);
IrqFiles *irq_files_free(IrqFiles *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqFiles *, irq_files_free);
int irq_files_read_affinity(IrqFiles *f, RootFs *root, unsigned irq, char *buf, size_t size);
void irq_files_prune(IrqFiles *f, const Inventory *inv);
size_t irq_files_held(const IrqFiles *f);

/* Write smp_affinity_list (the caller knows it differs): 1 written, or -errno. */
int irq_set_affinity(RootFs *root, unsigned irq, const CpuSet *cpus);
/* Every IRQ number under /proc/irq, sorted. */
int irq_list(RootFs *root, unsigned **ret, size_t *ret_n);
/* The name of the IRQ's first handler (its directory in /proc/irq/N: "nvme0q1", "acpi"); "" for none. */
int irq_read_action(RootFs *root, unsigned irq, char *buf, size_t size);
/* /proc/irq/default_smp_affinity: where the kernel puts IRQs requested from now on. */
int irq_read_default_affinity(RootFs *root, CpuSet *ret);
int irq_set_default_affinity(RootFs *root, const CpuSet *cpus);

/* sched.c — IRQ handler thread scheduling. */
/* Current policy and priority of a thread, from the scheduler itself. */
int sched_thread_get(pid_t pid, int *ret_policy, int *ret_priority);
/*
 * Set policy/priority of the irq/N- thread pid, after checking again, under
 * the root's /proc, that pid still is that kernel thread (PIDs get reused).
 * 1 changed, 0 already so, -ESRCH no longer that thread.
 */
int sched_thread_set(RootFs *root, pid_t pid, unsigned irq, int policy, int priority);

/*
 * A kernel thread pid named name (a Kthread's): to cpus (NULL: leave) and policy/priority
 * (priority < 0: leave), after checking again under the root's /proc that pid still is that
 * kernel thread. 1 changed, 0 already so, -ESRCH no longer that thread.
 */
int sched_kthread_set(RootFs *root, pid_t pid, const char *name, const CpuSet *cpus, int policy, int priority);
/*
 * tid to cpus (NULL: leave) and policy/priority (priority < 0: leave) where they differ from what
 * it has now (now_*); 1 changed, 0 already so. The caller checked that tid is the thread it means.
 */
int sched_thread_change(pid_t tid, const CpuSet *now_cpus, int now_policy, int now_priority, const CpuSet *cpus,
                        int policy, int priority);
/* The CPUs a thread may run on, from the scheduler (live roots) or /proc/PID/status. */
int sched_thread_cpus_get(RootFs *root, pid_t pid, CpuSet *ret);

/*
 * refresh.c — re-read, in inv (a copy of the last full read, inventory_dup()), only what can
 * drift without an event: IRQ affinities and effective affinities, the scheduling of IRQ, NAPI
 * and per-CPU threads (a NAPI thread's CPUs too), rtnet_prio, the default affinity. -ESTALE when
 * the host is no longer what inv describes (an IRQ gone, a thread gone or its PID another's, a
 * passthrough VF's vectors changed): read it whole instead. -ENOMEM. The affinities are read
 * through files (irq_files_read_affinity(); NULL: by path).
 */
int inventory_refresh(RootFs *root, IrqFiles *files, Inventory *inv);

/* napi.c — threaded NAPI of a netdev, in sysfs. */
/* /sys/class/net/DEV/threaded: *ret 0/1. -ENOENT: no such netdev, or a kernel before 5.12 (no file). */
int netdev_threaded_read(RootFs *root, const char *netdev, int *ret);
/* Write it; 1 changed, 0 already so. The kernel starts or stops the napi/ threads at once. */
int netdev_threaded_set(RootFs *root, const char *netdev, bool on);

/* topology.c — CPUs, NUMA nodes and kernel features. */
int topology_read(RootFs *root, Topology *ret);
void topology_done(Topology *t);
int kernel_caps_read(RootFs *root, bool have_irq_threads, bool irqbalance, KernelCaps *ret);
/* Write net.core.rtnet_prio; 1 changed, 0 already so, -ENOENT where the kernel lacks it. */
int sysctl_set_rtnet_prio(RootFs *root, long value);

/* bind.c — moving a PCI function between drivers (vfio-pci passthrough) through driver_override. */
/*
 * Bind the PCI function addr to driver (e.g. "vfio-pci") the way the kernel documents it:
 * driver_override = driver; if bound to another driver, write addr to that driver's unbind;
 * then write addr to /sys/bus/pci/drivers_probe. The override is kept, so a later re-probe
 * (driver reload) cannot hand the device back to its native driver. Each step is written
 * only when needed (bound there already: only the override), and the first failing write
 * ends the call with its error. drivers_probe succeeding does not mean the probe bound the
 * device: verify with pci_driver_read(). No IOMMU group check: that is the planner's job.
 * 1 = changed, 0 = already bound there with the override set, negative errno.
 * -EINVAL for an invalid addr or driver name; -ENODEV when addr does not exist; -ENOENT when
 * the driver is not loaded (no /sys/bus/pci/drivers/DRIVER).
 */
int pci_driver_bind(RootFs *root, const char *addr, const char *driver);
/*
 * Undo pci_driver_bind: driver_override = original ("" or NULL = let the kernel choose by ID
 * table), unbind from the current driver, drivers_probe, then clear driver_override (write "\n")
 * so nothing sticky is left. When the function already sits where it should, only the override
 * is cleared. 1 changed, 0 nothing to do (no override and bound to original or, with "", to
 * any non-vfio driver). -ENOENT when original is given but not loaded (nothing written).
 */
int pci_driver_restore(RootFs *root, const char *addr, const char *original);
/*
 * Current driver ("" unbound) and driver_override ("" for "(null)"), for planning and
 * verification. Either output may be NULL; both are untouched on failure, -ENOBUFS when a
 * name does not fit. -ENODEV when addr does not exist.
 */
int pci_driver_read(RootFs *root, const char *addr, char *ret_driver, size_t driver_size, char *ret_override,
                    size_t override_size);
