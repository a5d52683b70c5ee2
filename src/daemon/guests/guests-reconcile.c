/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests-reconcile.c — compare the NICs in libvirt's domains with the tenants, and attach the missing ones */

#include <string.h>

#include "guests-internal.h"

/* A virtio tenant's NIC takes its cap, as its class or its own rate now say, in the running guest and its config. */
static void update_rate(Guests *g, const TenantInfo *t) {
        const TenantClass *cls = config_find_class(guests_config(g), t->class_name);
        TenantNicFacts f = { t->class_name, tenant_domain_ref(t), "", t->vlan, t->tx_rates };
        VirtError err = {};
        VirtNic nic;
        int r;

        strscpy(f.mac, sizeof(f.mac), t->mac);
        r = guests_nic_for(cls, t->tenant, "", &f, &nic);
        if (r >= 0)
                r = virt_update(g->virt, f.domain, &nic, &err);
        if (r < 0)
                log_full_errno(LOG_WARNING, r, LOG_FIELDS(.tenant = t->tenant),
                               "Tenant %s: failed to set its virtio NIC's cap to %u kB/s in domain %s, "
                               "retried at the next reconcile: %m%s%s",
                               t->tenant, nic.outbound_average, t->domain, err.message[0] ? ": " : "", err.message);
        else
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant),
                               "Tenant %s: virtio NIC in domain %s now capped at %u kB/s%s", t->tenant, t->domain,
                               nic.outbound_average, nic.outbound_average ? "" : " (no cap)");
}

void guests_reconcile(Guests *g) {
        _cleanup_free_ VirtExpected *expected = NULL;
        _cleanup_free_ TenantInfo *infos = NULL;
        _cleanup_free_ VirtReconcileItem *items = NULL;
        _cleanup_free_ char (*vfs)[PCI_ADDR_MAX] = NULL;
        const Inventory *inv = guests_inventory(g);
        VirtDomainInfo *domains = NULL;
        size_t n = guests_n_tenants(g), k = 0, n_vfs = 0, n_domains = 0, n_items = 0, n_foreign = 0;
        VirtError err = {};
        int r;

        if (!g->virt || !virt_is_connected(g->virt))
                return;
        r = virt_list_domains(g->virt, &domains, &n_domains, &err);
        if (r < 0) {
                log_warning_errno(r, "Failed to list libvirt domains: %s", err.message);
                return;
        }
        expected = calloc(n ?: 1, sizeof(*expected));
        infos = calloc(n ?: 1, sizeof(*infos));
        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                n_vfs += inv->pfs[i].n_vfs;
        vfs = calloc(n_vfs ?: 1, sizeof(*vfs));
        if (!expected || !infos || !vfs) {
                log_warning_errno(-ENOMEM, "Failed to reconcile the NICs in libvirt's domains, "
                                  "retried at the next domain event: %m");
                goto finish;
        }
        for (size_t i = 0; i < n; i++)
                if (guests_tenant(g, i, &infos[k]) >= 0 && tenant_domain_ref(&infos[k])[0]) {
                        const TenantClass *cls = config_find_class(guests_config(g), infos[k].class_name);
                        int cap = infos[k].vf[0] ? -1 : guests_virtio_outbound(cls, &infos[k].tx_rates);

                        expected[k] = (VirtExpected) { infos[k].tenant, infos[k].vf, infos[k].mac,
                                                       tenant_domain_ref(&infos[k]), cap >= 0, (unsigned) MAX(cap, 0) };
                        k++;
                }
        n_vfs = 0;
        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        strscpy(vfs[n_vfs++], PCI_ADDR_MAX, inv->pfs[i].vfs[j].addr);

        r = virt_reconcile(domains, n_domains, expected, k, (const char(*)[PCI_ADDR_MAX]) vfs, n_vfs, &items, &n_items);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < n_items; i++) {
                const VirtReconcileItem *it = &items[i];

                if (it->finding == VIRT_FINDING_OK)
                        continue;
                if (it->finding == VIRT_FINDING_FOREIGN) {
                        /* The VF is still in a guest. The guest has not let go of it after a release,
                         * or sriovd never put it there. Either way, it is given to no one. */
                        if (n_foreign < n_vfs)
                                strscpy(vfs[n_foreign++], PCI_ADDR_MAX, it->vf);
                        log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.vf = it->vf),
                                       "VF %s is in domain %s and no tenant's: given to no one while it is there",
                                       it->vf, it->domain);
                        continue;
                }
                if (it->finding == VIRT_FINDING_MISSING) {
                        /* The NIC was decided and saved, but it is not in the guest, because sriovd or
                         * libvirt was down. Attach it now. */
                        for (size_t j = 0; j < k; j++)
                                if (streq(infos[j].tenant, it->tenant)) {
                                        TenantNicFacts f = { infos[j].class_name, tenant_domain_ref(&infos[j]), "",
                                                             infos[j].vlan, infos[j].tx_rates };
                                        AllocDecision d = { .kind = infos[j].vf[0] ? ALLOC_DECISION_VF
                                                                                   : ALLOC_DECISION_VIRTIO };
                                        strscpy(f.mac, sizeof(f.mac), infos[j].mac);
                                        strscpy(d.tenant, sizeof(d.tenant), it->tenant);
                                        strscpy(d.new_vf, sizeof(d.new_vf), infos[j].vf);
                                        guests_on_decision(g, &d, &f);
                                }
                        continue;
                }
                if (it->finding == VIRT_FINDING_RATE_MISMATCH) {
                        for (size_t j = 0; j < k; j++)
                                if (streq(infos[j].tenant, it->tenant))
                                        update_rate(g, &infos[j]);
                        continue;
                }
                /* The other findings need an operator. They are logged, and never resolved by guessing. */
                log_full_errno(it->finding == VIRT_FINDING_DUPLICATE || it->finding == VIRT_FINDING_ELSEWHERE ? LOG_ERR
                                                                                                            : LOG_WARNING,
                               0, LOG_FIELDS(.tenant = it->tenant[0] ? it->tenant : NULL, .vf = it->vf[0] ? it->vf : NULL),
                               "libvirt reconcile: %s: tenant %s, VF %s, in %s (expected %s)",
                               virt_finding_to_string(it->finding), it->tenant[0] ? it->tenant : "-",
                               it->vf[0] ? it->vf : "-", it->domain[0] ? it->domain : "-",
                               it->expected_domain[0] ? it->expected_domain : "-");
        }
        /* vfs no longer serves as the inventory's list. It now holds the foreign VFs. */
        g->hooks.set_vfs_in_guest((const char(*)[PCI_ADDR_MAX]) vfs, n_foreign, g->hooks.userdata);
finish:
        virt_domain_list_free(domains, n_domains);
}
