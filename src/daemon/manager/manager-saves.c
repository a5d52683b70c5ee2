/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-saves.c — changes from the bus, saved in groups that share one fdatasync() */

/*
 * A change costs one fdatasync(), the same for one journal line or for sixteen. So the changes
 * that arrive in one wakeup, or while a write is under way, are saved together. sd-event runs
 * one source per iteration, highest priority first. A defer source one step below the bus
 * therefore runs only after the bus has handled every call it had queued. The changes of those
 * calls make up the group. Calls that arrive during the write queue up behind it and form the
 * next group.
 *
 * With a writer thread, the write runs on that thread and the loop goes on. The calls handled
 * meanwhile form the next group, which is written once this one is durable. Each group's
 * replies wait for its own write only, not also for the write before it.
 */

#include "manager-internal.h"

static int on_save(sd_event_source *s, void *userdata) {
        (void) manager_start_saves(userdata);   /* saved_fn receives the outcome. */
        return 0;
}

void manager_set_writer(Manager *m, StateWriter *w) {
        if (m->tenants)
                tenants_set_writer(m->tenants, w);   /* This finishes the write in flight first. */
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
        /* Without an event loop, as in tests, the caller writes the group with manager_flush_saves(). */
        if (m->event && !m->save_defer) {
                r = sd_event_add_defer(m->event, &m->save_defer, on_save, m);
                if (r < 0)
                        return 0;   /* The change is then saved on its own. */
                /*
                 * The bus is attached at NORMAL priority. One step below it, this source runs only
                 * after all of the bus's queued calls.
                 */
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
 * After a change is saved, the journal is kept short and the properties are announced. A cycle
 * runs only when a VF is to be tuned, because a decision moved one or a tenant on one changed.
 * A cycle reads the whole host, and a change to virtio-net tenants alone gives it nothing to do.
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
        /* Only the last change's reason is kept. The cycle looks at everything anyway. */
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

        /* tests/dbus/test-dbus-group.py counts the changes per write in this message. */
        if (n_changes > 0)
                log_full_errno(LOG_DEBUG, error, NULL, "State: %zu change(s) saved with one write%s", n_changes,
                               error < 0 ? ": failed, all undone" : "");
        /* Groups finish in order, so this group's tenants come first in the list. */
        while (n < m->n_saved_tenants && m->saved_tenants[n].seq <= seq)
                n++;
        for (size_t i = 0; error >= 0 && i < n; i++)
                manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, m->saved_tenants[i].id);
        if (n > 0) {
                memmove(m->saved_tenants, m->saved_tenants + n, (m->n_saved_tenants - n) * sizeof(*m->saved_tenants));
                m->n_saved_tenants -= n;
        }
        /*
         * A group opened while this one was written goes next. It starts once the bus's queued
         * calls have joined it.
         */
        if (m->save_defer)
                (void) sd_event_source_set_enabled(m->save_defer,
                                                   manager_saves_seq(m) > seq ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
        if (error >= 0 && n_changes > 0)
                after_saved(m);
        else if (error < 0)
                m->saved_why = NULL;   /* The changes were undone, so there is nothing to tune. */

        if (m->saved_fn)
                m->saved_fn(m, error, seq, m->saved_userdata);
}
