/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-save.c — the tenants on disk: the whole file, and each change's journal lines */

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/state.h"
#include "tenants-internal.h"

static StateKind state_kind_of(AllocNic nic) {
        return nic == ALLOC_NIC_VF ? STATE_KIND_VF : nic == ALLOC_NIC_NONE ? STATE_KIND_WAITING : STATE_KIND_VIRTIO;
}

/* A tenant that the allocator holds, in the form that the state file holds it. */
static void tenant_state(const Tenants *t, const AllocTenant *a, StateTenant *ret) {
        const Extra *e = tenants_extra_find(t, a->id);

        *ret = (StateTenant) {
                .kind = state_kind_of(a->nic),
                .vlan = e ? e->vlan : -1,
                .numa_node = a->numa_node,
                .seq = a->seq,
                .n_rt_cpus = MIN(a->n_rt_cpus, (unsigned) STATE_RT_CPUS_MAX),
        };
        memcpy_safe(ret->rt_cpus, a->rt_cpus, ret->n_rt_cpus * sizeof(uint16_t));
        strscpy(ret->tenant, sizeof(ret->tenant), a->id);
        strscpy(ret->class_name, sizeof(ret->class_name), a->class_name);
        strscpy(ret->pin_pf, sizeof(ret->pin_pf), a->pin_pf ?: "");
        if (a->vf)
                strscpy(ret->vf, sizeof(ret->vf), a->vf);
        if (e) {
                memcpy(ret->mac, e->mac, sizeof(ret->mac));
                strscpy(ret->domain, sizeof(ret->domain), e->domain);
                strscpy(ret->domain_uuid, sizeof(ret->domain_uuid), e->domain_uuid);
                strscpy(ret->owner, sizeof(ret->owner), e->owner);
                ret->have_coalesce = e->have_coalesce;
                ret->rx_usecs = e->rx_usecs;
                ret->tx_usecs = e->tx_usecs;
                ret->tx_rates = e->tx_rates;
        } else
                mac_derive(a->id, ret->mac);
}

/* Everything sriovd knows, as the state file holds it. */
int tenants_snapshot(const Tenants *t, State *ret) {
        size_t n = allocator_n_tenants(t->alloc);
        State s = { .generation = t->generation };

        s.tenants = calloc(n + t->n_orphans + 1, sizeof(StateTenant));
        if (!s.tenants)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                AllocTenant a;

                if (allocator_tenant(t->alloc, i, &a) < 0)
                        continue;
                tenant_state(t, &a, &s.tenants[s.n++]);
        }
        /*
         * An orphan that was asked for again is in the allocator now. Until that is saved, it is
         * in both places, and the snapshot takes the allocator's entry.
         */
        for (size_t i = 0; i < t->n_orphans; i++) {
                AllocTenant a;
                if (allocator_find_tenant(t->alloc, t->orphans[i].tenant, &a) < 0)
                        s.tenants[s.n++] = t->orphans[i];
        }
        *ret = s;
        return 0;
}

/*
 * Record r, the outcome of writing the whole file as generation. The journal was emptied after
 * the write, unless reset_failed is set.
 */
int tenants_saved_whole(Tenants *t, int r, uint64_t generation, const StateError *err, bool reset_failed) {
        if (r >= 0)
                t->generation = generation;
        if (r < 0) {
                /*
                 * The file may hold the new generation already, if only the directory's fsync
                 * failed. Until a rewrite succeeds, no line may be appended against either
                 * generation.
                 */
                t->must_rewrite = true;
                tenants_problem(t, r, NULL, "could not save the allocations: %s",
                                err->message[0] ? err->message : strerror(-r));
                return r;
        }
        /*
         * The journal's lines now belong to the old generation. A load skips them, and the next
         * append empties the journal first. If emptying failed now, the journal is reopened and
         * emptied then.
         */
        t->journal_lines = 0;
        t->journal_bytes = 0;
        t->must_rewrite = false;
        if (reset_failed) {
                close(t->journal_fd);
                t->journal_fd = -EBADF;
        }
        return 0;
}

int tenants_whole_run(void *job) {
        WholeJob *j = job;
        int r = state_save(j->dir_fd, STATE_FILE_NAME, &j->s, &j->err);

        if (r >= 0 && j->journal_fd >= 0 && state_journal_reset(j->journal_fd) < 0)
                j->reset_failed = true;
        return r;
}

void tenants_whole_free(void *job) {
        WholeJob *j = job;

        if (!j)
                return;
        state_done(&j->s);
        free(j);
}

int tenants_whole_job(Tenants *t, WholeJob **ret) {
        WholeJob *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        r = tenants_snapshot(t, &j->s);
        if (r < 0) {
                free(j);
                return r;
        }
        j->dir_fd = t->dir_fd;
        j->journal_fd = t->journal_fd;
        *ret = j;
        return 0;
}

/*
 * Write the whole file: a temporary file, its fsync, the rename and the directory's fsync. Then
 * the journal is emptied.
 */
int tenants_save(Tenants *t) {
        WholeJob *j;
        int r;

        if (t->dir_fd < 0)
                return 0;
        (void) tenants_flight_wait(t);   /* Only one writer may use the directory at a time. */
        r = tenants_whole_job(t, &j);
        if (r < 0)
                return r;
        r = tenants_whole_run(j);
        r = tenants_saved_whole(t, r, j->s.generation, &j->err, j->reset_failed);
        tenants_whole_free(j);
        return r;
}

/*
 * Rewrite the file once the journal holds as many lines as there are tenants, and at least
 * 1,024, or once it holds 4 MiB. A change then costs one tenant's worth of writing, amortized.
 * A start then replays no more than it reads in the file. A rewrite takes milliseconds of
 * formatting at thousands of tenants, about 4 us each. The calls that come meanwhile wait for
 * it, even off the loop. With a lower limit of a quarter of the tenants, the rewrite set the
 * p99 latency of every change at 16 clients in bench-dbus.
 */
bool tenants_want_rewrite(const Tenants *t) {
        return t->dir_fd >= 0 && (t->must_rewrite || t->journal_lines >= MAX(1024u, allocator_n_tenants(t->alloc)) ||
                                  t->journal_bytes >= 4u << 20);
}

int tenants_rewrite(Tenants *t) {
        (void) tenants_flush(t);   /* A failure is reported to the group's callers. */
        return tenants_want_rewrite(t) ? tenants_save(t) : 0;
}

static int id_cmp(const void *a, const void *b) {
        return strcmp(a, b);
}

/*
 * Add the other tenants of the guests whose RT CPUs d changed. A booking belongs to a guest, and
 * each of the guest's tenants holds it in its saved entry. A decision names one tenant only: the
 * one that joined, or the guest's first tenant when the guest is served. So the guest's other
 * tenants are saved with it, or a restart would find them disagreeing. The ids are appended to
 * *ids, which grows, and *n_ids counts them. Nothing is added when d changed no guest's booking.
 */
static int add_guest_mates(const Tenants *t, const AllocDecisions *d, char (**ids)[TENANT_ID_MAX], size_t *n_ids,
                           size_t *allocated) {
        size_t n = allocator_n_tenants(t->alloc), n_guests = 0;
        _cleanup_free_ const char **guests = NULL;

        for (size_t i = 0; d && i < d->n_decisions; i++) {
                AllocTenant a;

                if (!d->decisions[i].rt_changed || allocator_find_tenant(t->alloc, d->decisions[i].tenant, &a) < 0 ||
                    !a.guest || !a.guest[0])
                        continue;
                if (!guests) {
                        guests = calloc(d->n_decisions, sizeof(char *));
                        if (!guests)
                                return -ENOMEM;
                }
                guests[n_guests++] = a.guest;
        }
        if (n_guests == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                AllocTenant a;
                bool mate = false;

                if (allocator_tenant(t->alloc, i, &a) < 0 || !a.guest || !a.guest[0])
                        continue;
                for (size_t g = 0; g < n_guests && !mate; g++)
                        mate = streq(a.guest, guests[g]);
                if (!mate)
                        continue;
                if (GREEDY_REALLOC(*ids, *allocated, *n_ids + 1) < 0)
                        return -ENOMEM;
                strscpy((*ids)[(*n_ids)++], TENANT_ID_MAX, a.id);
        }
        return 0;
}

/*
 * Save a change to tenant, and to every tenant that d decided on, before the change is
 * acknowledged. tenant may be NULL. The change is one line appended to the journal and synced
 * with fdatasync(), in O(k log k) for k changed tenants. The caller runs the rewrite that keeps
 * the journal short after the reply, with tenants_rewrite(). This function writes the whole
 * file only when an append failed, or when the change touches a large share of the tenants.
 */
int tenants_commit(Tenants *t, const char *tenant, const AllocDecisions *d) {
        _cleanup_free_ char (*ids)[TENANT_ID_MAX] = NULL;
        _cleanup_free_ StateTenant *set = NULL;
        _cleanup_free_ char (*released)[TENANT_ID_MAX] = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n_ids = 0, n_set = 0, n_released = 0, ids_allocated, size, n = (d ? d->n_decisions : 0) + 1;
        StateError err = {};
        int r;

        if (t->dir_fd < 0)
                return 0;
        /*
         * A start reads the lines back whole. So once the journal is past 8 MiB, or when a change
         * touches more than an eighth of the tenants, the whole file is cheaper to write. A pool
         * change that places thousands of tenants again is such a change.
         */
        if (t->must_rewrite || t->journal_bytes >= 8u << 20 || (n > 64 && n > allocator_n_tenants(t->alloc) / 8)) {
                if (!t->group.open)
                        return tenants_save(t);
                t->group.whole = true;   /* The group writes the whole file, with this change in it. */
                t->group.n_changes++;
                return 0;
        }

        ids = calloc(n, TENANT_ID_MAX);
        if (!ids)
                return -ENOMEM;
        ids_allocated = n;
        for (size_t i = 0; i < n; i++) {
                const char *id = i + 1 < n ? d->decisions[i].tenant : tenant;
                if (id)
                        strscpy(ids[n_ids++], TENANT_ID_MAX, id);
        }
        r = add_guest_mates(t, d, &ids, &n_ids, &ids_allocated);
        if (r < 0)
                return r;
        set = calloc(MAX(n_ids, 1u), sizeof(StateTenant));
        released = calloc(MAX(n_ids, 1u), TENANT_ID_MAX);
        if (!set || !released)
                return -ENOMEM;
        qsort_safe(ids, n_ids, TENANT_ID_MAX, id_cmp);
        for (size_t i = 0; i < n_ids; i++) {
                const StateTenant *o;
                AllocTenant a;

                if (i > 0 && streq(ids[i - 1], ids[i]))
                        continue;
                if (allocator_find_tenant(t->alloc, ids[i], &a) >= 0)
                        tenant_state(t, &a, &set[n_set++]);
                else if ((o = tenants_orphan_find(t, ids[i])))
                        set[n_set++] = *o;
                else
                        strscpy(released[n_released++], TENANT_ID_MAX, ids[i]);
        }
        /*
         * The line is formatted now, with the tenants as they are after this change. The group's
         * later changes follow it.
         */
        r = state_journal_format(t->group.open ? t->group.base : t->generation,
                                 &(StateChange) { set, n_set, (const char (*)[TENANT_ID_MAX]) released, n_released },
                                 &line, &size, &err);
        if (r < 0) {
                tenants_problem(t, r, tenant, "could not save the change: %s", err.message[0] ? err.message : strerror(-r));
                return r;
        }
        if (t->group.open)
                return tenants_group_add_line(t, line, size);
        return tenants_append(t, line, size, 1, tenant);
}

int tenants_journal_ready(Tenants *t) {
        int r;

        if (t->must_rewrite || t->journal_bytes >= 8u << 20)
                return -ESTALE;
        if (t->journal_fd >= 0)
                return 0;
        /*
         * The journal is opened only after the whole file was written. So whatever it holds is in
         * the file already, or is a torn line that no append may follow. It is emptied first.
         */
        r = state_journal_open(t->dir_fd, STATE_JOURNAL_NAME, &t->journal_fd);
        if (r >= 0 && state_journal_reset(t->journal_fd) < 0) {
                close(t->journal_fd);
                t->journal_fd = -EBADF;
                r = -EIO;
        }
        return r;
}

int tenants_append(Tenants *t, const char *lines, size_t size, size_t n_lines, const char *tenant) {
        struct stat st;
        int r;

        (void) tenants_flight_wait(t);   /* Lines must reach the journal in the order they were made. */
        if (tenants_journal_ready(t) < 0)
                return tenants_save(t);
        r = state_journal_write(t->journal_fd, lines, size);
        if (r < 0) {
                tenants_problem(t, r, tenant, "could not save %s: %s", n_lines > 1 ? "the changes" : "the change",
                                strerror(-r));
                t->must_rewrite = true;
                return r;
        }
        t->journal_lines += n_lines;
        if (fstat(t->journal_fd, &st) >= 0)
                t->journal_bytes = (uint64_t) st.st_size;
        return 0;
}
