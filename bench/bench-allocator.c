/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-allocator.c — the tenant allocator on generated traces, against FCFS, a static split and an offline bound */

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "bench-util.h"

/*
 * Traces: Poisson arrivals, exponential lifetimes (mean 1 h), 20% sriov-required (always on a
 * NUMA node, local only), 20% + 20% sriov-preferred of two ranks (remote allowed), 40% virtio;
 * guests of the other classes on node 0 or 1 (45% each) or anywhere (10%). Demand = the mean
 * number of tenants present that want a VF (required + preferred) over the VFs: 100% means
 * that, on average, every VF is wanted once.
 */

#define LIFETIME_H 1.0
#define WANT_VF_SHARE 0.6
#define HOST_NODES 2
#define HOST_VFS_PER_NODE 64
#define WARMUP_H 5.0

typedef enum BenchClass {
        BC_TRADING,     /* sriov-required, rank 100, local only */
        BC_STREAM,      /* sriov-preferred, rank 50, remote allowed */
        BC_BATCH,       /* sriov-preferred, rank 10, remote allowed */
        BC_WEB,         /* virtio */
        _BC_MAX,
} BenchClass;

static const AllocClass bench_classes[_BC_MAX] = {
        [BC_TRADING] = { .name = "trading", .vnic = VNIC_SRIOV_REQUIRED, .rank = 100 },
        [BC_STREAM] = { .name = "stream", .vnic = VNIC_SRIOV_PREFERRED, .rank = 50, .allow_remote_numa = true },
        [BC_BATCH] = { .name = "batch", .vnic = VNIC_SRIOV_PREFERRED, .rank = 10, .allow_remote_numa = true },
        [BC_WEB] = { .name = "web", .vnic = VNIC_VIRTIO },
};

typedef struct Tenant {
        double in, out;
        BenchClass cls;
        int node;                 /* -1 = anywhere */
} Tenant;

typedef struct Event {
        double t;
        uint32_t idx;
        bool depart;
} Event;

typedef struct Trace {
        Tenant *tenants;
        size_t n;
        Event *events;            /* arrivals and departures within the horizon, by time */
        size_t n_events;
        double hours;
} Trace;

static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) {
        return (double) (rng_next(s) >> 11) / 9007199254740992.0;   /* [0, 1) */
}

static double rng_exp(uint64_t *s, double mean) {
        return -mean * log(1 - rng_unit(s));
}

static int event_cmp(const void *x, const void *y) {
        const Event *a = x, *b = y;
        if (a->t != b->t)
                return a->t < b->t ? -1 : 1;
        if (a->depart != b->depart)
                return a->depart ? -1 : 1;     /* leave before arriving at the same instant */
        return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void trace_free(Trace *t) {
        free(t->tenants);
        free(t->events);
        *t = (Trace) {};
}

static int trace_generate(uint64_t seed, double demand, unsigned n_vfs, double hours, Trace *ret) {
        double rate = demand * n_vfs / (WANT_VF_SHARE * LIFETIME_H), t = 0;
        size_t allocated = 0, n = 0, n_events_allocated = 0, ne = 0;
        Tenant *ts = NULL;
        Event *ev = NULL;
        uint64_t s = seed;

        for (;;) {
                double u;
                Tenant *x;

                t += rng_exp(&s, 1 / rate);
                if (t >= hours)
                        break;
                if (GREEDY_REALLOC(ts, allocated, n + 1) < 0)
                        goto oom;
                x = &ts[n++];
                x->in = t;
                x->out = t + rng_exp(&s, LIFETIME_H);
                u = rng_unit(&s);
                x->cls = u < 0.2 ? BC_TRADING : u < 0.4 ? BC_STREAM : u < 0.6 ? BC_BATCH : BC_WEB;
                u = rng_unit(&s);
                if (x->cls == BC_TRADING)
                        x->node = u < 0.5 ? 0 : 1;
                else
                        x->node = u < 0.45 ? 0 : u < 0.9 ? 1 : -1;
        }
        for (size_t i = 0; i < n; i++) {
                if (GREEDY_REALLOC(ev, n_events_allocated, ne + 2) < 0)
                        goto oom;
                ev[ne++] = (Event) { .t = ts[i].in, .idx = (uint32_t) i };
                if (ts[i].out < hours)
                        ev[ne++] = (Event) { .t = ts[i].out, .idx = (uint32_t) i, .depart = true };
        }
        qsort_safe(ev, ne, sizeof(Event), event_cmp);
        *ret = (Trace) { .tenants = ts, .n = n, .events = ev, .n_events = ne, .hours = hours };
        return 0;
oom:
        free(ts);
        free(ev);
        return -ENOMEM;
}

/* ---- what every policy is measured by ---- */

typedef struct Sim {
        const Trace *trace;
        unsigned cap;
        uint8_t *on_vf;           /* per tenant */
        uint8_t *present;
        unsigned allocated, pref_present, pref_on_vf;
        double last_t;
        double area, pref_area, pref_vf_area, above_target_h;
        uint64_t moves, req_arrivals, req_served, decisions;
        double call_ms;           /* in the policy's own code */
        uint64_t calls;
        double *call_us;          /* per call, when kept */
        size_t n_call_us, n_call_us_allocated;
} Sim;

static bool sim_counting(const Sim *sim, double t) {
        return t >= WARMUP_H;
}

static void sim_advance(Sim *sim, double t) {
        double from = MAX(sim->last_t, WARMUP_H), dt = t - from;

        if (dt > 0) {
                sim->area += dt * sim->allocated;
                sim->pref_area += dt * sim->pref_present;
                sim->pref_vf_area += dt * sim->pref_on_vf;
                if (sim->allocated >= ALLOC_TARGET_DEFAULT * sim->cap - 1e-9)
                        sim->above_target_h += dt;
        }
        sim->last_t = t;
}

static bool is_pref(const Sim *sim, uint32_t i) {
        return bench_classes[sim->trace->tenants[i].cls].vnic == VNIC_SRIOV_PREFERRED;
}

static void sim_set(Sim *sim, uint32_t i, bool on, bool move, double t) {
        if (sim->on_vf[i] != on) {
                sim->on_vf[i] = on;
                sim->allocated += on ? 1 : -1;
                if (is_pref(sim, i))
                        sim->pref_on_vf += on ? 1 : -1;
        }
        if (move && sim_counting(sim, t))
                sim->moves++;
}

/* ---- the policies ---- */

typedef struct PolicyOps {
        const char *name;
        int (*init)(void **state, unsigned per_node);
        void (*done)(void *state);
        /* Returns whether the tenant was admitted (a refused one never departs). */
        bool (*arrive)(void *state, Sim *sim, uint32_t i, double t);
        void (*depart)(void *state, Sim *sim, uint32_t i, double t);
} PolicyOps;

/* sriovd's allocator. */
typedef struct Sriovd {
        Allocator *a;
        AllocDecisions d;
        unsigned headroom;
} Sriovd;

static void sriovd_apply(Sim *sim, const AllocDecisions *d, double t) {
        for (size_t k = 0; k < d->n_decisions; k++) {
                const AllocDecision *x = &d->decisions[k];
                uint32_t i = (uint32_t) strtoul(x->tenant + 1, NULL, 10);

                sim->decisions++;
                switch (x->kind) {
                case ALLOC_DECISION_VF:
                        sim_set(sim, i, true, x->old_vf[0] != 0, t);
                        break;
                case ALLOC_DECISION_VIRTIO:
                case ALLOC_DECISION_RELEASED:
                        sim_set(sim, i, false, x->old_vf[0] != 0 && x->kind != ALLOC_DECISION_RELEASED, t);
                        break;
                case ALLOC_DECISION_DOWNGRADE:
                        sim_set(sim, i, false, true, t);
                        break;
                case ALLOC_DECISION_UPGRADE:
                case ALLOC_DECISION_REPLACED:
                        sim_set(sim, i, x->new_vf[0] != 0, true, t);
                        break;
                default:
                        break;
                }
        }
}

static int sriovd_init_headroom(void **state, unsigned per_node, unsigned headroom) {
        AllocPolicy pol = ALLOC_POLICY_INIT(bench_classes, _BC_MAX);
        _cleanup_free_ AllocVf *vfs = calloc(HOST_NODES * per_node, sizeof(AllocVf));
        Sriovd *s = calloc(1, sizeof(Sriovd));
        size_t n = 0;
        int r;

        if (!vfs || !s) {
                free(s);
                return -ENOMEM;
        }
        pol.headroom = headroom;
        pol.max_tenants = ALLOC_TENANTS_MAX;
        r = allocator_new(&pol, &s->a);
        if (r < 0) {
                free(s);
                return r;
        }
        /* PFs of 50 VFs or fewer, each on its own bus: 64 per node = 2 PFs of 32. */
        for (unsigned node = 0; node < HOST_NODES; node++) {
                unsigned per_pf = per_node > 64 ? 50 : 32;
                for (unsigned i = 0; i < per_node; i++) {
                        AllocVf *v = &vfs[n++];
                        unsigned bus = 0x10 + node * 0x80 + i / per_pf;
                        *v = (AllocVf) { .numa_node = (int) node, .healthy = true };
                        snprintf(v->addr, sizeof(v->addr), "0000:%02x:%02x.%c", (uint8_t) bus,
                                 (uint8_t) (1 + (i % per_pf) / 8), '0' + (char) (i % 8));
                        snprintf(v->pf, sizeof(v->pf), "0000:%02x:00.0", (uint8_t) bus);
                }
        }
        r = allocator_set_pool(s->a, vfs, n, &s->d);
        if (r < 0) {
                allocator_free(s->a);
                free(s);
                return r;
        }
        *state = s;
        return 0;
}

static int sriovd_init(void **state, unsigned per_node) {
        return sriovd_init_headroom(state, per_node, ALLOC_HEADROOM_DEFAULT);
}

static int sriovd0_init(void **state, unsigned per_node) {
        return sriovd_init_headroom(state, per_node, 0);
}

/* The daemon's default ([daemon] vf_headroom). */
static int sriovd4_init(void **state, unsigned per_node) {
        return sriovd_init_headroom(state, per_node, 4);
}

static int sriovd8_init(void **state, unsigned per_node) {
        return sriovd_init_headroom(state, per_node, 8);
}

static void sriovd_done(void *state) {
        Sriovd *s = state;
        allocator_free(s->a);
        alloc_decisions_done(&s->d);
        free(s);
}

static bool sriovd_arrive(void *state, Sim *sim, uint32_t i, double t) {
        Sriovd *s = state;
        const Tenant *x = &sim->trace->tenants[i];
        char id[16];
        AllocRequest req = { .tenant = id, .class_name = bench_classes[x->cls].name, .numa_node = x->node };
        double t0;
        int r;

        snprintf(id, sizeof(id), "t%u", i);
        alloc_decisions_clear(&s->d);
        t0 = bench_now_ms();
        r = allocator_request(s->a, &req, &s->d);
        sim->call_ms += bench_now_ms() - t0;
        sim->calls++;
        if (r < 0) {
                fprintf(stderr, "allocator_request: %s\n", strerror(-r));
                abort();
        }
        sriovd_apply(sim, &s->d, t);
        return r == 0;
}

static void sriovd_depart(void *state, Sim *sim, uint32_t i, double t) {
        Sriovd *s = state;
        char id[16];
        double t0;
        int r;

        snprintf(id, sizeof(id), "t%u", i);
        alloc_decisions_clear(&s->d);
        t0 = bench_now_ms();
        r = allocator_release(s->a, id, &s->d);
        sim->call_ms += bench_now_ms() - t0;
        sim->calls++;
        if (r < 0) {
                fprintf(stderr, "allocator_release: %s\n", strerror(-r));
                abort();
        }
        sriovd_apply(sim, &s->d, t);
}

/*
 * FCFS and the static split share one shape: per node, per partition, a count of free VFs.
 * FCFS has one partition; the static split reserves a third of each node for sriov-required
 * (their share of the VF-wanting mix) and the rest for sriov-preferred. No moves, ever.
 */
typedef struct Simple {
        unsigned free[HOST_NODES][2];   /* [node][0 = required, 1 = preferred] */
        bool split;
        int8_t *held;                   /* per tenant: node*2+part+1, 0 = none */
        size_t n_held;
} Simple;

static int simple_init(void **state, unsigned per_node, bool split) {
        Simple *s = calloc(1, sizeof(Simple));

        if (!s)
                return -ENOMEM;
        s->split = split;
        for (unsigned n = 0; n < HOST_NODES; n++) {
                unsigned req = split ? (per_node + 1) / 3 : 0;
                s->free[n][0] = req;
                s->free[n][1] = per_node - req;
        }
        *state = s;
        return 0;
}

static int fcfs_init(void **state, unsigned per_node) {
        return simple_init(state, per_node, false);
}

static int split_init(void **state, unsigned per_node) {
        return simple_init(state, per_node, true);
}

static void simple_done(void *state) {
        Simple *s = state;
        free(s->held);
        free(s);
}

static int simple_pick(Simple *s, int g, int part, bool remote) {
        int best = -1;

        if (g >= 0 && s->free[g][part] > 0)
                return g;
        for (int n = 0; n < HOST_NODES; n++)
                if ((g < 0 || (remote && n != g)) && s->free[n][part] > 0 &&
                    (best < 0 || s->free[n][part] > s->free[best][part]))
                        best = n;
        return best;
}

static bool simple_arrive(void *state, Sim *sim, uint32_t i, double t) {
        Simple *s = state;
        const Tenant *x = &sim->trace->tenants[i];
        const AllocClass *c = &bench_classes[x->cls];
        int part = s->split && c->vnic == VNIC_SRIOV_PREFERRED ? 1 : 0, n;
        double t0 = bench_now_ms();

        if (s->n_held <= i) {
                size_t want = sim->trace->n;
                int8_t *h = realloc(s->held, want);
                if (!h)
                        abort();
                memset(h + s->n_held, 0, want - s->n_held);
                s->held = h;
                s->n_held = want;
        }
        if (c->vnic == VNIC_VIRTIO) {
                sim->call_ms += bench_now_ms() - t0;
                sim->calls++;
                return true;
        }
        /* FCFS keeps its single pool in part 1 (part 0 is empty). */
        if (!s->split)
                part = 1;
        n = simple_pick(s, x->node, part, c->allow_remote_numa);
        if (n >= 0 && s->free[n][part] > 0) {
                s->free[n][part]--;
                s->held[i] = (int8_t) (n * 2 + part + 1);
        }
        sim->call_ms += bench_now_ms() - t0;
        sim->calls++;
        if (s->held[i]) {
                sim_set(sim, i, true, false, t);
                return true;
        }
        return c->vnic != VNIC_SRIOV_REQUIRED;   /* required without a VF: refused */
}

static void simple_depart(void *state, Sim *sim, uint32_t i, double t) {
        Simple *s = state;
        double t0 = bench_now_ms();

        if (s->held[i]) {
                int h = s->held[i] - 1;
                s->free[h / 2][h % 2]++;
                s->held[i] = 0;
        }
        sim->call_ms += bench_now_ms() - t0;
        sim->calls++;
        sim_set(sim, i, false, false, t);
}

static const PolicyOps policies[] = {
        { "sriovd (headroom 2)", sriovd_init, sriovd_done, sriovd_arrive, sriovd_depart },
        { "sriovd (headroom 0)", sriovd0_init, sriovd_done, sriovd_arrive, sriovd_depart },
        { "sriovd (headroom 4)", sriovd4_init, sriovd_done, sriovd_arrive, sriovd_depart },
        { "sriovd (headroom 8)", sriovd8_init, sriovd_done, sriovd_arrive, sriovd_depart },
        { "fcfs", fcfs_init, simple_done, simple_arrive, simple_depart },
        { "static split 1/3:2/3", split_init, simple_done, simple_arrive, simple_depart },
};
#define N_POLICIES ELEMENTSOF(policies)
#define POLICY_FCFS 4   /* its index in policies[] */

static int run(const PolicyOps *p, const Trace *tr, unsigned per_node, bool keep_calls, Sim *ret) {
        _cleanup_free_ uint8_t *admitted = calloc(tr->n ?: 1, 1);
        Sim sim = { .trace = tr, .cap = HOST_NODES * per_node };
        void *state = NULL;
        int r;

        sim.on_vf = calloc(tr->n ?: 1, 1);
        sim.present = calloc(tr->n ?: 1, 1);
        if (!admitted || !sim.on_vf || !sim.present)
                return -ENOMEM;
        r = p->init(&state, per_node);
        if (r < 0)
                return r;

        for (size_t e = 0; e < tr->n_events; e++) {
                const Event *ev = &tr->events[e];
                const Tenant *x = &tr->tenants[ev->idx];
                size_t calls = sim.calls;
                double ms = sim.call_ms;

                sim_advance(&sim, ev->t);
                if (!ev->depart) {
                        admitted[ev->idx] = p->arrive(state, &sim, ev->idx, ev->t);
                        if (x->cls == BC_TRADING && sim_counting(&sim, ev->t)) {
                                sim.req_arrivals++;
                                sim.req_served += sim.on_vf[ev->idx];
                        }
                        if (is_pref(&sim, ev->idx) && admitted[ev->idx]) {
                                sim.present[ev->idx] = 1;
                                sim.pref_present++;
                        }
                } else if (admitted[ev->idx]) {
                        if (sim.present[ev->idx]) {
                                sim.present[ev->idx] = 0;
                                sim.pref_present--;
                        }
                        p->depart(state, &sim, ev->idx, ev->t);
                }
                if (keep_calls && sim.calls > calls && sim_counting(&sim, ev->t)) {
                        if (GREEDY_REALLOC(sim.call_us, sim.n_call_us_allocated, sim.n_call_us + 1) < 0)
                                return -ENOMEM;
                        sim.call_us[sim.n_call_us++] = (sim.call_ms - ms) * 1e3;
                }
        }
        sim_advance(&sim, tr->hours);
        p->done(state);
        free(sim.on_vf);
        free(sim.present);
        sim.on_vf = sim.present = NULL;
        *ret = sim;
        return 0;
}

/* ---- the offline bound ---- */

typedef struct Bound {
        double util;              /* time-averaged min(VF-wanting tenants present, VFs) / VFs */
        double above;             /* share of time that min reaches the target */
        uint64_t req_arrivals, req_served;
} Bound;

static int end_cmp(const void *x, const void *y, void *userdata) {
        const Tenant *ts = userdata;
        double a = ts[*(const uint32_t *) x].out, b = ts[*(const uint32_t *) y].out;
        return a < b ? -1 : a > b;
}

static int bound_compute(const Trace *tr, unsigned per_node, Bound *ret) {
        _cleanup_free_ uint32_t *req = malloc((tr->n ?: 1) * sizeof(uint32_t));
        _cleanup_free_ double *busy = malloc(per_node * sizeof(double));
        unsigned cap = HOST_NODES * per_node;
        double last = 0, area = 0, above = 0;
        long demand = 0;
        Bound b = {};

        if (!req || !busy)
                return -ENOMEM;

        /* Utilization: no policy holds more VFs than tenants want, nor more than there are. */
        for (size_t e = 0; e < tr->n_events; e++) {
                const Event *ev = &tr->events[e];
                double from = MAX(last, WARMUP_H);

                if (ev->t > from) {
                        area += (ev->t - from) * MIN((unsigned long) demand, cap);
                        if (demand >= ALLOC_TARGET_DEFAULT * cap - 1e-9)
                                above += ev->t - from;
                }
                last = ev->t;
                if (bench_classes[tr->tenants[ev->idx].cls].vnic != VNIC_VIRTIO)
                        demand += ev->depart ? -1 : 1;
        }
        if (tr->hours > MAX(last, WARMUP_H)) {
                area += (tr->hours - MAX(last, WARMUP_H)) * MIN((unsigned long) demand, cap);
                if (demand >= ALLOC_TARGET_DEFAULT * cap - 1e-9)
                        above += tr->hours - MAX(last, WARMUP_H);
        }
        b.util = area / (cap * (tr->hours - WARMUP_H));
        b.above = above / (tr->hours - WARMUP_H);

        /* sriov-required tenants: at most per_node at a time on their node, since every
         * other tenant can be moved off. The most that can be served is the classic
         * interval scheduling on identical machines: by end time, each onto the machine
         * that went free last before it starts (optimal for the count). */
        for (int node = 0; node < HOST_NODES; node++) {
                size_t n = 0;

                for (size_t i = 0; i < tr->n; i++)
                        if (tr->tenants[i].cls == BC_TRADING && tr->tenants[i].node == node)
                                req[n++] = (uint32_t) i;
                qsort_r(req, n, sizeof(uint32_t), end_cmp, tr->tenants);
                for (unsigned m = 0; m < per_node; m++)
                        busy[m] = -1;
                for (size_t k = 0; k < n; k++) {
                        const Tenant *x = &tr->tenants[req[k]];
                        int best = -1;

                        for (unsigned m = 0; m < per_node; m++)
                                if (busy[m] <= x->in && (best < 0 || busy[m] > busy[best]))
                                        best = (int) m;
                        if (x->in >= WARMUP_H) {
                                b.req_arrivals++;
                                b.req_served += best >= 0;
                        }
                        if (best >= 0)
                                busy[best] = x->out;
                }
        }
        *ret = b;
        return 0;
}

/* ---- the report ---- */

typedef struct Totals {
        double util, above, pref_vf, moves_h, us_per_call, decisions_per_call;
        uint64_t req_arrivals, req_served;
} Totals;

static void help(void) {
        printf("bench-allocator [-n TRACES] [--hours H] [--quick]\n\n"
               "The tenant allocator against FCFS, a static split and an offline bound on generated\n"
               "traces (2 x 64 VFs), demand 50%%..200%%, then decision time with 1000 VFs and 10000 tenants.\n"
               "  -n N        traces per demand level (default 3, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  --hours H   simulated hours per trace (default 200; the first %.0f are warm-up)\n",
               WARMUP_H);
}

static int parse_argv(int argc, char **argv, unsigned *traces, double *hours) {
        static const struct option options[] = {
                { "iterations", required_argument, NULL, 'n' },
                { "hours", required_argument, NULL, 'H' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        *traces = bench_default_iterations(3);
        *hours = 200;
        while ((c = getopt_long(argc, argv, "n:h", options, NULL)) >= 0)
                switch (c) {
                case 'n':
                        *traces = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'H':
                        *hours = strtod(optarg, NULL);
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }
        if (optind < argc || *traces == 0 || *traces > 1000 || !(*hours > WARMUP_H + 1) || *hours > 100000) {
                fprintf(stderr, "bench-allocator: expected 1..1000 traces and more than %.0f hours; see --help\n",
                        WARMUP_H + 1);
                return -EINVAL;
        }
        return 1;
}

static int table(unsigned traces, double hours) {
        static const double levels[] = { 0.5, 0.75, 1.0, 1.25, 1.5, 2.0 };
        unsigned per_node = HOST_VFS_PER_NODE;
        int r;

        printf("Host: %u nodes x %u VFs; traces: Poisson arrivals, exponential lifetimes (mean %.0f h),\n"
               "20%% required (local NUMA only) / 20%% + 20%% preferred (ranks 50, 10; remote allowed) / 40%% virtio;\n"
               "%u traces x %.0f h per level, first %.0f h warm-up. Demand = mean VF-wanting tenants / VFs.\n"
               "util = time-averaged VF utilization (x bound: share of the offline bound); >=85%%: share of time\n"
               "at or above target; req = required tenants served; pref VF = share of preferred tenant-time on a VF;\n"
               "moves/h = downgrades + upgrades + VF-to-VF moves per hour; us/call = policy time per arrival or\n"
               "departure (x fcfs: ratio to FCFS in the same run).\n",
               HOST_NODES, per_node, LIFETIME_H, traces, hours, WARMUP_H);

        for (size_t l = 0; l < ELEMENTSOF(levels); l++) {
                Totals tot[N_POLICIES] = {};
                Bound bsum = {};
                double bound_util = 0, bound_above = 0;

                for (unsigned k = 0; k < traces; k++) {
                        Trace tr = {};
                        Bound b;

                        r = trace_generate(0x5eed0000 + k * 7919 + l, levels[l], HOST_NODES * per_node, hours, &tr);
                        if (r < 0)
                                return r;
                        r = bound_compute(&tr, per_node, &b);
                        if (r < 0)
                                return r;
                        bound_util += b.util / traces;
                        bound_above += b.above / traces;
                        bsum.req_arrivals += b.req_arrivals;
                        bsum.req_served += b.req_served;
                        for (size_t p = 0; p < N_POLICIES; p++) {
                                Sim sim;
                                r = run(&policies[p], &tr, per_node, false, &sim);
                                if (r < 0)
                                        return r;
                                tot[p].util += sim.area / (sim.cap * (hours - WARMUP_H)) / traces;
                                tot[p].above += sim.above_target_h / (hours - WARMUP_H) / traces;
                                tot[p].pref_vf += (sim.pref_area > 0 ? sim.pref_vf_area / sim.pref_area : 0) / traces;
                                tot[p].moves_h += sim.moves / (hours - WARMUP_H) / traces;
                                tot[p].us_per_call += sim.call_ms * 1e3 / sim.calls / traces;
                                tot[p].decisions_per_call += (double) sim.decisions / sim.calls / traces;
                                tot[p].req_arrivals += sim.req_arrivals;
                                tot[p].req_served += sim.req_served;
                        }
                        trace_free(&tr);
                }

                printf("\ndemand %.0f%%\n", levels[l] * 100);
                printf("  %-22s %7s %8s %7s %8s %8s %8s %8s %8s\n", "policy", "util", "x bound", ">=85%", "req",
                       "pref VF", "moves/h", "us/call", "x fcfs");
                printf("  %-22s %6.1f%% %8.3f %6.1f%% %7.2f%% %8s %8s %8s %8s\n", "offline bound", bound_util * 100, 1.0,
                       bound_above * 100, bsum.req_arrivals ? 100.0 * bsum.req_served / bsum.req_arrivals : 100.0, "", "", "", "");
                for (size_t p = 0; p < N_POLICIES; p++)
                        printf("  %-22s %6.1f%% %8.3f %6.1f%% %7.2f%% %7.1f%% %8.1f %8.3f %8.2f\n", policies[p].name,
                               tot[p].util * 100, bound_util > 0 ? tot[p].util / bound_util : 0, tot[p].above * 100,
                               tot[p].req_arrivals ? 100.0 * tot[p].req_served / tot[p].req_arrivals : 100.0,
                               tot[p].pref_vf * 100, tot[p].moves_h, tot[p].us_per_call,
                               tot[p].us_per_call / tot[POLICY_FCFS].us_per_call);
        }
        return 0;
}

static int double_cmp(const void *x, const void *y) {
        double a = *(const double *) x, b = *(const double *) y;
        return a < b ? -1 : a > b;
}

/* Decision time on a big host: 1000 VFs, about 10000 tenants present at steady state. */
static int scale(void) {
        const unsigned per_node = 500;
        const double tenants = 10000, hours = 8;
        double demand = tenants * WANT_VF_SHARE / (HOST_NODES * per_node);
        const size_t order[] = { 0, POLICY_FCFS };
        Trace tr = {};
        int r;

        r = trace_generate(0xb16, demand, HOST_NODES * per_node, hours, &tr);
        if (r < 0)
                return r;
        printf("\nScale: %u VFs, ~%.0f tenants present (demand %.0f%%), %.0f h after %.0f h warm-up, %zu events\n",
               HOST_NODES * per_node, tenants, demand * 100, hours - WARMUP_H, WARMUP_H, tr.n_events);
        Bound b;
        r = bound_compute(&tr, per_node, &b);
        if (r < 0)
                return r;
        printf("  %-22s %9s %9s %9s %9s %9s %8s %8s\n", "policy", "mean us", "median", "p99", "max", "x fcfs", "util",
               "req");
        printf("  %-22s %9s %9s %9s %9s %9s %7.1f%% %7.2f%%\n", "offline bound", "", "", "", "", "", b.util * 100,
               b.req_arrivals ? 100.0 * b.req_served / b.req_arrivals : 100.0);
        double fcfs_mean = 0;
        for (size_t k = ELEMENTSOF(order); k-- > 0;) {
                const PolicyOps *p = &policies[order[k]];
                Sim sim;
                Stats st;
                double mean = 0;

                r = run(p, &tr, per_node, true, &sim);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < sim.n_call_us; i++)
                        mean += sim.call_us[i] / sim.n_call_us;
                st = bench_stats(sim.call_us, sim.n_call_us);
                qsort_safe(sim.call_us, sim.n_call_us, sizeof(double), double_cmp);
                if (order[k] == POLICY_FCFS)
                        fcfs_mean = mean;
                printf("  %-22s %9.3f %9.3f %9.3f %9.1f %9.1f %7.1f%% %7.2f%%\n", p->name, mean, st.median,
                       sim.n_call_us ? sim.call_us[sim.n_call_us * 99 / 100] : 0, st.max,
                       fcfs_mean > 0 ? mean / fcfs_mean : 0, 100 * sim.area / (sim.cap * (hours - WARMUP_H)),
                       sim.req_arrivals ? 100.0 * sim.req_served / sim.req_arrivals : 100.0);
                free(sim.call_us);
        }
        trace_free(&tr);
        return 0;
}

int main(int argc, char **argv) {
        unsigned traces;
        double hours, t0 = bench_now_ms();
        int r;

        r = parse_argv(argc, argv, &traces, &hours);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        r = table(traces, hours);
        if (r >= 0)
                r = scale();
        if (r < 0) {
                fprintf(stderr, "bench-allocator: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        printf("\n(%.1f s)\n", (bench_now_ms() - t0) / 1e3);
        return EXIT_SUCCESS;
}
