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
};

/* tenants.c: extras, the reports of decisions and problems, saving. */
Extra *tenants_extra_find(const Tenants *t, const char *tenant);
int tenants_extra_add(Tenants *t, const Extra *e);
_printf_(4, 5) void tenants_problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...);
void tenants_report(const Tenants *t, const AllocDecisions *d);
AllocNic tenants_alloc_nic_of(int kind);
int tenants_snapshot(const Tenants *t, State *ret);
int tenants_save(Tenants *t);
int tenants_commit(Tenants *t, const char *tenant, const AllocDecisions *d);
bool tenants_vf_in_guest(const Tenants *t, const char *vf);
