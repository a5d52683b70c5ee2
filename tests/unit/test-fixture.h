/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-fixture.h — load a generated fixture host, or a config from text, for the unit tests */
#pragma once

#include "sriovd/kernel/discover.h"
#include "sriovd/kernel/rootfs.h"
#include "config/config.h"
#include "test.h"

/* A host for libvirt's test driver (test:///path): one NUMA cell of 4 CPUs. */
#define TEST_LIBVIRT_NODE_XML                                                                     \
        "<node>\n"                                                                                \
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"         \
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"                          \
        "</node>\n"

/* The inventory of build/tests/fixture-HOST. */
static inline Inventory *test_fixture_inventory(const char *fixtures_dir, const char *host, const Scope *scope) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Inventory *inv = NULL;
        char path[1024];

        snprintf(path, sizeof(path), "%s/fixture-%s", fixtures_dir, host);
        ASSERT_EQ(rootfs_new(path, NULL, &r), 0);
        ASSERT_EQ(inventory_read(r, scope, &inv), 0);
        return inv;
}

/* A config that must load; classes from classes_dir (may be NULL). */
static inline Config *test_config(const char *text, const char *classes_dir) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;
        int r = config_load_string("test.conf", text, classes_dir, &c, &errors);
        if (r < 0)
                fprintf(stderr, "%s\n", errors);
        ASSERT_EQ(r, 0);
        return c;
}

/*
 * A thread in a fixture's /proc: ROOT/proc/DIR/stat of thread pid named comm with flags (field 9:
 * PF_KTHREAD is 0x200000), policy and rt priority (fields 41, 40); and, if cpus, its status with
 * Cpus_allowed_list.
 */
static inline void test_proc_thread(const char *root, const char *dir, int pid, const char *comm, unsigned long flags,
                                    int policy, int prio, const char *cpus) {
        char path[512], text[1024];
        int k;

        sh("mkdir -p %s/proc/%s", root, dir);
        snprintf(path, sizeof(path), "%s/proc/%s/stat", root, dir);
        k = snprintf(text, sizeof(text), "%d (%s) S", pid, comm);
        for (unsigned field = 4; field <= 52; field++)
                k += snprintf(text + k, sizeof(text) - (size_t) k, " %lu",
                              field == 9 ? flags : field == 40 ? (unsigned long) prio :
                              field == 41 ? (unsigned long) policy : 0UL);
        snprintf(text + k, sizeof(text) - (size_t) k, "\n");
        test_write_file(path, text);
        if (!cpus)
                return;
        snprintf(path, sizeof(path), "%s/proc/%s/status", root, dir);
        snprintf(text, sizeof(text), "Name:\t%s\nState:\tS (sleeping)\nCpus_allowed:\tf\nCpus_allowed_list:\t%s\n"
                                     "Mems_allowed_list:\t0\n", comm, cpus);
        test_write_file(path, text);
}

/* A QEMU process in a fixture's /proc: pid (its main thread), with the command line libvirt gives it (-uuid uuid). */
static inline void test_proc_qemu(const char *root, int pid, const char *uuid) {
        char dir[64];

        sh("mkdir -p %s/proc/%d && printf 'qemu-system-x86_64\\000-name\\000guest=g,debug-threads=on\\000-uuid\\000%s\\000' "
           "> %s/proc/%d/cmdline", root, pid, uuid, root, pid);
        snprintf(dir, sizeof(dir), "%d/task/%d", pid, pid);
        test_proc_thread(root, dir, pid, "qemu-system-x86", 0x400000, 0, 0, "0-3");
}
