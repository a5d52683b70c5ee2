/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-netdev-stats.c — libFuzzer target: an RTM_NEWLINK's IFLA_STATS64 and VF list, as netdev_stats_parse() walks them */

#include <linux/rtnetlink.h>
#include <stdint.h>
#include <string.h>

#include "sriovd/kernel/netdev-stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ struct nlmsghdr *h = NULL;
        NetdevStats s = {};
        size_t len = NLMSG_HDRLEN + size;

        /* The input is the payload (ifinfomsg + attributes); the header is the kernel's, its length true. */
        if (len > UINT32_MAX)
                return 0;
        h = calloc(1, NLMSG_ALIGN(len));
        if (!h)
                return 0;
        h->nlmsg_len = (uint32_t) len;
        h->nlmsg_type = RTM_NEWLINK;
        memcpy((uint8_t *) h + NLMSG_HDRLEN, data, size);

        if (netdev_stats_parse(h, &s) < 0)
                return 0;
        /* What a success promises: VFs sorted, each once, within 16 bits; have only VF_COUNTER_* bits. */
        for (size_t i = 0; i < s.n_vfs; i++) {
                if (s.vfs[i].vf > 0xffff || (i > 0 && s.vfs[i].vf <= s.vfs[i - 1].vf) || s.vfs[i].counters.have & ~0xffu)
                        __builtin_trap();
        }
        if ((s.n_vfs == 0) != (s.vfs == NULL) || s.netdev.have & VF_COUNTER_BROADCAST ||
            memchr(s.ifname, 0, sizeof(s.ifname)) == NULL)
                __builtin_trap();
        netdev_stats_done(&s);
        return 0;
}
