/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-users.c — who, besides sriovd's tenants, uses the VFs that a VF count change would destroy */

/*
 * The users are the libvirt domains that name the VFs, and the processes that hold them through
 * vfio. They are read only when such a change is pending, and fresh each time. The answer
 * decides whether guests lose their NICs, so it does not come from a cache. A cache would go
 * stale on a hot-plug to a foreign domain, which sends no event that sriovd reconciles on, or
 * on a QEMU started by hand.
 */

#include <string.h>

#include "sriovd/kernel/vfio-users.h"
#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "vf-users.h"

typedef struct Users {
        PlanVfUser *list;
        size_t n, allocated;
} Users;

/*
 * Put prefix and name into who, cut at a character boundary. Notes go out as UTF-8, on D-Bus
 * and in JSON.
 */
static void who_set(char *who, size_t size, const char *prefix, const char *name) {
        size_t k;

        strscpy(who, size, prefix);
        k = strlen(who);

        for (const char *p = name; *p;) {
                size_t len = utf8_sequence_len((const unsigned char *) p, strlen(p));
                bool ok = len > 0 && (unsigned char) *p >= 0x20 && *p != 0x7f;

                if (!ok)
                        len = 1;
                if (k + (ok ? len : 1) + 1 > size)
                        break;
                if (ok)
                        memcpy(who + k, p, len);
                else
                        who[k] = '?';
                k += ok ? len : 1;
                p += len;
        }
        who[k] = 0;
}

static PlanVfUser *users_add(Users *u, const char *vf, bool running) {
        PlanVfUser *x;

        if (GREEDY_REALLOC(u->list, u->allocated, u->n + 1) < 0)
                return NULL;
        x = &u->list[u->n++];
        *x = (PlanVfUser) { .running = running };
        strscpy(x->vf, sizeof(x->vf), vf);
        return x;
}

static bool pf_pending(const Config *c, const Pf *pf) {
        return plan_pf_num_vfs_destroys(pf, config_pf_policy(c, pf->addr, pf->vendor, pf->device));
}

/* Find every domain, running or shut off, that names a VF of a pending PF. The planner tells the two apart. */
static int read_domain_users(const Config *c, Virt *virt, const Inventory *inv, Users *u) {
        VirtDomainInfo *domains = NULL;
        size_t n_domains = 0;
        VirtError err = {};
        int r;

        if (!virt)
                return 0;   /* The process scan still finds the QEMUs of running guests. */
        r = virt_list_domains(virt, &domains, &n_domains, &err);
        if (r < 0)
                return log_warning_errno(r, "Failed to list libvirt domains before a VF count change, "
                                            "only processes holding VFs are looked for: %s", err.message);
        for (size_t i = 0; i < n_domains; i++)
                for (size_t j = 0; j < domains[i].n_nics; j++) {
                        const char *vf = domains[i].nics[j].pci;
                        const Pf *pf = vf[0] ? inventory_find_function(inv, vf, NULL) : NULL;
                        PlanVfUser *x;

                        if (!pf || streq(pf->addr, vf) || !pf_pending(c, pf))
                                continue;
                        x = users_add(u, vf, domains[i].active);
                        if (!x) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        who_set(x->who, sizeof(x->who), "domain ", domains[i].name);
                }
        r = 0;
finish:
        virt_domain_list_free(domains, n_domains);
        return r;
}

/* Find the processes that hold a VF of a pending PF open through vfio. Only VFs on vfio-pci can be held so. */
static int read_process_users(RootFs *root, const Config *c, const Inventory *inv, Users *u) {
        _cleanup_free_ VfioDevice *devs = NULL;
        _cleanup_free_ VfioUser *found = NULL;
        size_t n_devs = 0, allocated = 0, n_found = 0;
        unsigned unreadable = 0;
        int r;

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                if (!pf_pending(c, pf))
                        continue;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const Vf *vf = &pf->vfs[j];
                        VfioDevice *d;

                        if (!streq(vf->driver, "vfio-pci"))
                                continue;
                        if (GREEDY_REALLOC(devs, allocated, n_devs + 1) < 0)
                                return -ENOMEM;
                        d = &devs[n_devs++];
                        *d = (VfioDevice) { .group = vf->iommu_group, .device = -1 };
                        strscpy(d->addr, sizeof(d->addr), vf->addr);
                        (void) vfio_read_device(root, vf->addr, &d->device);
                }
        }
        if (n_devs == 0)
                return 0;

        r = vfio_users_scan(root, devs, n_devs, &found, &n_found, &unreadable);
        if (r < 0)
                return log_warning_errno(r, "Failed to look for processes holding VFs before a VF count change: %m");
        if (unreadable > 0)
                log_debug("%u processes' open files could not be read while looking for VF users", unreadable);
        for (size_t i = 0; i < n_found; i++) {
                PlanVfUser *x = users_add(u, found[i].addr, true);
                if (!x)
                        return -ENOMEM;
                snprintf(x->who, sizeof(x->who), "process %d (%s)", (int) found[i].pid, found[i].comm);
        }
        return 0;
}

int vf_users_read(RootFs *root, const Config *c, Virt *virt, const Inventory *inv, PlanVfUser **ret, size_t *ret_n) {
        Users u = {};
        bool pending = false;
        int r;

        for (size_t i = 0; i < inv->n_pfs && !pending; i++)
                pending = pf_pending(c, &inv->pfs[i]);
        if (pending) {
                /* Each search is best effort, and what one cannot tell, the other may. */

                r = read_domain_users(c, virt, inv, &u);
                if (r != -ENOMEM)
                        r = read_process_users(root, c, inv, &u);
                if (r == -ENOMEM) {
                        free(u.list);
                        return log_oom();
                }
        }
        plan_vf_users_sort(u.list, u.n);
        *ret = u.list;
        *ret_n = u.n;
        return 0;
}
