/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-guest-cache.c — an RT guest's L3 cache group, through the manager and libvirt's test
 * driver, on the two-socket fixture with resctrl: made when the guest gets its RT CPU, its mask
 * written and its RT vCPU thread moved in, removed when the guest leaves its RT CPU. A mask the
 * cache cannot hold, and a host without resctrl, are notes in the plan. The fixture's mkdir and
 * rmdir do not do the kernel's part, so the test does it: it writes the new group's files, and it
 * drops them before the group's removal.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>

#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "guests/guests.h"
#include "manager/manager.h"
#include "test-fixture.h"
#include "test.h"

/* vm-running runs with two vCPUs. Its QEMU is PID 7600 in the fixture's /proc. */
static const char node_xml[] =
        "<node>\n"
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"
        "  <domain type='test'>\n"
        "    <name>vm-running</name><uuid>9b2d5f3c-1e4a-4c9b-8f0d-2a3b4c5d6e7f</uuid>\n"
        "    <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os><devices></devices>\n"
        "  </domain>\n"
        "</node>\n";

static char group_dir[512];

static bool run_until(Manager *m, bool (*pred)(Manager *m, void *ud), void *ud) {
        for (unsigned i = 0; i < 200; i++) {
                if (pred(m, ud))
                        return true;
                ASSERT(sd_event_run(manager_event_loop(m), 20 * 1000) >= 0);
        }
        return pred(m, ud);
}

static bool no_tenants(Manager *m, void *ud) {
        return manager_n_tenants(m) == 0;
}

static bool group_there(Manager *m, void *ud) {
        struct stat st;
        return stat(group_dir, &st) == 0;
}

static char *slurp(const char *dir, const char *file) {
        static char buf[256];
        char path[600];
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "re");
        ASSERT(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return buf;
}

static bool plan_has_note(const Plan *p, const char *text) {
        for (size_t i = 0; i < p->n_notes; i++)
                if (strstr(p->notes[i].text, text))
                        return true;
        return false;
}

static void class_file(const char *dir, const char *mask) {
        char path[512], text[256];

        snprintf(path, sizeof(path), "%s/tenant-classes.d/rtcache.ini", dir);
        snprintf(text, sizeof(text), "[class]\nvnic = sriov-required\nrank = 100\nvcpu_pinning = rt\nl3_cache_mask = %s\n",
                 mask);
        test_write_file(path, text);
}

int main(int argc, char **argv) {
        char dir[] = "/tmp/sriovd-guest-cache-XXXXXX", root[256], path[512], conf[1024];
        const char *mkhost = getenv("SRIOVD_MKHOST");
        Manager *m = NULL;
        Plan *plan = NULL;
        CycleResult res;
        TenantInfo rt;

        ASSERT(mkhost);
        log_setup(LOG_TARGET_STDERR, LOG_CRIT);
        ASSERT(mkdtemp(dir));
        snprintf(root, sizeof(root), "%s/root", dir);
        sh("python3 %s two-socket %s --resctrl && mkdir %s/tenant-classes.d", mkhost, root, dir);
        snprintf(group_dir, sizeof(group_dir), "%s/sys/fs/resctrl/sriovd-vm-running", root);
        test_proc_qemu(root, 7600, "9b2d5f3c-1e4a-4c9b-8f0d-2a3b4c5d6e7f");
        test_proc_thread(root, "7600/task/7610", 7610, "CPU 0/KVM", 0x400040, 0, 0, "0-31");
        test_proc_thread(root, "7600/task/7611", 7611, "CPU 1/KVM", 0x400040, 0, 0, "0-31");
        snprintf(path, sizeof(path), "%s/node.xml", dir);
        test_write_file(path, node_xml);
        snprintf(conf, sizeof(conf), "[daemon]\nstate_dir = %s/state\nlibvirt_uri = test://%s/node.xml\n\n"
                                     "[cpus]\nkeep_irqs_off_rt = no\n", dir, dir);
        snprintf(path, sizeof(path), "%s/sriovd.conf", dir);
        test_write_file(path, conf);
        class_file(dir, "ff000");

        ASSERT_EQ(manager_new(root, path, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_connect_guests(m), 1);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(manager_allocate(m, "rt", "rtcache", "vm-running", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &rt, NULL, 0), 0);
        ASSERT_EQ(rt.n_rt_cpus, 1u);

        /* The group is made. The kernel would fill it at once: here the test does. */
        ASSERT(run_until(m, group_there, NULL));
        sh("cd %s && printf 'L3:0=fffff;1=fffff\\n' > schemata && : > tasks", group_dir);
        guests_check_placements(manager_guests(m));
        ASSERT_STREQ(slurp(group_dir, "schemata"), "L3:0=ff000;1=ff000\n");
        /* Only vCPU 0 has an RT CPU, so only its thread goes in. */
        ASSERT_STREQ(slurp(group_dir, "tasks"), "7610\n");
        ASSERT_STREQ(slurp(root, "sys/fs/resctrl/schemata"), "L3:0=fffff;1=fffff\n");
        /* Placed: nothing left to say about it. */
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(!plan_has_note(plan, "L3"));
        plan = plan_free(plan);

        /* Released: the guest leaves its RT CPU, and its group goes. The kernel's rmdir drops the files. */
        sh("rm %s/*", group_dir);
        ASSERT_EQ(manager_release(m, "rt"), 0);
        ASSERT(run_until(m, no_tenants, NULL));
        ASSERT(!group_there(m, NULL));

        /* Ways the cache does not have: a note, no group and no crash. */
        class_file(dir, "3ff00000");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_allocate(m, "rt", "rtcache", "vm-running", &(TenantOptions) { .numa_node = 0, .vlan = -1 },
                                   &rt, NULL, 0), 0);
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(plan_has_note(plan, "domain vm-running gets no L3 cache group: l3_cache_mask 3ff00000 has ways "
                                   "outside the cache's mask fffff"));
        plan = plan_free(plan);
        ASSERT(!group_there(m, NULL));

        /* No CAT here: the plan says so once, and nothing is made. */
        sh("rm -r %s/sys/fs/resctrl", root);
        ASSERT_EQ(manager_plan_now(m, &plan), 0);
        ASSERT(plan_has_note(plan, "L3 cache partitions are not supported here: no /sys/fs/resctrl/info/L3; "
                                   "class rtcache's l3_cache_mask is not applied"));
        plan = plan_free(plan);

        manager_free(m);
        sh("rm -rf %s", dir);
        return 0;
}
