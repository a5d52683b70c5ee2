/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bpf-events.c — the BPF programs on this machine's real kernel: a tracked thread's
 * latency histogram fills, an untracked one's does not, and a scheduling change by another
 * process is an event while sriovd's own is not. It skips (77) where BPF cannot load, and says
 * why. Loading as a user without CAP_BPF must fail for each set, with the reason.
 *
 *   test-bpf-events                  the above
 *   test-bpf-events irq N...         the IRQ affinity event, in a vm suite guest only: children
 *                                    write /proc/irq/N/smp_affinity_list, and each write must be
 *                                    one event with that IRQ and that child; a write by this
 *                                    process must not be one.
 *
 * The IRQ mode is an argument of its own so that the default run never touches this machine's
 * IRQs.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "sriovd/kernel/bpf-events.h"
#include "test-thread.h"
#include "test.h"

/* SRIOVD_BPF_DEBUG shows libbpf's warnings, as it does for the daemon. main() reads it. */
static BpfEventsOptions bpf_options;

typedef struct Seen {
        BpfEvent e[16];
        unsigned n;
} Seen;

static void on_event(const BpfEvent *e, void *userdata) {
        Seen *s = userdata;

        if (s->n < ELEMENTSOF(s->e))
                s->e[s->n++] = *e;
}

/* Waits up to ms for events, and returns how many came. */
static unsigned wait_events(BpfEvents *b, Seen *s, int ms) {
        struct pollfd p = { .fd = bpf_events_fd(b), .events = POLLIN };

        *s = (Seen) {};
        if (poll(&p, 1, ms) > 0)
                ASSERT(bpf_events_dispatch(b, on_event, s) >= 0);
        return s->n;
}

typedef enum SchedCall {
        CALL_SETSCHEDULER,
        CALL_SETATTR,
        CALL_SETAFFINITY,
} SchedCall;

/* The kernel's struct sched_attr, which glibc 2.36 does not declare. */
struct test_sched_attr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime, sched_deadline, sched_period;
};

static int sched_call(pid_t tid, SchedCall call) {
        switch (call) {
        case CALL_SETSCHEDULER: {
                struct sched_param p = { 0 };
                return sched_setscheduler(tid, SCHED_OTHER, &p);
        }
        case CALL_SETATTR: {
                struct test_sched_attr a = { .size = sizeof(a), .sched_policy = SCHED_OTHER };
                return (int) syscall(SYS_sched_setattr, tid, &a, 0);
        }
        case CALL_SETAFFINITY: {
                cpu_set_t set;
                ASSERT_EQ(sched_getaffinity(tid, sizeof(set), &set), 0);
                return sched_setaffinity(tid, sizeof(set), &set);
        }
        }
        return -1;
}

/* A child process, not this one, changes tid's scheduling: that is someone else's write. */
static void child_calls(pid_t tid, SchedCall call, pid_t *ret_child) {
        pid_t c = fork();
        ASSERT(c >= 0);
        if (c == 0)
                _exit(sched_call(tid, call) < 0 ? 1 : 0);
        int status;
        ASSERT_EQ(waitpid(c, &status, 0), c);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        *ret_child = c;
}

static void child_sets(pid_t tid, pid_t *ret_child) {
        child_calls(tid, CALL_SETSCHEDULER, ret_child);
}

static void test_latency(BpfEvents *b) {
        TestThread tracked, other;
        LatencyHist h;
        const char *why;

        if (!bpf_events_status(b, BPF_FEATURE_LATENCY, &why)) {
                printf("latency: skipped, the programs did not load: %s\n", why);
                return;
        }
        test_thread_start(&tracked, "lat-tracked");
        test_thread_start(&other, "lat-other");
        pid_t pid = tracked.tid;
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, &pid, 1), 0);
        /* The thread wakes every millisecond. */
        usleep(200 * 1000);
        ASSERT_EQ(bpf_events_read_latency(b, tracked.tid, &h), 0);
        printf("latency: %llu wakeups in 200 ms, mean %.1f µs\n", h.count, h.count ? h.sum_ns / 1e3 / h.count : 0);
        ASSERT(h.count >= 20);
        unsigned long long in_slots = 0;
        for (unsigned s = 0; s < LATENCY_SLOTS; s++)
                in_slots += h.slots[s];
        ASSERT(in_slots == h.count);
        ASSERT_EQ(bpf_events_read_latency(b, other.tid, &h), -ENOENT);

        /* Untracked, its histogram goes; tracked again, it starts empty. */
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, NULL, 0), 0);
        ASSERT_EQ(bpf_events_read_latency(b, tracked.tid, &h), -ENOENT);
        /* Another watch of the same thread leaves its histogram alone. */
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, &pid, 1), 0);
        usleep(20 * 1000);
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_SCHED, &pid, 1), 0);
        ASSERT_EQ(bpf_events_read_latency(b, tracked.tid, &h), 0);
        ASSERT(h.count > 0);
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_SCHED, NULL, 0), 0);
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, NULL, 0), 0);
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, &pid, 1), 0);
        ASSERT_EQ(bpf_events_read_latency(b, tracked.tid, &h), 0);
        ASSERT(h.count < 20);
        test_thread_stop(&tracked);
        test_thread_stop(&other);
}

static void test_drift(BpfEvents *b) {
        TestThread watched, other;
        const char *why;
        pid_t child;
        Seen s;

        if (!bpf_events_status(b, BPF_FEATURE_DRIFT, &why)) {
                printf("drift: skipped, the programs did not load: %s\n", why);
                return;
        }
        ASSERT(bpf_events_fd(b) >= 0);
        test_thread_start(&watched, "drift-watched");
        test_thread_start(&other, "drift-other");
        pid_t pid = watched.tid;
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_SCHED, &pid, 1), 0);

        child_sets(watched.tid, &child);
        ASSERT_EQ(wait_events(b, &s, 1000), 1);
        ASSERT_EQ(s.e[0].kind, BPF_EVENT_SCHED);
        ASSERT_EQ(s.e[0].id, (unsigned) watched.tid);
        ASSERT_EQ(s.e[0].writer, child);
        ASSERT(s.e[0].ktime_ns > 0);

        /* This process's own write is not drift, and neither is a change to a thread not watched. */
        struct sched_param p = { 0 };
        ASSERT_EQ(sched_setscheduler(watched.tid, SCHED_OTHER, &p), 0);
        child_sets(other.tid, &child);
        ASSERT_EQ(wait_events(b, &s, 300), 0);

        /* Once more from outside, to show the quiet above was not a dead program. */
        child_sets(watched.tid, &child);
        ASSERT_EQ(wait_events(b, &s, 1000), 1);
        ASSERT_EQ(s.e[0].writer, child);

        /* sched_setattr(2), as chrt may call it, and sched_setaffinity(2), as taskset does. */
        child_calls(watched.tid, CALL_SETATTR, &child);
        ASSERT_EQ(wait_events(b, &s, 1000), 1);
        ASSERT_EQ(s.e[0].kind, BPF_EVENT_SCHED);
        ASSERT_EQ(s.e[0].writer, child);
        child_calls(watched.tid, CALL_SETAFFINITY, &child);
        ASSERT_EQ(wait_events(b, &s, 1000), 1);
        ASSERT_EQ(s.e[0].kind, BPF_EVENT_SCHED);
        ASSERT_EQ(s.e[0].writer, child);
        ASSERT_EQ(sched_call(watched.tid, CALL_SETATTR), 0);
        ASSERT_EQ(sched_call(watched.tid, CALL_SETAFFINITY), 0);
        ASSERT_EQ(wait_events(b, &s, 300), 0);
        printf("drift: sched_setscheduler, sched_setattr and sched_setaffinity by a child are events, "
               "this process's are not\n");
        test_thread_stop(&watched);
        test_thread_stop(&other);
}

/* A user without CAP_BPF gets neither set, and the reason says what is missing. The IDs are
 * nobody's, which need no entry in /etc/passwd: a vm suite guest has none. */
static void test_unprivileged(void) {
        const uid_t nobody = 65534;
        pid_t c;
        int status;

        fflush(stdout);
        c = fork();
        ASSERT(c >= 0);
        if (c == 0) {
                _cleanup_(bpf_events_freep) BpfEvents *nb = NULL;
                const char *why;

                ASSERT_EQ(setgroups(0, NULL), 0);
                ASSERT_EQ(setgid(nobody), 0);
                ASSERT_EQ(setuid(nobody), 0);
                ASSERT_EQ(bpf_events_new(getpid(), &bpf_options, &nb), 0);
                for (unsigned f = 0; f < _BPF_FEATURE_MAX; f++) {
                        ASSERT(!bpf_events_status(nb, f, &why));
                        ASSERT_CONTAINS(why, "CAP_BPF");
                        printf("unprivileged: %s: %s\n", f == BPF_FEATURE_LATENCY ? "latency" : "drift", why);
                }
                ASSERT_EQ(bpf_events_fd(nb), -1);
                fflush(stdout);
                _exit(0);
        }
        ASSERT_EQ(waitpid(c, &status, 0), c);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static uint64_t now_ns(void) {
        struct timespec ts;
        ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* Writes cpus to IRQ irq's affinity list; 0 or a negative errno. */
static int irq_write(unsigned irq, const char *cpus) {
        char path[64];
        int fd, r = 0;

        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, cpus, strlen(cpus)) < 0)
                r = -errno;
        close(fd);
        return r;
}

static void irq_read_file(unsigned irq, const char *file, char *buf, size_t size) {
        char path[64];
        FILE *f;

        snprintf(path, sizeof(path), "/proc/irq/%u/%s", irq, file);
        f = fopen(path, "re");
        ASSERT(f);
        ASSERT(fgets(buf, (int) size, f));
        buf[strcspn(buf, "\n")] = 0;
        fclose(f);
}

static void irq_read(unsigned irq, char *buf, size_t size) {
        irq_read_file(irq, "smp_affinity_list", buf, size);
}

/*
 * Whether the write of cpus took. smp_affinity_list shows a pending move while there is one. A
 * vector freed with a move still pending keeps showing that move, whatever is written later: the
 * kernel then records each write only in the effective affinity, for when the vector is started.
 */
static bool irq_took(unsigned irq, const char *cpus, char *shown, size_t size) {
        char eff[256];

        irq_read(irq, shown, size);
        if (streq(shown, cpus))
                return true;
        irq_read_file(irq, "effective_affinity_list", eff, sizeof(eff));
        return streq(eff, cpus);
}

/* A child process writes the IRQ's affinity, as an administrator or irqbalance would. */
static pid_t irq_child_write(unsigned irq, const char *cpus) {
        pid_t c = fork();

        ASSERT(c >= 0);
        if (c == 0) {
                int r = irq_write(irq, cpus);
                if (r < 0)
                        fprintf(stderr, "irq %u: writing %s: %s\n", irq, cpus, strerror(-r));
                _exit(r < 0 ? 1 : 0);
        }
        return c;
}

/* The child wrote. Reaped after its event was waited for, so that the wait does not include its exit. */
static void irq_child_reap(pid_t c) {
        int status;

        ASSERT_EQ(waitpid(c, &status, 0), c);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

typedef struct IrqSeen {
        unsigned irq;
        pid_t writer;
        unsigned n_match, n_other;
        uint64_t delay_ns;             /* from the change to its dispatch here, for the last match */
} IrqSeen;

static void on_irq_event(const BpfEvent *e, void *userdata) {
        IrqSeen *s = userdata;

        if (e->kind == BPF_EVENT_IRQ_AFFINITY && e->id == s->irq && e->writer == s->writer) {
                s->n_match++;
                s->delay_ns = now_ns() - e->ktime_ns;
        } else if (e->kind == BPF_EVENT_IRQ_AFFINITY && e->id == s->irq)
                s->n_other++;
}

/* Collects events for ms, or until one matches when stop_at_match. */
static void irq_wait(BpfEvents *b, IrqSeen *s, int ms, bool stop_at_match) {
        uint64_t end = now_ns() + (uint64_t) ms * 1000000ULL;

        for (;;) {
                struct pollfd p = { .fd = bpf_events_fd(b), .events = POLLIN };
                uint64_t now = now_ns();

                if (now >= end || (stop_at_match && s->n_match > 0))
                        return;
                if (poll(&p, 1, (int) ((end - now) / 1000000ULL) + 1) > 0)
                        ASSERT(bpf_events_dispatch(b, on_irq_event, s) >= 0);
        }
}

static int u64_cmp(const void *x, const void *y) {
        uint64_t a = *(const uint64_t *) x, c = *(const uint64_t *) y;
        return (a > c) - (a < c);
}

#define IRQ_WRITES 20

/*
 * IRQ_WRITES writes by children, alternating between two CPU lists, then one by this process, then
 * one more by a child. Each child's write must be exactly one event naming the IRQ and the child;
 * this process's write must be none.
 */
static void test_irq(BpfEvents *b, unsigned irq) {
        const char *cpus[2] = { "0", "1" };
        uint64_t delays[IRQ_WRITES];
        char orig[256], now[256];
        bool took;
        IrqSeen s;

        irq_read(irq, orig, sizeof(orig));
        /* Begin with the list that changes it, so each write is a change. */
        if (strcmp(orig, cpus[0]) == 0) {
                cpus[0] = "1";
                cpus[1] = "0";
        }
        /* Events still queued from before belong to no write of this test. */
        (void) bpf_events_dispatch(b, NULL, NULL);
        for (unsigned i = 0; i < IRQ_WRITES; i++) {
                s = (IrqSeen) { .irq = irq };
                s.writer = irq_child_write(irq, cpus[i % 2]);
                irq_wait(b, &s, 1000, true);
                irq_child_reap(s.writer);
                /* The rest of a burst, if one write were several events. */
                irq_wait(b, &s, 20, false);
                took = irq_took(irq, cpus[i % 2], now, sizeof(now));
                if (s.n_match != 1 || s.n_other != 0) {
                        fprintf(stderr, "irq %u: write %u of %s by %d: %u events from it, %u from others; "
                                "the file shows %s\n", irq, i + 1, cpus[i % 2], (int) s.writer, s.n_match,
                                s.n_other, now);
                        ASSERT(false);
                }
                if (!took) {
                        fprintf(stderr, "irq %u: write %u of %s by %d was its event, but the files then showed "
                                "%s, and another effective affinity\n",
                                irq, i + 1, cpus[i % 2], (int) s.writer, now);
                        ASSERT(false);
                }
                delays[i] = s.delay_ns;
        }
        qsort(delays, IRQ_WRITES, sizeof(delays[0]), u64_cmp);

        /* This process's own write: no event. */
        s = (IrqSeen) { .irq = irq, .writer = getpid() };
        ASSERT_EQ(irq_write(irq, cpus[IRQ_WRITES % 2]), 0);
        ASSERT(irq_took(irq, cpus[IRQ_WRITES % 2], now, sizeof(now)));
        irq_wait(b, &s, 300, false);
        if (s.n_match + s.n_other != 0) {
                fprintf(stderr, "irq %u: this process's own write was %u events\n", irq, s.n_match + s.n_other);
                ASSERT(false);
        }
        /* And a child's once more: the quiet was not a dead program. */
        s = (IrqSeen) { .irq = irq };
        s.writer = irq_child_write(irq, cpus[(IRQ_WRITES + 1) % 2]);
        irq_wait(b, &s, 1000, true);
        irq_child_reap(s.writer);
        ASSERT_EQ(s.n_match, 1);

        ASSERT_EQ(irq_write(irq, orig), 0);
        printf("irq %u: %u writes by children, one event each with the writer, delivered in p50 %.0f µs, "
               "max %.0f µs; this process's write: no event; affinity %s restored\n", irq, IRQ_WRITES,
               delays[IRQ_WRITES / 2] / 1e3, delays[IRQ_WRITES - 1] / 1e3, orig);
}

static int main_irq(int argc, char **argv) {
        _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
        const char *why;

        if (geteuid() != 0) {
                printf("skip: loading BPF programs needs root (CAP_BPF and CAP_PERFMON)\n");
                return EXIT_TEST_SKIP;
        }
        ASSERT_EQ(bpf_events_new(getpid(), &bpf_options, &b), 0);
        if (!bpf_events_status(b, BPF_FEATURE_DRIFT, &why)) {
                printf("skip: the drift programs did not load: %s\n", why);
                return EXIT_TEST_SKIP;
        }
        for (int i = 0; i < argc; i++) {
                char *end;
                unsigned long irq = strtoul(argv[i], &end, 10);

                ASSERT(*argv[i] && !*end);
                test_irq(b, (unsigned) irq);
        }
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
        const char *why_lat, *why_drift;

        setvbuf(stdout, NULL, _IOLBF, 0);
        bpf_options.libbpf_warnings = getenv("SRIOVD_BPF_DEBUG") != NULL;
        if (argc > 1 && strcmp(argv[1], "irq") == 0)
                return main_irq(argc - 2, argv + 2);
        ASSERT(argc == 1);

        if (geteuid() != 0) {
                printf("skip: loading BPF programs needs root (CAP_BPF and CAP_PERFMON)\n");
                return EXIT_TEST_SKIP;
        }
        ASSERT_EQ(bpf_events_new(getpid(), &bpf_options, &b), 0);
        bool lat = bpf_events_status(b, BPF_FEATURE_LATENCY, &why_lat);
        bool drift = bpf_events_status(b, BPF_FEATURE_DRIFT, &why_drift);
        if (!lat && !drift) {
                printf("skip: no BPF program loads here: latency: %s; drift: %s\n", why_lat, why_drift);
                return EXIT_TEST_SKIP;
        }
        /* Too many threads is refused before anything changes. */
        ASSERT_EQ(bpf_events_track(b, BPF_TRACK_LATENCY, NULL, BPF_TRACK_MAX + 1), -ENOSPC);
        test_latency(b);
        test_drift(b);
        test_unprivileged();
        return 0;
}
