/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cache-partition.h — an L3 cache partition (Intel CAT) for an RT guest: the host's limits and the checks, without I/O */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A host has one L3 cache domain per socket, and some have one per die. */
#define CACHE_DOMAINS_MAX 64

/*
 * What resctrl's info/L3 says about the host's L3 cache allocation, and the CLOSIDs in use. The
 * kernel layer reads it from /sys/fs/resctrl, see resctrl_info_read().
 */
typedef struct CacheInfo {
        uint64_t cbm_mask;          /* info/L3/cbm_mask: every way of the cache */
        unsigned min_cbm_bits;      /* info/L3/min_cbm_bits: the fewest ways a group may have */
        unsigned num_closids;       /* info/L3/num_closids: control groups, the default one included */
        uint64_t shareable_bits;    /* info/L3/shareable_bits: ways that other agents, such as I/O, use too */
        unsigned domains[CACHE_DOMAINS_MAX];   /* the cache ids of the default group's L3 line */
        size_t n_domains;
        unsigned closids_used;      /* the default group and every other control group now */
} CacheInfo;

/*
 * Whether mask is a usable capacity bitmask as written in a class file: not zero, and one run of
 * set bits. The kernel refuses a mask with a hole unless info/L3/sparse_masks says 1, and no Intel
 * CPU says so.
 */
bool cache_mask_valid(uint64_t mask);
/* How many ways mask holds. */
unsigned cache_mask_ways(uint64_t mask);

/*
 * Checks mask against the host's limits before a group is made for it. new_group says that the
 * group does not exist yet, so it needs a free CLOSID. Returns 0 when it fits. Otherwise it
 * returns -ERANGE for ways the cache lacks, -EINVAL for fewer ways than min_cbm_bits, or -ENOSPC
 * when no CLOSID is free, and puts the reason for the operator in why.
 */
int cache_mask_check(const CacheInfo *info, uint64_t mask, bool new_group, char *why, size_t size);
