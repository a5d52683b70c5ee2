/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants.c — who holds which NIC: the allocator's decisions, saved before they are acknowledged */

/*
 * This file handles requests, releases and saving. tenants-configure.c places the saved tenants
 * under the policy and pool of each load or reload. tenants-read.c answers what a tenant holds.
 */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/kernel.h"
#include "sriovd/manager.h"
#include "sriovd/state.h"
#include "tenants-internal.h"

/* The index in extras where tenant is, or would go. */
static size_t extra_lower_bound(const Tenants *t, const char *tenant) {
        size_t lo = 0, hi = t->n_extras;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(t->extras[mid].tenant, tenant) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

Extra *tenants_extra_find(const Tenants *t, const char *tenant) {
        size_t i = extra_lower_bound(t, tenant);
        return i < t->n_extras && streq(t->extras[i].tenant, tenant) ? &t->extras[i] : NULL;
}

/*
 * Extras are kept in id order. A restore sorts the saved file first, so each add appends, and a
 * start costs O(n log n).
 */
int tenants_extra_add(Tenants *t, const Extra *e) {
        size_t i = extra_lower_bound(t, e->tenant);

        if (i < t->n_extras && streq(t->extras[i].tenant, e->tenant)) {
                t->extras[i] = *e;
                return 0;
        }
        if (GREEDY_REALLOC(t->extras, t->allocated_extras, t->n_extras + 1) < 0)
                return -ENOMEM;
        memmove(t->extras + i + 1, t->extras + i, (t->n_extras - i) * sizeof(Extra));
        t->extras[i] = *e;
        t->n_extras++;
        return 0;
}

static void extra_remove(Tenants *t, const char *tenant) {
        Extra *e = tenants_extra_find(t, tenant);
        if (!e)
                return;
        memmove(e, e + 1, (size_t) (t->extras + t->n_extras - (e + 1)) * sizeof(Extra));
        t->n_extras--;
}

void tenants_problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...) {
        char buf[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (t->log.problem)
                t->log.problem(error, tenant, buf, t->log.userdata);
}

void tenants_report(Tenants *t, const AllocDecisions *d) {
        for (size_t i = 0; i < d->n_decisions && t->log.decision; i++) {
                const AllocDecision *dec = &d->decisions[i];
                const Extra *e = tenants_extra_find(t, dec->tenant);
                TenantNicFacts nic = { .domain = !e ? "" : e->domain_uuid[0] ? e->domain_uuid : e->domain,
                                       .vlan = e ? e->vlan : -1 };
                AllocTenant a;
                uint8_t mac[6];

                nic.class_name = t->alloc && allocator_find_tenant(t->alloc, dec->tenant, &a) >= 0 ? a.class_name :
                                 streq(dec->tenant, t->releasing) ? t->releasing_class : "";
                if (e)
                        memcpy(mac, e->mac, sizeof(mac));
                else
                        mac_derive(dec->tenant, mac);
                mac_format(mac, nic.mac);
                /* Without the memory to hold the report, it is told now rather than never. */
                if (t->group.open && tenants_group_hold_report(t, dec, &nic) >= 0)
                        continue;
                t->log.decision(dec, &nic, t->log.userdata);
        }
}

int tenants_new(const char *state_dir, const TenantsLog *log, Tenants **ret) {
        _cleanup_(tenants_freep) Tenants *t = NULL;
        _cleanup_free_ char *aside = NULL;
        StateError err = {};
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->dir_fd = t->journal_fd = -EBADF;
        t->log = log ? *log : (TenantsLog) {};
        t->target = ALLOC_TARGET_DEFAULT;

        if (state_dir) {
                if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                t->dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (t->dir_fd < 0)
                        return negative_errno();

                r = state_load(t->dir_fd, STATE_FILE_NAME, &t->loaded, &aside, &err);
                if (r == -EBADMSG)
                        /* The file is kept aside, never dropped, so that an operator can read what it held. */
                        tenants_problem(t, r, NULL, "%s/%s is corrupt (%s); moved aside to %s, starting without allocations",
                                state_dir, STATE_FILE_NAME, err.message, aside ?: "?");
                else if (r < 0 && r != -ENOENT)
                        return r;   /* The file is unreadable, and starting empty would overwrite it. */
                t->generation = t->loaded.generation;

                StateReplay rep = {};
                aside = mfree(aside);
                if (r == -EBADMSG) {
                        /*
                         * The journal holds changes to a file that nobody can read any more. So it
                         * is kept aside with that file, not applied.
                         */
                        r = state_journal_set_aside(t->dir_fd, STATE_JOURNAL_NAME, &aside);
                        if (r > 0)
                                tenants_problem(t, -EBADMSG, NULL, "%s/%s holds changes to the corrupt file; moved aside to %s",
                                        state_dir, STATE_JOURNAL_NAME, aside);
                        else if (r < 0)
                                return r;
                } else
                        r = state_journal_load(t->dir_fd, STATE_JOURNAL_NAME, &t->loaded, &rep, &aside, &err);
                if (r == -EBADMSG)
                        tenants_problem(t, r, NULL, "%s/%s is corrupt (%s); moved aside to %s, keeping the %zu changes before it",
                                state_dir, STATE_JOURNAL_NAME, err.message, aside ?: "?", rep.applied);
                else if (r < 0)
                        return r;
                /* The first placement writes what the journal held into the whole file, and empties it. */
                t->must_rewrite = rep.applied > 0 || rep.skipped > 0 || rep.torn || r != 0;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int tenants_new_readonly(const char *state_dir, const TenantsLog *log, Tenants **ret) {
        _cleanup_(tenants_freep) Tenants *t = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        StateError err = {};
        size_t size;
        int r;

        r = tenants_new(NULL, log, &t);
        if (r < 0)
                return r;
        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                *ret = TAKE_PTR(t);
                return 0;
        }
        r = state_read_file(dir_fd, STATE_FILE_NAME, &buf, &size);
        if (r >= 0) {
                r = state_parse(buf, size, &t->loaded, &err);
                if (r < 0) {
                        tenants_problem(t, r, NULL, "%s/%s is corrupt (%s); reading no allocations", state_dir,
                                STATE_FILE_NAME, err.message);
                        *ret = TAKE_PTR(t);
                        return 0;
                }
        } else if (r != -ENOENT)
                return r;
        buf = mfree(buf);
        r = state_read_file(dir_fd, STATE_JOURNAL_NAME, &buf, &size);
        if (r >= 0) {
                StateReplay rep = {};

                /* The longest valid run of lines is applied. Nothing after a torn line is. */
                r = state_journal_replay(buf, size, &t->loaded, &rep, &err);
                if (r < 0 && r != -EBADMSG)
                        return r;
                if (r == -EBADMSG)
                        tenants_problem(t, r, NULL, "%s/%s is corrupt (%s); reading the %zu changes before it", state_dir,
                                STATE_JOURNAL_NAME, err.message, rep.applied);
        } else if (r != -ENOENT)
                return r;
        t->generation = t->loaded.generation;
        *ret = TAKE_PTR(t);
        return 0;
}

Tenants *tenants_free(Tenants *t) {
        if (!t)
                return NULL;
        (void) tenants_flight_wait(t);   /* The writer thread uses the journal's fd until then. */
        allocator_free(t->alloc);
        state_done(&t->loaded);
        free(t->extras);
        free(t->orphans);
        free(t->gens);
        pci_set_done(&t->in_guest);
        if (t->dir_fd >= 0)
                close(t->dir_fd);
        if (t->journal_fd >= 0)
                close(t->journal_fd);
        tenants_group_done(t);   /* The open group was never written, so it was never acknowledged. */
        free(t);
        return NULL;
}

static StateKind state_kind_of(AllocNic nic) {
        return nic == ALLOC_NIC_VF ? STATE_KIND_VF : nic == ALLOC_NIC_NONE ? STATE_KIND_WAITING : STATE_KIND_VIRTIO;
}

AllocNic tenants_alloc_nic_of(int kind) {
        return kind == STATE_KIND_VF ? ALLOC_NIC_VF : kind == STATE_KIND_WAITING ? ALLOC_NIC_NONE : ALLOC_NIC_VIRTIO;
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
        } else
                mac_derive(a->id, ret->mac);
}

static StateTenant *orphan_find(const Tenants *t, const char *tenant) {
        for (size_t i = 0; i < t->n_orphans; i++)
                if (streq(t->orphans[i].tenant, tenant))
                        return &t->orphans[i];
        return NULL;
}

/*
 * Take the orphan out of the list by moving it just past the end. orphan_unremove() then puts
 * it back without allocating.
 */
static bool orphan_remove(Tenants *t, const char *tenant) {
        StateTenant *o = orphan_find(t, tenant), tmp;

        if (!o)
                return false;
        tmp = *o;
        *o = t->orphans[t->n_orphans - 1];
        t->orphans[--t->n_orphans] = tmp;
        return true;
}

static void orphan_unremove(Tenants *t) {
        t->n_orphans++;
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
                else if ((o = orphan_find(t, ids[i])))
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

/* Swap back the allocator as it was before a change that could not be saved. */
static void swap_allocators(Allocator **a, Allocator **b) {
        Allocator *x = *a;
        *a = *b;
        *b = x;
}

/*
 * A change saved on its own waits for the write in flight first. A change is saved on its own
 * when no group is open: without a bus, or for a caller outside a group. The change's line
 * names the file's generation, which a rewrite in flight is about to change. Also, a failed
 * write in flight takes memory back to before that write. Within a group, the group's own order
 * takes care of both.
 */
static void settle_before_change(Tenants *t) {
        if (!t->group.open)
                (void) tenants_flight_wait(t);
}

int tenants_allocate(Tenants *t, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, char *reason, size_t reason_size) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocRequest req = { .tenant = tenant, .class_name = class_name, .numa_node = opts->numa_node, .guest = domain,
                             .pin_pf = opts->pin_pf };
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        Extra e = { .vlan = -1 }, before;
        bool is_new, repeat, had_extra;
        AllocTenant cur;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        settle_before_change(t);
        if (!tenant_id_valid(tenant))
                return -EINVAL;
        if (strlen(domain) >= sizeof(e.domain) || strchr(domain, '/'))
                return -EINVAL;
        /* Refuse what the state file would refuse to hold: a multicast MAC, or a VLAN outside 802.1Q. */
        if ((opts->have_mac && (opts->mac[0] & 1)) || opts->vlan < -1 || opts->vlan > STATE_VLAN_MAX)
                return -EINVAL;
        if ((opts->pin_pf[0] && !pci_addr_valid(opts->pin_pf)) || (opts->domain_uuid[0] && !uuid_valid(opts->domain_uuid)) ||
            (opts->owner[0] && !tenant_id_valid(opts->owner) && !streq(opts->owner, ".") && !streq(opts->owner, "..")))
                return -EINVAL;
        is_new = allocator_find_tenant(t->alloc, tenant, &cur) < 0;
        /* An orphan is a saved tenant whose class is gone. Asked for again, it is replaced, not added. */
        if (is_new && !orphan_find(t, tenant) && allocator_n_tenants(t->alloc) + t->n_orphans >= STATE_TENANTS_MAX)
                return -EUSERS;

        /*
         * A repeat of the tenant's class and node changes nothing in the allocator. Anything else
         * works on a copy of the allocator, which is taken back whole if the change cannot be saved.
         */
        repeat = !is_new && streq(cur.class_name, class_name) && cur.numa_node == opts->numa_node &&
                 streq(cur.pin_pf, opts->pin_pf) &&
                 ((cur.n_rt_cpus == 0 && !cur.rt_waiting) || streq(cur.guest, domain));
        if (!repeat) {
                r = allocator_clone(t->alloc, &saved);
                if (r < 0)
                        return r;
        }
        r = allocator_request(t->alloc, &req, &d);
        if (r == ALLOCATOR_REFUSED) {
                if (reason)
                        snprintf(reason, reason_size, "%s",
                                 d.n_decisions ? d.decisions[d.n_decisions - 1].reason : "refused");
                /* -EXFULL means that an RT CPU was missing, not a VF. It has its own bus error. */
                return d.n_decisions && d.decisions[d.n_decisions - 1].missing == ALLOC_MISSING_RT_CPU ? -EXFULL
                                                                                                    : -ENOSPC;
        }
        if (r < 0) {
                if (saved)
                        swap_allocators(&t->alloc, &saved);   /* It should be unchanged, but that is not relied on. */
                return r;
        }
        /*
         * A class that refuses without RT CPUs never gets a yes-and-waiting answer. The allocator
         * already refuses such an outcome. This check holds the contract at the boundary, whatever
         * path led there. Nothing of the change stays.
         */
        if (allocator_find_tenant(t->alloc, tenant, &cur) >= 0) {
                if (cur.n_rt_cpus < allocator_class_rt_required(t->alloc, class_name)) {
                        if (saved)
                                swap_allocators(&t->alloc, &saved);
                        if (reason)
                                snprintf(reason, reason_size, "class %s: no RT CPU for guest %s now", class_name,
                                         domain[0] ? domain : tenant);
                        return -EXFULL;
                }
        }

        had_extra = tenants_extra_find(t, tenant);
        if (had_extra)
                e = *tenants_extra_find(t, tenant);
        else {
                strscpy(e.tenant, sizeof(e.tenant), tenant);
                mac_derive(tenant, e.mac);
        }
        before = e;
        strscpy(e.domain, sizeof(e.domain), domain);
        if (opts->have_mac)
                memcpy(e.mac, opts->mac, sizeof(e.mac));
        e.vlan = opts->vlan;
        strscpy(e.domain_uuid, sizeof(e.domain_uuid), opts->domain_uuid);
        strscpy(e.owner, sizeof(e.owner), opts->owner);
        r = tenants_extra_add(t, &e);
        /*
         * Any change is acknowledged only once it is saved. That includes a new class or node that
         * keeps the NIC, which makes no decision, and a new domain, MAC or VLAN alone.
         */
        if (r >= 0 && (!repeat || d.n_decisions > 0 || memcmp(&before, &e, sizeof(e)) != 0))
                r = tenants_commit(t, tenant, &d);
        if (r < 0) {
                /* The change was not saved, so it is not acknowledged. Nothing of it stays, in any tenant. */
                if (saved)
                        swap_allocators(&t->alloc, &saved);
                if (had_extra)
                        (void) tenants_extra_add(t, &before);
                else
                        extra_remove(t, tenant);
                return r;
        }
        orphan_remove(t, tenant);
        tenants_report(t, &d);
        return 0;
}

bool tenants_vf_in_guest(const Tenants *t, const char *vf) {
        return pci_set_contains(&t->in_guest, vf);
}

int tenants_release(Tenants *t, const char *tenant, bool vf_stays_in_guest) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        char held[PCI_ADDR_MAX] = "";
        AllocTenant cur;
        bool known;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        settle_before_change(t);
        if (orphan_find(t, tenant) && allocator_find_tenant(t->alloc, tenant, &(AllocTenant) {}) < 0) {
                /* The tenant was kept only because its class was gone. Now the operator lets it go. */
                orphan_remove(t, tenant);
                r = tenants_commit(t, tenant, NULL);
                if (r < 0) {
                        orphan_unremove(t);
                        return r;
                }
                extra_remove(t, tenant);
                return 0;
        }
        r = allocator_clone(t->alloc, &saved);
        if (r < 0)
                return r;
        t->releasing[0] = t->releasing_class[0] = 0;
        known = allocator_find_tenant(t->alloc, tenant, &cur) >= 0;
        if (known) {
                strscpy(t->releasing, sizeof(t->releasing), tenant);
                strscpy(t->releasing_class, sizeof(t->releasing_class), cur.class_name);
        }
        /* The guest lets go of the VF in its own time, in a live detach. Until then, the VF is no one's. */
        if (vf_stays_in_guest && known && cur.vf) {
                strscpy(held, sizeof(held), cur.vf);
                /* The room is made now, because nothing may fail once the change is saved. */
                r = pci_set_reserve(&t->in_guest, 1);
                if (r < 0)
                        return r;
                r = allocator_set_vf_in_guest(t->alloc, held, true, &d);
                if (r < 0) {
                        swap_allocators(&t->alloc, &saved);
                        return r;
                }
        }
        r = allocator_release(t->alloc, tenant, &d);
        if (r < 0) {
                swap_allocators(&t->alloc, &saved);
                return r;
        }
        r = tenants_commit(t, tenant, &d);
        if (r < 0) {
                swap_allocators(&t->alloc, &saved);
                return r;
        }
        if (held[0])
                (void) pci_set_add(&t->in_guest, held);   /* The room was made above, so this cannot fail. */
        /* Report before the tenant's domain and MAC are forgotten, because its NIC is detached from them. */
        tenants_report(t, &d);
        extra_remove(t, tenant);
        return 0;
}

int tenants_set_vfs_in_guest(Tenants *t, const char (*vfs)[PCI_ADDR_MAX], size_t n) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        _cleanup_(pci_set_done) PciSet now = {};
        size_t n_out = 0;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        (void) tenants_flush(t);   /* What came before is saved, or undone, first. */
        r = pci_set_reserve(&now, n);
        if (r < 0)
                return r;
        r = allocator_clone(t->alloc, &saved);
        if (r < 0)
                return r;
        /*
         * These VFs are marked first. So when the VFs let out below serve waiting tenants, none of
         * these can be given to anyone.
         */
        for (size_t i = 0; i < n; i++) {
                if (pci_set_contains(&now, vfs[i]))
                        continue;
                /*
                 * Only a VF that no tenant holds is marked. A VF that a tenant holds is where the
                 * reconcile says it is.
                 */
                if (allocator_vf_holder(t->alloc, vfs[i]))
                        continue;
                r = allocator_set_vf_in_guest(t->alloc, vfs[i], true, &d);
                if (r == -ENOENT)
                        continue;   /* The VF is not in the pool. */
                if (r < 0)
                        goto fail;
                /* The room was made above, so this cannot fail. */
                (void) pci_set_add(&now, vfs[i]);
        }
        for (size_t i = 0; i < pci_set_size(&t->in_guest); i++)
                if (!pci_set_contains(&now, pci_set_get(&t->in_guest, i))) {
                        r = allocator_set_vf_in_guest(t->alloc, pci_set_get(&t->in_guest, i), false, &d);
                        if (r < 0 && r != -ENOENT)
                                goto fail;
                        n_out++;
                }
        /* Nothing was let out, and as many were marked as before, so the set is the same. */
        if (n_out == 0 && pci_set_size(&now) == pci_set_size(&t->in_guest))
                return 0;
        /* VFs that left their guest serve the waiting tenants. The decisions are saved before anyone is told. */
        if (d.n_decisions > 0) {
                r = tenants_commit(t, NULL, &d);
                if (r < 0)
                        goto fail;
        }
        pci_set_done(&t->in_guest);
        t->in_guest = now;
        now = (PciSet) {};
        tenants_report(t, &d);
        return 1;

fail:
        swap_allocators(&t->alloc, &saved);
        return r;
}

int tenants_set_coalesce(Tenants *t, const char *tenant, unsigned rx_usecs, unsigned tx_usecs) {
        Extra *e;
        AllocTenant cur;
        int r;

        settle_before_change(t);
        /* An orphan, whose class is gone, is kept as saved but not managed. It has nothing to tune. */
        e = tenants_extra_find(t, tenant);
        if (!e || !t->alloc || allocator_find_tenant(t->alloc, tenant, &cur) < 0)
                return -ENOENT;
        if (rx_usecs > STATE_COALESCE_USECS_MAX || tx_usecs > STATE_COALESCE_USECS_MAX)
                return -EINVAL;
        /*
         * The coalescing window belongs to the VF, and ethtool sets it on the VF's host netdev. A
         * tenant on virtio-net has no window that sriovd could set, so a new one is refused rather
         * than kept unused. An override set while the tenant had a VF stays, for the VF it gets
         * back. That happens to a sriov-preferred tenant that was downgraded. A waiting
         * sriov-required tenant has no NIC yet, and may set a window for the VF to come.
         */
        if (cur.nic == ALLOC_NIC_VIRTIO)
                return -EMEDIUMTYPE;
        Extra before = *e;
        e->have_coalesce = true;
        e->rx_usecs = rx_usecs;
        e->tx_usecs = tx_usecs;
        r = tenants_commit(t, tenant, NULL);
        if (r < 0)
                *tenants_extra_find(t, tenant) = before;   /* It was not saved, so it is not changed. */

        return r;
}
