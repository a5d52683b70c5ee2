/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bpf-events.c — loads the BPF programs of src/kernel/bpf/ through their skeletons, feeds them
 * the threads to watch, and reads their histograms and events
 *
 * Each set of programs loads on its own. Failing to load is not an error: it is a state with a
 * reason, that the daemon reports once and then works around. libbpf's own messages go to debug.
 */

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/bpf-events.h"
#include "sriovd/shared/util.h"

#include "bpf/latency-map.h"
#include "drift.skel.h"
#include "latency.skel.h"

/* As drift.bpf.c writes it into the ring buffer. */
struct drift_event {
        uint32_t kind;
        uint32_t id;
        uint32_t writer;
        char comm[16];
        uint64_t ktime_ns;
};

typedef struct Tracked {
        pid_t pid;
        unsigned flags;
} Tracked;

struct BpfEvents {
        struct latency *latency;
        struct drift *drift;
        struct ring_buffer *ring;
        char reason[_BPF_FEATURE_MAX][160];
        int err[_BPF_FEATURE_MAX];
        Tracked *tracked;              /* sorted by pid */
        size_t n_tracked;
        uint64_t lost_seen;
        BpfEventFn fn;
        void *userdata;
        int n_dispatched;
};

/*
 * libbpf's print hook takes no userdata and holds for the whole process, so the option that
 * bpf_events_new() got last is kept here.
 */
static bool libbpf_warnings;

/* libbpf explains a failed load at length. The reason kept is the errno; the details go to debug. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        if (level == LIBBPF_WARN && libbpf_warnings)
                return vfprintf(stderr, fmt, ap);
        return 0;
}

static void set_reason(BpfEvents *b, BpfFeature f, const char *what, int err) {
        snprintf(b->reason[f], sizeof(b->reason[f]), "%s: %s", what, strerror(-err));
        b->err[f] = err;
}

/* Adds the likely cause, which is clearer once both sets were tried. */
static void explain(BpfEvents *b, BpfFeature f) {
        bool other_loaded = f == BPF_FEATURE_LATENCY ? !!b->drift : !!b->latency;
        const char *hint = NULL;
        size_t len = strlen(b->reason[f]);

        switch (-b->err[f]) {
        case 0:
                return;
        case EPERM:
        case EACCES:
                hint = other_loaded ? " (the kernel refuses these programs: fexit needs ftrace trampolines)"
                                    : " (it needs CAP_BPF and CAP_PERFMON)";
                break;
        case ENOENT:
        case ESRCH:
        case EINVAL:
        case EOPNOTSUPP:
                hint = " (the kernel lacks BTF, the tracepoint or the function, or fexit)";
                break;
        }
        if (hint)
                snprintf(b->reason[f] + len, sizeof(b->reason[f]) - len, "%s", hint);
}

static int load_latency(BpfEvents *b) {
        struct latency *skel = latency__open();
        int r;

        if (!skel)
                return set_reason(b, BPF_FEATURE_LATENCY, "open", -errno), 0;
        r = latency__load(skel);
        if (r == 0)
                r = latency__attach(skel);
        if (r < 0) {
                set_reason(b, BPF_FEATURE_LATENCY, "load", r);
                latency__destroy(skel);
                return 0;
        }
        b->latency = skel;
        return 0;
}

static int on_ring(void *ctx, void *data, size_t size) {
        BpfEvents *b = ctx;
        const struct drift_event *d = data;
        BpfEvent e = {};

        if (size < sizeof(*d))
                return 0;
        e.kind = d->kind == 1 ? BPF_EVENT_SCHED : BPF_EVENT_IRQ_AFFINITY;
        e.id = d->id;
        e.writer = (pid_t) d->writer;
        memcpy(e.writer_comm, d->comm, sizeof(e.writer_comm) - 1);
        e.ktime_ns = d->ktime_ns;
        b->n_dispatched++;
        if (b->fn)
                b->fn(&e, b->userdata);
        return 0;
}

static int load_drift(BpfEvents *b, pid_t self) {
        struct drift *skel = drift__open();
        int r;

        if (!skel)
                return set_reason(b, BPF_FEATURE_DRIFT, "open", -errno), 0;
        skel->rodata->self_tgid = (uint32_t) self;
        r = drift__load(skel);
        if (r == 0)
                r = drift__attach(skel);
        if (r == 0) {
                b->ring = ring_buffer__new(bpf_map__fd(skel->maps.events), on_ring, b, NULL);
                if (!b->ring)
                        r = -errno;
        }
        if (r < 0) {
                if (r == -ENOMEM) {
                        drift__destroy(skel);
                        return r;
                }
                set_reason(b, BPF_FEATURE_DRIFT, "load", r);
                drift__destroy(skel);
                return 0;
        }
        b->drift = skel;
        return 0;
}

/*
 * The programs see the host's thread IDs. A process in a child PID namespace knows others, and
 * it sees no kernel thread: kthreadd is PID 2 in the initial namespace only.
 */
static bool in_child_pid_namespace(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/2/comm", "re");
        char comm[32] = "";

        return !f || !fgets(comm, sizeof(comm), f) || strcmp(comm, "kthreadd\n") != 0;
}

int bpf_events_new(pid_t self, const BpfEventsOptions *options, BpfEvents **ret) {
        _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
        int r;

        if (in_child_pid_namespace())
                return bpf_events_new_disabled("sriovd runs in a child PID namespace, and BPF sees the host's thread IDs",
                                               ret);
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        libbpf_warnings = options && options->libbpf_warnings;
        libbpf_set_print(libbpf_print);
        r = load_latency(b);
        if (r < 0)
                return r;
        r = load_drift(b, self);
        if (r < 0)
                return r;
        for (unsigned f = 0; f < _BPF_FEATURE_MAX; f++)
                explain(b, f);
        *ret = TAKE_PTR(b);
        return 0;
}

int bpf_events_new_disabled(const char *reason, BpfEvents **ret) {
        BpfEvents *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        for (unsigned f = 0; f < _BPF_FEATURE_MAX; f++)
                strscpy(b->reason[f], sizeof(b->reason[f]), reason);
        *ret = b;
        return 0;
}

BpfEvents *bpf_events_free(BpfEvents *b) {
        if (!b)
                return NULL;
        ring_buffer__free(b->ring);
        drift__destroy(b->drift);
        latency__destroy(b->latency);
        free(b->tracked);
        return mfree(b);
}

bool bpf_events_status(const BpfEvents *b, BpfFeature f, const char **ret_reason) {
        bool on = f == BPF_FEATURE_LATENCY ? !!b->latency : !!b->drift;

        if (ret_reason)
                *ret_reason = on ? NULL : b->reason[f];
        return on;
}

static int tracked_cmp(const void *x, const void *y) {
        const Tracked *a = x, *c = y;
        return (a->pid > c->pid) - (a->pid < c->pid);
}

static const Tracked *tracked_find(const Tracked *t, size_t n, pid_t pid) {
        Tracked key = { .pid = pid };
        return bsearch_safe(&key, t, n, sizeof(*t), tracked_cmp);
}

/* Writes one thread's flags into the maps that use them. A new latency thread gets an empty histogram. */
static int track_one(BpfEvents *b, pid_t pid, unsigned flags, bool is_new) {
        uint32_t key = (uint32_t) pid;
        int r;

        if (b->latency && (unsigned) pid < LATENCY_PID_MAX) {
                uint32_t word = key / 64;
                uint64_t bits;

                r = bpf_map__lookup_elem(b->latency->maps.tracked, &word, sizeof(word), &bits, sizeof(bits), 0);
                if (r < 0)
                        return r;
                if (flags & BPF_TRACK_LATENCY) {
                        if (is_new) {
                                LatencyEntry empty = {};
                                r = bpf_map__update_elem(b->latency->maps.hists, &key, sizeof(key), &empty,
                                                         sizeof(empty), BPF_ANY);
                                if (r < 0)
                                        return r;
                        }
                        bits |= 1ULL << (key % 64);
                } else {
                        bits &= ~(1ULL << (key % 64));
                        (void) bpf_map__delete_elem(b->latency->maps.hists, &key, sizeof(key), 0);
                }
                r = bpf_map__update_elem(b->latency->maps.tracked, &word, sizeof(word), &bits, sizeof(bits), BPF_ANY);
                if (r < 0)
                        return r;
        }
        if (b->drift) {
                if (flags & BPF_TRACK_SCHED)
                        r = bpf_map__update_elem(b->drift->maps.watched, &key, sizeof(key), &flags, sizeof(flags),
                                                 BPF_ANY);
                else {
                        (void) bpf_map__delete_elem(b->drift->maps.watched, &key, sizeof(key), 0);
                        r = 0;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

int bpf_events_track(BpfEvents *b, unsigned flag, const pid_t *pids, size_t n) {
        _cleanup_free_ Tracked *want = NULL;
        size_t n_want = 0, k = 0;
        int r;

        if (n > BPF_TRACK_MAX)
                return -ENOSPC;
        /* The threads with other watches keep them; this watch is exactly pids. */
        want = calloc(b->n_tracked + n + 1, sizeof(*want));
        if (!want)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_tracked; i++)
                if (b->tracked[i].flags & ~flag)
                        want[n_want++] = (Tracked) { b->tracked[i].pid, b->tracked[i].flags & ~flag };
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0)
                        want[n_want++] = (Tracked) { pids[i], flag };
        qsort_safe(want, n_want, sizeof(*want), tracked_cmp);
        for (size_t i = 0; i < n_want; i++) {
                if (k > 0 && want[k - 1].pid == want[i].pid)
                        want[k - 1].flags |= want[i].flags;
                else
                        want[k++] = want[i];
        }
        n_want = k;
        if (n_want > BPF_TRACK_MAX)
                return -ENOSPC;

        /* Those that leave first, so that the maps never hold more than both sets' union. */
        for (size_t i = 0; i < b->n_tracked; i++)
                if (!tracked_find(want, n_want, b->tracked[i].pid))
                        (void) track_one(b, b->tracked[i].pid, 0, false);
        for (size_t i = 0; i < n_want; i++) {
                const Tracked *old = tracked_find(b->tracked, b->n_tracked, want[i].pid);

                if (old && old->flags == want[i].flags)
                        continue;
                r = track_one(b, want[i].pid, want[i].flags, !old || !(old->flags & BPF_TRACK_LATENCY));
                if (r < 0)
                        return r;
        }
        free(b->tracked);
        b->tracked = TAKE_PTR(want);
        b->n_tracked = n_want;
        return 0;
}

int bpf_events_read_latency(BpfEvents *b, pid_t pid, LatencyHist *ret) {
        uint32_t key = (uint32_t) pid;
        LatencyEntry e;

        if (!b->latency)
                return -EOPNOTSUPP;
        if (bpf_map__lookup_elem(b->latency->maps.hists, &key, sizeof(key), &e, sizeof(e), 0) < 0)
                return -errno;
        *ret = e.hist;
        return 0;
}

int bpf_events_fd(const BpfEvents *b) {
        return b->ring ? ring_buffer__epoll_fd(b->ring) : -1;
}

int bpf_events_dispatch(BpfEvents *b, BpfEventFn fn, void *userdata) {
        uint32_t zero = 0;
        uint64_t lost = 0;
        int r;

        if (!b->ring)
                return 0;
        b->fn = fn;
        b->userdata = userdata;
        b->n_dispatched = 0;
        r = ring_buffer__consume(b->ring);
        b->fn = NULL;
        if (r < 0)
                return r;
        /* Events that did not fit are lost: the caller must look at everything once. */
        if (bpf_map__lookup_elem(b->drift->maps.lost, &zero, sizeof(zero), &lost, sizeof(lost), 0) == 0 &&
            lost != b->lost_seen) {
                BpfEvent e = { .kind = BPF_EVENT_LOST, .id = (unsigned) (lost - b->lost_seen) };

                b->lost_seen = lost;
                if (fn)
                        fn(&e, userdata);
                b->n_dispatched++;
        }
        return b->n_dispatched;
}
