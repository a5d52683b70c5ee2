/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.c — the inventory model: scope, lookups and teardown (reading lives in kernel/discover.c) */

#include <stdio.h>
#include <string.h>

#include "sriovd/inventory.h"

/* ConnectX-5, 5 Ex, 6, 6 Dx, 6 Lx, 7 physical functions. */
const PciId scope_default_ids[] = {
        { 0x15b3, 0x1017 },
        { 0x15b3, 0x1019 },
        { 0x15b3, 0x101b },
        { 0x15b3, 0x101d },
        { 0x15b3, 0x101f },
        { 0x15b3, 0x1021 },
};
const size_t scope_default_n_ids = ELEMENTSOF(scope_default_ids);

bool scope_contains(const Scope *s, uint16_t vendor, uint16_t device, const char *addr) {
        const PciId *ids = s && s->ids ? s->ids : scope_default_ids;
        size_t n = s && s->ids ? s->n_ids : scope_default_n_ids;

        for (size_t i = 0; i < n; i++)
                if (ids[i].vendor == vendor && ids[i].device == device)
                        return true;
        if (s && addr)
                for (size_t i = 0; i < s->n_addrs; i++)
                        if (streq(s->addrs[i], addr))
                                return true;
        return false;
}

Inventory *inventory_free(Inventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                Pf *pf = &inv->pfs[i];
                for (size_t j = 0; j < pf->n_vfs; j++)
                        free(pf->vfs[j].irqs);
                free(pf->vfs);
                free(pf->irqs);
                free(pf->netdevs);
                free(pf->vf_links);
        }
        free(inv->pfs);
        free(inv->irqs);
        free(inv->other_irqs);
        free(inv->topo.node_cpus);
        free(inv);
        return NULL;
}

static int irq_key_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const Irq *) elem)->irq;
        return (k > e) - (k < e);
}

const Irq *inventory_find_irq(const Inventory *inv, unsigned irq) {
        return bsearch_safe(&irq, inv->irqs, inv->n_irqs, sizeof(*inv->irqs), irq_key_cmp);
}

const Pf *inventory_find_pf(const Inventory *inv, const char *addr) {
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (streq(inv->pfs[i].addr, addr))
                        return &inv->pfs[i];
        return NULL;
}

const VfLink *pf_find_vf_link(const Pf *pf, unsigned vf) {
        /* Sorted and nearly always dense: index vf is where VF vf usually is. */
        if (vf < pf->n_vf_links && pf->vf_links[vf].vf == vf)
                return &pf->vf_links[vf];
        for (size_t i = 0; i < pf->n_vf_links; i++)
                if (pf->vf_links[i].vf == vf)
                        return &pf->vf_links[i];
        return NULL;
}

char *mac_format(const uint8_t mac[6], char buf[static MAC_STR_MAX]) {
        snprintf(buf, MAC_STR_MAX, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
                 mac[5]);
        return buf;
}

bool mac_parse(const char *s, uint8_t ret[6]) {
        uint8_t mac[6];

        for (size_t i = 0; i < 6; i++) {
                const char *p = s + i * 3;
                unsigned v = 0;

                for (size_t j = 0; j < 2; j++) {
                        char c = p[j];
                        if (c >= '0' && c <= '9')
                                v = v * 16 + (unsigned) (c - '0');
                        else if (c >= 'a' && c <= 'f')
                                v = v * 16 + (unsigned) (c - 'a' + 10);
                        else if (c >= 'A' && c <= 'F')
                                v = v * 16 + (unsigned) (c - 'A' + 10);
                        else
                                return false;
                }
                if (p[2] != (i == 5 ? 0 : ':'))
                        return false;
                mac[i] = (uint8_t) v;
        }
        memcpy(ret, mac, sizeof(mac));
        return true;
}

void mac_derive(const char *key, uint8_t ret[6]) {
        /* FNV-1a, 64 bit: stable across versions and hosts, which is the point. */
        uint64_t h = 0xcbf29ce484222325ULL;

        for (const char *p = "sriovd:"; *p; p++)
                h = (h ^ (uint8_t) *p) * 0x100000001b3ULL;
        for (const char *p = key; *p; p++)
                h = (h ^ (uint8_t) *p) * 0x100000001b3ULL;
        /* FNV leaves keys that differ in their last byte close together: finish with a full mix. */
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        for (size_t i = 0; i < 6; i++)
                ret[i] = (uint8_t) (h >> (8 * i));
        /* Locally administered, unicast: never collides with a vendor's OUI. */
        ret[0] = (uint8_t) ((ret[0] & 0xfc) | 0x02);
}

unsigned coalesce_diff(const Coalesce *cur, const CoalesceChange *want, CoalesceChange *ret) {
        const long c[] = { cur->rx_usecs, cur->tx_usecs, cur->rx_frames, cur->tx_frames, cur->adaptive_rx, cur->adaptive_tx };
        const long w[] = { want->rx_usecs, want->tx_usecs, want->rx_frames, want->tx_frames, want->adaptive_rx, want->adaptive_tx };
        long d[ELEMENTSOF(c)];
        unsigned n = 0;

        /* An absent field (-1) never equals a wanted value: send it, the kernel says why not. */
        for (size_t i = 0; i < ELEMENTSOF(c); i++) {
                d[i] = w[i] >= 0 && c[i] != w[i] ? w[i] : -1;
                n += d[i] >= 0;
        }
        *ret = (CoalesceChange) { d[0], d[1], d[2], d[3], (int) d[4], (int) d[5] };
        return n;
}
