/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cache-partition.c — whether an L3 capacity bitmask fits the host's cache allocation */

#include <errno.h>
#include <stdio.h>

#include "sriovd/core/cache-partition.h"

bool cache_mask_valid(uint64_t mask) {
        uint64_t low;

        if (mask == 0)
                return false;
        /* Adding the lowest set bit clears one run of set bits. Anything left is a second run. */
        low = mask & -mask;
        return ((mask + low) & mask) == 0;
}

unsigned cache_mask_ways(uint64_t mask) {
        return (unsigned) __builtin_popcountll(mask);
}

int cache_mask_check(const CacheInfo *info, uint64_t mask, bool new_group, char *why, size_t size) {
        if (mask & ~info->cbm_mask) {
                snprintf(why, size, "l3_cache_mask %llx has ways outside the cache's mask %llx",
                         (unsigned long long) mask, (unsigned long long) info->cbm_mask);
                return -ERANGE;
        }
        if (cache_mask_ways(mask) < info->min_cbm_bits) {
                snprintf(why, size, "l3_cache_mask %llx has %u ways, fewer than the %u the CPU needs",
                         (unsigned long long) mask, cache_mask_ways(mask), info->min_cbm_bits);
                return -EINVAL;
        }
        if (new_group && info->closids_used >= info->num_closids) {
                snprintf(why, size, "all %u CLOSIDs are in use, so no new cache group can be made",
                         info->num_closids);
                return -ENOSPC;
        }
        return 0;
}
