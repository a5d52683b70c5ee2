/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-internal.h — the tenant store's state, shared by tenants.c and its parts */
#pragma once

#include "sriovd/state.h"
#include "sriovd/tenants.h"

/* What sriovd keeps per tenant besides its placement, which the allocator owns. */
typedef struct Extra {
        char tenant[TENANT_ID_MAX];
        char domain[STATE_DOMAIN_MAX];
        uint8_t mac[6];
        int vlan;
        bool have_coalesce;
        unsigned rx_usecs, tx_usecs;
} Extra;

/* A VF count sriovd changed: the PF's VFs are new devices from then on. */
typedef struct PfGeneration {
        char pf[PCI_ADDR_MAX];
        uint32_t generation;
} PfGeneration;

/* A decision whose report waits for its group's write, with the facts it had when it was taken. */
typedef struct GroupReport {
        AllocDecision d;
        char class_name[CLASS_NAME_MAX];
        char domain[STATE_DOMAIN_MAX];
        char mac[MAC_STR_MAX];
        int vlan;
} GroupReport;

/* Changes applied in memory, not written yet (tenants-group.c): what undoes them, what saves them. */
typedef struct TenantsGroup {
        bool open;
        uint64_t seq;               /* which group: what log->saved names */
        uint64_t base;              /* the file's generation the lines apply to */
        Allocator *before;          /* the allocator before the group's first change */
        Extra *extras;
        size_t n_extras;
        StateTenant *orphans;
        size_t n_orphans;
        char (*in_guest)[PCI_ADDR_MAX];
        size_t n_in_guest;
        char *lines;                /* journal lines, one per change, in order */
        size_t size, allocated, n_lines;
        size_t n_changes;           /* saved by the group's write: lines, or in the file written whole */
        bool whole;                 /* a change that is cheaper written whole: the file is, for all */
        GroupReport *reports;
        size_t n_reports, allocated_reports;
} TenantsGroup;

struct Tenants {
        Allocator *alloc;
        TenantsLog log;
        int dir_fd;                 /* -1: memory only */
        int journal_fd;             /* appending changes since the file was written whole; -1: not open */
        size_t journal_lines;       /* in the journal: when it outgrows the file, the file is rewritten */
        uint64_t journal_bytes;
        bool must_rewrite;          /* an append failed: the next save writes everything whole */
        State loaded;               /* from disk, until the first tenants_configure() places it */
        bool placed;
        Extra *extras;              /* sorted by tenant */
        size_t n_extras, allocated_extras;
        StateTenant *orphans;       /* tenants whose class is gone: kept, reported, written back */
        size_t n_orphans;
        PfGeneration *gens;
        size_t n_gens, allocated_gens;
        char (*in_guest)[PCI_ADDR_MAX];   /* VFs a guest still has though no tenant holds them: given to no one */
        size_t n_in_guest, allocated_in_guest;
        uint64_t generation;
        double target;
        size_t n_left_out;          /* VFs the allocator cannot hold, as last reported */
        TenantsGroup group;
        TenantsGroup flight;        /* sealed, its lines on the writer's thread (open: in flight) */
        StateWriter *writer;        /* NULL: every group written on the caller's thread */
        uint64_t seq;               /* the last group's */
        int flight_error;           /* the last write in flight's outcome */
        bool whole_in_flight;       /* the writer's job is the file: groups opened meanwhile are of the next generation */
        /* The tenant being released and its class: its decision names the class it had (its guest's
         * placement is undone as that class placed it), though the allocator no longer knows it. */
        char releasing[TENANT_ID_MAX];
        char releasing_class[CLASS_NAME_MAX];
};

/* tenants.c: extras, the reports of decisions and problems, saving. */
Extra *tenants_extra_find(const Tenants *t, const char *tenant);
int tenants_extra_add(Tenants *t, const Extra *e);
_printf_(4, 5) void tenants_problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...);
/* Told now, or held for the open group's write. */
void tenants_report(Tenants *t, const AllocDecisions *d);
AllocNic tenants_alloc_nic_of(int kind);
int tenants_snapshot(const Tenants *t, State *ret);
int tenants_save(Tenants *t);
int tenants_commit(Tenants *t, const char *tenant, const AllocDecisions *d);
/* n_lines journal lines appended with one fdatasync(), or the file written whole when it must be. */
int tenants_append(Tenants *t, const char *lines, size_t size, size_t n_lines, const char *tenant);
/* The journal open and appendable: 0, else the group is to be written whole (the file). */
int tenants_journal_ready(Tenants *t);
/* The file written whole, here or on the writer's thread: what it needs, made on the loop. */
typedef struct WholeJob {
        int dir_fd, journal_fd;
        State s;                    /* the snapshot; its generation the file's once written */
        StateError err;
        bool reset_failed;          /* the journal could not be emptied after it */
} WholeJob;
int tenants_whole_job(Tenants *t, WholeJob **ret);
int tenants_whole_run(void *job);
void tenants_whole_free(void *job);
int tenants_saved_whole(Tenants *t, int r, uint64_t generation, const StateError *err, bool reset_failed);
bool tenants_vf_in_guest(const Tenants *t, const char *vf);
/* tenants-group.c: a change's line kept for the group's write; a decision's report held for it. */
int tenants_group_add_line(Tenants *t, const char *line, size_t size);
int tenants_group_hold_report(Tenants *t, const AllocDecision *d, const TenantNicFacts *nic);
void tenants_group_done(Tenants *t);
/* The write in flight done and told (its group undone if it failed) before anything else writes. */
int tenants_flight_wait(Tenants *t);
