/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-guests.c — one flow on libvirt's test driver + a fixture host: allocate, attach, start, pin, undefine */

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "guests/guests.h"
#include "manager/manager.h"
#include "test-fixture.h"
#include "test.h"


/* A latency-critical guest whose vCPU 0 runs on host CPU 3. */
static const char domain_xml[] =
        "<domain type='test'>\n"
        "  <name>vm-trader</name><uuid>2d4b8f1e-7c3a-4e59-9b0d-6f1a2c3e4d5f</uuid>\n"
        "  <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os>\n"
        "  <cputune><vcpupin vcpu='0' cpuset='3'/><vcpupin vcpu='1' cpuset='2'/></cputune>\n"
        "  <devices></devices>\n"
        "</domain>\n";


static char *slurp(const char *path) {
        static char buf[256];
        FILE *f = fopen(path, "re");
        size_t n;

        ASSERT(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return buf;
}

/* Run the daemon's loop until pred holds (events, the 10 ms re-check). */
static bool run_until(Manager *m, bool (*pred)(Manager *m, void *ud), void *ud) {
        for (unsigned i = 0; i < 200; i++) {
                if (pred(m, ud))
                        return true;
                ASSERT(sd_event_run(manager_event_loop(m), 20 * 1000) >= 0);
        }
        return pred(m, ud);
}

static bool irq_on(Manager *m, void *ud) {
        return streq(slurp(ud), "3");
}

static bool irq_on_2(Manager *m, void *ud) {
        return streq(slurp(ud), "2");
}

static bool no_tenants(Manager *m, void *ud) {
        return manager_n_tenants(m) == 0;
}

/* A node with two guests already defined: vm-late shut off, vm-running running with vCPU 0 pinned to CPU 3. */
static const char node_with_domains_xml[] =
        "<node>\n"
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"
        "  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>\n"
        "    <name>vm-late</name><uuid>6a1c4e2b-0d3f-4b8a-9e7c-1f2a3b4c5d6e</uuid>\n"
        "    <memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os><devices></devices>\n"
        "    <test:runstate>5</test:runstate>\n"
        "  </domain>\n"
        "  <domain type='test'>\n"
        "    <name>vm-running</name><uuid>9b2d5f3c-1e4a-4c9b-8f0d-2a3b4c5d6e7f</uuid>\n"
        "    <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os>\n"
        "    <cputune><vcpupin vcpu='0' cpuset='3'/><vcpupin vcpu='1' cpuset='2'/></cputune>\n"
        "    <devices></devices>\n"
        "  </domain>\n"
        "</node>\n";

static bool connected(Manager *m, void *ud) {
        return guests_connected_now(manager_guests(m));
}

static unsigned first_irq_of(Manager *m, const char *vf) {
        const Inventory *inv = manager_inventory(m);

        for (size_t i = 0; i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        if (streq(inv->pfs[i].vfs[j].addr, vf))
                                return inv->pfs[i].vfs[j].irqs[0];
        return 0;
}

/*
 * DIR/root (a copy of the two-socket fixture), an empty DIR/tenant-classes.d, DIR/node.xml for
 * libvirt's test driver and DIR/sriovd.conf: state in DIR/state, that libvirt, then conf_tail.
 */
static void env_prepare(const char *fixtures, const char *dir, const char *node_xml, const char *conf_tail) {
        char path[512], conf[1024];

        sh("cp -a %s/fixture-two-socket %s/root && mkdir %s/tenant-classes.d", fixtures, dir, dir);
        snprintf(path, sizeof(path), "%s/node.xml", dir);
        test_write_file(path, node_xml);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        snprintf(conf, sizeof(conf), "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n%s", dir,
                 dir, conf_tail);
        test_write_file(path, conf);
}

/* A class file DIR/tenant-classes.d/NAME.ini. */
static void env_class(const char *dir, const char *name, const char *text) {
        char path[512];

        snprintf(path, sizeof(path), "%s/tenant-classes.d/%s.ini", dir, name);
        test_write_file(path, text);
}

/* The manager on env_prepare()'s DIR, its policy loaded, connected to libvirt. */
static Manager *env_start(const char *dir) {
        char root[512], path[512];
        Manager *m = NULL;

        snprintf(root, sizeof(root), "%s/root", dir);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        ASSERT_EQ(manager_new(root, path, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_connect_guests(m), 1);
        return m;
}

/*
 * libvirt is not there when the daemon starts: tenants are allocated meanwhile. When it comes
 * (here: the configuration names a reachable URI at the next attempt), sriovd connects on its
 * own backoff, attaches the pending NIC, re-pins the RT tenant's vCPUs of a guest that was
 * already running (no STARTED event ever came) and learns its vCPU 0: irq_cpus = vcpu puts the
 * VF's IRQ there.
 */
static void test_libvirt_late(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-late-XXXXXX", path[512], conf[1024], root[512], irq_path[512];
        Manager *m = NULL;
        TenantInfo late, rt;
        VirtError err = {};
        CycleResult res;
        char *xml = NULL;

        ASSERT(mkdtemp(dir));
        sh("cp -a %s/fixture-two-socket %s/root && cp -r %s/conf/tenant-classes.d %s/", fixtures, dir,
           getenv("SRIOVD_SOURCE_DIR"), dir);
        snprintf(path, sizeof(path), "%s/tenant-classes.d/lowlat.ini", dir);
        test_write_file(path, "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n");
        snprintf(path, sizeof(path), "%s/tenant-classes.d/rtpin.ini", dir);
        test_write_file(path, "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n"
                         "vcpu_pinning = rt\n");
        snprintf(path, sizeof(path), "%s/node.xml", dir);
        test_write_file(path, node_with_domains_xml);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        snprintf(conf, sizeof(conf),
                 "[daemon]\nstate_dir = %s/state\nlibvirt_uri = qemu+unix:///system?socket=%s/no-libvirt\n\n"
                 "[cpus]\nkeep_irqs_off_rt = no\n", dir, dir);
        test_write_file(path, conf);
        snprintf(root, sizeof(root), "%s/root", dir);

        ASSERT_EQ(manager_new(root, path, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_start_guests(m), 1);
        /* The first attempt fails: no socket. */
        for (unsigned i = 0; i < 20; i++)
                ASSERT(sd_event_run(manager_event_loop(m), 20 * 1000) >= 0);
        ASSERT(!connected(m, NULL));

        ASSERT_EQ(manager_allocate(m, "late", "lowlat", "vm-late", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &late, NULL, 0), 0);
        ASSERT_EQ(manager_allocate(m, "rt", "rtpin", "vm-running", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &rt, NULL, 0), 0);
        snprintf(irq_path, sizeof(irq_path), "%s/root/proc/irq/%u/smp_affinity_list", dir, first_irq_of(m, rt.vf));
        ASSERT(!streq(slurp(irq_path), "2"));

        /* A reload names a libvirt that is there: the next attempt, at once, connects. */
        snprintf(conf, sizeof(conf), "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n"
                 "[cpus]\nkeep_irqs_off_rt = no\n", dir, dir);
        test_write_file(path, conf);
        ASSERT_EQ(manager_load_config(m), 0);
        for (unsigned i = 0; i < 300 && !connected(m, NULL); i++)
                ASSERT(sd_event_run(manager_event_loop(m), 20 * 1000) >= 0);
        ASSERT(connected(m, NULL));

        /* The pending NIC is in the guest now. */
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-late", true, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "type='hostdev'");
        ASSERT_CONTAINS(xml, late.mac);
        free(xml);

        /*
         * vm-running was running before sriovd connected (no STARTED event): its RT tenant's vCPUs
         * are pinned at connect, and vCPU 0's CPU, now that pinning's, learnt; the IRQ follows it.
         */
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "<vcpupin vcpu='0' cpuset='2'/>");   /* was 3: not an RT CPU of the test node */
        free(xml);
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), "vm-running"), 2);
        ASSERT(run_until(m, irq_on_2, irq_path));

        manager_free(m);
        sh("rm -rf %s", dir);
}

/*
 * A running guest whose NIC cannot go in (the test driver has no device attach): its RT tenant's
 * CPUs are booked all the same, so the guest is placed on them at the allocation, before any
 * cycle's drift check could call that first placement drift.
 */
static void test_rt_placed_when_attach_fails(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-noattach-XXXXXX";
        Manager *m = NULL;
        TenantInfo rt;
        VirtError err = {};
        CycleResult res;
        char *xml = NULL;

        ASSERT(mkdtemp(dir));
        env_prepare(fixtures, dir, node_with_domains_xml, "[cpus]\nkeep_irqs_off_rt = no\n");
        env_class(dir, "rtpin", "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n"
                                "vcpu_pinning = rt\n");
        m = env_start(dir);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_allocate(m, "rt", "rtpin", "vm-running", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &rt, NULL, 0), 0);
        ASSERT_EQ(rt.n_rt_cpus, 1u);
        ASSERT_EQ(rt.rt_cpus[0], 2);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT(!strstr(xml, "type='hostdev'"));          /* the attach failed */
        ASSERT_CONTAINS(xml, "<vcpupin vcpu='0' cpuset='2'/>");
        free(xml);
        /* Memory placement is for the next start: in the definition. */
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", true, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "<memory mode='strict' nodeset='0'/>");
        free(xml);

        /* Released, the guest leaves its RT CPU (a class without vcpu_fifo_priority: pins only). */
        ASSERT_EQ(manager_release(m, "rt"), 0);
        ASSERT(run_until(m, no_tenants, NULL));
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT(!strstr(xml, "<vcpupin vcpu='0' cpuset='2'/>"));
        ASSERT_CONTAINS(xml, "<vcpupin vcpu='0' cpuset='0-1'/>");
        free(xml);

        manager_free(m);
        sh("rm -rf %s", dir);
}

/*
 * Tenants that name their guest by UUID only, as a scheduler that knows the guest's UUID does:
 * the NIC goes into the domain with that UUID, and an RT guest is placed and learnt by it.
 */
static void test_domain_by_uuid(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-uuid-XXXXXX";
        Manager *m = NULL;
        TenantInfo t, rt;
        VirtError err = {};
        CycleResult res;
        char *xml = NULL;
        TenantOptions late = { .numa_node = 0, .vlan = -1, .domain_uuid = "6a1c4e2b-0d3f-4b8a-9e7c-1f2a3b4c5d6e" };
        TenantOptions running = { .numa_node = 0, .vlan = -1, .domain_uuid = "9b2d5f3c-1e4a-4c9b-8f0d-2a3b4c5d6e7f" };

        ASSERT(mkdtemp(dir));
        env_prepare(fixtures, dir, node_with_domains_xml, "[cpus]\nkeep_irqs_off_rt = no\n");
        env_class(dir, "lowlat", "[class]\nvnic = sriov-required\nrank = 100\n");
        env_class(dir, "rtpin", "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n"
                                "vcpu_pinning = rt\n");
        m = env_start(dir);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);

        /* No domain name at all: vm-late, shut off, gets the NIC in its definition, found by UUID. */
        ASSERT_EQ(manager_allocate(m, "by-uuid", "lowlat", "", &late, &t, NULL, 0), 0);
        ASSERT_STREQ(t.domain, "");
        ASSERT_STREQ(t.domain_uuid, late.domain_uuid);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-late", true, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "type='hostdev'");
        ASSERT_CONTAINS(xml, t.mac);
        xml = mfree(xml);

        /* vm-running by UUID: its RT tenant's vCPU 0 goes on the booked RT CPU, and is learnt under either name. */
        ASSERT_EQ(manager_allocate(m, "rt-uuid", "rtpin", "", &running, &rt, NULL, 0), 0);
        ASSERT_EQ(rt.n_rt_cpus, 1u);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "<vcpupin vcpu='0' cpuset='2'/>");
        xml = mfree(xml);
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), running.domain_uuid), 2);
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), "vm-running"), 2);

        /* Released, the guest found by UUID leaves its RT CPU. */
        ASSERT_EQ(manager_release(m, "rt-uuid"), 0);
        ASSERT_EQ(manager_release(m, "by-uuid"), 0);
        ASSERT(run_until(m, no_tenants, NULL));
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT(!strstr(xml, "<vcpupin vcpu='0' cpuset='2'/>"));
        free(xml);

        manager_free(m);
        sh("rm -rf %s", dir);
}

/* Two domains sriovd has no tenant in: one running with VF 41:00.6, one shut off with VF 41:01.1 (index 7). */
static const char node_with_foreign_xml[] =
        "<node>\n"
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"
        "  <domain type='test'>\n"
        "    <name>vm-foreign</name><uuid>0c9e8d7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f</uuid>\n"
        "    <memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os><devices>\n"
        "      <hostdev mode='subsystem' type='pci' managed='yes'><source>"
        "<address domain='0x0000' bus='0x41' slot='0x00' function='0x6'/></source></hostdev>\n"
        "    </devices>\n"
        "  </domain>\n"
        "  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>\n"
        "    <name>vm-parked</name><uuid>1d0f9e8a-7b6c-4d5e-9f3a-2b1c0d9e8f7a</uuid>\n"
        "    <memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os><devices>\n"
        "      <interface type='hostdev' managed='yes'><mac address='52:54:00:aa:bb:cc'/><source>"
        "<address type='pci' domain='0x0000' bus='0x41' slot='0x01' function='0x1'/></source></interface>\n"
        "    </devices>\n"
        "    <test:runstate>5</test:runstate>\n"
        "  </domain>\n"
        "</node>\n";

static const char *last_error_note(Manager *m) {
        const Plan *p = manager_plan(m);

        for (size_t i = p->n_notes; i > 0; i--)
                if (p->notes[i - 1].level == NOTE_ERROR)
                        return p->notes[i - 1].text;
        return "";
}

/*
 * The VF-count guard knows libvirt's domains, not only tenants: a running one holding a VF
 * blocks any count change of its PF; a shut-off one only a change that removes its VF.
 */
static void test_foreign_domains_block_count_change(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-foreign-XXXXXX", path[512], conf[1024];
        Manager *m = NULL;
        CycleResult res;

        ASSERT(mkdtemp(dir));
        env_prepare(fixtures, dir, node_with_foreign_xml, "[pf 0000:41:00.0]\nnum_vfs = 12\n");
        m = env_start(dir);
        ASSERT_EQ(manager_cycle(m, CYCLE_DRY_RUN, &res), 0);
        ASSERT_EQ(res.n_policy_errors, 1);
        ASSERT_STREQ(last_error_note(m), "num_vfs 8 -> 12 refused: it destroys all 8 VFs and 1 are in use "
                                         "(domain vm-foreign); stop them first: a force covers sriovd's tenants "
                                         "only (config line 5)");

        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        snprintf(conf, sizeof(conf), "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n"
                 "[pf 0000:41:00.0]\nnum_vfs = 4\n", dir, dir);
        test_write_file(path, conf);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_force_num_vfs(m, "0000:41:00.0"), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_DRY_RUN, &res), 0);
        ASSERT_CONTAINS(last_error_note(m), "2 are in use (domain vm-foreign; domain vm-parked (shut off)); "
                                            "a force covers sriovd's tenants only");

        manager_free(m);
        sh("rm -rf %s", dir);
}

/* A running virtio-net guest (its "QEMU" 7400 is in the fixture's /proc, with the vhost worker 7450). */
#define VHOST_UUID "4e7d2c1a-9b3f-4d6e-8a5c-0f1e2d3c4b5a"
static const char node_with_virtio_xml[] =
        "<node>\n"
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"
        "  <domain type='test'>\n"
        "    <name>vm-web</name><uuid>" VHOST_UUID "</uuid>\n"
        "    <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os><devices></devices>\n"
        "  </domain>\n"
        "</node>\n";

static const Action *plan_find(const Plan *p, ActionKind kind) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind)
                        return &p->actions[i];
        return NULL;
}

/*
 * A virtio-net tenant whose class places its vhost workers: Plan shows each worker of the guest's
 * QEMU (found by the domain's UUID) moving to the housekeeping CPUs of the guest's node at the
 * class's FIFO, before -> after. The fixture's PIDs are not this host's: planned, never applied.
 * A class that leaves them plans nothing for them.
 */
static void test_vhost_plan(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-vhost-XXXXXX", root[512], buf[CPUSET_LIST_MAX];
        Manager *m = NULL;
        Plan *plan = NULL;
        const Action *a;
        TenantInfo t;
        CycleResult res;

        ASSERT(mkdtemp(dir));
        env_prepare(fixtures, dir, node_with_virtio_xml, "[cpus]\nrt = 4-7,20-23\nhousekeeping = 0-3,8-19,24-31\n");
        snprintf(root, sizeof(root), "%s/root", dir);
        test_proc_qemu(root, 7400, VHOST_UUID);
        test_proc_thread(root, "7450", 7450, "vhost-7400", 0x208040, 0, 0, "0-31");
        /* Another QEMU's worker: not this guest's. */
        test_proc_qemu(root, 7500, "00000000-1111-2222-3333-444444444444");
        test_proc_thread(root, "7550", 7550, "vhost-7500", 0x208040, 0, 0, "0-31");
        env_class(dir, "web", "[class]\nvnic = virtio\nrank = 0\nvhost_cpus = housekeeping\nvhost_priority = 3\n");
        env_class(dir, "plain", "[class]\nvnic = virtio\nrank = 0\n");
        m = env_start(dir);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_allocate(m, "web", "web", "vm-web", &(TenantOptions) { .numa_node = 1, .vlan = -1 }, &t,
                                   NULL, 0), 0);
        ASSERT_STREQ(t.kind, "virtio");

        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        a = plan_find(plan, ACTION_SET_VHOST_PIN);
        ASSERT(a);
        ASSERT_EQ(a->pid, 7450);
        ASSERT_STREQ(cpuset_format_list(&a->cpus_before, buf, sizeof(buf)), "0-31");
        ASSERT_STREQ(cpuset_format_list(&a->cpus_after, buf, sizeof(buf)), "16-19,24-31");   /* node 1's housekeeping */
        ASSERT_STREQ(a->effect, "domain vm-web vhost-7400 thread 7450");
        a = plan_find(plan, ACTION_SET_VHOST_SCHED);
        ASSERT(a);
        ASSERT_EQ(a->pid, 7450);
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "other/0");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "fifo/3");
        for (size_t i = 0; i < plan->n_actions; i++)
                ASSERT(plan->actions[i].pid != 7550);
        plan = plan_free(plan);

        /* A drift check under a fixture root touches no thread of this host's: still to do after it. */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(plan_find(plan, ACTION_SET_VHOST_PIN));
        plan = plan_free(plan);

        /* The same tenant in a class that leaves vhost alone: nothing planned for it. */
        ASSERT_EQ(manager_allocate(m, "web", "plain", "vm-web", &(TenantOptions) { .numa_node = 1, .vlan = -1 }, &t,
                                   NULL, 0), 0);
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(!plan_find(plan, ACTION_SET_VHOST_PIN) && !plan_find(plan, ACTION_SET_VHOST_SCHED));
        plan = plan_free(plan);

        manager_free(m);
        sh("rm -rf %s", dir);
}

/* The i-th action of kind in p, or NULL. */
static const Action *plan_find_nth(const Plan *p, ActionKind kind, unsigned i) {
        for (size_t k = 0; k < p->n_actions; k++)
                if (p->actions[k].kind == kind && i-- == 0)
                        return &p->actions[k];
        return NULL;
}

/*
 * An RT guest that already runs when its RT CPU is booked: <vcpusched> in its definition takes
 * effect only from its next start, so Plan also shows its QEMU's vCPU threads (found by the
 * domain's UUID, "CPU N/KVM"): vCPU 0 to the class's SCHED_FIFO, the housekeeping vCPU 1 off the
 * FIFO it had. The fixture's PIDs are not this host's: planned, never applied, so still to do
 * after a cycle.
 */
static void test_rt_vcpu_threads_plan(const char *fixtures) {
        char dir[] = "/tmp/sriovd-guests-vcpu-XXXXXX", root[512], buf[64], pin[64];
        VirtError err = {};
        char *xml = NULL;
        Manager *m = NULL;
        Plan *plan = NULL;
        const Action *a;
        TenantInfo rt;
        CycleResult res;

        ASSERT(mkdtemp(dir));
        env_prepare(fixtures, dir, node_with_domains_xml, "[cpus]\nkeep_irqs_off_rt = no\n");
        snprintf(root, sizeof(root), "%s/root", dir);
        test_proc_qemu(root, 7600, "9b2d5f3c-1e4a-4c9b-8f0d-2a3b4c5d6e7f");   /* vm-running's */
        test_proc_thread(root, "7600/task/7610", 7610, "CPU 0/KVM", 0x400040, 0, 0, "0-31");
        test_proc_thread(root, "7600/task/7611", 7611, "CPU 1/KVM", 0x400040, 1, 5, "0-31");
        env_class(dir, "rtpin", "[class]\nvnic = sriov-required\nrank = 100\nvcpu_pinning = rt\n"
                                "vcpu_fifo_priority = 10\n");
        m = env_start(dir);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_allocate(m, "rt", "rtpin", "vm-running", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &rt, NULL, 0), 0);
        ASSERT_EQ(rt.n_rt_cpus, 1u);

        for (unsigned pass = 0; pass < 2; pass++) {
                ASSERT_EQ(manager_plan_now(m, &plan), 0);
                a = plan_find_nth(plan, ACTION_SET_VCPU_THREAD, 0);
                ASSERT(a);
                ASSERT_EQ(a->pid, 7610);
                ASSERT_EQ(a->vcpu, 0u);
                ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "other/0");
                ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "fifo/10");
                ASSERT_STREQ(a->effect, "domain vm-running vCPU 0 thread 7610");
                a = plan_find_nth(plan, ACTION_SET_VCPU_THREAD, 1);
                ASSERT(a);
                ASSERT_EQ(a->pid, 7611);
                ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "fifo/5");
                ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "other/0");
                ASSERT(!plan_find_nth(plan, ACTION_SET_VCPU_THREAD, 2));
                plan = plan_free(plan);
                /* A drift check under a fixture root touches no thread of this host's. */
                ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        }

        /* Once QEMU's threads are as the class says, nothing is planned for them. */
        test_proc_thread(root, "7600/task/7610", 7610, "CPU 0/KVM", 0x400040, 1, 10, "0-31");
        test_proc_thread(root, "7600/task/7611", 7611, "CPU 1/KVM", 0x400040, 0, 0, "0-31");
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(!plan_find(plan, ACTION_SET_VCPU_THREAD));
        plan = plan_free(plan);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        snprintf(pin, sizeof(pin), "<vcpupin vcpu='0' cpuset='%u'/>", rt.rt_cpus[0]);
        ASSERT_CONTAINS(xml, pin);
        xml = mfree(xml);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", true, &xml, &err), 0);
        ASSERT_CONTAINS(xml, "<vcpusched vcpus='0' scheduler='fifo' priority='10'/>");
        xml = mfree(xml);

        /* Released: its RT CPU is the next guest's, so the guest leaves it and its FIFO, once durable. */
        ASSERT_EQ(manager_release(m, "rt"), 0);
        ASSERT(run_until(m, no_tenants, NULL));
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", false, &xml, &err), 0);
        ASSERT(!strstr(xml, pin));
        xml = mfree(xml);
        ASSERT_EQ(virt_domain_xml(guests_virt(manager_guests(m)), "vm-running", true, &xml, &err), 0);
        ASSERT(!strstr(xml, pin));
        ASSERT(!strstr(xml, "<vcpusched"));
        xml = mfree(xml);

        manager_free(m);
        sh("rm -rf %s", dir);
}

int main(int argc, char **argv) {
        char dir[] = "/tmp/sriovd-guests-XXXXXX", path[512], conf[1024], irq_path[512];
        Manager *m = NULL;
        TenantInfo t;
        CycleResult res;
        VirtError err = {};
        char *xml = NULL;
        unsigned first_irq;

        ASSERT(argc == 2);
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        ASSERT(mkdtemp(dir));
        sh("cp -a %s/fixture-two-socket %s/root && cp -r %s/conf/tenant-classes.d %s/", argv[1], dir,
           getenv("SRIOVD_SOURCE_DIR"), dir);
        snprintf(path, sizeof(path), "%s/tenant-classes.d/lowlat.ini", dir);
        test_write_file(path, "[class]\nvnic = sriov-required\nrank = 100\nirq_cpus = vcpu\nirq_spread = single\n");
        snprintf(path, sizeof(path), "%s/node.xml", dir);
        test_write_file(path, TEST_LIBVIRT_NODE_XML);
        snprintf(conf, sizeof(conf),
                 "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n[cpus]\nkeep_irqs_off_rt = no\n",
                 dir, dir);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        test_write_file(path, conf);
        snprintf(irq_path, sizeof(irq_path), "%s/root", dir);

        ASSERT_EQ(manager_new(irq_path, path, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_connect_guests(m), 1);
        Virt *v = guests_virt(manager_guests(m));
        ASSERT_EQ(virt_define_xml(v, domain_xml, &err), 0);

        /* The controller asks: a VF for the trader, in vm-trader. It is decided, saved, and put in the domain. */
        ASSERT_EQ(manager_allocate(m, "trader", "lowlat", "vm-trader", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &t, NULL, 0), 0);
        ASSERT_STREQ(t.kind, "vf");
        ASSERT_STREQ(t.pf, "0000:41:00.0");
        ASSERT_EQ(virt_domain_xml(v, "vm-trader", true, &xml, &err), 0);
        char bus_slot[64];
        snprintf(bus_slot, sizeof(bus_slot), "slot='0x%.2s' function='0x%c'", t.vf + 8, t.vf[11]);
        ASSERT_CONTAINS(xml, "type='hostdev'");
        ASSERT_CONTAINS(xml, bus_slot);
        ASSERT_CONTAINS(xml, t.mac);
        free(xml);

        /* The guest starts: its vCPU 0 runs on CPU 3, and the VF's interrupts go there (R5). */
        const Inventory *inv = manager_inventory(m);
        first_irq = 0;
        for (size_t j = 0; j < inv->pfs[0].n_vfs; j++)
                if (streq(inv->pfs[0].vfs[j].addr, t.vf))
                        first_irq = inv->pfs[0].vfs[j].irqs[0];
        ASSERT(first_irq > 0);
        snprintf(irq_path, sizeof(irq_path), "%s/root/proc/irq/%u/smp_affinity_list", dir, first_irq);
        ASSERT(!streq(slurp(irq_path), "3"));
        ASSERT_EQ(virt_domain_start(v, "vm-trader", &err), 0);
        ASSERT(run_until(m, irq_on, irq_path));
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), "vm-trader"), 3);

        /* It is stopped (NIC kept: release_on_stop = no), then undefined: the tenant gives its VF back. */
        ASSERT_EQ(virt_domain_destroy(v, "vm-trader", &err), 0);
        ASSERT(sd_event_run(manager_event_loop(m), 50 * 1000) >= 0);
        ASSERT_EQ(manager_n_tenants(m), 1);
        ASSERT_EQ(guests_vcpu0_cpu(manager_guests(m), "vm-trader"), -1);
        ASSERT_EQ(virt_domain_undefine(v, "vm-trader", &err), 0);
        ASSERT(run_until(m, no_tenants, NULL));

        manager_free(m);
        sh("rm -rf %s", dir);

        test_libvirt_late(argv[1]);
        test_rt_placed_when_attach_fails(argv[1]);
        test_domain_by_uuid(argv[1]);
        test_foreign_domains_block_count_change(argv[1]);
        test_vhost_plan(argv[1]);
        test_rt_vcpu_threads_plan(argv[1]);
        return 0;
}
