/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-discovery.c — observe on every fixture host reports exactly what the tree holds */

#include <sched.h>
#include <string.h>

#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "kernel/pci.h"
#include "test-fixture.h"

static const char *fixtures_dir;

static Inventory *discover(const char *host, const Scope *scope) {
        return test_fixture_inventory(fixtures_dir, host, scope);
}

static const char *list(const CpuSet *s) {
        static char buf[4][CPUSET_LIST_MAX];
        static unsigned i;
        return cpuset_format_list(s, buf[i++ % 4], sizeof(buf[0]));
}

static void assert_irq_range(const unsigned *irqs, size_t n, unsigned first, size_t count) {
        ASSERT_EQ(n, count);
        for (size_t i = 0; i < n; i++)
                ASSERT_EQ(irqs[i], first + i);
}

static void check_cx6dx_pf(const Pf *pf, const char *addr, int node, const char *cpus,
                           const char *netdev, int ifindex, int vf0_ifindex, int group, unsigned first_irq,
                           const char *vf_prefix) {
        char mac[MAC_STR_MAX], want_mac[MAC_STR_MAX];

        ASSERT_STREQ(pf->addr, addr);
        ASSERT_EQ(pf->vendor, 0x15b3);
        ASSERT_EQ(pf->device, 0x101d);
        ASSERT_CONTAINS(pf->name, "ConnectX-6 Dx");   /* libpci's pci.ids lookup */
        ASSERT_STREQ(pf->driver, "mlx5_core");
        ASSERT_EQ(pf->numa_node, node);
        ASSERT_STREQ(list(&pf->local_cpus), cpus);
        ASSERT_EQ(pf->n_netdevs, 1);
        ASSERT_STREQ(pf->netdevs[0], netdev);
        ASSERT_EQ(pf->ifindex, ifindex);
        ASSERT(pf->have_mac);
        snprintf(want_mac, sizeof(want_mac), "b8:ce:f6:%.2s:00:00", addr + 5);
        ASSERT_STREQ(mac_format(pf->mac, mac), want_mac);
        ASSERT(!pf->vf_links_known);   /* rtnetlink's part, not the sysfs reader's */
        ASSERT_EQ(pf->total_vfs, 16);
        ASSERT_EQ(pf->num_vfs, 8);
        ASSERT_EQ(pf->drivers_autoprobe, 1);
        ASSERT_EQ(pf->iommu_group, group);
        assert_irq_range(pf->irqs, pf->n_irqs, first_irq, 9);

        ASSERT_EQ(pf->n_vfs, 8);
        for (unsigned i = 0; i < 8; i++) {
                const Vf *vf = &pf->vfs[i];
                char want[PCI_ADDR_MAX], dev[IF_NAMESIZE];
                /* offset 2, stride 1: functions 2..7 of device 0, then 0..1 of device 1 */
                unsigned fn = 2 + i;

                snprintf(want, sizeof(want), "%.8s%02x.%u", addr, fn / 8, fn % 8);
                ASSERT_EQ(vf->index, i);
                ASSERT_STREQ(vf->addr, want);
                ASSERT_EQ(vf->iommu_group, group + 1 + (int) i);
                assert_irq_range(vf->irqs, vf->n_irqs, first_irq + 9 + 4 * i, 4);
                if (i < 4) {
                        snprintf(dev, sizeof(dev), "%s%u", vf_prefix, i);
                        ASSERT_STREQ(vf->driver, "mlx5_core");
                        ASSERT_STREQ(vf->netdev, dev);
                        ASSERT_EQ(vf->ifindex, vf0_ifindex + (int) i);
                } else {
                        /* passed through: no host netdev */
                        ASSERT_STREQ(vf->driver, "vfio-pci");
                        ASSERT_STREQ(vf->netdev, "");
                        ASSERT_EQ(vf->ifindex, 0);
                }
        }
}

TEST(two_socket) {
        _cleanup_(inventory_freep) Inventory *inv = discover("two-socket", NULL);

        ASSERT_STREQ(list(&inv->topo.online), "0-31");
        ASSERT_EQ(inv->topo.n_nodes, 2);
        ASSERT_STREQ(list(&inv->topo.node_cpus[0]), "0-15");
        ASSERT_STREQ(list(&inv->topo.node_cpus[1]), "16-31");
        ASSERT_STREQ(list(&inv->topo.isolated), "2-7,18-23");
        ASSERT_STREQ(list(&inv->topo.nohz_full), "2-7,18-23");

        ASSERT(inv->caps.preempt_rt);
        ASSERT(inv->caps.threaded_irqs);
        ASSERT(inv->caps.rtnet_prio_present);
        ASSERT_EQ(inv->caps.rtnet_prio, 0);
        ASSERT(inv->caps.iommu);
        ASSERT(inv->caps.irqbalance);

        /* The NVMe controller is not a NIC in scope. */
        ASSERT_EQ(inv->n_pfs, 2);
        check_cx6dx_pf(&inv->pfs[0], "0000:41:00.0", 0, "0-15", "enp65s0f0np0", 4, 10, 1, 44, "enp65s0f0v");
        check_cx6dx_pf(&inv->pfs[1], "0000:c1:00.0", 1, "16-31", "enp193s0f0np0", 5, 14, 10, 85, "enp193s0f0v");
        ASSERT(inventory_find_pf(inv, "0000:c1:00.0") == &inv->pfs[1]);
        ASSERT(!inventory_find_pf(inv, "0000:01:00.0"));

        /* 2 PFs x 9 + 16 VFs x 4 vectors, each with its FIFO 50 handler thread. */
        ASSERT_EQ(inv->n_irqs, 82);
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const Irq *q = &inv->irqs[i];
                ASSERT_EQ(q->irq, 44 + i);
                ASSERT_STREQ(list(&q->affinity), "0-31");
                ASSERT(q->has_effective);
                ASSERT_EQ(cpuset_count(&q->effective), 1);
                ASSERT(q->writable);
                ASSERT_EQ(q->thread, 1000 + (q->irq - 40));
                ASSERT_EQ(q->thread_policy, SCHED_FIFO);
                ASSERT_EQ(q->thread_priority, 50);
        }
        ASSERT(inventory_find_irq(inv, 125));
        ASSERT(!inventory_find_irq(inv, 126));
        ASSERT(!inventory_find_irq(inv, 40));
}

TEST(irq_threads_only_kernel_threads) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ IrqThread *t = NULL;
        _cleanup_free_ Kthread *k = NULL;
        char path[1024];
        bool irqbalance;
        size_t n, n_k;

        snprintf(path, sizeof(path), "%s/fixture-two-socket", fixtures_dir);
        ASSERT_EQ(rootfs_new(path, NULL, &r), 0);
        ASSERT_EQ(irq_threads_scan(r, &t, &n, &k, &n_k, &irqbalance), 0);
        /* 82 NIC + 4 NVMe + 1 ACPI handler threads; the user process named irq/999-x is not one. */
        ASSERT_EQ(n, 87);
        ASSERT_EQ(t[0].irq, 9);
        for (size_t i = 0; i < n; i++)
                ASSERT(t[i].irq != 999);
        ASSERT(irqbalance);
        /* A PREEMPT_RT host: ksoftirqd/N, ktimers/N and rcuc/N for each of its 32 CPUs, sorted by kind and CPU. */
        ASSERT_EQ(n_k, 3 * 32);
        ASSERT_EQ(k[0].kind, KTHREAD_KSOFTIRQD);
        ASSERT_EQ(k[0].num, 0);
        ASSERT_EQ(k[0].pid, 200);
        ASSERT_EQ(k[3].num, 3);
        ASSERT_STREQ(k[3].name, "ksoftirqd/3");
        ASSERT_EQ(k[3].policy, SCHED_OTHER);
        ASSERT_EQ(k[32].kind, KTHREAD_KTIMERS);
        ASSERT_EQ(k[32 + 5].pid, 201 + 3 * 5);
        ASSERT_EQ(k[32 + 5].policy, SCHED_FIFO);
        ASSERT_EQ(k[32 + 5].priority, 1);
        ASSERT_EQ(k[64].kind, KTHREAD_RCUC);
        ASSERT_STREQ(k[95].name, "rcuc/31");

        /* NVMe vectors are kernel-managed: read-only affinity. */
        Irq q;
        ASSERT_EQ(irq_read(r, 40, &q), 0);
        ASSERT(!q.writable);
        ASSERT_EQ(irq_read(r, 44, &q), 0);
        ASSERT(q.writable);
        ASSERT_EQ(irq_read(r, 9999, &q), -ENOENT);
}

TEST(one_socket_cx7) {
        _cleanup_(inventory_freep) Inventory *inv = discover("one-socket-cx7", NULL);
        const Pf *pf;

        ASSERT_STREQ(list(&inv->topo.online), "0-7");
        ASSERT_EQ(inv->topo.n_nodes, 1);
        ASSERT(cpuset_is_empty(&inv->topo.isolated));
        ASSERT(cpuset_is_empty(&inv->topo.nohz_full));   /* "(null)" */
        ASSERT(!inv->caps.preempt_rt);
        ASSERT(!inv->caps.threaded_irqs);
        ASSERT(!inv->caps.rtnet_prio_present);
        ASSERT(!inv->caps.iommu);
        ASSERT(!inv->caps.irqbalance);
        /* Not PREEMPT_RT: ksoftirqd only, found through the inventory. */
        ASSERT_EQ(inv->n_kthreads, 8);
        ASSERT(inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, 7));
        ASSERT_EQ(inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, 7)->pid, 221);
        ASSERT(!inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, 8));
        ASSERT(!inventory_find_kthread(inv, KTHREAD_KTIMERS, 0));

        ASSERT_EQ(inv->n_pfs, 1);
        pf = &inv->pfs[0];
        ASSERT_STREQ(pf->addr, "0000:17:00.0");
        ASSERT_EQ(pf->device, 0x1021);
        ASSERT_CONTAINS(pf->name, "ConnectX-7");
        ASSERT_EQ(pf->numa_node, -1);       /* unknown, and not guessed */
        ASSERT_STREQ(list(&pf->local_cpus), "0-7");
        ASSERT_STREQ(pf->netdevs[0], "ens1f0np0");
        ASSERT_EQ(pf->total_vfs, 16);
        ASSERT_EQ(pf->num_vfs, 0);
        ASSERT_EQ(pf->n_vfs, 0);
        ASSERT_EQ(pf->iommu_group, -1);
        assert_irq_range(pf->irqs, pf->n_irqs, 40, 9);
        ASSERT_EQ(inv->n_irqs, 9);
        for (size_t i = 0; i < inv->n_irqs; i++)
                ASSERT_EQ(inv->irqs[i].thread, 0);
}

/* Names are kept for the process (pci.ids is read for new IDs only): a second read names alike. */
TEST(names_kept) {
        _cleanup_(inventory_freep) Inventory *a = discover("one-socket-cx7", NULL);
        _cleanup_(inventory_freep) Inventory *b = discover("one-socket-cx7", NULL);
        _cleanup_(inventory_freep) Inventory *c = discover("two-socket", NULL);

        ASSERT_EQ(a->n_pfs, 1);
        ASSERT_EQ(b->n_pfs, 1);
        ASSERT_CONTAINS(b->pfs[0].name, "ConnectX-7");
        ASSERT_STREQ(a->pfs[0].name, b->pfs[0].name);
        /* Another host's IDs after these: looked up, not taken from the first. */
        ASSERT(c->n_pfs > 0);
        ASSERT_CONTAINS(c->pfs[0].name, "ConnectX-6 Dx");
}

TEST(no_nic) {
        _cleanup_(inventory_freep) Inventory *inv = discover("no-nic", NULL);
        ASSERT_EQ(inv->n_pfs, 0);
        ASSERT_EQ(inv->n_irqs, 0);
        ASSERT_STREQ(list(&inv->topo.online), "0-3");

        /* Any PCI ID by policy: the I350 becomes a managed PF. */
        static const PciId ids[] = { { 0x8086, 0x1521 } };
        Scope by_id = { .ids = ids, .n_ids = 1 };
        _cleanup_(inventory_freep) Inventory *a = discover("no-nic", &by_id);
        ASSERT_EQ(a->n_pfs, 1);
        ASSERT_STREQ(a->pfs[0].addr, "0000:03:00.0");
        ASSERT_STREQ(a->pfs[0].driver, "igb");
        ASSERT_EQ(a->pfs[0].total_vfs, 7);
        ASSERT_EQ(a->pfs[0].numa_node, 0);
        ASSERT_EQ(a->n_irqs, 5);

        /* ... or by address; the virtio NIC, not SR-IOV capable, never is. */
        static const char addrs[][PCI_ADDR_MAX] = { "0000:03:00.0", "0000:00:03.0" };
        Scope by_addr = { .ids = ids, .n_ids = 0, .addrs = addrs, .n_addrs = 2 };
        _cleanup_(inventory_freep) Inventory *b = discover("no-nic", &by_addr);
        ASSERT_EQ(b->n_pfs, 1);
        ASSERT_STREQ(b->pfs[0].addr, "0000:03:00.0");
}

/*
 * A hotplug's read of one VF (sriov_read_vf_of()): its index is where SR-IOV's offset and stride
 * put it, confirmed by that one virtfn link; when the arithmetic misses (a tree whose offset is
 * wrong) or the link there names another VF, the links are read one by one, and the link is what
 * counts. Each way, the VF read is the full read's.
 */
TEST(one_vf_by_offset_and_stride) {
        char tmpl[] = "/tmp/sriovd-vf-of-XXXXXX", cmd[1024], pfdir[128];
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        HostProblems problems = {};
        const Pf *pf;
        const Vf *want;
        Vf vf = {};

        ASSERT(mkdtemp(tmpl));
        snprintf(cmd, sizeof(cmd), "cp -a %s/fixture-two-socket/. %s/", fixtures_dir, tmpl);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(rootfs_new(tmpl, NULL, &r), 0);
        ASSERT_EQ(inventory_read(r, NULL, &inv), 0);
        pf = inventory_find_pf(inv, "0000:41:00.0");
        ASSERT(pf && pf->n_vfs >= 4);
        want = &pf->vfs[3];
        ASSERT_STREQ(want->addr, "0000:41:00.5");   /* offset 2, stride 1 */

        ASSERT_EQ(sriov_read_vf_of(r, pf, want->addr, &problems, &vf), 0);
        ASSERT_EQ(vf.index, 3u);
        ASSERT_EQ(vf.n_irqs, want->n_irqs);
        ASSERT(vf.n_irqs > 0 && vf.irqs[0] == want->irqs[0]);
        free(vf.irqs);
        vf = (Vf) {};

        /* A wrong offset: found by its link all the same. */
        snprintf(pfdir, sizeof(pfdir), "%s/sys/bus/pci/devices/0000:41:00.0", tmpl);
        snprintf(cmd, sizeof(cmd), "echo 7 > %s/sriov_offset", pfdir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(sriov_read_vf_of(r, pf, want->addr, &problems, &vf), 0);
        ASSERT_EQ(vf.index, 3u);
        free(vf.irqs);
        vf = (Vf) {};

        /* The offset right again, virtfn1 and virtfn2 swapped: 00.3 is virtfn2 now, as its link says. */
        snprintf(cmd, sizeof(cmd), "echo 2 > %1$s/sriov_offset && ln -sfn ../0000:41:00.4 %1$s/virtfn1 && "
                 "ln -sfn ../0000:41:00.3 %1$s/virtfn2", pfdir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(sriov_read_vf_of(r, pf, "0000:41:00.3", &problems, &vf), 0);
        ASSERT_EQ(vf.index, 2u);
        free(vf.irqs);
        vf = (Vf) {};
        ASSERT_EQ(sriov_read_vf_of(r, pf, "0000:41:00.4", &problems, &vf), 0);
        ASSERT_EQ(vf.index, 1u);
        free(vf.irqs);
        vf = (Vf) {};

        /* Not one of its VFs: the PF itself, another PF's VF. */
        ASSERT_EQ(sriov_read_vf_of(r, pf, "0000:41:00.0", &problems, &vf), -ENOENT);
        ASSERT_EQ(sriov_read_vf_of(r, pf, "0000:c1:00.2", &problems, &vf), -ENOENT);
        host_problems_done(&problems);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        ASSERT_EQ(system(cmd), 0);
}

TEST(libpci_stays_in_root) {
        char tmpl[] = "/tmp/sriovd-empty-XXXXXX", cmd[256];
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ PciFunction *fns = NULL;
        HostProblems problems = {};
        Inventory *inv = NULL;
        size_t n = 99;

        ASSERT(mkdtemp(tmpl));
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/bus/pci/devices", tmpl);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(rootfs_new(tmpl, NULL, &r), 0);
        /* An empty tree has no devices: libpci must not fall back to the host's /proc/bus/pci. */
        ASSERT_EQ(pci_scan(r, &problems, &fns, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(problems.n, 0);
        /* A tree without CPUs is not a host. */
        ASSERT(inventory_read(r, NULL, &inv) < 0);
        ASSERT(!inv);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        ASSERT_EQ(system(cmd), 0);

        ASSERT_EQ(rootfs_new("/nonexistent/sriovd", NULL, &r), -ENOENT);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(two_socket);
        RUN(irq_threads_only_kernel_threads);
        RUN(one_socket_cx7);
        RUN(names_kept);
        RUN(no_nic);
        RUN(one_vf_by_offset_and_stride);
        RUN(libpci_stays_in_root);
        return 0;
}
