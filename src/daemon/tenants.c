/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants.c — who holds which NIC: the allocator's decisions, saved before they are acknowledged */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/kernel.h"
#include "sriovd/manager.h"
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

/* Index in extras where tenant is or would go. */
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

static Extra *extra_find(const Tenants *t, const char *tenant) {
        size_t i = extra_lower_bound(t, tenant);
        return i < t->n_extras && streq(t->extras[i].tenant, tenant) ? &t->extras[i] : NULL;
}

/* In id order: restoring a saved file (sorted first) appends, so a start is O(n log n). */
static int extra_add(Tenants *t, const Extra *e) {
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
        Extra *e = extra_find(t, tenant);
        if (!e)
                return;
        memmove(e, e + 1, (size_t) (t->extras + t->n_extras - (e + 1)) * sizeof(Extra));
        t->n_extras--;
}

static void problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...) _printf_(4, 5);
static void problem(const Tenants *t, int error, const char *tenant, const char *fmt, ...) {
        char buf[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (t->log.problem)
                t->log.problem(error, tenant, buf, t->log.userdata);
}

static void report(const Tenants *t, const AllocDecisions *d) {
        for (size_t i = 0; i < d->n_decisions && t->log.decision; i++) {
                const AllocDecision *dec = &d->decisions[i];
                const Extra *e = extra_find(t, dec->tenant);
                TenantNicFacts nic = { .domain = e ? e->domain : "", .vlan = e ? e->vlan : -1 };
                AllocTenant a;
                uint8_t mac[6];

                nic.class_name = t->alloc && allocator_find_tenant(t->alloc, dec->tenant, &a) >= 0 ? a.class_name : "";
                if (e)
                        memcpy(mac, e->mac, sizeof(mac));
                else
                        mac_derive(dec->tenant, mac);
                mac_format(mac, nic.mac);
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
                        /* Kept aside, never dropped: an operator can read what it held. */
                        problem(t, r, NULL, "%s/%s is corrupt (%s); moved aside to %s, starting without allocations",
                                state_dir, STATE_FILE_NAME, err.message, aside ?: "?");
                else if (r < 0 && r != -ENOENT)
                        return r;   /* unreadable: starting empty would overwrite it */
                t->generation = t->loaded.generation;

                StateReplay rep = {};
                aside = mfree(aside);
                if (r == -EBADMSG) {
                        /* Changes to a file nobody can read any more: kept aside with it, not applied. */
                        r = state_journal_set_aside(t->dir_fd, STATE_JOURNAL_NAME, &aside);
                        if (r > 0)
                                problem(t, -EBADMSG, NULL, "%s/%s holds changes to the corrupt file; moved aside to %s",
                                        state_dir, STATE_JOURNAL_NAME, aside);
                        else if (r < 0)
                                return r;
                } else
                        r = state_journal_load(t->dir_fd, STATE_JOURNAL_NAME, &t->loaded, &rep, &aside, &err);
                if (r == -EBADMSG)
                        problem(t, r, NULL, "%s/%s is corrupt (%s); moved aside to %s, the %zu changes before it kept",
                                state_dir, STATE_JOURNAL_NAME, err.message, aside ?: "?", rep.applied);
                else if (r < 0)
                        return r;
                /* Whatever it held is written whole at the first placement, which empties it. */
                t->must_rewrite = rep.applied > 0 || rep.skipped > 0 || rep.torn || r != 0;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

/* name's bytes in dir_fd, or -ENOENT; nothing is created, removed or moved. */
static int read_only(int dir_fd, const char *name, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return read_fd_full(fd, STATE_FILE_SIZE_MAX, ret, ret_size);
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
        r = read_only(dir_fd, STATE_FILE_NAME, &buf, &size);
        if (r >= 0) {
                r = state_parse(buf, size, &t->loaded, &err);
                if (r < 0) {
                        problem(t, r, NULL, "%s/%s is corrupt (%s); reading no allocations", state_dir,
                                STATE_FILE_NAME, err.message);
                        *ret = TAKE_PTR(t);
                        return 0;
                }
        } else if (r != -ENOENT)
                return r;
        buf = mfree(buf);
        r = read_only(dir_fd, STATE_JOURNAL_NAME, &buf, &size);
        if (r >= 0) {
                StateReplay rep = {};

                /* The longest valid run of lines is applied; what follows a torn line is not. */
                r = state_journal_replay(buf, size, &t->loaded, &rep, &err);
                if (r < 0 && r != -EBADMSG)
                        return r;
                if (r == -EBADMSG)
                        problem(t, r, NULL, "%s/%s is corrupt (%s); the %zu changes before it read", state_dir,
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
        allocator_free(t->alloc);
        state_done(&t->loaded);
        free(t->extras);
        free(t->orphans);
        free(t->gens);
        free(t->in_guest);
        if (t->dir_fd >= 0)
                close(t->dir_fd);
        if (t->journal_fd >= 0)
                close(t->journal_fd);
        free(t);
        return NULL;
}

static bool vf_in_guest(const Tenants *t, const char *vf) {
        for (size_t i = 0; i < t->n_in_guest; i++)
                if (streq(t->in_guest[i], vf))
                        return true;
        return false;
}

static uint32_t pf_generation(const Tenants *t, const char *pf) {
        for (size_t i = 0; i < t->n_gens; i++)
                if (streq(t->gens[i].pf, pf))
                        return t->gens[i].generation;
        return 0;
}

void tenants_vfs_recreated(Tenants *t, const char *pf) {
        for (size_t i = 0; i < t->n_gens; i++)
                if (streq(t->gens[i].pf, pf)) {
                        t->gens[i].generation++;
                        return;
                }
        if (GREEDY_REALLOC(t->gens, t->allocated_gens, t->n_gens + 1) < 0)
                return;   /* the holders are re-placed by the pool check instead */
        t->gens[t->n_gens] = (PfGeneration) { .generation = 1 };
        strscpy(t->gens[t->n_gens++].pf, PCI_ADDR_MAX, pf);
}

static bool orphan_holds(const StateTenant *orphans, size_t n, const char *vf) {
        for (size_t i = 0; i < n; i++)
                if (orphans[i].kind == STATE_KIND_VF && streq(orphans[i].vf, vf))
                        return true;
        return false;
}

/* By address, then PF: of a VF claimed twice, the one under the lower PF is kept. */
static int alloc_vf_cmp(const void *a, const void *b) {
        const AllocVf *x = a, *y = b;
        return strcmp(x->addr, y->addr) ?: strcmp(x->pf, y->pf);
}

/*
 * The VF pool, less what the allocator cannot hold: a VF claimed by two PFs, or on a NUMA
 * node past ALLOC_NODES_MAX. Such functions are left out and reported when their number
 * changes; the rest of the host is still served. The VF
 * an orphan was saved on is held back: it is that tenant's until it is released.
 */
static int pool_from_inventory(Tenants *t, const StateTenant *orphans, size_t n_orphans, const Inventory *inv,
                               AllocVf **ret, size_t *ret_n) {
        char first[256] = "";
        size_t n = 0, k = 0, out = 0;
        AllocVf *vfs;

        for (size_t i = 0; i < inv->n_pfs; i++)
                n += inv->pfs[i].n_vfs;
        vfs = calloc(n ?: 1, sizeof(AllocVf));
        if (!vfs)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        AllocVf *v = &vfs[k];
                        *v = (AllocVf) {
                                .numa_node = pf->numa_node,
                                /* A VF a driver holds is a working function; an unbound one is not yet. */
                                .healthy = pf->vfs[j].driver[0] != 0 || pf->drivers_autoprobe == 0,
                                .reserved = orphan_holds(orphans, n_orphans, pf->vfs[j].addr),
                                .in_guest = vf_in_guest(t, pf->vfs[j].addr),
                                .generation = pf_generation(t, pf->addr),
                        };
                        strscpy(v->addr, sizeof(v->addr), pf->vfs[j].addr);
                        strscpy(v->pf, sizeof(v->pf), pf->addr);
                        if (!pci_addr_valid(v->addr) || !pci_addr_valid(v->pf) || v->numa_node < -1 ||
                            v->numa_node >= ALLOC_NODES_MAX) {
                                if (out++ == 0)
                                        snprintf(first, sizeof(first), "VF %s of PF %s on NUMA node %d", v->addr,
                                                 v->pf, v->numa_node);
                                continue;
                        }
                        k++;
                }
        }
        qsort_safe(vfs, k, sizeof(AllocVf), alloc_vf_cmp);
        n = k;
        k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k > 0 && streq(vfs[k - 1].addr, vfs[i].addr)) {
                        if (out++ == 0)
                                snprintf(first, sizeof(first), "VF %s listed under PF %s and PF %s", vfs[i].addr,
                                         vfs[k - 1].pf, vfs[i].pf);
                        continue;
                }
                vfs[k++] = vfs[i];
        }
        if (out != t->n_left_out && out > 0)
                problem(t, -EINVAL, NULL, "%zu VF%s cannot be handed out and %s left out of the pool (first: %s)",
                        out, out == 1 ? "" : "s", out == 1 ? "is" : "are", first);
        t->n_left_out = out;
        *ret = vfs;
        *ret_n = k;
        return 0;
}

static StateKind state_kind_of(AllocNic nic) {
        return nic == ALLOC_NIC_VF ? STATE_KIND_VF : nic == ALLOC_NIC_NONE ? STATE_KIND_WAITING : STATE_KIND_VIRTIO;
}

static AllocNic alloc_nic_of(int kind) {
        return kind == STATE_KIND_VF ? ALLOC_NIC_VF : kind == STATE_KIND_WAITING ? ALLOC_NIC_NONE : ALLOC_NIC_VIRTIO;
}

/* One tenant the allocator holds, as the state file holds it. */
static void tenant_state(const Tenants *t, const AllocTenant *a, StateTenant *ret) {
        const Extra *e = extra_find(t, a->id);

        *ret = (StateTenant) {
                .kind = state_kind_of(a->nic),
                .vlan = e ? e->vlan : -1,
                .numa_node = a->numa_node,
                .seq = a->seq,
        };
        strscpy(ret->tenant, sizeof(ret->tenant), a->id);
        strscpy(ret->class_name, sizeof(ret->class_name), a->class_name);
        if (a->vf)
                strscpy(ret->vf, sizeof(ret->vf), a->vf);
        if (e) {
                memcpy(ret->mac, e->mac, sizeof(ret->mac));
                strscpy(ret->domain, sizeof(ret->domain), e->domain);
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

/* Out of the list, kept just past its end: orphan_unremove() puts it back without allocating. */
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
static int tenants_snapshot(const Tenants *t, State *ret) {
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
        /* An orphan asked for again is in the allocator now; until that is saved it is both. */
        for (size_t i = 0; i < t->n_orphans; i++) {
                AllocTenant a;
                if (allocator_find_tenant(t->alloc, t->orphans[i].tenant, &a) < 0)
                        s.tenants[s.n++] = t->orphans[i];
        }
        *ret = s;
        return 0;
}

/* Written whole: temp file, fsync, rename, fsync the directory; then the journal is emptied. */
static int tenants_save(Tenants *t) {
        State s = {};
        StateError err = {};
        int r;

        if (t->dir_fd < 0)
                return 0;
        r = tenants_snapshot(t, &s);
        if (r < 0)
                return r;
        r = state_save(t->dir_fd, STATE_FILE_NAME, &s, &err);
        if (r >= 0)
                t->generation = s.generation;
        state_done(&s);
        if (r < 0) {
                /* The file may hold the new generation already (its directory fsync failed): until a
                 * rewrite succeeds, no line may be appended against either. */
                t->must_rewrite = true;
                problem(t, r, NULL, "could not save the allocations: %s", err.message[0] ? err.message : strerror(-r));
                return r;
        }
        /* The journal's lines are of the old generation now: skipped at load, emptied before the
         * next append (reopened and emptied then, if emptying fails now). */
        t->journal_lines = 0;
        t->journal_bytes = 0;
        t->must_rewrite = false;
        if (t->journal_fd >= 0 && state_journal_reset(t->journal_fd) < 0) {
                close(t->journal_fd);
                t->journal_fd = -EBADF;
        }
        return 0;
}

/* Rewrite the file once the journal holds a quarter of the tenants' worth of lines, or 4 MiB:
 * a change then costs four tenants' worth of writing, amortized, and a start replays little. */
bool tenants_want_rewrite(const Tenants *t) {
        return t->dir_fd >= 0 && (t->must_rewrite || t->journal_lines >= MAX(256u, allocator_n_tenants(t->alloc) / 4) ||
                                  t->journal_bytes >= 4u << 20);
}

int tenants_rewrite(Tenants *t) {
        return tenants_want_rewrite(t) ? tenants_save(t) : 0;
}

static int id_cmp(const void *a, const void *b) {
        return strcmp(a, b);
}

/*
 * Save a change to tenant (may be NULL) and to every tenant d decided on, before it is
 * acknowledged: one line appended to the journal, fdatasync()ed, in O(k log k) for k changed
 * tenants. The rewrite that keeps the journal short is the caller's to run after the reply
 * (tenants_rewrite()); here only when an append failed, or the change is most of the file.
 */
static int tenants_commit(Tenants *t, const char *tenant, const AllocDecisions *d) {
        _cleanup_free_ char (*ids)[TENANT_ID_MAX] = NULL;
        _cleanup_free_ StateTenant *set = NULL;
        _cleanup_free_ char (*released)[TENANT_ID_MAX] = NULL;
        size_t n_ids = 0, n_set = 0, n_released = 0, n = (d ? d->n_decisions : 0) + 1;
        StateError err = {};
        struct stat st;
        int r;

        if (t->dir_fd < 0)
                return 0;
        /* Lines are read back whole at start: one past 8 MiB, or past an eighth of the tenants, is
         * cheaper written whole (a pool change that re-places thousands). */
        if (t->must_rewrite || t->journal_bytes >= 8u << 20 || (n > 64 && n > allocator_n_tenants(t->alloc) / 8))
                return tenants_save(t);
        if (t->journal_fd < 0) {
                /* Opened only after the file was written whole, so whatever it holds is in the
                 * file already (or a torn line no append may follow): emptied first. */
                r = state_journal_open(t->dir_fd, STATE_JOURNAL_NAME, &t->journal_fd);
                if (r >= 0 && state_journal_reset(t->journal_fd) < 0) {
                        close(t->journal_fd);
                        t->journal_fd = -EBADF;
                        r = -EIO;
                }
                if (r < 0)
                        return tenants_save(t);
        }

        ids = calloc(n, TENANT_ID_MAX);
        set = calloc(n, sizeof(StateTenant));
        released = calloc(n, TENANT_ID_MAX);
        if (!ids || !set || !released)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *id = i + 1 < n ? d->decisions[i].tenant : tenant;
                if (id)
                        strscpy(ids[n_ids++], TENANT_ID_MAX, id);
        }
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
        r = state_journal_append(t->journal_fd, t->generation,
                                 &(StateChange) { set, n_set, (const char (*)[TENANT_ID_MAX]) released, n_released },
                                 &err);
        if (r < 0) {
                problem(t, r, tenant, "could not save the change: %s", err.message[0] ? err.message : strerror(-r));
                t->must_rewrite = true;
                return r;
        }
        t->journal_lines++;
        if (fstat(t->journal_fd, &st) >= 0)
                t->journal_bytes = (uint64_t) st.st_size;
        return 0;
}

static int class_table(const Config *cfg, AllocClass **ret) {
        AllocClass *c = calloc(cfg->n_classes ?: 1, sizeof(AllocClass));

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_classes; i++) {
                strscpy(c[i].name, sizeof(c[i].name), cfg->classes[i].name);
                c[i].vnic = cfg->classes[i].vnic;
                c[i].rank = cfg->classes[i].rank;
                c[i].allow_remote_numa = cfg->classes[i].allow_remote_numa;
        }
        *ret = c;
        return 0;
}

static int state_tenant_cmp(const void *a, const void *b) {
        return strcmp(((const StateTenant *) a)->tenant, ((const StateTenant *) b)->tenant);
}

static int orphan_add(StateTenant **orphans, size_t *n_orphans, const StateTenant *st) {
        StateTenant *o = reallocarray(*orphans, *n_orphans + 1, sizeof(StateTenant));

        if (!o)
                return -ENOMEM;
        *orphans = o;
        o[(*n_orphans)++] = *st;
        return 0;
}

/* A tenant the allocator cannot hold (error: why) is kept as saved, written back, never dropped. */
static int place_orphan(Tenants *t, Allocator *a, const StateTenant *st, int error, StateTenant **orphans,
                        size_t *n_orphans) {
        if (orphan_add(orphans, n_orphans, st) < 0)
                return -ENOMEM;
        allocator_reserve_seq(a, st->seq);
        if (error == -ENOENT)
                problem(t, error, st->tenant, "tenant %s's class %s is not defined any more; kept as it was saved "
                        "(%s %s), not managed until the class is back", st->tenant, st->class_name,
                        state_kind_to_string(st->kind), st->vf);
        else
                problem(t, error, st->tenant, "tenant %s cannot be placed as saved (%s); kept as it was saved (%s %s), "
                        "not managed", st->tenant, strerror(-error), state_kind_to_string(st->kind), st->vf);
        return 0;
}

/*
 * Restore one known tenant in the new allocator, as it was. Whatever no longer holds (its VF
 * gone, its class another kind) is re-placed by the reconcile after the last one, so no
 * tenant takes another's VF first. One the allocator cannot hold is kept as saved (an
 * orphan, written back), never dropped.
 */
static int place(Tenants *t, Allocator *a, const StateTenant *st, StateTenant **orphans, size_t *n_orphans) {
        AllocTenant at = {
                .id = st->tenant,
                .class_name = st->class_name,
                .numa_node = st->numa_node,
                .nic = alloc_nic_of(st->kind),
                .vf = st->kind == STATE_KIND_VF ? st->vf : NULL,
                .seq = st->seq,
        };
        AllocTenant now;
        int r;

        r = allocator_restore_tenant(a, &at);
        if (r >= 0) {
                if (at.nic != ALLOC_NIC_VF && allocator_find_tenant(a, st->tenant, &now) >= 0 && now.nic != at.nic)
                        problem(t, 0, st->tenant, "tenant %s was saved %s; its class %s is %s now, so it %s",
                                st->tenant, st->kind == STATE_KIND_WAITING ? "waiting for a VF" : "on virtio-net",
                                st->class_name, now.nic == ALLOC_NIC_NONE ? "sriov-required" : "not",
                                now.nic == ALLOC_NIC_NONE ? "waits for a VF" : "goes on virtio-net");
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        return place_orphan(t, a, st, r, orphans, n_orphans);
}

int tenants_configure(Tenants *t, const Config *cfg, const Inventory *inv) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_free_ AllocClass *classes = NULL;
        _cleanup_free_ AllocVf *vfs = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_free_ StateTenant *orphans = NULL;
        _cleanup_(state_done) State snapshot = {};
        const State *known;
        size_t n_vfs, n_orphans = 0, n_placed_orphans;
        AllocPolicy pol;
        int r;

        r = class_table(cfg, &classes);
        if (r < 0)
                return r;
        pol = ALLOC_POLICY_INIT(classes, cfg->n_classes);
        pol.headroom = cfg->vf_headroom;
        pol.target_utilization = cfg->vf_target_utilization / 100.0;
        r = allocator_new(&pol, &a);
        if (r < 0)
                return r;

        /* Who to place: the saved file at start (kept until placed, so a failure can retry), what
         * the old allocator held on reload. */
        if (!t->placed) {
                qsort_safe(t->loaded.tenants, t->loaded.n, sizeof(StateTenant), state_tenant_cmp);
                for (size_t i = 0; i < t->loaded.n; i++) {
                        const StateTenant *st = &t->loaded.tenants[i];
                        Extra e = { .vlan = st->vlan, .have_coalesce = st->have_coalesce, .rx_usecs = st->rx_usecs,
                                    .tx_usecs = st->tx_usecs };
                        strscpy(e.tenant, sizeof(e.tenant), st->tenant);
                        strscpy(e.domain, sizeof(e.domain), st->domain);
                        memcpy(e.mac, st->mac, sizeof(e.mac));
                        r = extra_add(t, &e);
                        if (r < 0)
                                return r;
                }
                known = &t->loaded;
        } else {
                r = tenants_snapshot(t, &snapshot);
                if (r < 0)
                        return r;
                known = &snapshot;
        }

        /* Tenants whose class is gone first: the VFs they were saved on are not anyone else's. */
        for (size_t i = 0; i < known->n; i++)
                if (!config_find_class(cfg, known->tenants[i].class_name)) {
                        r = place_orphan(t, a, &known->tenants[i], -ENOENT, &orphans, &n_orphans);
                        if (r < 0)
                                return r;
                }
        n_placed_orphans = n_orphans;
        r = pool_from_inventory(t, orphans, n_orphans, inv, &vfs, &n_vfs);
        if (r < 0)
                return r;
        r = allocator_set_pool(a, vfs, n_vfs, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < known->n; i++) {
                if (!config_find_class(cfg, known->tenants[i].class_name))
                        continue;
                r = place(t, a, &known->tenants[i], &orphans, &n_orphans);
                if (r < 0)
                        return r;
        }
        if (n_orphans > n_placed_orphans) {
                /* Some could not be restored after all: their VFs are held back too. */
                vfs = mfree(vfs);
                r = pool_from_inventory(t, orphans, n_orphans, inv, &vfs, &n_vfs);
                if (r >= 0)
                        r = allocator_set_pool(a, vfs, n_vfs, &d);
                if (r < 0)
                        return r;
        }
        r = allocator_reconcile(a, &d);
        if (r < 0)
                return r;

        allocator_free(t->alloc);
        t->alloc = TAKE_PTR(a);
        free(t->orphans);
        t->orphans = TAKE_PTR(orphans);
        t->n_orphans = n_orphans;
        t->target = pol.target_utilization;
        if (!t->placed)
                state_done(&t->loaded);
        t->placed = true;
        report(t, &d);
        if (d.n_decisions > 0 || t->must_rewrite)
                (void) tenants_save(t);
        return 0;
}

int tenants_update_pool(Tenants *t, const Inventory *inv) {
        _cleanup_free_ AllocVf *vfs = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        size_t n;
        int r;

        if (!t->alloc)
                return 0;
        r = pool_from_inventory(t, t->orphans, t->n_orphans, inv, &vfs, &n);
        if (r < 0)
                return r;
        r = allocator_set_pool(t->alloc, vfs, n, &d);
        if (r < 0)
                return r;
        report(t, &d);
        return d.n_decisions > 0 ? tenants_commit(t, NULL, &d) : 0;
}

/* The allocator as it was before a change that could not be saved. */
static void swap_allocators(Allocator **a, Allocator **b) {
        Allocator *x = *a;
        *a = *b;
        *b = x;
}

int tenants_allocate(Tenants *t, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, char *reason, size_t reason_size) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocRequest req = { .tenant = tenant, .class_name = class_name, .numa_node = opts->numa_node };
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        Extra e = { .vlan = -1 }, before;
        bool is_new, repeat, had_extra;
        AllocTenant cur;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        if (!tenant_id_valid(tenant))
                return -EINVAL;
        if (strlen(domain) >= sizeof(e.domain) || strchr(domain, '/'))
                return -EINVAL;
        /* A MAC the state file would refuse to hold: multicast, or outside 802.1Q. */
        if ((opts->have_mac && (opts->mac[0] & 1)) || opts->vlan < -1 || opts->vlan > STATE_VLAN_MAX)
                return -EINVAL;
        is_new = allocator_find_tenant(t->alloc, tenant, &cur) < 0;
        /* An orphan (saved, class gone) asked for again is replaced, so it is no new entry. */
        if (is_new && !orphan_find(t, tenant) && allocator_n_tenants(t->alloc) + t->n_orphans >= STATE_TENANTS_MAX)
                return -EUSERS;

        /* A repeat of the tenant's class and node changes nothing in the allocator. Anything else
         * works on a copy, taken back whole if the change cannot be saved. */
        repeat = !is_new && streq(cur.class_name, class_name) && cur.numa_node == opts->numa_node;
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
                return -ENOSPC;
        }
        if (r < 0) {
                if (saved)
                        swap_allocators(&t->alloc, &saved);   /* promised unchanged; not relied on */
                return r;
        }

        had_extra = extra_find(t, tenant);
        if (had_extra)
                e = *extra_find(t, tenant);
        else {
                strscpy(e.tenant, sizeof(e.tenant), tenant);
                mac_derive(tenant, e.mac);
        }
        before = e;
        strscpy(e.domain, sizeof(e.domain), domain);
        if (opts->have_mac)
                memcpy(e.mac, opts->mac, sizeof(e.mac));
        e.vlan = opts->vlan;
        r = extra_add(t, &e);
        /* Any change is acknowledged only once saved: a new class or node that keeps the NIC
         * (no decision), a new domain, MAC or VLAN alone. */
        if (r >= 0 && (!repeat || d.n_decisions > 0 || memcmp(&before, &e, sizeof(e)) != 0))
                r = tenants_commit(t, tenant, &d);
        if (r < 0) {
                /* Not saved, so not acknowledged: nothing of it stays, in this tenant or any other. */
                if (saved)
                        swap_allocators(&t->alloc, &saved);
                if (had_extra)
                        (void) extra_add(t, &before);
                else
                        extra_remove(t, tenant);
                return r;
        }
        orphan_remove(t, tenant);
        report(t, &d);
        return 0;
}

int tenants_release(Tenants *t, const char *tenant, bool vf_stays_in_guest) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        char held[PCI_ADDR_MAX] = "";
        AllocTenant cur;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        if (orphan_find(t, tenant) && allocator_find_tenant(t->alloc, tenant, &(AllocTenant) {}) < 0) {
                /* Kept only because its class was gone: the operator lets it go. */
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
        /* Its guest lets go of the VF in its own time (a live detach): until then the VF is no one's. */
        if (vf_stays_in_guest && allocator_find_tenant(t->alloc, tenant, &cur) >= 0 && cur.vf) {
                strscpy(held, sizeof(held), cur.vf);
                if (GREEDY_REALLOC(t->in_guest, t->allocated_in_guest, t->n_in_guest + 1) < 0)
                        return -ENOMEM;
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
                strscpy(t->in_guest[t->n_in_guest++], PCI_ADDR_MAX, held);
        report(t, &d);   /* before its domain and MAC are forgotten: its NIC is detached from them */
        extra_remove(t, tenant);
        return 0;
}

static bool listed(const char (*vfs)[PCI_ADDR_MAX], size_t n, const char *vf) {
        for (size_t i = 0; i < n; i++)
                if (streq(vfs[i], vf))
                        return true;
        return false;
}

int tenants_set_vfs_in_guest(Tenants *t, const char (*vfs)[PCI_ADDR_MAX], size_t n) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        _cleanup_free_ char (*now)[PCI_ADDR_MAX] = NULL;
        size_t n_now = 0;
        bool changed = false;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        now = calloc(n ?: 1, PCI_ADDR_MAX);
        if (!now)
                return -ENOMEM;
        r = allocator_clone(t->alloc, &saved);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_in_guest; i++)
                if (!listed(vfs, n, t->in_guest[i])) {
                        r = allocator_set_vf_in_guest(t->alloc, t->in_guest[i], false, &d);
                        if (r < 0 && r != -ENOENT)
                                goto fail;
                        changed = true;
                }
        for (size_t i = 0; i < n; i++) {
                if (listed((const char(*)[PCI_ADDR_MAX]) now, n_now, vfs[i]))
                        continue;
                /* Only a VF no tenant holds: one a tenant holds is where reconcile says it is. */
                if (allocator_vf_holder(t->alloc, vfs[i]))
                        continue;
                r = allocator_set_vf_in_guest(t->alloc, vfs[i], true, &d);
                if (r == -ENOENT)
                        continue;   /* not one of the pool's */
                if (r < 0)
                        goto fail;
                changed = changed || !vf_in_guest(t, vfs[i]);
                strscpy(now[n_now++], PCI_ADDR_MAX, vfs[i]);
        }
        if (!changed && n_now == t->n_in_guest)
                return 0;
        /* VFs out of their guest serve the tenants that wait: saved before anyone is told. */
        if (d.n_decisions > 0) {
                r = tenants_commit(t, NULL, &d);
                if (r < 0)
                        goto fail;
        }
        free(t->in_guest);
        t->in_guest = TAKE_PTR(now);
        t->n_in_guest = t->allocated_in_guest = n_now;
        report(t, &d);
        return 1;

fail:
        swap_allocators(&t->alloc, &saved);
        return r;
}

size_t tenants_vfs_in_guest(const Tenants *t, const char (**ret)[PCI_ADDR_MAX]) {
        *ret = (const char(*)[PCI_ADDR_MAX]) t->in_guest;
        return t->n_in_guest;
}

int tenants_set_coalesce(Tenants *t, const char *tenant, unsigned rx_usecs, unsigned tx_usecs) {
        Extra *e = extra_find(t, tenant);
        int r;

        /* An orphan (its class gone) is kept as saved, not managed: nothing to tune. */
        if (!e || !t->alloc || allocator_find_tenant(t->alloc, tenant, &(AllocTenant) {}) < 0)
                return -ENOENT;
        if (rx_usecs > STATE_COALESCE_USECS_MAX || tx_usecs > STATE_COALESCE_USECS_MAX)
                return -EINVAL;
        Extra before = *e;
        e->have_coalesce = true;
        e->rx_usecs = rx_usecs;
        e->tx_usecs = tx_usecs;
        r = tenants_commit(t, tenant, NULL);
        if (r < 0)
                *extra_find(t, tenant) = before;   /* not saved: not changed */
        return r;
}

static void fill_info(const Tenants *t, const Inventory *inv, const AllocTenant *a, TenantInfo *ret) {
        const Extra *e = extra_find(t, a->id);
        uint8_t mac[6];

        *ret = (TenantInfo) {
                .vlan = e ? e->vlan : -1,
                .kind = alloc_nic_to_string(a->nic),
                .numa_node = a->numa_node,
                .remote_numa = a->remote_numa,
                .state = a->nic == ALLOC_NIC_NONE ? "waiting" : "allocated",
        };
        strscpy(ret->tenant, sizeof(ret->tenant), a->id);
        strscpy(ret->class_name, sizeof(ret->class_name), a->class_name);
        if (e) {
                memcpy(mac, e->mac, sizeof(mac));
                strscpy(ret->domain, sizeof(ret->domain), e->domain);
                ret->have_coalesce = e->have_coalesce;
                ret->rx_usecs = e->rx_usecs;
                ret->tx_usecs = e->tx_usecs;
        } else
                mac_derive(a->id, mac);
        mac_format(mac, ret->mac);
        if (a->vf) {
                strscpy(ret->vf, sizeof(ret->vf), a->vf);
                const Vf *vf = NULL;
                const Pf *pf = inv ? inventory_find_function(inv, a->vf, &vf) : NULL;

                if (pf && vf) {
                        strscpy(ret->pf, sizeof(ret->pf), pf->addr);
                        strscpy(ret->netdev, sizeof(ret->netdev), vf->netdev);
                }
        }
}

int tenants_get(const Tenants *t, const Inventory *inv, const char *tenant, TenantInfo *ret) {
        AllocTenant a;
        int r;

        if (!t->alloc)
                return -ENOENT;
        r = allocator_find_tenant(t->alloc, tenant, &a);
        if (r < 0)
                return r;
        fill_info(t, inv, &a, ret);
        return 0;
}

size_t tenants_count(const Tenants *t) {
        return t->alloc ? allocator_n_tenants(t->alloc) : 0;
}

int tenants_nth(const Tenants *t, const Inventory *inv, size_t i, TenantInfo *ret) {
        AllocTenant a;
        int r;

        if (!t->alloc)
                return -ERANGE;
        r = allocator_tenant(t->alloc, i, &a);
        if (r < 0)
                return r;
        fill_info(t, inv, &a, ret);
        return 0;
}

void tenants_stats(const Tenants *t, AllocStats *ret) {
        if (t->alloc)
                allocator_stats(t->alloc, ret);
        else
                *ret = (AllocStats) {};
}

const char *tenants_domain(const Tenants *t, const char *tenant) {
        const Extra *e = extra_find(t, tenant);
        return e ? e->domain : "";
}

double tenants_target(const Tenants *t) {
        return t->target;
}

static int plan_allocation_cmp(const void *a, const void *b) {
        return strcmp(((const PlanAllocation *) a)->vf, ((const PlanAllocation *) b)->vf);
}

int tenants_plan_allocations(const Tenants *t, PlanAllocation **ret, size_t *ret_n) {
        size_t n = t->alloc ? allocator_n_tenants(t->alloc) : 0, k = 0;
        PlanAllocation *p = calloc(n ?: 1, sizeof(PlanAllocation));

        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const Extra *e;
                AllocTenant a;

                if (allocator_tenant(t->alloc, i, &a) < 0 || a.nic != ALLOC_NIC_VF || !a.vf)
                        continue;
                e = extra_find(t, a.id);
                p[k] = (PlanAllocation) { .vlan = e ? e->vlan : -1, .qos = -1, .vcpu0_cpu = -1 };
                strscpy(p[k].vf, sizeof(p[k].vf), a.vf);
                strscpy(p[k].tenant, sizeof(p[k].tenant), a.id);
                strscpy(p[k].class_name, sizeof(p[k].class_name), a.class_name);
                if (e) {
                        p[k].have_mac = true;
                        memcpy(p[k].mac, e->mac, sizeof(p[k].mac));
                        p[k].have_coalesce = e->have_coalesce;
                        p[k].rx_usecs = e->rx_usecs;
                        p[k].tx_usecs = e->tx_usecs;
                }
                k++;
        }
        qsort_safe(p, k, sizeof(*p), plan_allocation_cmp);
        *ret = p;
        *ret_n = k;
        return 0;
}
