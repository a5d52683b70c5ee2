/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.c — the inventory model: scope, lookups and teardown; kernel/discover.c reads the host */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/core/inventory.h"

/* The physical functions of ConnectX-5, 5 Ex, 6, 6 Dx, 6 Lx and 7. */
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

int host_problem_add(HostProblems *p, const char *target, int errno_value, const char *fmt, ...) {
        HostProblem *h;
        va_list ap;

        /* A tree with thousands of broken functions must not make thousands of notes, so the list is capped. */
        if (p->n >= HOST_PROBLEMS_MAX) {
                p->n_dropped++;
                return 0;
        }
        if (GREEDY_REALLOC(p->items, p->allocated, p->n + 1) < 0)
                return -ENOMEM;
        h = &p->items[p->n++];
        *h = (HostProblem) {};
        strscpy(h->target, sizeof(h->target), target ?: "");
        errno = -errno_value;
        va_start(ap, fmt);
        vsnprintf(h->text, sizeof(h->text), fmt, ap);
        va_end(ap);
        return 0;
}

void host_problems_done(HostProblems *p) {
        free(p->items);
        *p = (HostProblems) {};
}

void netdev_tune_done(NetdevTune *t) {
        t->napi.napis = mfree(t->napi.napis);
        t->napi.n_napis = 0;
}

void pf_done(Pf *pf) {
        for (size_t j = 0; j < pf->n_vfs; j++) {
                free(pf->vfs[j].irqs);
                netdev_tune_done(&pf->vfs[j].tune);
        }
        netdev_tune_done(&pf->tune);
        free(pf->vfs);
        free(pf->irqs);
        free(pf->netdevs);
        free(pf->vf_links);
        pf->vfs = NULL;
        pf->irqs = NULL;
        pf->netdevs = NULL;
        pf->vf_links = NULL;
        pf->n_vfs = pf->n_irqs = pf->n_netdevs = pf->n_vf_links = 0;
}

Inventory *inventory_free(Inventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_pfs; i++)
                pf_done(&inv->pfs[i]);
        host_problems_done(&inv->problems);
        free(inv->pfs);
        free(inv->irqs);
        free(inv->other_irqs);
        free(inv->kthreads);
        free(inv->cpu_power);
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

const Irq *inventory_find_other_irq(const Inventory *inv, unsigned irq) {
        return bsearch_safe(&irq, inv->other_irqs, inv->n_other_irqs, sizeof(*inv->other_irqs), irq_key_cmp);
}

const Pf *inventory_find_pf(const Inventory *inv, const char *addr) {
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (streq(inv->pfs[i].addr, addr))
                        return &inv->pfs[i];
        return NULL;
}

bool pf_owns(const Pf *pf, const char *addr) {
        if (!pf)
                return false;
        if (streq(pf->addr, addr))
                return true;
        for (size_t j = 0; j < pf->n_vfs; j++)
                if (streq(pf->vfs[j].addr, addr))
                        return true;
        return false;
}

const Pf *inventory_find_function(const Inventory *inv, const char *addr, const Vf **ret_vf) {
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                if (streq(pf->addr, addr)) {
                        if (ret_vf)
                                *ret_vf = NULL;
                        return pf;
                }
                for (size_t j = 0; j < pf->n_vfs; j++)
                        if (streq(pf->vfs[j].addr, addr)) {
                                if (ret_vf)
                                        *ret_vf = &pf->vfs[j];
                                return pf;
                        }
        }
        return NULL;
}

const VfLink *pf_find_vf_link(const Pf *pf, unsigned vf) {
        /* The list is sorted and nearly always dense, so VF vf is usually at index vf. */
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
        /* 64-bit FNV-1a is stable across versions and hosts, and that stability is the point. */
        uint64_t h = 0xcbf29ce484222325ULL;

        for (const char *p = "sriovd:"; *p; p++)
                h = (h ^ (uint8_t) *p) * 0x100000001b3ULL;
        for (const char *p = key; *p; p++)
                h = (h ^ (uint8_t) *p) * 0x100000001b3ULL;
        /* FNV leaves keys that differ in their last byte close together, so finish with a full mix. */
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        for (size_t i = 0; i < 6; i++)
                ret[i] = (uint8_t) (h >> (8 * i));
        /* A locally administered unicast MAC never collides with a vendor's OUI. */
        ret[0] = (uint8_t) ((ret[0] & 0xfc) | 0x02);
}

static const size_t coalesce_offsets[COALESCE_N_FIELDS] = {
        offsetof(Coalesce, rx_usecs),    offsetof(Coalesce, tx_usecs),    offsetof(Coalesce, rx_frames),
        offsetof(Coalesce, tx_frames),   offsetof(Coalesce, adaptive_rx), offsetof(Coalesce, adaptive_tx),
};

_Static_assert(sizeof(Coalesce) == sizeof(CoalesceChange), "Coalesce and CoalesceChange differ");
_Static_assert(offsetof(Coalesce, tx_frames) == offsetof(CoalesceChange, tx_frames), "layout");
_Static_assert(offsetof(Coalesce, adaptive_rx) == offsetof(CoalesceChange, adaptive_rx), "layout");
_Static_assert(offsetof(Coalesce, adaptive_tx) == offsetof(CoalesceChange, adaptive_tx), "layout");

const char *const coalesce_field_names[COALESCE_N_FIELDS] = {
        "rx-usecs", "tx-usecs", "rx-frames", "tx-frames", "adaptive-rx", "adaptive-tx",
};

bool coalesce_field_is_flag(size_t i) {
        return i >= 4;
}

long coalesce_field_get(const void *c, size_t i) {
        const uint8_t *p = (const uint8_t *) c + coalesce_offsets[i];
        return coalesce_field_is_flag(i) ? *(const int *) p : *(const long *) p;
}

void coalesce_field_set(void *c, size_t i, long v) {
        uint8_t *p = (uint8_t *) c + coalesce_offsets[i];
        if (coalesce_field_is_flag(i))
                *(int *) p = (int) v;
        else
                *(long *) p = v;
}

unsigned coalesce_diff(const Coalesce *cur, const CoalesceChange *want, CoalesceChange *ret) {
        CoalesceChange d = COALESCE_CHANGE_NONE;
        unsigned n = 0;

        /*
         * An absent field, -1, never equals a wanted value. The field is sent anyway, and the
         * kernel says why it cannot be set.
         */
        for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                long w = coalesce_field_get(want, i);
                if (w < 0 || coalesce_field_get(cur, i) == w)
                        continue;
                coalesce_field_set(&d, i, w);
                n++;
        }
        *ret = d;
        return n;
}

const char *kthread_kind_to_string(KthreadKind k) {
        static const char *const names[_KTHREAD_KIND_MAX] = {
                [KTHREAD_NAPI] = "napi", [KTHREAD_KSOFTIRQD] = "ksoftirqd",
                [KTHREAD_KTIMERS] = "ktimers", [KTHREAD_RCUC] = "rcuc",
        };
        return (unsigned) k < _KTHREAD_KIND_MAX ? names[k] : "unknown";
}

bool kthread_name_savable(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n >= KTHREAD_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (*p <= ' ' || *p > '~')
                        return false;
        return true;
}

static int kthread_key_cmp(const void *key, const void *elem) {
        const Kthread *k = key, *e = elem;
        if (k->kind != e->kind)
                return (k->kind > e->kind) - (k->kind < e->kind);
        return (k->num > e->num) - (k->num < e->num);
}

const Kthread *inventory_find_kthread(const Inventory *inv, KthreadKind kind, unsigned num) {
        const Kthread key = { .kind = kind, .num = num }, *k;

        k = bsearch_safe(&key, inv->kthreads, inv->n_kthreads, sizeof(Kthread), kthread_key_cmp);
        /* The list is sorted by pid last, so step back to the first entry of equal kind and num. */

        while (k && k > inv->kthreads && kthread_key_cmp(&key, k - 1) == 0)
                k--;
        return k;
}
