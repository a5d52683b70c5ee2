/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resctrl.c — L3 cache allocation groups in /sys/fs/resctrl
 *
 * The kernel's resctrl filesystem is driven with files and directories. info/L3 tells the cache's
 * limits. mkdir makes a control group, and the kernel fills it with its files. The group's
 * schemata file takes the capacity bitmask per cache domain, and its tasks file takes one TID per
 * write. rmdir removes the group and gives its threads back to the default group.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/resctrl.h"

#define RESCTRL "/sys/fs/resctrl"

/* Parses a hex mask as resctrl writes it, without "0x". */
static int parse_mask(const char *s, const char **ret_end, uint64_t *ret) {
        char *end;

        if (!s || !((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
                return -EINVAL;
        errno = 0;
        *ret = strtoull(s, &end, 16);
        if (errno == ERANGE)
                return -ERANGE;
        *ret_end = end;
        return 0;
}

int resctrl_l3_parse(const char *schemata, unsigned *ids, uint64_t *masks, size_t max, size_t *ret_n) {
        const char *line = schemata, *p;
        size_t n = 0;

        /* The kernel pads each resource's name on the left to the widest one, as "    MB:". */
        for (;;) {
                p = line + strspn(line, " ");
                if (strncmp(p, "L3:", 3) == 0)
                        break;
                line = strchr(line, '\n');
                if (!line)
                        return -ENOENT;
                line++;
        }
        p += 3;
        while (*p && *p != '\n') {
                unsigned long id;
                uint64_t mask;
                char *end;
                int r;

                if (*p < '0' || *p > '9')
                        return -EINVAL;
                id = strtoul(p, &end, 10);
                if (*end != '=' || id > UINT32_MAX || n >= max)
                        return -EINVAL;
                r = parse_mask(end + 1, &p, &mask);
                if (r < 0)
                        return -EINVAL;
                ids[n] = (unsigned) id;
                masks[n++] = mask;
                if (*p == ';')
                        p++;
                else if (*p && *p != '\n')
                        return -EINVAL;
        }
        *ret_n = n;
        return 0;
}

static int read_mask(RootFs *r, const char *file, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        const char *end;
        int k;

        k = rootfs_read(r, &s, RESCTRL "/info/L3/%s", file);
        if (k < 0)
                return k;
        k = parse_mask(s, &end, ret);
        return k < 0 ? k : *end ? -EINVAL : 0;
}

/* Counts the control groups: the default one and each directory beside info, mon_data and mon_groups. */
static int count_groups(RootFs *r, unsigned *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        unsigned n = 1;
        int k;

        k = rootfs_opendir(r, &d, RESCTRL);
        if (k < 0)
                return k;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || streq(de->d_name, "info") || streq(de->d_name, "mon_data") ||
                    streq(de->d_name, "mon_groups"))
                        continue;
                if (de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN && rootfs_exists(r, RESCTRL "/%s/tasks", de->d_name) > 0))
                        n++;
        }
        *ret = n;
        return 0;
}

int resctrl_info_read(RootFs *r, CacheInfo *ret) {
        _cleanup_free_ char *schemata = NULL;
        uint64_t masks[CACHE_DOMAINS_MAX];
        CacheInfo info = {};
        long l;
        int k;

        k = rootfs_exists(r, RESCTRL "/info/L3");
        if (k <= 0)
                return k < 0 ? k : -EOPNOTSUPP;
        k = read_mask(r, "cbm_mask", &info.cbm_mask);
        if (k >= 0)
                k = read_mask(r, "shareable_bits", &info.shareable_bits);
        if (k >= 0)
                k = rootfs_read_long(r, &l, RESCTRL "/info/L3/min_cbm_bits");
        if (k < 0)
                return k;
        info.min_cbm_bits = l < 0 ? 0 : (unsigned) l;
        k = rootfs_read_long(r, &l, RESCTRL "/info/L3/num_closids");
        if (k < 0)
                return k;
        if (l < 1 || l > 4096)
                return -EINVAL;
        info.num_closids = (unsigned) l;
        k = rootfs_read(r, &schemata, RESCTRL "/schemata");
        if (k >= 0)
                k = resctrl_l3_parse(schemata, info.domains, masks, CACHE_DOMAINS_MAX, &info.n_domains);
        if (k >= 0)
                k = count_groups(r, &info.closids_used);
        if (k < 0)
                return k;
        *ret = info;
        return 0;
}

static int group_valid(const char *group) {
        return path_component_valid(group) && strlen(group) < RESCTRL_GROUP_NAME_MAX &&
               !streq(group, "info") && !streq(group, "mon_data") && !streq(group, "mon_groups");
}

int resctrl_group_exists(RootFs *r, const char *group) {
        struct stat st;
        int k;

        if (!group_valid(group))
                return -EINVAL;
        k = rootfs_stat(r, &st, RESCTRL "/%s", group);
        if (k == -ENOENT || k == -ENOTDIR)
                return 0;
        return k < 0 ? k : S_ISDIR(st.st_mode);
}

int resctrl_group_create(RootFs *r, const char *group) {
        int k;

        if (!group_valid(group))
                return -EINVAL;
        k = rootfs_mkdir(r, RESCTRL "/%s", group);
        if (k == -EEXIST)
                return 0;
        return k < 0 ? k : 1;
}

int resctrl_group_set_l3(RootFs *r, const char *group, const CacheInfo *info, uint64_t mask) {
        _cleanup_free_ char *schemata = NULL;
        unsigned ids[CACHE_DOMAINS_MAX];
        uint64_t masks[CACHE_DOMAINS_MAX];
        char line[CACHE_DOMAINS_MAX * 32 + 8];
        size_t n = 0, len;
        bool same = true;
        int k;

        if (!group_valid(group) || info->n_domains == 0)
                return -EINVAL;
        k = rootfs_read(r, &schemata, RESCTRL "/%s/schemata", group);
        if (k < 0)
                return k;
        k = resctrl_l3_parse(schemata, ids, masks, CACHE_DOMAINS_MAX, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < info->n_domains && same; i++) {
                same = false;
                for (size_t j = 0; j < n; j++)
                        if (ids[j] == info->domains[i])
                                same = masks[j] == mask;
        }
        if (same)
                return 0;

        /* One write sets every domain, so the group never has the new mask on only some of them. */
        len = (size_t) snprintf(line, sizeof(line), "L3:");
        for (size_t i = 0; i < info->n_domains; i++)
                len += (size_t) snprintf(line + len, sizeof(line) - len, "%s%u=%" PRIx64, i ? ";" : "",
                                         info->domains[i], mask);
        snprintf(line + len, sizeof(line) - len, "\n");
        k = rootfs_write(r, line, RESCTRL "/%s/schemata", group);
        return k < 0 ? k : 1;
}

/* Whether the tasks file's text lists tid, one TID a line. */
static bool tasks_have(const char *tasks, pid_t tid) {
        for (const char *p = tasks; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strtol(p, NULL, 10) == (long) tid)
                        return true;
        return false;
}

int resctrl_group_add_task(RootFs *r, const char *group, pid_t tid) {
        _cleanup_free_ char *tasks = NULL;
        char value[24];
        int k;

        if (!group_valid(group) || tid <= 0)
                return -EINVAL;
        k = rootfs_read(r, &tasks, RESCTRL "/%s/tasks", group);
        if (k < 0)
                return k;
        if (tasks_have(tasks, tid))
                return 0;
        snprintf(value, sizeof(value), "%d\n", (int) tid);
        k = rootfs_write(r, value, RESCTRL "/%s/tasks", group);
        return k < 0 ? k : 1;
}

int resctrl_group_remove(RootFs *r, const char *group) {
        int k;

        if (!group_valid(group))
                return -EINVAL;
        k = rootfs_rmdir(r, RESCTRL "/%s", group);
        if (k == -ENOENT)
                return 0;
        return k < 0 ? k : 1;
}
