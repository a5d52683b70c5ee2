/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-wait.c — VFs sriovd asked the kernel for and is waiting to see: ready in time, or late */

#include <stdio.h>
#include <string.h>

#include "vf-wait.h"

int vf_wait_add(VfWaitList *l, const char *pf, unsigned want, uint64_t now, uint64_t timeout) {
        VfWait *w = NULL;

        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].pf, pf))
                        w = &l->items[i];
        if (!w) {
                if (GREEDY_REALLOC(l->items, l->allocated, l->n + 1) < 0)
                        return -ENOMEM;
                w = &l->items[l->n++];
        }
        *w = (VfWait) { .want = want, .since = now, .deadline = now + timeout };
        strscpy(w->pf, sizeof(w->pf), pf);
        return 0;
}

bool vf_wait_missing(const Pf *pf, unsigned want, char *buf, size_t size) {
        size_t k = 0, j = 0;

        buf[0] = 0;
        if (!pf) {
                snprintf(buf, size, "the PF is gone");
                return true;
        }

        /* VF indexes are dense 0..want-1; report runs of missing ones as ranges. */
        for (unsigned i = 0; i < want;) {
                unsigned first;

                while (j < pf->n_vfs && pf->vfs[j].index < i)
                        j++;
                if (j < pf->n_vfs && pf->vfs[j].index == i) {
                        i++;
                        continue;
                }
                first = i;
                while (i < want && !(j < pf->n_vfs && pf->vfs[j].index == i))
                        i++;
                if (first == i - 1)
                        strjoin_appendf(buf, size, &k, "virtfn%u missing", first);
                else
                        strjoin_appendf(buf, size, &k, "virtfn%u-%u missing", first, i - 1);
        }

        if (pf->drivers_autoprobe == 1)
                for (size_t i = 0; i < pf->n_vfs; i++)
                        if (pf->vfs[i].index < want && !pf->vfs[i].driver[0]) {
                                strjoin_appendf(buf, size, &k, "%s has no driver", pf->vfs[i].addr);
                        }
        return k > 0;
}

size_t vf_wait_check(VfWaitList *l, const Inventory *inv, uint64_t now, VfWaitDoneFn fn, void *userdata) {
        size_t kept = 0;

        for (size_t i = 0; i < l->n; i++) {
                VfWait *w = &l->items[i];
                char missing[256];

                if (!vf_wait_missing(inventory_find_pf(inv, w->pf), w->want, missing, sizeof(missing)))
                        fn(w, true, "", now, userdata);
                else if (now >= w->deadline)
                        fn(w, false, missing, now, userdata);
                else {
                        l->items[kept++] = *w;
                        continue;
                }
        }
        l->n = kept;
        return kept;
}

uint64_t vf_wait_next_deadline(const VfWaitList *l) {
        uint64_t t = UINT64_MAX;

        for (size_t i = 0; i < l->n; i++)
                t = MIN(t, l->items[i].deadline);
        return t;
}

bool vf_wait_covers(const VfWaitList *l, const Inventory *inv, const char *target) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].pf, target) || pf_owns(inventory_find_pf(inv, l->items[i].pf), target))
                        return true;
        return false;
}

void vf_wait_list_done(VfWaitList *l) {
        free(l->items);
        *l = (VfWaitList) {};
}
