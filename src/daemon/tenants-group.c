/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tenants-group.c — changes that arrive together saved together: applied in memory in order,
 * then one write and one fdatasync() for all of them, or all of them undone.
 *
 * Each change costs a journal line; the fdatasync() is what costs, and it costs the same for one
 * line or sixteen. So while a group is open, tenants_commit() keeps its line here and the reports
 * of its decisions (which attach NICs to guests) wait; tenants_flush() writes the lines, and only
 * then are the decisions reported and the callers told. If the write fails, what the tenants were
 * before the group's first change is put back whole, so memory is what the disk holds.
 */

#include <stdlib.h>
#include <string.h>

#include "sriovd/util.h"
#include "tenants-internal.h"

static void *memdup_n(const void *p, size_t n, size_t size) {
        void *q = calloc(n ?: 1, size);
        if (q)
                memcpy_safe(q, p, n * size);
        return q;
}

int tenants_group_open(Tenants *t) {
        TenantsGroup *g = &t->group;

        /* No allocator yet: every change is refused (-EAGAIN), nothing to group. */
        if (g->open || !t->alloc)
                return 0;
        *g = (TenantsGroup) { .base = t->generation };
        if (allocator_clone(t->alloc, &g->before) < 0)
                goto fail;
        g->extras = memdup_n(t->extras, t->n_extras, sizeof(Extra));
        g->orphans = memdup_n(t->orphans, t->n_orphans, sizeof(StateTenant));
        g->in_guest = memdup_n(t->in_guest, t->n_in_guest, PCI_ADDR_MAX);
        if (!g->extras || !g->orphans || !g->in_guest)
                goto fail;
        g->n_extras = t->n_extras;
        g->n_orphans = t->n_orphans;
        g->n_in_guest = t->n_in_guest;
        g->open = true;
        return 0;
fail:
        tenants_group_done(t);
        return -ENOMEM;
}

bool tenants_group_pending(const Tenants *t) {
        return t->group.open;
}

int tenants_group_add_line(Tenants *t, const char *line, size_t size) {
        TenantsGroup *g = &t->group;

        if (GREEDY_REALLOC(g->lines, g->allocated, g->size + size) < 0)
                return -ENOMEM;
        memcpy(g->lines + g->size, line, size);
        g->size += size;
        g->n_lines++;
        g->n_changes++;
        return 0;
}

int tenants_group_hold_report(Tenants *t, const AllocDecision *d, const TenantNicFacts *nic) {
        TenantsGroup *g = &t->group;
        GroupReport *r;

        if (GREEDY_REALLOC(g->reports, g->allocated_reports, g->n_reports + 1) < 0)
                return -ENOMEM;
        r = &g->reports[g->n_reports++];
        *r = (GroupReport) { .d = *d, .vlan = nic->vlan };
        strscpy(r->class_name, sizeof(r->class_name), nic->class_name);
        strscpy(r->domain, sizeof(r->domain), nic->domain);
        strscpy(r->mac, sizeof(r->mac), nic->mac);
        return 0;
}

void tenants_group_done(Tenants *t) {
        TenantsGroup *g = &t->group;

        allocator_free(g->before);
        free(g->extras);
        free(g->orphans);
        free(g->in_guest);
        free(g->lines);
        free(g->reports);
        *g = (TenantsGroup) {};
}

/* Every change since the group opened taken back: the tenants are what the disk holds. */
static void group_undo(Tenants *t) {
        TenantsGroup *g = &t->group;

        allocator_free(t->alloc);
        t->alloc = TAKE_PTR(g->before);
        free(t->extras);
        t->extras = TAKE_PTR(g->extras);
        t->n_extras = t->allocated_extras = g->n_extras;
        free(t->orphans);
        t->orphans = TAKE_PTR(g->orphans);
        t->n_orphans = g->n_orphans;
        free(t->in_guest);
        t->in_guest = TAKE_PTR(g->in_guest);
        t->n_in_guest = t->allocated_in_guest = g->n_in_guest;
}

static int group_write(Tenants *t) {
        TenantsGroup *g = &t->group;

        if (t->dir_fd < 0)
                return 0;
        /* Lines name the generation they apply to: a file written since would skip them. */
        if (g->whole || g->base != t->generation)
                return tenants_save(t);
        if (g->n_lines == 0)
                return 0;
        return tenants_append(t, g->lines, g->size, g->n_lines, NULL);
}

int tenants_flush(Tenants *t) {
        _cleanup_free_ GroupReport *reports = NULL;
        size_t n_reports, n_changes = t->group.n_changes;
        int r;

        if (!t->group.open)
                return 0;
        r = group_write(t);
        if (r < 0)
                group_undo(t);
        /* Closed before anyone is told: what they do next is a change of its own. */
        reports = TAKE_PTR(t->group.reports);
        n_reports = t->group.n_reports;
        tenants_group_done(t);
        for (size_t i = 0; r >= 0 && i < n_reports && t->log.decision; i++) {
                const GroupReport *g = &reports[i];
                TenantNicFacts nic = { .class_name = g->class_name, .domain = g->domain, .vlan = g->vlan };

                memcpy(nic.mac, g->mac, sizeof(nic.mac));
                t->log.decision(&g->d, &nic, t->log.userdata);
        }
        if (t->log.saved)
                t->log.saved(r, n_changes, t->log.userdata);
        return r;
}
