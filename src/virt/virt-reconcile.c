/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-reconcile.c — compares the domains' NICs with the tenants' allocations, without I/O; virt.h has the rules */

#include <string.h>

#include "sriovd/virt/virt.h"

static const char *const finding_names[_VIRT_FINDING_MAX] = {
        [VIRT_FINDING_OK] = "ok",
        [VIRT_FINDING_MISSING] = "missing",
        [VIRT_FINDING_DOMAIN_GONE] = "domain-gone",
        [VIRT_FINDING_ELSEWHERE] = "elsewhere",
        [VIRT_FINDING_DUPLICATE] = "duplicate",
        [VIRT_FINDING_FOREIGN] = "foreign",
        [VIRT_FINDING_MAC_MISMATCH] = "mac-mismatch",
        [VIRT_FINDING_RATE_MISMATCH] = "rate-mismatch",
};

const char *virt_finding_to_string(VirtFinding f) {
        return f >= 0 && f < _VIRT_FINDING_MAX ? finding_names[f] : NULL;
}

/* A VF as placed in a domain. */
typedef struct Placement {
        const char *vf, *domain, *mac;
} Placement;

static int placement_cmp(const void *a, const void *b) {
        const Placement *x = a, *y = b;
        int c = strcmp(x->vf, y->vf);
        return c ?: strcmp(x->domain, y->domain);
}

static int expected_cmp(const void *a, const void *b) {
        const VirtExpected *x = *(const VirtExpected *const *) a, *y = *(const VirtExpected *const *) b;
        return strcmp(x->tenant ?: "", y->tenant ?: "");
}

static int addr_cmp(const void *a, const void *b) {
        return strcmp(a, b);
}

static int addr_cmp_ptr(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

bool virt_domain_ref_is(const char *ref, const char *name, const char *uuid) {
        return ref && ref[0] && ((name && streq(ref, name)) || (uuid && uuid[0] && streq(ref, uuid)));
}

/* The domain that ref names. A name that equals another domain's UUID loses to that UUID, as in lookups. */
static const VirtDomainInfo *find_domain(const VirtDomainInfo *d, size_t n, const char *ref) {
        for (size_t i = 0; i < n; i++)
                if (d[i].uuid[0] && streq(d[i].uuid, ref))
                        return &d[i];
        for (size_t i = 0; i < n; i++)
                if (streq(d[i].name, ref))
                        return &d[i];
        return NULL;
}

typedef struct Out {
        VirtReconcileItem *items;
        size_t n, allocated;
} Out;

static int emit(Out *o, VirtFinding f, const char *tenant, const char *vf, const char *domain,
                const char *expected_domain, const char *mac) {
        VirtReconcileItem *it;

        if (GREEDY_REALLOC(o->items, o->allocated, o->n + 1) < 0)
                return -ENOMEM;
        it = &o->items[o->n++];
        *it = (VirtReconcileItem) { .finding = f };
        strscpy(it->tenant, sizeof(it->tenant), tenant ?: "");
        strscpy(it->vf, sizeof(it->vf), vf ?: "");
        strscpy(it->domain, sizeof(it->domain), domain ?: "");
        strscpy(it->expected_domain, sizeof(it->expected_domain), expected_domain ?: "");
        strscpy(it->mac, sizeof(it->mac), mac ?: "");
        return 0;
}

static bool mac_eq(const char *a, const char *b) {
        return strcasecmp(a, b) == 0;
}

int virt_reconcile(const VirtDomainInfo *domains, size_t n_domains,
                   const VirtExpected *expected, size_t n_expected,
                   const char (*vfs_in_scope)[PCI_ADDR_MAX], size_t n_vfs_in_scope,
                   VirtReconcileItem **ret, size_t *ret_n) {
        _cleanup_free_ Placement *pl = NULL;
        _cleanup_free_ const VirtExpected **ex = NULL;
        _cleanup_free_ const char **held = NULL;
        size_t n_pl = 0, alloc_pl = 0, n_held = 0;
        Out o = {};
        int r;

        for (size_t i = 0; i < n_domains; i++)
                for (size_t j = 0; j < domains[i].n_nics; j++) {
                        const VirtDomainNic *nic = &domains[i].nics[j];
                        if (!nic->pci[0])
                                continue;
                        if (GREEDY_REALLOC(pl, alloc_pl, n_pl + 1) < 0)
                                return -ENOMEM;
                        pl[n_pl++] = (Placement) { nic->pci, domains[i].name, nic->mac };
                }
        qsort_safe(pl, n_pl, sizeof(*pl), placement_cmp);

        ex = calloc(n_expected + 1, sizeof(*ex));
        held = calloc(n_expected + 1, sizeof(*held));
        if (!ex || !held)
                return -ENOMEM;
        for (size_t i = 0; i < n_expected; i++) {
                ex[i] = &expected[i];
                if (expected[i].vf && expected[i].vf[0])
                        held[n_held++] = expected[i].vf;
        }
        qsort_safe(ex, n_expected, sizeof(*ex), expected_cmp);

        for (size_t i = 0; i < n_expected; i++) {
                const VirtExpected *e = ex[i];
                const char *dom = e->domain ?: "";
                const VirtDomainInfo *d;
                size_t first = n_pl, k = 0;

                if (!dom[0])
                        continue;
                d = find_domain(domains, n_domains, dom);

                if (!e->vf || !e->vf[0]) {
                        /* A virtio-net NIC is found by its MAC. */
                        bool found = !e->mac || !e->mac[0], rate_ok = true;
                        for (size_t j = 0; d && !found && j < d->n_nics; j++)
                                if (mac_eq(d->nics[j].mac, e->mac)) {
                                        found = true;
                                        rate_ok = !e->have_outbound || d->nics[j].outbound_average == e->outbound_average;
                                }
                        r = emit(&o, !d ? VIRT_FINDING_DOMAIN_GONE : !found ? VIRT_FINDING_MISSING :
                                     rate_ok ? VIRT_FINDING_OK : VIRT_FINDING_RATE_MISMATCH,
                                 e->tenant, "", found && d ? dom : "", dom, found && e->mac ? e->mac : "");
                        if (r < 0)
                                goto fail;
                        continue;
                }

                for (size_t j = 0; j < n_pl; j++)
                        if (streq(pl[j].vf, e->vf)) {
                                if (k++ == 0)
                                        first = j;
                        }

                if (k >= 2) {
                        for (size_t j = first; j < first + k; j++) {
                                r = emit(&o, VIRT_FINDING_DUPLICATE, e->tenant, e->vf, pl[j].domain, dom, pl[j].mac);
                                if (r < 0)
                                        goto fail;
                        }
                        continue;
                }
                if (k == 1) {
                        /* Domain names are unique, so the name tells whether the VF is in the tenant's domain. */
                        VirtFinding f = !d || !streq(pl[first].domain, d->name) ? VIRT_FINDING_ELSEWHERE :
                                        e->mac && e->mac[0] && pl[first].mac[0] && !mac_eq(pl[first].mac, e->mac) ?
                                        VIRT_FINDING_MAC_MISMATCH : VIRT_FINDING_OK;
                        r = emit(&o, f, e->tenant, e->vf, pl[first].domain, dom, pl[first].mac);
                } else
                        r = emit(&o, d ? VIRT_FINDING_MISSING : VIRT_FINDING_DOMAIN_GONE, e->tenant, e->vf, "", dom, "");
                if (r < 0)
                        goto fail;
        }

        /* These are the placements of VFs in scope that no tenant accounts for.
         * A NULL scope means every PCI hostdev. */
        qsort_safe(held, n_held, sizeof(*held), addr_cmp_ptr);
        for (size_t j = 0; j < n_pl; j++) {
                if (vfs_in_scope && !bsearch_safe(pl[j].vf, vfs_in_scope, n_vfs_in_scope, PCI_ADDR_MAX, addr_cmp))
                        continue;
                if (bsearch_safe(&pl[j].vf, held, n_held, sizeof(*held), addr_cmp_ptr))
                        continue;
                r = emit(&o, VIRT_FINDING_FOREIGN, "", pl[j].vf, pl[j].domain, "", pl[j].mac);
                if (r < 0)
                        goto fail;
        }

        *ret = o.items;
        *ret_n = o.n;
        return 0;
fail:
        free(o.items);
        return r;
}
