/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-napi.c — libFuzzer target: a netdev genl napi-get reply as netdev_nl_napi_parse() reads it */

#include <limits.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/netdev-genl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ struct nlmsghdr *h = NULL;
        struct nl_msg *msg = NULL;
        size_t len = NLMSG_HDRLEN + size;
        NapiInfo n;
        int r;

        /* The input is the payload (genlmsghdr + attributes); the header is the kernel's, its length true. */
        if (len > UINT32_MAX)
                return 0;
        h = calloc(1, NLMSG_ALIGN(len));
        if (!h)
                return 0;
        h->nlmsg_len = (uint32_t) len;
        h->nlmsg_type = 30;
        memcpy((uint8_t *) h + NLMSG_HDRLEN, data, size);

        if (netdev_nl_napi_parse(h, &n) < 0)
                return 0;
        /* What a success promises: an id, and every field in its range or "not said". */
        if (n.id == 0 || n.ifindex < 0 || n.pid < 0 || n.params.defer_hard_irqs < -1 ||
            n.params.defer_hard_irqs > INT32_MAX || n.params.gro_flush_timeout < -1 ||
            n.params.irq_suspend_timeout < -1)
                __builtin_trap();

        /* What was read can be set again: napi-set builds, or there is nothing to set. */
        r = netdev_nl_build_napi_set(30, n.id, &n.params, &msg);
        if (r < 0 && r != -ENODATA)
                __builtin_trap();
        if ((r == -ENODATA) != (n.params.defer_hard_irqs < 0 && n.params.gro_flush_timeout < 0 &&
                                n.params.irq_suspend_timeout < 0))
                __builtin_trap();
        nlmsg_free(msg);
        return 0;
}
