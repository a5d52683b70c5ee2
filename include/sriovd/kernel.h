/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel.h — the kernel interface modules: PCI, SR-IOV sysfs, IRQs and host topology */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/inventory.h"
#include "sriovd/rootfs.h"
#include "sriovd/util.h"

/* pci.c uses libpci on the same root as RootFs. */
typedef struct PciFunction {
        char addr[PCI_ADDR_MAX];
        uint16_t vendor, device;
        uint32_t class;                /* base class << 8 | subclass */
        int numa_node;
        char name[PCI_NAME_MAX];
        char driver[DRIVER_MAX];
        int iommu_group;
} PciFunction;

/* The kernel's MAX_NUMNODES, with a NODES_SHIFT of 10. A numa_node at or beyond it is not a node. */
#define KERNEL_MAX_NUMNODES 1024
/* PCI's limit on VFs per PF, because TotalVFs is a 16-bit register. */
#define PCI_MAX_VFS 65535

/*
 * Reads every PCI function under ROOT/sys/bus/pci/devices into *ret, sorted by address. The
 * caller frees *ret. A function is left out and recorded in problems when its vendor, device or
 * class is unreadable. The same happens when its driver or iommu_group is not a link that the
 * kernel would write. A numa_node that is unreadable or impossible is recorded and taken as -1.
 * It fails only without /sys/bus/pci/devices, or with -ENOMEM.
 */
int pci_scan(RootFs *root, HostProblems *problems, PciFunction **ret, size_t *ret_n);
/*
 * Reads into buf the name that a function's link, such as "driver" or "iommu_group", points at.
 * buf is "" when there is no link. Returns 1 when it is not a link, is longer than PATH_MAX, or
 * has a name that does not fit. That is recorded in problems, and the caller leaves the function
 * out. Returns -ENOMEM when memory runs out.
 */
int pci_read_link_name(RootFs *root, const char *addr, const char *link, HostProblems *problems, char *buf,
                       size_t size);
/* Reads the function's IOMMU group, or -1 for none. It returns 1 and -ENOMEM as pci_read_link_name() does. */
int pci_read_iommu_group(RootFs *root, const char *addr, HostProblems *problems, int *ret);

/* sriov.c reads and writes SR-IOV and device attributes in sysfs. */
/*
 * Reads the MSI and MSI-X vectors of a function from msi_irqs/ into *ret, sorted. The caller
 * frees *ret. Finding none is not an error.
 */
int pci_read_irqs(RootFs *root, const char *addr, unsigned **ret, size_t *ret_n);
/* Reads the names in the function's net/ directory into *ret, sorted. The caller frees *ret. */
int pci_read_netdevs(RootFs *root, const char *addr, char (**ret)[IF_NAMESIZE], size_t *ret_n);
/*
 * Fills the SR-IOV fields of pf and reads its VFs. pf's addr must be set. Returns -ENOENT when the
 * PF is not SR-IOV capable. Returns 1 when the PF is left out and recorded in problems. That
 * happens for an sriov_totalvfs or sriov_numvfs that is unreadable or impossible, and for
 * netdevs or vectors that are unreadable. A VF is kept only when its physfn link names this PF
 * and no other virtfn link of the PF named it first. An sriov_numvfs beyond sriov_totalvfs is
 * taken as sriov_totalvfs. Each of these cases is recorded. Any other negative errno, such as
 * -ENOMEM, is fatal. pf_done() frees what was filled either way.
 */
int sriov_read_pf(RootFs *root, Pf *pf, HostProblems *problems);
/*
 * Reads the VF at addr of pf into *ret, as sriov_read_pf() reads each VF. The caller frees
 * ret->irqs. Returns -ENOENT when no virtfn link of pf names it. It also returns -ENOENT for a VF
 * that sriov_read_pf() would leave out, and records that in problems. Other negative errnos are
 * as for sriov_read_pf().
 */
int sriov_read_vf_of(RootFs *root, const Pf *pf, const char *addr, HostProblems *problems, Vf *ret);
/*
 * Returns 1 when it wrote, and 0 when the count was already n. It writes 0 first when it changes a
 * count that is not zero.
 */
int sriov_set_num_vfs(RootFs *root, const char *addr, unsigned n);
int sriov_set_drivers_autoprobe(RootFs *root, const char *addr, bool on);

/* proc-stat.c parses /proc/PID/stat and IRQ thread names. */
typedef struct ProcStat {
        pid_t pid;
        char comm[64];
        unsigned long flags;
        unsigned rt_priority;
        unsigned policy;
        uint64_t utime, stime;         /* in clock ticks of USER_HZ */
        uint64_t start_time;           /* clock ticks after boot */
} ProcStat;
#define PF_KTHREAD 0x00200000UL
/* A /proc/PID/stat line has 52 fields of at most 20 digits and a 16-byte name, so it is under 1,100 bytes. */
#define PROC_STAT_MAX 2048

/* Parses /proc/PID/stat. It does no I/O. */
int proc_stat_parse(const char *buf, ProcStat *ret);
/* Returns the IRQ number of a thread named "irq/N-...", or -EINVAL for any other name. */
int irq_thread_name_parse(const char *comm);

/* proc-threads.c reads the threads under a /proc directory, with their stat. */
/*
 * Parses a /proc entry's name as a PID, which has decimal digits only and is above 0. It does no
 * I/O. Returns -EINVAL for any other name.
 */
int proc_pid_parse(const char *s, pid_t *ret);
/*
 * Reads the stat of thread tid under dir. Returns -ESRCH when the thread is gone, or when what is
 * there is no stat. It may also return -EMFILE, -ENFILE and -ENOMEM.
 */
int proc_thread_stat(RootFs *root, const char *dir, pid_t tid, ProcStat *ret);
typedef int (*ProcThreadFn)(RootFs *root, const char *dir, pid_t tid, const ProcStat *st, void *userdata);
/*
 * Calls fn with its stat for each thread under dir, except skip. dir is "/proc/QEMU/task", or
 * "/proc" for kernel threads. A thread that is gone meanwhile, or whose stat does not parse, is
 * passed over. When fn returns a negative errno, the walk ends and returns it.
 */
int proc_threads_each(RootFs *root, const char *dir, pid_t skip, ProcThreadFn fn, void *userdata);

/* irq.c reads and writes /proc/irq and finds the IRQ handler threads. */
/* Reads the affinity, effective affinity and writability of one IRQ. The thread fields are left 0. */
int irq_read(RootFs *root, unsigned irq, Irq *ret);
/* Reads effective_affinity_list alone. Returns -ENOENT on a kernel before 4.15, which has none. */
int irq_read_effective(RootFs *root, unsigned irq, CpuSet *ret);

typedef struct IrqThread {
        unsigned irq;
        pid_t pid;
        int policy, priority;
} IrqThread;
/*
 * Finds three things in one walk over /proc. *ret gets all irq/N- kernel threads, sorted by irq.
 * Only threads with PF_KTHREAD count, because user space can fake the name. *ret_kthreads gets
 * the other kernel threads that sriovd places, napi/, ksoftirqd/, ktimers/ and rcuc/, sorted by
 * kind, num and pid. Each NAPI thread comes with its allowed CPUs. *ret_irqbalance says whether
 * irqbalance runs. The caller frees *ret and *ret_kthreads.
 */
int irq_threads_scan(RootFs *root, IrqThread **ret, size_t *ret_n, Kthread **ret_kthreads, size_t *ret_n_kthreads,
                     bool *ret_irqbalance);
/*
 * Parses what a kernel thread's name says. It does no I/O. "napi/DEV-ID" gives KTHREAD_NAPI, with
 * num set to ID and netdev to DEV. "ksoftirqd/N", "ktimers/N" and "rcuc/N" give num N and a
 * netdev of "". Returns -EINVAL for any other name. Older kernels cut names at 15 characters. A
 * NAPI name cut inside its ID parses with the wrong ID. napi_pair_by_queues() refuses to pair
 * such names, because their ids repeat.
 */
int kthread_name_parse(const char *comm, KthreadKind *ret_kind, unsigned *ret_num, char ret_netdev[static IF_NAMESIZE]);

/*
 * irq-files.c holds open the smp_affinity_list files that a drift check reads on the real /proc,
 * up to budget files. A fixture's files are read by path. irq_files_read_affinity() does
 * rootfs_read_attr() of /proc/irq/IRQ/smp_affinity_list through the held file when there is one.
 * A held file that fails is dropped, and the path is read instead. With an f of NULL it reads by
 * path. irq_files_prune() closes the files of IRQs that the inventory no longer has.
 */
typedef struct IrqFiles IrqFiles;
int irq_files_new(size_t budget, IrqFiles **ret);
IrqFiles *irq_files_free(IrqFiles *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqFiles *, irq_files_free);
int irq_files_read_affinity(IrqFiles *f, RootFs *root, unsigned irq, char *buf, size_t size);
void irq_files_prune(IrqFiles *f, const Inventory *inv);
size_t irq_files_held(const IrqFiles *f);

/* Writes smp_affinity_list, which the caller knows differs. Returns 1 when written, or a negative errno. */
int irq_set_affinity(RootFs *root, unsigned irq, const CpuSet *cpus);
/* Reads every IRQ number under /proc/irq into *ret, sorted. The caller frees *ret. */
int irq_list(RootFs *root, unsigned **ret, size_t *ret_n);
/*
 * Reads the name of the IRQ's first handler, which is its directory in /proc/irq/N, such as
 * "nvme0q1" or "acpi". buf is "" when there is none.
 */
int irq_read_action(RootFs *root, unsigned irq, char *buf, size_t size);
/* These read and write /proc/irq/default_smp_affinity, where the kernel puts IRQs requested from now on. */
int irq_read_default_affinity(RootFs *root, CpuSet *ret);
int irq_set_default_affinity(RootFs *root, const CpuSet *cpus);

/* sched.c sets the scheduling of IRQ handler threads and other threads. */
/* Reads the current policy and priority of a thread from the scheduler itself. */
int sched_thread_get(pid_t pid, int *ret_policy, int *ret_priority);
/*
 * Sets the policy and priority of the irq/N- thread pid. It first checks again, under the root's
 * /proc, that pid still is that kernel thread, because PIDs get reused. Returns 1 when it changed
 * the thread, 0 when it was already so, and -ESRCH when pid is no longer that thread.
 */
int sched_thread_set(RootFs *root, pid_t pid, unsigned irq, int policy, int priority);

/*
 * Sets the kernel thread pid, named name as a Kthread is, to cpus and to policy and priority. A
 * cpus of NULL leaves the CPUs, and a priority below 0 leaves the scheduling. It first checks
 * again under the root's /proc that pid still is that kernel thread. Returns 1 when it changed
 * the thread, 0 when it was already so, and -ESRCH when pid is no longer that thread.
 */
int sched_kthread_set(RootFs *root, pid_t pid, const char *name, const CpuSet *cpus, int policy, int priority);
/*
 * Sets tid to cpus and to policy and priority where they differ from what it has now, given in
 * the now_* arguments. A cpus of NULL leaves the CPUs, and a priority below 0 leaves the
 * scheduling. Returns 1 when it changed the thread, and 0 when it was already so. The caller has
 * checked that tid is the thread it means.
 */
int sched_thread_change(pid_t tid, const CpuSet *now_cpus, int now_policy, int now_priority, const CpuSet *cpus,
                        int policy, int priority);
/* Reads the CPUs a thread may run on, from the scheduler on live roots or else from /proc/PID/status. */
int sched_thread_cpus_get(RootFs *root, pid_t pid, CpuSet *ret);

/*
 * refresh.c reads again, into inv, only what can drift without an event. inv is a copy of the
 * last full read, made with inventory_dup(). What can drift is the IRQ affinities and effective
 * affinities, and the scheduling of IRQ, NAPI and per-CPU threads. It is also a NAPI thread's
 * CPUs, rtnet_prio and the default affinity. Returns -ESTALE when the host is no longer what inv
 * describes, and then the caller reads it whole instead. That happens when an IRQ is gone, a
 * thread is gone or its PID is another's, or a passthrough VF's vectors changed. Returns -ENOMEM
 * when memory runs out. The affinities are read through files with irq_files_read_affinity(). A
 * files of NULL reads them by path.
 */
int inventory_refresh(RootFs *root, IrqFiles *files, Inventory *inv);
/*
 * Reads again only the named IRQs, and the IRQ and kernel threads with the named PIDs, as
 * inventory_refresh() does. A kernel event named them. A name that inv does not hold is passed
 * over. It returns what inventory_refresh() returns.
 */
int inventory_refresh_only(RootFs *root, IrqFiles *files, Inventory *inv, const unsigned *irqs, size_t n_irqs,
                           const pid_t *pids, size_t n_pids);

/* napi.c reads and sets the threaded NAPI of a netdev in sysfs. */
/*
 * Reads /sys/class/net/DEV/threaded into *ret as 0 or 1. Returns -ENOENT when there is no such
 * netdev, or on a kernel before 5.12, which has no such file.
 */
int netdev_threaded_read(RootFs *root, const char *netdev, int *ret);
/*
 * Writes the threaded file. Returns 1 when it changed it, and 0 when it was already so. The
 * kernel starts or stops the napi/ threads at once.
 */
int netdev_threaded_set(RootFs *root, const char *netdev, bool on);

/* topology.c reads the CPUs, the NUMA nodes and the kernel's features. */
int topology_read(RootFs *root, Topology *ret);
void topology_done(Topology *t);
int kernel_caps_read(RootFs *root, bool have_irq_threads, bool irqbalance, KernelCaps *ret);
/*
 * Writes net.core.rtnet_prio. Returns 1 when it changed it, 0 when it was already so, and
 * -ENOENT where the kernel lacks it.
 */
int sysctl_set_rtnet_prio(RootFs *root, long value);

/* bind.c moves a PCI function between drivers through driver_override, as vfio-pci passthrough needs. */
/*
 * Binds the PCI function addr to driver, such as "vfio-pci", the way the kernel documents it. It
 * writes driver to driver_override. If the function is bound to another driver, it writes addr
 * to that driver's unbind. Then it writes addr to /sys/bus/pci/drivers_probe. The override is
 * kept, so a later re-probe, as on a driver reload, cannot hand the device back to its native
 * driver. Each step is written only when needed. When the function is bound there already, only
 * the override is written. The first write that fails ends the call with its error. A
 * drivers_probe that succeeds does not mean the probe bound the device, so verify with
 * pci_driver_read(). It does not check the IOMMU group, because that is the planner's job.
 * Returns 1 when it changed something, and 0 when the function was already bound there with the
 * override set. Returns -EINVAL for an invalid addr or driver name, and -ENODEV when addr does
 * not exist. Returns -ENOENT when the driver is not loaded, so that
 * /sys/bus/pci/drivers/DRIVER does not exist. Other failures are a negative errno.
 */
int pci_driver_bind(RootFs *root, const char *addr, const char *driver);
/*
 * Undoes pci_driver_bind(). It writes original to driver_override, unbinds the function from its
 * current driver and writes drivers_probe. An original of "" or NULL lets the kernel choose by its
 * ID table. Then it clears driver_override by writing "\n", so nothing sticky is left. When the
 * function already sits where it should, only the override is cleared. Returns 1 when it changed
 * something. Returns 0 when there was nothing to do: there was no override, and the function was
 * bound to original, or to any driver that is not a vfio driver when original is "". Returns
 * -ENOENT when original is given but not loaded, and then nothing is written.
 */
int pci_driver_restore(RootFs *root, const char *addr, const char *original);
/*
 * Reads the current driver and driver_override, for planning and verification. The driver is ""
 * when the function is unbound, and the override is "" when the kernel shows "(null)". Either
 * output may be NULL, and both are untouched on failure. Returns -ENOBUFS when a name does not
 * fit, and -ENODEV when addr does not exist.
 */
int pci_driver_read(RootFs *root, const char *addr, char *ret_driver, size_t driver_size, char *ret_override,
                    size_t override_size);
