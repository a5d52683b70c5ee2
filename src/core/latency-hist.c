/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* latency-hist.c — percentiles and differences of the BPF latency histograms */

#include <errno.h>

#include "sriovd/core/latency-hist.h"

uint64_t latency_slot_start(unsigned slot) {
        unsigned o, q;

        if (slot == 0)
                return 0;
        o = (slot - 1) / 4;
        q = (slot - 1) % 4;
        return (UINT64_C(1) << (o + LATENCY_SLOT_SHIFT)) + (uint64_t) q * (UINT64_C(1) << (o + LATENCY_SLOT_SHIFT - 2));
}

uint64_t latency_slot_end(unsigned slot) {
        return slot + 1 < LATENCY_SLOTS ? latency_slot_start(slot + 1) : UINT64_MAX;
}

int latency_hist_quantile(const LatencyHist *h, double q, double *ret_ns) {
        unsigned long long total = 0, seen = 0;

        for (unsigned s = 0; s < LATENCY_SLOTS; s++)
                total += h->slots[s];
        if (total == 0)
                return -ENODATA;
        /* The rank of the wanted sample, 1-based: the 99th percentile of 100 samples is the 99th. */
        double rank = q * (double) total;
        for (unsigned s = 0; s < LATENCY_SLOTS; s++) {
                if (h->slots[s] == 0 || (double) (seen + h->slots[s]) < rank) {
                        seen += h->slots[s];
                        continue;
                }
                /* Spread the slot's samples evenly over it. The last slot has no end: take its start. */
                double start = (double) latency_slot_start(s);
                if (s + 1 == LATENCY_SLOTS) {
                        *ret_ns = start;
                        return 0;
                }
                double width = (double) latency_slot_end(s) - start;
                *ret_ns = start + width * (rank - (double) seen) / (double) h->slots[s];
                return 0;
        }
        *ret_ns = (double) latency_slot_start(LATENCY_SLOTS - 1);
        return 0;
}

void latency_hist_add(LatencyHist *a, const LatencyHist *b) {
        a->count += b->count;
        a->sum_ns += b->sum_ns;
        for (unsigned s = 0; s < LATENCY_SLOTS; s++)
                a->slots[s] += b->slots[s];
}

bool latency_hist_delta(const LatencyHist *now, const LatencyHist *before, LatencyHist *ret) {
        bool grew = now->count >= before->count && now->sum_ns >= before->sum_ns;

        for (unsigned s = 0; grew && s < LATENCY_SLOTS; s++)
                grew = now->slots[s] >= before->slots[s];
        if (!grew) {
                *ret = *now;
                return false;
        }
        ret->count = now->count - before->count;
        ret->sum_ns = now->sum_ns - before->sum_ns;
        for (unsigned s = 0; s < LATENCY_SLOTS; s++)
                ret->slots[s] = now->slots[s] - before->slots[s];
        return true;
}
