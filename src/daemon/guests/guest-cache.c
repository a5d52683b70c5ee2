/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-cache.c — put a running RT guest's vCPU threads in an L3 cache group of their own
 *
 * Intel CAT gives each resctrl group a set of L3 ways. An RT guest whose class names
 * l3_cache_mask gets a group "sriovd-DOMAIN" with those ways, and its RT vCPU threads go in it.
 * Other threads of the guest stay in the default group. The group goes when the guest leaves its
 * RT CPUs.
 */

#include <string.h>

#include "sriovd/kernel/qemu-vcpu.h"
#include "guest-cache.h"
#include "guest-vcpu.h"

int guest_cache_group_name(const char *domain, char ret[static RESCTRL_GROUP_NAME_MAX]) {
        int n = snprintf(ret, RESCTRL_GROUP_NAME_MAX, "sriovd-%s", domain);

        if (n < 0 || n >= RESCTRL_GROUP_NAME_MAX || !path_component_valid(ret))
                return -EINVAL;
        return 0;
}

int guest_cache_place(RootFs *root, Virt *v, const char *domain, uint64_t mask, const GuestPlacement *p,
                      bool dry_run, pid_t *qemu_hint, GuestCacheResult *ret, VirtError *err) {
        _cleanup_free_ VcpuThread *threads = NULL;
        CacheInfo info;
        size_t n = 0;
        int r, exists;

        *ret = (GuestCacheResult) {};
        r = guest_cache_group_name(domain, ret->group);
        if (r < 0)
                return r;
        r = resctrl_info_read(root, &info);
        if (r == -EOPNOTSUPP) {
                ret->unsupported = true;
                return 0;
        }
        if (r < 0)
                return r;
        exists = resctrl_group_exists(root, ret->group);
        if (exists < 0)
                return exists;
        if (cache_mask_check(&info, mask, !exists, ret->why, sizeof(ret->why)) < 0)
                return 0;
        if (dry_run) {
                ret->created = !exists;
                return 0;
        }

        r = resctrl_group_create(root, ret->group);
        if (r < 0)
                return r;
        ret->created = r > 0;
        r = resctrl_group_set_l3(root, ret->group, &info, mask);
        if (r < 0)
                return r;
        ret->mask_set = r > 0;

        r = guest_vcpu_threads(root, v, domain, qemu_hint, &threads, &n, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (threads[i].vcpu >= p->n_rt)
                        continue;
                r = resctrl_group_add_task(root, ret->group, threads[i].tid);
                if (r == -ESRCH)
                        continue;   /* A thread that is gone needs no group. */
                if (r < 0)
                        return r;
                ret->n_moved += (unsigned) r;
        }
        return 0;
}

int guest_cache_remove(RootFs *root, const char *domain, GuestCacheResult *ret) {
        int r;

        *ret = (GuestCacheResult) {};
        if (guest_cache_group_name(domain, ret->group) < 0)
                return 0;   /* No group can have that name. */
        /* This runs for every RT guest without a mask at each check, so it looks before it reads more. */
        r = resctrl_group_exists(root, ret->group);
        if (r <= 0)
                return r;
        return resctrl_group_remove(root, ret->group);
}
