/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-resctrl.c — L3 cache groups: the masks a class may name, the schemata syntax, and a group
 * made, given a mask and threads, and removed on a fixture copied from a two-socket host's
 * /sys/fs/resctrl. A fixture's mkdir and rmdir do not do the kernel's part, so the test does it:
 * it writes a new group's schemata and tasks, and it empties the group before its rmdir.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/cache-partition.h"
#include "sriovd/kernel/resctrl.h"
#include "test.h"

TEST(mask) {
        ASSERT(cache_mask_valid(0x1));
        ASSERT(cache_mask_valid(0xfffff));
        ASSERT(cache_mask_valid(0xff000));
        ASSERT(cache_mask_valid(0x8000000000000000ULL));
        ASSERT(cache_mask_valid(UINT64_MAX));
        ASSERT(!cache_mask_valid(0));
        ASSERT(!cache_mask_valid(0x101));
        ASSERT(!cache_mask_valid(0xf0f));
        ASSERT_EQ(cache_mask_ways(0xff000), 8);
}

TEST(check) {
        CacheInfo info = { .cbm_mask = 0xfffff, .min_cbm_bits = 2, .num_closids = 16, .closids_used = 1 };
        char why[128] = "";

        ASSERT_EQ(cache_mask_check(&info, 0xff000, true, why, sizeof(why)), 0);
        ASSERT_EQ(cache_mask_check(&info, 0xff0000, true, why, sizeof(why)), -ERANGE);
        ASSERT_STREQ(why, "l3_cache_mask ff0000 has ways outside the cache's mask fffff");
        ASSERT_EQ(cache_mask_check(&info, 0x80000, true, why, sizeof(why)), -EINVAL);
        ASSERT_STREQ(why, "l3_cache_mask 80000 has 1 ways, fewer than the 2 the CPU needs");
        info.closids_used = 16;
        ASSERT_EQ(cache_mask_check(&info, 0xff000, true, why, sizeof(why)), -ENOSPC);
        ASSERT_STREQ(why, "all 16 CLOSIDs are in use, so no new cache group can be made");
        /* A group that exists holds its CLOSID already. */
        ASSERT_EQ(cache_mask_check(&info, 0xff000, false, why, sizeof(why)), 0);
}

TEST(parse) {
        unsigned ids[4];
        uint64_t masks[4];
        size_t n = 99;

        ASSERT_EQ(resctrl_l3_parse("L3:0=fffff;1=ff000", ids, masks, 4, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(ids[0], 0);
        ASSERT_EQ(masks[0], 0xfffff);
        ASSERT_EQ(ids[1], 1);
        ASSERT_EQ(masks[1], 0xff000);
        /* With memory bandwidth allocation the names are padded to the widest. */
        ASSERT_EQ(resctrl_l3_parse("    MB:0=100;1=100\n    L3:0=7ff;1=3\n", ids, masks, 4, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(masks[0], 0x7ff);
        ASSERT_EQ(masks[1], 0x3);
        ASSERT_EQ(resctrl_l3_parse("MB:0=100", ids, masks, 4, &n), -ENOENT);
        ASSERT_EQ(resctrl_l3_parse("L3CODE:0=ff;1=ff\nL3DATA:0=ff;1=ff", ids, masks, 4, &n), -ENOENT);
        ASSERT_EQ(resctrl_l3_parse("L3:0=", ids, masks, 4, &n), -EINVAL);
        ASSERT_EQ(resctrl_l3_parse("L3:0=ff,1=ff", ids, masks, 4, &n), -EINVAL);
        ASSERT_EQ(resctrl_l3_parse("L3:x=ff", ids, masks, 4, &n), -EINVAL);
        ASSERT_EQ(resctrl_l3_parse("L3:0=ff;1=ff;2=ff;3=ff;4=ff", ids, masks, 4, &n), -EINVAL);
}

/* Does what the kernel does at mkdir: a new group's schemata holds every way, and its tasks file is empty. */
static void kernel_mkdir(const char *root, const char *group) {
        sh("cd %s/sys/fs/resctrl/%s && printf 'L3:0=fffff;1=fffff\\n' > schemata && : > tasks", root, group);
}

static char *read_text(const char *root, const char *file) {
        char path[512];
        char *text = NULL;
        size_t size = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/sys/fs/resctrl/%s", root, file);
        f = fopen(path, "re");
        ASSERT(f);
        ASSERT(getdelim(&text, &size, 0, f) >= 0);
        fclose(f);
        return text;
}

TEST(fixture) {
        char dir[] = "/tmp/sriovd-resctrl-XXXXXX";
        const char *mkhost = getenv("SRIOVD_MKHOST");
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        char root[sizeof(dir) + 8];
        CacheInfo info;
        char *text;

        ASSERT(mkhost);
        ASSERT(mkdtemp(dir));
        snprintf(root, sizeof(root), "%s/root", dir);
        sh("python3 %s two-socket %s --resctrl", mkhost, root);
        ASSERT_EQ(rootfs_new(root, NULL, &r), 0);

        ASSERT_EQ(resctrl_info_read(r, &info), 0);
        ASSERT_EQ(info.cbm_mask, 0xfffff);
        ASSERT_EQ(info.min_cbm_bits, 1);
        ASSERT_EQ(info.num_closids, 16);
        ASSERT_EQ(info.shareable_bits, 0);
        ASSERT_EQ(info.n_domains, 2);
        ASSERT_EQ(info.domains[0], 0);
        ASSERT_EQ(info.domains[1], 1);
        ASSERT_EQ(info.closids_used, 1);

        ASSERT_EQ(resctrl_group_exists(r, "sriovd-rt1"), 0);
        ASSERT_EQ(resctrl_group_create(r, "sriovd-rt1"), 1);
        kernel_mkdir(root, "sriovd-rt1");
        ASSERT_EQ(resctrl_group_create(r, "sriovd-rt1"), 0);
        ASSERT_EQ(resctrl_group_exists(r, "sriovd-rt1"), 1);
        ASSERT_EQ(resctrl_info_read(r, &info), 0);
        ASSERT_EQ(info.closids_used, 2);

        ASSERT_EQ(resctrl_group_set_l3(r, "sriovd-rt1", &info, 0xff000), 1);
        text = read_text(root, "sriovd-rt1/schemata");
        ASSERT_STREQ(text, "L3:0=ff000;1=ff000\n");
        free(text);
        ASSERT_EQ(resctrl_group_set_l3(r, "sriovd-rt1", &info, 0xff000), 0);
        /* The default group keeps its mask. */
        text = read_text(root, "schemata");
        ASSERT_STREQ(text, "L3:0=fffff;1=fffff\n");
        free(text);

        /* One TID per write. The kernel lists it at once; a fixture file keeps the last write. */
        ASSERT_EQ(resctrl_group_add_task(r, "sriovd-rt1", 3001), 1);
        text = read_text(root, "sriovd-rt1/tasks");
        ASSERT_STREQ(text, "3001\n");
        free(text);
        ASSERT_EQ(resctrl_group_add_task(r, "sriovd-rt1", 3001), 0);
        sh("printf '3001\\n3002\\n' > %s/sys/fs/resctrl/sriovd-rt1/tasks", root);
        ASSERT_EQ(resctrl_group_add_task(r, "sriovd-rt1", 3002), 0);
        ASSERT_EQ(resctrl_group_add_task(r, "sriovd-rt1", 300), 1);
        ASSERT_EQ(resctrl_group_add_task(r, "sriovd-rt1", 0), -EINVAL);

        /* Names that would leave the group's directory, or take resctrl's own. */
        ASSERT_EQ(resctrl_group_create(r, "../x"), -EINVAL);
        ASSERT_EQ(resctrl_group_create(r, "info"), -EINVAL);
        ASSERT_EQ(resctrl_group_create(r, "mon_groups"), -EINVAL);
        ASSERT_EQ(resctrl_group_create(r, ""), -EINVAL);
        ASSERT_EQ(resctrl_group_remove(r, ".."), -EINVAL);

        /* The kernel's rmdir drops the group's files and gives its threads back. */
        ASSERT_EQ(resctrl_group_remove(r, "sriovd-rt1"), -ENOTEMPTY);
        sh("rm %s/sys/fs/resctrl/sriovd-rt1/*", root);
        ASSERT_EQ(resctrl_group_remove(r, "sriovd-rt1"), 1);
        ASSERT_EQ(resctrl_group_remove(r, "sriovd-rt1"), 0);
        ASSERT_EQ(resctrl_group_exists(r, "sriovd-rt1"), 0);
        ASSERT_EQ(resctrl_info_read(r, &info), 0);
        ASSERT_EQ(info.closids_used, 1);

        /* A host without CAT, or without resctrl mounted. */
        sh("rm -r %s/sys/fs/resctrl/info", root);
        ASSERT_EQ(resctrl_info_read(r, &info), -EOPNOTSUPP);
        sh("rm -r %s/sys/fs/resctrl", root);
        ASSERT_EQ(resctrl_info_read(r, &info), -EOPNOTSUPP);
        sh("rm -r %s", dir);
}

int main(int argc, char **argv) {
        RUN(mask);
        RUN(check);
        RUN(parse);
        RUN(fixture);
        return 0;
}
