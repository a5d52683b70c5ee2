/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi-pair.c — which IRQ schedules which NAPI, from queue order, where napi-get does not say */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/napi-pair.h"
#include "sriovd/util.h"

/* The digits at s, nothing after them but end (NULL: anything may follow); -1 if none. */
static int number_at(const char *s, const char *end) {
        unsigned long v;
        char *e;

        if (!isdigit((unsigned char) *s))
                return -1;
        v = strtoul(s, &e, 10);
        if (v > 65535 || (end && e != end))
                return -1;
        return (int) v;
}

int irq_queue_index(const char *action, const char *netdev) {
        static const char *const kinds[] = { "-TxRx-", "-rx-", "-rxtx-", "-fp-" };
        size_t n = strlen(netdev);
        const char *rest, *at;

        if (n == 0)
                return -1;
        /* mlx5 names its completion vectors by the PCI function, not the netdev. */
        if (strncmp(action, "mlx5_comp", 9) == 0) {
                at = strchr(action + 9, '@');
                return number_at(action + 9, at ? at : action + strlen(action));
        }
        /* igb, igbvf, e1000e: "DEV-TxRx-N"; i40e, ice: "i40e-DEV-TxRx-N". */
        rest = strstr(action, netdev);
        while (rest && rest[n] != '-')
                rest = strstr(rest + 1, netdev);
        if (!rest)
                return -1;
        rest += n;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (strncmp(rest, kinds[i], strlen(kinds[i])) == 0)
                        return number_at(rest + strlen(kinds[i]), rest + strlen(rest));
        return -1;
}

static int queue_irq_cmp(const void *a, const void *b) {
        const QueueIrq *x = a, *y = b;
        return (x->queue > y->queue) - (x->queue < y->queue);
}

size_t napi_pair_by_queues(Napi *napis, size_t n_napis, QueueIrq *irqs, size_t n_irqs) {
        qsort_safe(irqs, n_irqs, sizeof(*irqs), queue_irq_cmp);
        /* A queue twice (two vectors for one queue, rx and tx) would shift every pair after it. */
        for (size_t i = 1; i < n_irqs; i++)
                if (irqs[i].queue == irqs[i - 1].queue)
                        return 0;
        if (n_napis == 0 || n_napis != n_irqs)
                return 0;
        for (size_t i = 0; i < n_napis; i++)
                napis[i].irq = irqs[i].irq;
        return n_napis;
}
