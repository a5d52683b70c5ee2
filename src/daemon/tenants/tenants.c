/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants.c — who holds which NIC: the allocator's decisions, saved before they are acknowledged */

/*
 * This file makes and frees the store, and keeps the extras and the reports. tenants-change.c
 * handles requests, releases and settings. tenants-save.c writes the file and the journal.
 * tenants-configure.c places the saved tenants under the policy and pool of each load or
 * reload. tenants-read.c answers what a tenant holds.
 */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "state/state.h"
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

void tenants_extra_remove(Tenants *t, const char *tenant) {
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
                                       .vlan = e ? e->vlan : -1, .tx_rates = e ? e->tx_rates : (TxRates) {} };
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

AllocNic tenants_alloc_nic_of(int kind) {
        return kind == STATE_KIND_VF ? ALLOC_NIC_VF : kind == STATE_KIND_WAITING ? ALLOC_NIC_NONE : ALLOC_NIC_VIRTIO;
}
