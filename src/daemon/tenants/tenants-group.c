/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-group.c — changes that arrive together, saved with one fdatasync() or all undone */

/*
 * The changes of a group are applied in memory in order. Each change costs a journal line, but
 * the fdatasync() is what costs time, and it costs the same for one line or for sixteen. So
 * while a group is open, tenants_commit() keeps each change's line here. The reports of the
 * group's decisions, which attach NICs to guests, wait too. tenants_flush() writes the lines,
 * and only then are the decisions reported and the callers told. If the write fails, the
 * tenants are put back whole, as they were before the group's first change. So memory always
 * matches what the disk holds.
 *
 * With a writer thread, tenants_flush_start() hands the group's lines to the thread, and the
 * next group opens at once, on top of the one in flight. If the write in flight fails, both
 * groups are undone, because the later one was made from memory that is no longer true.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sriovd/shared/util.h"
#include "tenants-internal.h"

static void *memdup_n(const void *p, size_t n, size_t size) {
        void *q = calloc(n ?: 1, size);
        if (q)
                memcpy_safe(q, p, n * size);
        return q;
}

int tenants_group_open(Tenants *t) {
        TenantsGroup *g = &t->group;

        /* Without an allocator yet, every change is refused with -EAGAIN, so there is nothing to group. */
        if (g->open || !t->alloc)
                return 0;
        /* Lines name the file generation they follow: the one being written whole, if there is one. */
        *g = (TenantsGroup) { .base = t->generation + (t->whole_in_flight ? 1 : 0), .seq = t->seq + 1 };
        if (allocator_clone(t->alloc, &g->before) < 0)
                goto fail;
        g->extras = memdup_n(t->extras, t->n_extras, sizeof(Extra));
        g->orphans = memdup_n(t->orphans, t->n_orphans, sizeof(StateTenant));
        if (!g->extras || !g->orphans ||
            pci_set_copy_from(&g->in_guest, pci_set_array(&t->in_guest), pci_set_size(&t->in_guest)) < 0)
                goto fail;
        g->n_extras = t->n_extras;
        g->n_orphans = t->n_orphans;
        g->open = true;
        t->seq = g->seq;
        return 0;
fail:
        tenants_group_done(t);
        return -ENOMEM;
}

bool tenants_group_pending(const Tenants *t) {
        return t->group.open || t->flight.open;
}

uint64_t tenants_pending_seq(const Tenants *t) {
        return t->group.open ? t->group.seq : t->flight.open ? t->flight.seq : 0;
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
        *r = (GroupReport) { .d = *d, .vlan = nic->vlan, .tx_rates = nic->tx_rates };
        strscpy(r->class_name, sizeof(r->class_name), nic->class_name);
        strscpy(r->domain, sizeof(r->domain), nic->domain);
        strscpy(r->mac, sizeof(r->mac), nic->mac);
        return 0;
}

static void group_free(TenantsGroup *g) {
        allocator_free(g->before);
        free(g->extras);
        free(g->orphans);
        pci_set_done(&g->in_guest);
        free(g->lines);
        free(g->reports);
        *g = (TenantsGroup) {};
}

void tenants_group_done(Tenants *t) {
        group_free(&t->group);
}

/* Take back every change made since g opened, so that the tenants are what the disk holds. */
static void group_undo(Tenants *t, TenantsGroup *g) {
        allocator_free(t->alloc);
        t->alloc = TAKE_PTR(g->before);
        free(t->extras);
        t->extras = TAKE_PTR(g->extras);
        t->n_extras = t->allocated_extras = g->n_extras;
        free(t->orphans);
        t->orphans = TAKE_PTR(g->orphans);
        t->n_orphans = g->n_orphans;
        pci_set_done(&t->in_guest);
        t->in_guest = g->in_guest;
        g->in_guest = (PciSet) {};
}

/*
 * g's write is done, with the outcome r. If the write is durable, report g's decisions. Then
 * report the outcome. g is taken and emptied before anyone is told, because what they do next
 * is a change of its own.
 */
static void group_tell(Tenants *t, TenantsGroup *g, int r) {
        TenantsGroup done = *g;

        *g = (TenantsGroup) {};
        for (size_t i = 0; r >= 0 && i < done.n_reports && t->log.decision; i++) {
                const GroupReport *rep = &done.reports[i];
                TenantNicFacts nic = { .class_name = rep->class_name, .domain = rep->domain, .vlan = rep->vlan,
                                       .tx_rates = rep->tx_rates };

                memcpy(nic.mac, rep->mac, sizeof(nic.mac));
                t->log.decision(&rep->d, &nic, t->log.userdata);
        }
        if (t->log.saved)
                t->log.saved(r, done.n_changes, done.seq, t->log.userdata);
        group_free(&done);
}

static int group_write(Tenants *t) {
        TenantsGroup *g = &t->group;

        if (t->dir_fd < 0)
                return 0;
        /* Lines name the generation they apply to. A load skips them once a newer file is written. */
        if (g->whole || g->base != t->generation)
                return tenants_save(t);
        if (g->n_lines == 0)
                return 0;
        return tenants_append(t, g->lines, g->size, g->n_lines, NULL);
}

/*
 * The group in flight was written, with the outcome error. Tell its callers. A failure undoes
 * the group, and also the group made on top of it.
 */
static void flight_landed(Tenants *t, int error, bool logged) {
        TenantsGroup later = {};

        if (error < 0) {
                if (!logged)
                        tenants_problem(t, error, NULL, "could not save %s: %s",
                                        t->flight.n_changes > 1 ? "the changes" : "the change", strerror(-error));
                t->must_rewrite = true;
                /*
                 * The open group was made on top of the failed one. So it is undone with it, and
                 * its callers get the same answer.
                 */
                later = t->group;
                t->group = (TenantsGroup) {};
                group_undo(t, &t->flight);
        }
        group_tell(t, &t->flight, error);
        if (later.open)
                group_tell(t, &later, error);
}

typedef struct AppendJob {
        int fd;
        char *lines;
        size_t size;
        uint64_t new_size;          /* the journal's size once written, or 0 if unknown */
} AppendJob;

static int append_run(void *job) {
        AppendJob *j = job;
        struct stat st;
        int r = state_journal_write(j->fd, j->lines, j->size);

        if (r >= 0 && fstat(j->fd, &st) >= 0)
                j->new_size = (uint64_t) st.st_size;
        return r;
}

static void append_free(void *job) {
        AppendJob *j = job;

        if (j)
                free(j->lines);
        free(j);
}

static void on_append_done(int error, void *job, void *userdata) {
        AppendJob *j = job;
        Tenants *t = userdata;

        t->flight_error = error;
        if (error >= 0) {
                t->journal_lines += t->flight.n_lines;
                if (j->new_size > 0)
                        t->journal_bytes = j->new_size;
        }
        flight_landed(t, error, false);
}

static void on_whole_done(int error, void *job, void *userdata) {
        WholeJob *j = job;
        Tenants *t = userdata;

        t->flight_error = error;
        t->whole_in_flight = false;
        (void) tenants_saved_whole(t, error, j->s.generation, &j->err, j->reset_failed);
        if (t->flight.open)
                flight_landed(t, error, true);
        else if (t->log.saved)
                t->log.saved(0, 0, 0, t->log.userdata);   /* The write had no group. One that waited may go. */
}

int tenants_flight_wait(Tenants *t) {
        if (!state_writer_busy(t->writer))
                return 0;
        state_writer_wait(t->writer);   /* This runs the job's done function. */
        return t->flight_error;
}

void tenants_set_writer(Tenants *t, StateWriter *w) {
        if (t->writer != w)
                (void) tenants_flight_wait(t);
        t->writer = w;
}

/* Put the open group, if any, in flight. Its lines are appended, or the whole file is written with it. */
static int flight_start(Tenants *t, bool whole) {
        TenantsGroup *g = &t->group;
        int r;

        if (whole) {
                WholeJob *j;

                r = tenants_whole_job(t, &j);
                if (r < 0)
                        return r;
                r = state_writer_submit(t->writer, tenants_whole_run, j, tenants_whole_free, on_whole_done, t);
                if (r < 0) {
                        tenants_whole_free(j);
                        return r;
                }
                t->whole_in_flight = true;
        } else {
                AppendJob *j = calloc(1, sizeof(*j));

                if (!j)
                        return -ENOMEM;
                *j = (AppendJob) { .fd = t->journal_fd, .lines = g->lines, .size = g->size };
                r = state_writer_submit(t->writer, append_run, j, append_free, on_append_done, t);
                if (r < 0) {
                        free(j);   /* The group keeps its lines. */
                        return r;
                }
                /* The job owns the lines now. */
                g->lines = NULL;
                g->size = g->allocated = 0;
        }
        t->flight = *g;
        *g = (TenantsGroup) {};
        return 0;
}

int tenants_flush_start(Tenants *t) {
        TenantsGroup *g = &t->group;
        bool whole;

        if (!t->writer || t->dir_fd < 0)
                return g->open ? tenants_flush(t) : tenants_want_rewrite(t) ? tenants_save(t) : 0;
        if (state_writer_busy(t->writer))
                return 0;   /* The group goes once the write in flight is done. */
        /*
         * When the file is due for a rewrite, or the group must be written whole, the thread
         * writes the whole file. The open group goes with it. Without a group, the journal grew
         * through changes that were saved on their own.
         */
        whole = tenants_want_rewrite(t) || (g->open && (g->whole || g->base != t->generation)) ||
                (g->open && g->n_lines > 0 && tenants_journal_ready(t) < 0);
        if (!whole && (!g->open || g->n_lines == 0))
                return g->open ? tenants_flush(t) : 0;   /* Nothing goes to the disk, so tell now. */
        if (flight_start(t, whole) < 0)
                return g->open ? tenants_flush(t) : tenants_save(t);
        return 0;
}

int tenants_flush(Tenants *t) {
        bool had = t->group.open;
        int r;

        r = tenants_flight_wait(t);
        if (!t->group.open)
                return had ? r : 0;   /* The group was undone with the write it was made on. */

        r = group_write(t);
        if (r < 0)
                group_undo(t, &t->group);
        group_tell(t, &t->group, r);
        return r;
}
