/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi-pair.c — which IRQ schedules which NAPI, found from queue order where napi-get does not say */

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/napi-pair.h"
#include "sriovd/shared/util.h"

/*
 * The number whose digits start at s, or -1 if there is none. Only end may follow the digits.
 * With end NULL, anything may follow.
 */
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

int irq_queue_index(const char *action, const char *netdev, bool *ret_tx_only) {
        static const struct {
                const char *infix;
                bool tx_only;
        } kinds[] = { { "-TxRx-", false }, { "-rx-", false }, { "-rxtx-", false }, { "-fp-", false }, { "-tx-", true } };
        size_t n = strlen(netdev);
        const char *rest;

        *ret_tx_only = false;
        if (n == 0)
                return -1;
        /* mlx5 names its completion vectors by the PCI function, not the netdev. */
        if (strncmp(action, "mlx5_comp", 9) == 0)
                return number_at(action + 9, action + strcspn(action, "@"));
        /* igb, igbvf and e1000e name vectors "DEV-TxRx-N". i40e and ice name them "i40e-DEV-TxRx-N". */
        rest = strstr(action, netdev);
        while (rest && rest[n] != '-')
                rest = strstr(rest + 1, netdev);
        if (!rest)
                return -1;
        rest += n;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (strncmp(rest, kinds[i].infix, strlen(kinds[i].infix)) == 0) {
                        *ret_tx_only = kinds[i].tx_only;
                        return number_at(rest + strlen(kinds[i].infix), rest + strlen(rest));
                }
        return -1;
}

static int queue_irq_cmp(const void *a, const void *b) {
        const QueueIrq *x = a, *y = b;
        return (x->irq > y->irq) - (x->irq < y->irq);
}

static size_t pair(Napi *napis, size_t n_napis, const QueueIrq *irqs, size_t n_irqs, bool with_tx) {
        size_t k = 0;

        for (size_t i = 0; i < n_irqs; i++)
                k += with_tx || !irqs[i].tx_only;
        if (k != n_napis)
                return 0;
        k = 0;
        for (size_t i = 0; i < n_irqs; i++)
                if (with_tx || !irqs[i].tx_only)
                        napis[k++].irq = irqs[i].irq;
        return k;
}

size_t napi_pair_by_queues(Napi *napis, size_t n_napis, QueueIrq *irqs, size_t n_irqs) {
        if (n_napis == 0)
                return 0;
        /*
         * Ids that repeat come from names that the kernel cut at 15 characters, such as
         * "napi/enp1s0f0-8". Then there is no order to go by.
         */
        for (size_t i = 1; i < n_napis; i++)
                if (napis[i].id <= napis[i - 1].id)
                        return 0;
        /* The driver set up its queue vectors, and so its NAPIs, in vector order. */
        qsort_safe(irqs, n_irqs, sizeof(*irqs), queue_irq_cmp);
        /*
         * Try one NAPI per receive vector first, because igbvf cleans tx in the hard IRQ. Else try
         * one NAPI per vector, because igb with separate rx and tx vectors polls both.
         */

        return pair(napis, n_napis, irqs, n_irqs, false) ?: pair(napis, n_napis, irqs, n_irqs, true);
}
