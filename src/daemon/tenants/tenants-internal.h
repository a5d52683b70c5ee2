/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-internal.h — the tenant store's state, shared by tenants.c and its parts */
#pragma once

#include "state/state.h"
#include "tenants.h"

/* What sriovd keeps per tenant besides its placement, which the allocator owns. */
typedef struct Extra {
        char tenant[TENANT_ID_MAX];
        char domain[STATE_DOMAIN_MAX];
        uint8_t mac[6];
        int vlan;
        bool have_coalesce;
        unsigned rx_usecs, tx_usecs;
        char domain_uuid[UUID_STR_MAX];   /* "" when the domain is found by name */
        char owner[TENANT_ID_MAX];
        TxRates tx_rates;
} Extra;

/* How many times sriovd changed a PF's VF count. After each change, the PF's VFs are new devices. */
typedef struct PfGeneration {
        char pf[PCI_ADDR_MAX];
        uint32_t generation;
} PfGeneration;

/* A decision whose report waits for its group's write, with the facts as they were when it was taken. */
typedef struct GroupReport {
        AllocDecision d;
        char class_name[CLASS_NAME_MAX];
        char domain[STATE_DOMAIN_MAX];
        char mac[MAC_STR_MAX];
        int vlan;
        TxRates tx_rates;
} GroupReport;

/*
 * Changes applied in memory but not written yet, see tenants-group.c. The group holds what
 * undoes them and what saves them.
 */
typedef struct TenantsGroup {
        bool open;
        uint64_t seq;               /* the group's number, which log->saved reports */
        uint64_t base;              /* the file generation that the lines apply to */
        Allocator *before;          /* the allocator before the group's first change */
        Extra *extras;
        size_t n_extras;
        StateTenant *orphans;
        size_t n_orphans;
        PciSet in_guest;
        char *lines;                /* journal lines, one per change, in order */
        size_t size, allocated, n_lines;
        size_t n_changes;           /* the changes that the group's write saves, as lines or in the whole file */
        bool whole;                 /* a change is cheaper written as the whole file, so all of them are */
        GroupReport *reports;
        size_t n_reports, allocated_reports;
} TenantsGroup;

struct Tenants {
        Allocator *alloc;
        TenantsLog log;
        int dir_fd;                 /* -1 when the state lives in memory only */
        int journal_fd;             /* the changes since the file was last written whole; -1 when not open */
        size_t journal_lines;       /* when the journal outgrows the file, the file is rewritten */
        uint64_t journal_bytes;
        bool must_rewrite;          /* an append failed, so the next save writes the whole file */
        State loaded;               /* the state read from disk, until the first tenants_configure() places it */
        bool placed;
        Extra *extras;              /* sorted by tenant */
        size_t n_extras, allocated_extras;
        StateTenant *orphans;       /* tenants whose class is gone; they are kept, reported and written back */
        size_t n_orphans;
        PfGeneration *gens;
        size_t n_gens, allocated_gens;
        /* VFs that a guest still has though no tenant holds them. No one gets them. */
        PciSet in_guest;
        uint64_t generation;
        double target;
        size_t n_left_out;          /* VFs the allocator cannot hold, as last reported */
        TenantsGroup group;
        TenantsGroup flight;        /* the sealed group on the writer's thread; open while in flight */
        StateWriter *writer;        /* NULL writes every group on the caller's thread */
        uint64_t seq;               /* the last group's number */
        int flight_error;           /* the outcome of the last write in flight */
        bool whole_in_flight;       /* the writer writes the whole file, so new groups are of the next generation */
        /*
         * The tenant being released, and its class. The allocator no longer knows the class, but
         * the decision names it, because the guest's placement is undone as that class placed it.
         */
        char releasing[TENANT_ID_MAX];
        char releasing_class[CLASS_NAME_MAX];
};

/* tenants.c: extras, the reports of decisions and problems. */
Extra *tenants_extra_find(const Tenants *t, const char *tenant);
int tenants_extra_add(Tenants *t, const Extra *e);
void tenants_extra_remove(Tenants *t, const char *tenant);
_printf_(4, 5) void tenants_problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...);
/* Report the decisions now, or hold them until the open group is written. */
void tenants_report(Tenants *t, const AllocDecisions *d);
AllocNic tenants_alloc_nic_of(int kind);
/* tenants-save.c: the whole file and the journal. */
int tenants_snapshot(const Tenants *t, State *ret);
int tenants_save(Tenants *t);
int tenants_commit(Tenants *t, const char *tenant, const AllocDecisions *d);
/* Append n_lines journal lines with one fdatasync(), or write the whole file when that is needed. */
int tenants_append(Tenants *t, const char *lines, size_t size, size_t n_lines, const char *tenant);
/* Returns 0 when the journal is open and can take appends. Otherwise the group is written as the whole file. */
int tenants_journal_ready(Tenants *t);
/* A job that writes the whole file, here or on the writer's thread. The loop makes all that it needs. */
typedef struct WholeJob {
        int dir_fd, journal_fd;
        State s;                    /* the snapshot; the file has its generation once written */
        StateError err;
        bool reset_failed;          /* the journal could not be emptied after the write */
} WholeJob;
int tenants_whole_job(Tenants *t, WholeJob **ret);
int tenants_whole_run(void *job);
void tenants_whole_free(void *job);
int tenants_saved_whole(Tenants *t, int r, uint64_t generation, const StateError *err, bool reset_failed);
/* tenants-change.c: the orphan of that id, or NULL. */
StateTenant *tenants_orphan_find(const Tenants *t, const char *tenant);
bool tenants_vf_in_guest(const Tenants *t, const char *vf);
/* tenants-group.c: keep a change's line, or hold a decision's report, until the group's write. */
int tenants_group_add_line(Tenants *t, const char *line, size_t size);
int tenants_group_hold_report(Tenants *t, const AllocDecision *d, const TenantNicFacts *nic);
void tenants_group_done(Tenants *t);
/* Finish and report the write in flight before anything else writes. If it failed, its group is undone. */

int tenants_flight_wait(Tenants *t);
