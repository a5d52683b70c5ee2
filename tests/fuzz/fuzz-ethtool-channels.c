/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-ethtool-channels.c — libFuzzer target: a CHANNELS_GET_REPLY as ethtool_channels_parse() reads it */

#include <limits.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/ethtool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_kind(long count, long max) {
        /* What a success promises: a maximum as the kernel's u32, and a count of -1 exactly where
         * the driver has none of that kind. */
        if (max < 0 || max > (long) UINT32_MAX || count < -1 || count > (long) UINT32_MAX || (count == -1) != (max == 0))
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ struct nlmsghdr *h = NULL;
        struct nl_msg *msg = NULL;
        ChannelsChange c;
        Channels ch;
        size_t len = NLMSG_HDRLEN + size;
        int r;

        /* The input is the payload (genlmsghdr + attributes); the header is the kernel's, its length true. */
        if (len > UINT32_MAX)
                return 0;
        h = calloc(1, NLMSG_ALIGN(len));
        if (!h)
                return 0;
        h->nlmsg_len = (uint32_t) len;
        h->nlmsg_type = 20;
        memcpy((uint8_t *) h + NLMSG_HDRLEN, data, size);

        if (ethtool_channels_parse(h, &ch) < 0)
                return 0;
        check_kind(ch.rx, ch.max_rx);
        check_kind(ch.tx, ch.max_tx);
        check_kind(ch.other, ch.max_other);
        check_kind(ch.combined, ch.max_combined);

        /* What was read can be asked for again: the request builds, or there is nothing to ask. */
        c = (ChannelsChange) { ch.rx, ch.tx, ch.combined };
        r = ethtool_build_channels_set(20, 1, &c, &msg);
        if (r < 0 && r != -ENODATA)
                __builtin_trap();
        if ((r == -ENODATA) != (ch.rx < 0 && ch.tx < 0 && ch.combined < 0))
                __builtin_trap();
        nlmsg_free(msg);
        return 0;
}
