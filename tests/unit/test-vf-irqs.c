/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-vf-irqs.c — a passthrough VF's vfio-msix vectors appear after its guest starts: found and pinned */

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "sriovd/shared/util.h"
#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "guests/guests.h"
#include "manager/manager.h"
#include "vf/vf-irq-watch.h"
#include "test-fixture.h"


/* A guest whose vCPU 0 runs on host CPU 3. */
static const char domain_xml[] =
        "<domain type='test'>\n"
        "  <name>vm-trader</name><uuid>4c1f2a3b-5d6e-4f70-8a9b-0c1d2e3f4a5b</uuid>\n"
        "  <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os>\n"
        "  <cputune><vcpupin vcpu='0' cpuset='3'/><vcpupin vcpu='1' cpuset='2'/></cputune>\n"
        "  <devices></devices>\n"
        "</domain>\n";

#define VF_TRADER "0000:41:00.2"
#define VF_BULK "0000:41:00.3"
#define THREAD_PID_OF(irq) ((irq) + 960)   /* as mkhost.py numbers irq/N- threads */

static char *slurp(const char *path) {
        static char buf[64 * 1024];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return strcpy(buf, "");
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = 0;
        return buf;
}


static unsigned count_of(const char *haystack, const char *needle) {
        unsigned n = 0;
        for (const char *p = haystack; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

/*
 * What libvirt's managed='yes' does at the domain's start: the VF leaves its host driver (netdev
 * and vectors gone) for vfio-pci. The guest has not enabled MSI-X yet: no msi_irqs/ at all.
 */
static void vf_to_vfio(const char *root, const char *vf) {
        sh("set -e; P=$(readlink -f %1$s/sys/bus/pci/devices/%2$s); "
           "for q in $(ls $P/msi_irqs); do rm -rf %1$s/proc/irq/$q %1$s/proc/$((q + 960)); done; "
           "for n in $(ls $P/net); do rm -f %1$s/sys/class/net/$n; done; "
           "rm -rf $P/net $P/msi_irqs; ln -sfn ../../../bus/pci/drivers/vfio-pci $P/driver; "
           "printf vfio-pci > $P/driver_override; sed -i '/%2$s/d' %1$s/proc/interrupts",
           root, vf);
}

/*
 * The guest's driver enables MSI-X: the kernel makes vfio-msix[index](VF) vectors, IRQ first..,
 * each in msi_irqs/, /proc/irq/N (on every CPU, as the kernel starts them), /proc/interrupts
 * (6.12 layout) and, with threaded IRQs, an irq/N- kernel thread at FIFO 50 (the fixture's).
 */
static void vectors_appear(const char *root, const char *vf, unsigned first, unsigned index, unsigned n) {
        char path[1024], stat[1024];

        for (unsigned i = 0; i < n; i++) {
                unsigned q = first + i, pid = THREAD_PID_OF(q);
                const char *rest;

                sh("set -e; P=$(readlink -f %1$s/sys/bus/pci/devices/%2$s); I=%1$s/proc/irq/%3$u; "
                   "mkdir -p \"$I/vfio-msix[%4$u](%2$s)\" $P/msi_irqs %1$s/proc/%5$u; "
                   "echo 0-31 > $I/smp_affinity_list; echo ffffffff > $I/smp_affinity; "
                   "echo 0 > $I/effective_affinity_list; echo 00000001 > $I/effective_affinity; echo 0 > $I/node; "
                   "printf '%%5u: %%s IR-PCI-MSIX-%2$s %%3u-edge      vfio-msix[%4$u](%2$s)\\n' %3$u 0 %4$u "
                   ">> %1$s/proc/interrupts; "
                   "echo msix > $P/msi_irqs/%3$u",
                   root, vf, q, index + i, pid);
                /* The thread: the fixture's IRQ 69 one (a vfio-msix thread too), renumbered. */
                snprintf(path, sizeof(path), "%s/proc/1029/stat", root);
                rest = strstr(slurp(path), ") ");
                ASSERT(rest);
                snprintf(stat, sizeof(stat), "%u (irq/%u-vfio-msix[%u](%s)%s", pid, q, index + i, vf, rest);
                snprintf(path, sizeof(path), "%s/proc/%u/stat", root, pid);
                test_write_file(path, stat);
                snprintf(stat, sizeof(stat), "irq/%u-vfio-msix[%u](%s)", q, index + i, vf);
                snprintf(path, sizeof(path), "%s/proc/%u/comm", root, pid);
                test_write_file(path, stat);
        }
}

static const char *affinity(const char *root, unsigned irq) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/proc/irq/%u/smp_affinity_list", root, irq);
        return slurp(path);
}

static const Vf *find_vf(Manager *m, const char *addr) {
        const Vf *vf = NULL;
        return manager_inventory(m) && inventory_find_function(manager_inventory(m), addr, &vf) ? vf : NULL;
}

static bool vf_on_vfio(Manager *m, const char *addr) {
        const Vf *vf = find_vf(m, addr);
        return vf && streq(vf->driver, "vfio-pci") && vf->n_irqs == 0;
}

static const Action *plan_thread_action(Manager *m, unsigned irq) {
        const Plan *p = manager_plan(m);
        for (size_t i = 0; p && i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_IRQ_THREAD && p->actions[i].irq == irq)
                        return &p->actions[i];
        return NULL;
}

/* The looks' schedule and their "news" on the fixture's own vfio-pci VF (41:00.6, IRQs 69-72). */
static void test_schedule(const char *fixtures) {
        _cleanup_(inventory_freep) Inventory *inv = test_fixture_inventory(fixtures, "two-socket", NULL);
        _cleanup_(rootfs_freep) RootFs *root = NULL;
        VfIrqWatchList l = {};
        const uint64_t s = VF_IRQ_WATCH_FIRST_USEC, t0 = 1000 * s;
        char path[1024], vf[PCI_ADDR_MAX] = "";
        Vf *v = NULL;

        snprintf(path, sizeof(path), "%s/fixture-two-socket", fixtures);
        ASSERT_EQ(rootfs_new(path, NULL, &root), 0);
        ASSERT(vf_irq_watch_driver_is_vfio("vfio-pci"));
        ASSERT(vf_irq_watch_driver_is_vfio("mlx5_vfio_pci"));   /* a vendor's variant of vfio-pci */
        ASSERT(!vf_irq_watch_driver_is_vfio("mlx5_core"));
        ASSERT_EQ(vf_irq_watch_next(&l), UINT64_MAX);

        /* Nothing there (no vectors the inventory lacks): looks at 1, 2, 4, ... 64 s, then the watch ends. */
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.6", t0), 0);
        ASSERT_EQ(vf_irq_watch_next(&l), t0 + s);
        ASSERT_EQ(vf_irq_watch_look(&l, root, inv, t0 + s / 2, vf), 0);   /* not due */
        ASSERT_EQ(vf_irq_watch_next(&l), t0 + s);
        for (unsigned k = 0; k < VF_IRQ_WATCH_LOOKS; k++) {
                ASSERT_EQ(l.n, 1);
                ASSERT_EQ(vf_irq_watch_next(&l), t0 + (s << k));
                ASSERT_EQ(vf_irq_watch_look(&l, root, inv, t0 + (s << k), vf), 0);
        }
        ASSERT_EQ(l.n, 0);
        ASSERT_EQ(vf_irq_watch_next(&l), UINT64_MAX);

        /* The inventory had no vectors of the VF, msi_irqs/ has: news; one more look, quiet, ends it. */
        ASSERT(inventory_find_function(inv, "0000:41:00.6", (const Vf **) &v) && v && v->n_irqs == 4);
        v->n_irqs = 0;
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.6", t0), 0);
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.2", t0), 0);   /* mlx5_core: not read, no news */
        ASSERT_EQ(vf_irq_watch_look(&l, root, inv, t0 + 4 * s, vf), 1);
        ASSERT_STREQ(vf, "0000:41:00.6");
        ASSERT_EQ(l.n, 2);
        v->n_irqs = 4;   /* the cycle that news started has read them */
        ASSERT_EQ(vf_irq_watch_next(&l), t0 + 5 * s);
        ASSERT_EQ(vf_irq_watch_look(&l, root, inv, t0 + 5 * s, vf), 0);
        ASSERT_EQ(l.n, 1);
        ASSERT_STREQ(l.items[0].vf, "0000:41:00.2");
        ASSERT_EQ(l.items[0].next, t0 + 8 * s);   /* missed looks are not made up: the next one */

        /* The drift check saw them first: the watch ends at its next quiet look. */
        vf_irq_watch_list_done(&l);
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.6", t0), 0);
        vf_irq_watch_seen(&l, inv);
        ASSERT_EQ(vf_irq_watch_look(&l, root, inv, t0 + s, vf), 0);
        ASSERT_EQ(l.n, 0);

        /* Restarted (the guest started again): the schedule starts over. */
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.6", t0), 0);
        ASSERT_EQ(vf_irq_watch_add(&l, "0000:41:00.6", t0 + 10 * s), 0);
        ASSERT_EQ(l.n, 1);
        ASSERT_EQ(vf_irq_watch_next(&l), t0 + 11 * s);
        vf_irq_watch_list_done(&l);
}

/* Run the daemon's loop until pred holds, for at most budget_ms. */
static bool run_until(Manager *m, bool (*pred)(Manager *m, const void *ud), const void *ud, unsigned budget_ms) {
        uint64_t end = now_usec() + (uint64_t) budget_ms * 1000;

        while (now_usec() < end) {
                if (pred(m, ud))
                        return true;
                ASSERT(sd_event_run(manager_event_loop(m), 20 * 1000) >= 0);
        }
        return pred(m, ud);
}

typedef struct Pinned {
        const char *root;
        unsigned first, n;
        const char *cpu;
} Pinned;

static bool all_pinned(Manager *m, const void *ud) {
        const Pinned *p = ud;
        for (unsigned i = 0; i < p->n; i++)
                if (!streq(affinity(p->root, p->first + i), p->cpu))
                        return false;
        return true;
}

static bool on_vfio(Manager *m, const void *ud) {
        return vf_on_vfio(m, ud);
}

int main(int argc, char **argv) {
        char dir[] = "/tmp/sriovd-vf-irqs-XXXXXX", path[512], conf[1024], root[512], logpath[600];
        Manager *m = NULL;
        TenantInfo t, b;
        CycleResult res;
        VirtError err = {};
        const char *log;
        uint64_t started, elapsed;
        int logfd, saved_stderr;

        ASSERT(argc == 2);
        test_schedule(argv[1]);

        /* As the daemon has it: the libvirt probe's exit comes through sd-event. */
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        ASSERT(sigprocmask(SIG_BLOCK, &mask, NULL) == 0);
        ASSERT(mkdtemp(dir));
        sh("cp -a %s/fixture-two-socket %s/root && cp -r %s/conf/tenant-classes.d %s/", argv[1], dir,
           getenv("SRIOVD_SOURCE_DIR"), dir);
        snprintf(path, sizeof(path), "%s/tenant-classes.d/lowlat.ini", dir);
        test_write_file(path, "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n"
                         "irq_thread_priority = 80\n");
        snprintf(path, sizeof(path), "%s/tenant-classes.d/listed.ini", dir);
        test_write_file(path, "[class]\nvnic = sriov-required\nrank = 50\nirq_cpus = 9\n");
        snprintf(path, sizeof(path), "%s/node.xml", dir);
        test_write_file(path, TEST_LIBVIRT_NODE_XML);
        snprintf(conf, sizeof(conf),
                 "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n[cpus]\nkeep_irqs_off_rt = no\n",
                 dir, dir);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        test_write_file(path, conf);
        snprintf(root, sizeof(root), "%s/root", dir);

        /* The daemon's log, to see what it said (and how often); kept in dir if a check fails. */
        snprintf(logpath, sizeof(logpath), "%s/log", dir);
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        ASSERT(logfd >= 0);
        saved_stderr = dup(STDERR_FILENO);
        ASSERT(dup2(logfd, STDERR_FILENO) == STDERR_FILENO);

        ASSERT_EQ(manager_new(root, path, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_connect_guests(m), 1);
        Virt *v = guests_virt(manager_guests(m));
        ASSERT_EQ(virt_define_xml(v, domain_xml, &err), 0);
        ASSERT_EQ(manager_allocate(m, "trader", "lowlat", "vm-trader", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &t, NULL, 0), 0);
        ASSERT_STREQ(t.vf, VF_TRADER);

        /* virsh start: libvirt rebinds the VF to vfio-pci, QEMU runs, STARTED arrives. No vectors yet. */
        vf_to_vfio(root, VF_TRADER);
        started = now_usec();
        ASSERT_EQ(virt_domain_start(v, "vm-trader", &err), 0);
        ASSERT(run_until(m, on_vfio, VF_TRADER, 2000));
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), "vm-trader"), 3);

        /*
         * The guest's igbvf enables MSI-X a little later; nothing announces it. No drift timer runs
         * in this test: the looks after STARTED find the vectors (the first at 1 s) and pin them to
         * vCPU 0's CPU, IRQ threads planned at the class's priority.
         */
        ASSERT(run_until(m, on_vfio, VF_TRADER, 200));
        vectors_appear(root, VF_TRADER, 200, 0, 3);
        ASSERT(run_until(m, all_pinned, &(Pinned) { root, 200, 3, "3" }, 3000));
        elapsed = (now_usec() - started) / 1000;
        fprintf(stdout, "vectors pinned %" PRIu64 " ms after STARTED\n", elapsed);
        ASSERT(elapsed < 2500);
        log = slurp(logpath);
        ASSERT_CONTAINS(log, "Re-checking after kernel event: MSI-X vectors of passthrough VF " VF_TRADER);
        ASSERT_CONTAINS(log, "Tenant trader: 3 new vfio-msix vectors of VF " VF_TRADER " (its guest enabled MSI-X), "
                             "placed for class lowlat: IRQ 200 vfio-msix[0](" VF_TRADER ") on CPU 3, "
                             "IRQ 201 vfio-msix[1](" VF_TRADER ") on CPU 3, IRQ 202 vfio-msix[2](" VF_TRADER
                             ") on CPU 3 [pf=0000:41:00.0 vf=" VF_TRADER " tenant=trader irq=200]");
        ASSERT(!strstr(log, "Drift repaired"));   /* new vectors, not drift */
        const Vf *vf = find_vf(m, VF_TRADER);
        ASSERT(vf && vf->n_irqs == 3 && vf->irqs[0] == 200);
        const Action *a = plan_thread_action(m, 200);
        ASSERT(a && a->after == 80 && a->pid == THREAD_PID_OF(200));

        /*
         * QEMU adds a vector later (the guest unmasks another one), after the looks: the drift
         * check's cycle (what the timer runs every drift_check_sec) finds and pins it, once.
         */
        vectors_appear(root, VF_TRADER, 203, 3, 1);
        ASSERT_EQ(manager_run_cycle_now(m, &res), 0);
        ASSERT_STREQ(affinity(root, 203), "3");
        ASSERT_EQ(res.n_drift, 0);
        ASSERT_EQ(manager_run_cycle_now(m, &res), 0);
        ASSERT_EQ(res.n_done, 0);   /* nothing left to pin (thread priorities: skipped on a fixture) */
        log = slurp(logpath);
        ASSERT_EQ(count_of(log, "3 new vfio-msix vectors of VF " VF_TRADER), 1);
        ASSERT_EQ(count_of(log, "1 new vfio-msix vectors of VF " VF_TRADER), 1);
        ASSERT_CONTAINS(log, "IRQ 203 vfio-msix[3](" VF_TRADER ") on CPU 3 [pf=0000:41:00.0 vf=" VF_TRADER
                             " tenant=trader irq=203]");
        ASSERT(!strstr(log, "Drift repaired"));

        /* Another class, no libvirt domain: a passthrough VF's vectors follow the class's CPU list. */
        ASSERT_EQ(manager_allocate(m, "bulk", "listed", NULL, &(TenantOptions) { .numa_node = 0, .vlan = -1 }, &b,
                                   NULL, 0), 0);
        ASSERT_STREQ(b.vf, VF_BULK);
        vf_to_vfio(root, VF_BULK);
        ASSERT_EQ(manager_run_cycle_now(m, &res), 0);
        ASSERT(vf_on_vfio(m, VF_BULK));
        vectors_appear(root, VF_BULK, 210, 0, 2);
        ASSERT_EQ(manager_run_cycle_now(m, &res), 0);
        ASSERT_STREQ(affinity(root, 210), "9");
        ASSERT_STREQ(affinity(root, 211), "9");
        ASSERT_EQ(res.n_drift, 0);
        log = slurp(logpath);
        ASSERT_CONTAINS(log, "Tenant bulk: 2 new vfio-msix vectors of VF " VF_BULK);
        ASSERT(!strstr(log, "Drift repaired"));

        /* An affinity changed behind sriovd's back is still drift. */
        sh("echo 0-31 > %s/proc/irq/201/smp_affinity_list", root);
        ASSERT_EQ(manager_run_cycle_now(m, &res), 0);
        ASSERT_STREQ(affinity(root, 201), "3");
        ASSERT_CONTAINS(slurp(logpath), "Drift repaired: irq-affinity " VF_TRADER " IRQ 201: 0-31 -> 3");

        manager_free(m);
        ASSERT(dup2(saved_stderr, STDERR_FILENO) == STDERR_FILENO);
        sh("rm -rf %s", dir);
        return 0;
}
