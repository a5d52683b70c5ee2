/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * manager-saves.c — the bus's changes saved together: those that arrive in one wakeup, or while a
 * write is under way, share one fdatasync().
 *
 * A change's cost is its fdatasync(), the same for one journal line or sixteen. sd-event
 * dispatches one source per iteration, highest priority first, so a defer source one step below
 * the bus runs only once every call the bus has queued has been handled: those calls' changes are
 * the group. Calls that arrive during the write queue up behind it and form the next group.
 *
 * With a writer, the write is on its thread and the loop goes on: the calls handled meanwhile are
 * the next group, written once this one is durable. Each group's replies wait for its own write
 * only, not for the one before it as well.
 */

#include "manager-internal.h"

static int on_save(sd_event_source *s, void *userdata) {
        (void) manager_start_saves(userdata);   /* the outcome goes to saved_fn */
        return 0;
}

void manager_set_writer(Manager *m, StateWriter *w) {
        if (m->tenants)
                tenants_set_writer(m->tenants, w);   /* the write in flight done first */
        state_writer_free(m->writer);
        m->writer = w;
}

void manager_set_saved_fn(Manager *m, ManagerSavedFn fn, void *userdata) {
        m->saved_fn = fn;
        m->saved_userdata = userdata;
}

int manager_saves_join(Manager *m) {
        int r;

        if (!m->saved_fn || !m->tenants)
                return 0;
        /* Without a loop (tests), the caller writes the group: manager_flush_saves(). */
        if (m->event && !m->save_defer) {
                r = sd_event_add_defer(m->event, &m->save_defer, on_save, m);
                if (r < 0)
                        return 0;   /* saved on its own, then */
                /* Below the bus (attached at NORMAL): its queued calls first, all of them. */
                (void) sd_event_source_set_priority(m->save_defer, SD_EVENT_PRIORITY_NORMAL + 1);
        }
        r = tenants_group_open(m->tenants);
        if (r < 0)
                return r;
        if (m->save_defer && tenants_group_pending(m->tenants))
                (void) sd_event_source_set_enabled(m->save_defer, SD_EVENT_ONESHOT);
        return 0;
}

bool manager_saves_pending(const Manager *m) {
        return m->tenants && tenants_group_pending(m->tenants);
}

uint64_t manager_saves_seq(const Manager *m) {
        return m->tenants ? tenants_pending_seq(m->tenants) : 0;
}

int manager_flush_saves(Manager *m) {
        if (m->save_defer)
                (void) sd_event_source_set_enabled(m->save_defer, SD_EVENT_OFF);
        return m->tenants ? tenants_flush(m->tenants) : 0;
}

int manager_start_saves(Manager *m) {
        if (m->save_defer)
                (void) sd_event_source_set_enabled(m->save_defer, SD_EVENT_OFF);
        return m->tenants ? tenants_flush_start(m->tenants) : 0;
}

/*
 * What follows a saved change: the journal kept short, the properties announced, and a cycle
 * when a VF is to be tuned (a decision moved one, or a tenant on one changed). A cycle reads the
 * whole host; a change of virtio-net tenants alone gives it nothing to do.
 */
static void after_saved(Manager *m) {
        const char *why = m->saved_why ?: m->decided_vf ? "allocation" : NULL;

        m->saved_why = NULL;
        m->decided_vf = false;
        manager_rewrite_soon(m);
        if (why)
                manager_apply_soon(m, why);
        manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
}

void manager_changed(Manager *m, const char *why, bool vf) {
        /* The last one's words: the cycle looks at everything anyway. */
        if (vf)
                m->saved_why = why;
        if (!manager_saves_pending(m))
                after_saved(m);
}

void manager_changed_tenant(Manager *m, const char *tenant) {
        if (manager_saves_pending(m) &&
            GREEDY_REALLOC(m->saved_tenants, m->allocated_saved_tenants, m->n_saved_tenants + 1) >= 0) {
                ManagerSavedTenant *s = &m->saved_tenants[m->n_saved_tenants++];

                strscpy(s->id, sizeof(s->id), tenant);
                s->seq = manager_saves_seq(m);
                return;
        }
        manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, tenant);
}

void manager_on_saved(int error, size_t n_changes, uint64_t seq, void *userdata) {
        Manager *m = userdata;
        size_t n = 0;

        /* What tests/dbus/test-dbus-group.py counts: changes per write. */
        if (n_changes > 0)
                log_full_errno(LOG_DEBUG, error, NULL, "State: %zu change(s) saved with one write%s", n_changes,
                               error < 0 ? ": failed, all undone" : "");
        /* Groups end in order: this one's tenants are the first ones. */
        while (n < m->n_saved_tenants && m->saved_tenants[n].seq <= seq)
                n++;
        for (size_t i = 0; error >= 0 && i < n; i++)
                manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, m->saved_tenants[i].id);
        if (n > 0) {
                memmove(m->saved_tenants, m->saved_tenants + n, (m->n_saved_tenants - n) * sizeof(*m->saved_tenants));
                m->n_saved_tenants -= n;
        }
        /* A group opened while this one was written goes next, once the bus's queued calls joined it. */
        if (m->save_defer)
                (void) sd_event_source_set_enabled(m->save_defer,
                                                   manager_saves_seq(m) > seq ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
        if (error >= 0 && n_changes > 0)
                after_saved(m);
        else if (error < 0)
                m->saved_why = NULL;   /* undone: nothing to tune */
        if (m->saved_fn)
                m->saved_fn(m, error, seq, m->saved_userdata);
}
