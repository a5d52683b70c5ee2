/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-vf.c — the VF lifecycle: how many VFs, their link settings, which driver holds them */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan-internal.h"

/* How many of the PF's VFs tenants hold, and which tenants, as "a, b, c" for the operator. */
static unsigned pf_allocated(const PlanBuilder *b, const Pf *pf, char *names, size_t size) {
        unsigned n = 0;
        size_t k = 0;

        names[0] = 0;
        for (size_t i = 0; i < pf->n_vfs; i++) {
                const PlanAllocation *a = plan_find_allocation(b, pf->vfs[i].addr);
                if (!a)
                        continue;
                strjoin_appendf(names, size, &k, "%s", a->tenant);
                n++;
        }
        return n;
}

static int vf_user_cmp(const void *a, const void *b) {
        const PlanVfUser *x = a, *y = b;
        int c = strcmp(x->vf, y->vf);
        return c ?: strcmp(x->who, y->who);
}

void plan_vf_users_sort(PlanVfUser *users, size_t n) {
        qsort_safe(users, n, sizeof(*users), vf_user_cmp);
}

static int vf_user_key_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const PlanVfUser *) elem)->vf);
}

/*
 * The users of vf, or NULL for none. The list is sorted by VF, and this returns the first entry
 * of vf's run. *ret_n says how many there are.
 */
static const PlanVfUser *plan_find_vf_users(const PlanBuilder *b, const char *vf, size_t *ret_n) {
        const PlanVfUser *all = b->ctx->vf_users, *u;
        size_t n = b->ctx->n_vf_users, first, last;

        *ret_n = 0;
        u = bsearch_safe(vf, all, n, sizeof(*all), vf_user_key_cmp);
        if (!u)
                return NULL;
        first = last = (size_t) (u - all);
        while (first > 0 && streq(all[first - 1].vf, vf))
                first--;
        while (last + 1 < n && streq(all[last + 1].vf, vf))
                last++;
        *ret_n = last - first + 1;
        return &all[first];
}

bool plan_pf_num_vfs_destroys(const Pf *pf, const PfPolicy *pol) {
        return pol && pol->num_vfs >= 0 && (unsigned) pol->num_vfs <= pf->total_vfs &&
               (unsigned) pol->num_vfs != pf->num_vfs && pf->driver[0] && pf->num_vfs > 0;
}

/*
 * The list of who uses the VFs, naming each user once, because a QEMU holds all of its guest's
 * VFs. Only whole entries go in, so that no name is cut in half. "+N more" counts the rest.
 */
typedef struct UserList {
        char text[112];
        size_t k;
        unsigned n_more;
} UserList;

_printf_(2, 3) static void user_list_add(UserList *l, const char *fmt, ...) {
        static const size_t reserve = sizeof("; +99999 more");
        char entry[PLAN_VF_USER_MAX + 16];
        va_list ap;
        size_t len;

        va_start(ap, fmt);
        vsnprintf(entry, sizeof(entry), fmt, ap);
        va_end(ap);
        len = strlen(entry);
        for (const char *p = l->text; (p = strstr(p, entry)); p++)
                if ((p == l->text || (p - l->text >= 2 && p[-2] == ';' && p[-1] == ' ')) && (p[len] == ';' || !p[len]))
                        return;
        len += l->k > 0 ? 2 : 0;
        if (l->n_more > 0 || l->k + len + reserve > sizeof(l->text)) {
                l->n_more++;
                return;
        }
        l->k += (size_t) snprintf(l->text + l->k, sizeof(l->text) - l->k, "%s%s", l->k > 0 ? "; " : "", entry);
}

/*
 * Find the PF's VFs that a change of the count to want would destroy while they are in use. A
 * VF is in use by a tenant, or by another user. A tenant's guest and that guest's QEMU count as
 * the tenant, whatever else lists them. A shut-off domain uses a VF only when the change leaves
 * no VF at its address, because a VF created again at that address is the same VF to the
 * domain. Returns how many VFs are in use. *ret_foreign says how many users are not tenants.
 */
static unsigned pf_in_use(const PlanBuilder *b, const Pf *pf, unsigned want, UserList *l, unsigned *ret_foreign) {
        unsigned n = 0, foreign = 0;

        for (size_t i = 0; i < pf->n_vfs; i++) {
                const Vf *vf = &pf->vfs[i];
                const PlanAllocation *a = plan_find_allocation(b, vf->addr);
                const PlanVfUser *u;
                bool used = false;
                size_t n_u;

                if (a) {
                        user_list_add(l, "tenant %s", a->tenant);
                        n++;
                        continue;
                }
                u = plan_find_vf_users(b, vf->addr, &n_u);
                for (size_t j = 0; j < n_u; j++) {
                        if (!u[j].running && vf->index < want)
                                continue;
                        user_list_add(l, "%s%s", u[j].who, u[j].running ? "" : " (shut off)");
                        foreign++;
                        used = true;
                }
                n += used;
        }
        *ret_foreign = foreign;
        return n;
}

void plan_pf_num_vfs(PlanBuilder *b, const Pf *pf, const PfPolicy *pol) {
        char tenants[128];
        unsigned want, held, in_use = 0, foreign = 0;
        UserList users = {};
        bool forced;
        Action *a;

        if (!pol || pol->num_vfs < 0)
                return;
        want = (unsigned) pol->num_vfs;

        if (want > pf->total_vfs) {
                plan_add_note(b, NOTE_ERROR, pf->addr,
                              "num_vfs = %u exceeds sriov_totalvfs = %u (config line %u); VF count left at %u",
                              want, pf->total_vfs, pol->line, pf->num_vfs);
                return;
        }
        if (want == pf->num_vfs)
                return;
        if (!pf->driver[0]) {
                /* The PF driver creates the VFs, so without a driver the write fails. */
                plan_add_note(b, NOTE_WARNING, pf->addr,
                              "no driver bound; %u VFs will be created once it binds", want);
                return;
        }

        /*
         * Any change from a non-zero count goes through 0, which destroys every VF. A force over
         * the API covers sriovd's own tenants only, because sriovd tells them that their VFs go.
         * A guest or process outside sriovd is told nothing, and the kernel would wait on vfio
         * for it to let go.
         */
        held = pf->num_vfs > 0 ? pf_allocated(b, pf, tenants, sizeof(tenants)) : 0;
        if (pf->num_vfs > 0)
                in_use = pf_in_use(b, pf, want, &users, &foreign);
        forced = pci_addr_in(b->ctx->force_num_vfs, b->ctx->n_force_num_vfs, pf->addr);
        if (foreign > 0 || (held > 0 && !forced)) {
                char more[24] = "";

                if (users.n_more > 0)
                        snprintf(more, sizeof(more), "; +%u more", users.n_more);
                plan_add_note(b, NOTE_ERROR, pf->addr,
                              "num_vfs %u -> %u refused: it destroys all %u VFs and %u are in use (%s%s); %s "
                              "(config line %u)",
                              pf->num_vfs, want, pf->num_vfs, in_use, users.text, more,
                              foreign == 0 ? "release them or force the change over the API"
                              : forced     ? "a force covers sriovd's tenants only: stop the others first"
                                           : "stop them first: a force covers sriovd's tenants only",
                              pol->line);
                return;
        }

        a = plan_add_action(b, ACTION_SET_NUM_VFS, pf->addr, pf->num_vfs, want);
        if (!a)
                return;
        if (pf->num_vfs > 0 && want > 0)
                snprintf(a->effect, sizeof(a->effect), "destroys %u VFs%s%s%s, then creates %u",
                         pf->num_vfs, held ? " (forced, allocated to " : "", held ? tenants : "",
                         held ? ")" : "", want);
        else if (pf->num_vfs > 0)
                snprintf(a->effect, sizeof(a->effect), "destroys %u VFs%s%s%s", pf->num_vfs,
                         held ? " (forced, allocated to " : "", held ? tenants : "", held ? ")" : "");
        else
                snprintf(a->effect, sizeof(a->effect), "creates %u VFs", want);
}

/*
 * The clean baseline of vf_clean: what a VF looks like when it carries no tenant's past. It has
 * no administrative MAC, which is the all-zero MAC that igb and mlx5 take as "none set". It is
 * untagged, has spoof check on and is not trusted. Its link follows the PF's, and it has no
 * rate limit or guarantee. A VF that its host driver runs then picks a random MAC of its own,
 * which the PF reports as the VF's. That MAC is nobody's past and is left alone. Otherwise
 * every check would clear it again, and the driver would pick another.
 */
static const VfLinkChange vf_baseline = {
        .set_mac = true,
        .set_vlan = true,
        .spoofchk = 1,
        .trust = 0,
        .link_state = VF_LINK_STATE_AUTO,
        .set_rate = true,
};

/*
 * The MAC that vf_mac = derive gives VF index of pf. The PF's MAC makes the key unique across
 * hosts, where PCI addresses repeat.
 */
static void vf_mac_derive(const Pf *pf, unsigned index, uint8_t ret[static 6]) {
        char m[MAC_STR_MAX], key[MAC_STR_MAX + 16];

        snprintf(key, sizeof(key), "%s/vf%u", mac_format(pf->mac, m), index);
        mac_derive(key, ret);
}

/*
 * Whether cur's MAC is the VF driver's own pick, which a clean leaves alone. The driver reports
 * such an address as random. But igbvf keeps saying so after it adopted an address that the PF
 * set, on a reset. So a MAC that the derive policy would give this VF is sriovd's own past,
 * whatever the netdev says.
 */
static bool vf_mac_drivers_own(const Pf *pf, unsigned index, const Vf *vf, const VfLink *cur) {
        uint8_t derived[6];

        if (!vf || !vf->have_random_mac || memcmp(cur->mac, vf->random_mac, sizeof(cur->mac)) != 0)
                return false;
        if (!pf->have_mac)
                return true;
        vf_mac_derive(pf, index, derived);
        return memcmp(cur->mac, derived, sizeof(derived)) != 0;
}

/*
 * What the policy and the VF's tenant want on VF index. Returns false when nothing is wanted.
 * cur is the VF as the kernel has it, or NULL when that is not known. With clean, what neither
 * names goes to the baseline, but only where cur tells what it is now. A field that the driver
 * does not report is one that it may not take either. A VF not created yet starts from the
 * driver's defaults.
 */
static bool vf_link_want(const PlanBuilder *b, const Pf *pf, const PfPolicy *pol, unsigned index, const Vf *vf,
                         const PlanAllocation *alloc, const VfLink *cur, bool clean, VfLinkChange *ret) {
        int min_rate = pol->vf_min_tx_rate, max_rate = pol->vf_max_tx_rate;
        VfLinkChange w = {
                .vf = index,
                .spoofchk = pol->vf_spoofchk,
                .trust = pol->vf_trust,
                .link_state = pol->vf_link_state,
        };

        clean = clean && cur;
        if (alloc) {
                /* The tenant's MAC follows the tenant across hosts, so it comes from its id, not from the PF. */
                w.set_mac = true;
                if (alloc->have_mac)
                        memcpy(w.mac, alloc->mac, sizeof(w.mac));
                else
                        mac_derive(alloc->tenant, w.mac);
        } else if (pol->vf_mac == VF_MAC_DERIVE && pf->have_mac) {
                w.set_mac = true;
                vf_mac_derive(pf, index, w.mac);
        } else if (clean && !vf_mac_drivers_own(pf, index, vf, cur))
                w.set_mac = vf_baseline.set_mac;   /* the all-zero MAC */

        if (alloc && alloc->vlan >= 0) {
                w.set_vlan = true;
                w.vlan = (unsigned) alloc->vlan;
                w.qos = alloc->qos > 0 ? (unsigned) alloc->qos : 0;
        } else if (pol->vf_vlan >= 0) {
                w.set_vlan = true;
                w.vlan = (unsigned) pol->vf_vlan;
                w.qos = pol->vf_qos > 0 ? (unsigned) pol->vf_qos : 0;
        } else if (clean)
                w.set_vlan = vf_baseline.set_vlan;   /* VLAN 0, QoS 0 */

        if (clean && w.spoofchk < 0 && cur->spoofchk >= 0)
                w.spoofchk = vf_baseline.spoofchk;
        if (clean && w.trust < 0 && cur->trust >= 0)
                w.trust = vf_baseline.trust;
        if (clean && w.link_state < 0 && cur->link_state >= 0)
                w.link_state = vf_baseline.link_state;

        /* A tenant's rates, its own or its class's, win over the PF's for its VF. */
        if (alloc)
                tx_rates_resolve(&alloc->tx_rates, alloc->class_name[0] ? config_find_class(b->cfg, alloc->class_name) : NULL,
                                 pol->vf_min_tx_rate, pol->vf_max_tx_rate, &min_rate, &max_rate);
        if (min_rate >= 0 || max_rate >= 0 || clean) {
                /*
                 * The kernel sets both rates at once. The one that is not configured takes the
                 * baseline's value, or keeps its own.
                 */
                w.set_rate = true;
                w.min_tx_rate = min_rate >= 0 ? (unsigned) min_rate : cur && !clean ? cur->min_tx_rate : 0;
                w.max_tx_rate = max_rate >= 0 ? (unsigned) max_rate : cur && !clean ? cur->max_tx_rate : 0;
        }

        *ret = w;
        return w.set_mac || w.set_vlan || w.spoofchk >= 0 || w.trust >= 0 || w.link_state >= 0 || w.set_rate;
}

unsigned vf_link_diff(const VfLink *cur, const VfLinkChange *want, VfLinkChange *ret) {
        VfLinkChange d = VF_LINK_CHANGE_NULL(want->vf);
        unsigned n = 0;

        if (want->set_mac && memcmp(cur->mac, want->mac, sizeof(cur->mac)) != 0) {
                d.set_mac = true;
                memcpy(d.mac, want->mac, sizeof(d.mac));
                n++;
        }
        if (want->set_vlan && (cur->vlan != want->vlan || cur->qos != want->qos)) {
                d.set_vlan = true;
                d.vlan = want->vlan;
                d.qos = want->qos;
                n++;
        }
        /* -1 in cur means that the driver does not report the value. It cannot be compared, so it is set. */
        if (want->spoofchk >= 0 && cur->spoofchk != want->spoofchk) {
                d.spoofchk = want->spoofchk;
                n++;
        }
        if (want->trust >= 0 && cur->trust != want->trust) {
                d.trust = want->trust;
                n++;
        }
        if (want->link_state >= 0 && cur->link_state != want->link_state) {
                d.link_state = want->link_state;
                n++;
        }
        if (want->set_rate && (cur->min_tx_rate != want->min_tx_rate || cur->max_tx_rate != want->max_tx_rate)) {
                d.set_rate = true;
                d.min_tx_rate = want->min_tx_rate;
                d.max_tx_rate = want->max_tx_rate;
                n++;
        }
        *ret = d;
        return n;
}

static int vf_index_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const Vf *) elem)->index;
        return (k > e) - (k < e);
}

/* pf->vfs is sorted by index, so that looking up each of up to 65535 VFs by index is not quadratic. */
static const Vf *pf_find_vf(const Pf *pf, unsigned index) {
        return bsearch_safe(&index, pf->vfs, pf->n_vfs, sizeof(*pf->vfs), vf_index_cmp);
}

static const PlanReleased *find_released(const PlanBuilder *b, const char *vf) {
        for (size_t i = 0; i < b->ctx->n_released; i++)
                if (streq(b->ctx->released[i].vf, vf))
                        return &b->ctx->released[i];
        return NULL;
}

/*
 * Whether the baseline applies to vf now, because it is a tenant's or free. It does not apply
 * while a guest may still have the VF: after a release that the guest has not let go of, or for
 * an orphan's VF, or for another domain's. The clean would move that guest to another VLAN.
 * Without libvirt's word, any vfio-pci VF may be in a guest.
 */
static bool vf_cleanable(const PlanBuilder *b, const Vf *vf, const PlanAllocation *alloc) {
        if (alloc)
                return true;
        if (pci_addr_in(b->ctx->vfs_held, b->ctx->n_vfs_held, vf->addr))
                return false;
        return b->ctx->guests_known || !streq(vf->driver, "vfio-pci");
}

/*
 * Plan VF index of pf. vf is NULL when the VF is not created yet. Returns -ENODEV when something
 * is wanted but pf has no netdev.
 */
static int plan_vf_link(PlanBuilder *b, const Pf *pf, const PfPolicy *pol, unsigned i, const Vf *vf) {
        const PlanAllocation *alloc = vf ? plan_find_allocation(b, vf->addr) : NULL;
        const VfLink *cur = NULL;
        VfLinkChange want, change;
        bool clean;
        Action *a;

        /* VFs about to be created start from the driver's defaults, so send everything. */
        if (pf->vf_links_known && !plan_pf_vfs_replaced(b, pf))
                cur = pf_find_vf_link(pf, i);
        clean = pol->vf_clean && vf && vf_cleanable(b, vf, alloc);
        if (!vf_link_want(b, pf, pol, i, vf, alloc, cur, clean, &want))
                return 0;
        if (pf->ifindex <= 0)
                return -ENODEV;
        if (cur) {
                if (vf_link_diff(cur, &want, &change) == 0)
                        return 0;
                want = change;
        }

        a = plan_add_action(b, ACTION_SET_VF_LINK, pf->addr, 0, 0);
        if (!a)
                return 0;
        a->vf = i;
        a->ifindex = pf->ifindex;
        a->link_before_known = cur != NULL;
        if (cur)
                a->link_before = *cur;
        a->link_after = want;
        if (alloc)
                snprintf(a->effect, sizeof(a->effect), "tenant %s", alloc->tenant);
        else if (clean && cur) {
                const PlanReleased *r = find_released(b, vf->addr);
                if (r)
                        snprintf(a->effect, sizeof(a->effect), "clean (released by tenant %s)", r->tenant);
                else
                        snprintf(a->effect, sizeof(a->effect), "clean");
        }
        return 0;
}

/* The PF driver answered EOPNOTSUPP to VF link settings. Say so once per plan, and do not ask again. */
static bool vf_links_unsupported(PlanBuilder *b, const Pf *pf) {
        if (!pci_addr_in(b->ctx->vf_link_unsupported, b->ctx->n_vf_link_unsupported, pf->addr))
                return false;
        plan_add_note(b, NOTE_WARNING, pf->addr,
                      "the PF driver refused VF link settings (EOPNOTSUPP); not tried again until "
                      "reload or the PF is re-added");
        return true;
}

static void note_no_netdev(PlanBuilder *b, const Pf *pf) {
        plan_add_note(b, NOTE_WARNING, pf->addr, "no PF netdev (driver not bound?): VF link settings wait for it");
}

void plan_pf_vf_links(PlanBuilder *b, const Pf *pf, const PfPolicy *pol) {
        bool replaced = plan_pf_vfs_replaced(b, pf);
        unsigned count = replaced ? (unsigned) pol->num_vfs : pf->num_vfs;

        if (vf_links_unsupported(b, pf))
                return;
        for (unsigned i = 0; i < count; i++)
                if (plan_vf_link(b, pf, pol, i, replaced ? NULL : pf_find_vf(pf, i)) == -ENODEV) {
                        note_no_netdev(b, pf);
                        return;
                }
}

void plan_vf_link_one(PlanBuilder *b, const Pf *pf, const PfPolicy *pol, unsigned index) {
        const Vf *vf = pf_find_vf(pf, index);

        if (!vf || vf_links_unsupported(b, pf))
                return;
        if (plan_vf_link(b, pf, pol, index, vf) == -ENODEV)
                note_no_netdev(b, pf);
}

void plan_pf_vf_drivers(PlanBuilder *b, const Pf *pf, const PfPolicy *pol) {
        unsigned no_group = 0;
        const char *first = NULL;

        if (pol->vf_driver == VF_DRIVER_LEAVE || plan_pf_vfs_replaced(b, pf))
                return;

        for (size_t i = 0; i < pf->n_vfs; i++) {
                const Vf *vf = &pf->vfs[i];
                Action *a;

                if (pol->vf_driver == VF_DRIVER_VFIO) {
                        if (streq(vf->driver, "vfio-pci"))
                                continue;
                        if (vf->iommu_group < 0) {
                                /* vfio-pci refuses a device without a group, so binding would only fail. */
                                first = first ?: vf->addr;
                                no_group++;
                                continue;
                        }
                } else {
                        /* A VF that a tenant holds may be in a guest right now, so never pull it back. */

                        if (plan_find_allocation(b, vf->addr))
                                continue;
                        if (vf->driver[0] && !streq(vf->driver, "vfio-pci"))
                                continue;
                }

                a = plan_add_action(b, ACTION_SET_VF_DRIVER, vf->addr, 0, 0);
                if (!a)
                        return;
                a->vf = vf->index;
                strscpy(a->driver_before, sizeof(a->driver_before), vf->driver);
                strscpy(a->driver_after, sizeof(a->driver_after),
                        pol->vf_driver == VF_DRIVER_VFIO ? "vfio-pci" : "");
        }

        if (no_group > 0)
                plan_add_note(b, NOTE_ERROR, pf->addr,
                              "%u VFs (first %s) have no IOMMU group, so vfio-pci cannot take them: "
                              "enable VT-d/AMD-Vi and boot with intel_iommu=on (config line %u)",
                              no_group, first, pol->line);
}

