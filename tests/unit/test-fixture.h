/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-fixture.h — load a generated fixture host, or a config from text, for the unit tests */
#pragma once

#include "sriovd/config.h"
#include "sriovd/rootfs.h"
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
        ASSERT_EQ(rootfs_new(path, &r), 0);
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
