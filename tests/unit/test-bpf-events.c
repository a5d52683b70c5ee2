/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bpf-events.c — the BPF programs on this machine's real kernel: a tracked thread's
 * latency histogram fills, an untracked one's does not, and a scheduling change by another
 * process is an event while sriovd's own is not. It skips (77) where BPF cannot load, and says
 * why. The IRQ affinity event is tested in the vm suite: a test here must not move this
 * machine's IRQs.
 */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>

#include "sriovd/bpf-events.h"
#include "test-thread.h"
#include "test.h"

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

/* A child process, not this one, sets tid's scheduling: that is someone else's write. */
static void child_sets(pid_t tid, pid_t *ret_child) {
        pid_t c = fork();
        ASSERT(c >= 0);
        if (c == 0) {
                struct sched_param p = { 0 };
                _exit(sched_setscheduler(tid, SCHED_OTHER, &p) < 0 ? 1 : 0);
        }
        int status;
        ASSERT_EQ(waitpid(c, &status, 0), c);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        *ret_child = c;
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
        test_thread_stop(&watched);
        test_thread_stop(&other);
}

int main(void) {
        _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
        const char *why_lat, *why_drift;

        if (geteuid() != 0) {
                printf("skip: loading BPF programs needs root (CAP_BPF and CAP_PERFMON)\n");
                return EXIT_TEST_SKIP;
        }
        ASSERT_EQ(bpf_events_new(getpid(), &b), 0);
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
        return 0;
}
