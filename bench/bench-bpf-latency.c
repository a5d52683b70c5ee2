/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-bpf-latency.c — what the latency programs cost the scheduler: a pipe ping-pong of two
 * threads, each round trip two wakeups and two context switches, timed without the programs,
 * with them and the two threads tracked (every switch fills a histogram), and with them and the
 * two threads untracked (every switch is one hash lookup). The programs are sriovd's own, loaded
 * and fed through bpf-events.c as the daemon does.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/kernel/bpf-events.h"
#include "sriovd/shared/util.h"
#include "bench-util.h"

/* SRIOVD_BPF_DEBUG shows libbpf's warnings, as it does for the daemon. main() reads it. */
static BpfEventsOptions bpf_options;

/* Other threads in the tracked map while the two are not, as on a host with RT tenants. */
#define OTHER_TRACKED 256
#define WARMUP_ROUNDS 500

typedef enum Mode {
        MODE_BASELINE,
        MODE_UNTRACKED,
        MODE_TRACKED,
        _MODE_MAX,
} Mode;

static const char *const mode_name[_MODE_MAX] = {
        [MODE_BASELINE] = "without the programs",
        [MODE_UNTRACKED] = "programs, threads untracked",
        [MODE_TRACKED] = "programs, threads tracked",
};

typedef struct Pong {
        int in, out;
        int cpu;
        pid_t tid;
        pthread_mutex_t lock;
} Pong;

static void help(void) {
        printf("Usage: bench-bpf-latency [-n N] [--round-trips N] [--spread]\n\n"
               "A pipe ping-pong of two threads pinned to one CPU: each round trip is two wakeups and\n"
               "two context switches. Timed without sriovd's latency programs, with them attached and the\n"
               "two threads tracked (the worst case: each switch fills a histogram), and with them and\n"
               "%u other threads tracked but not these two (the common case: one hash lookup).\n"
               "Each repetition measures all three, in an order that alternates. The figure is the CPU time\n"
               "of both threads a round trip, which leaves out other processes' time on the CPU; the\n"
               "elapsed time is printed beside it. Medians, with their ratio to the baseline. Needs root\n"
               "and a kernel that loads the programs.\n\n"
               "  -n, --iterations N  repetitions (default 31, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  --round-trips N     round trips a measurement (default 10000)\n"
               "  --spread            the threads on two CPUs: each wakeup crosses CPUs\n",
               OTHER_TRACKED);
}

static int pin(int cpu) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *pong_main(void *userdata) {
        Pong *p = userdata;
        char c;

        (void) pin(p->cpu);
        pthread_mutex_lock(&p->lock);
        p->tid = (pid_t) syscall(SYS_gettid);
        pthread_mutex_unlock(&p->lock);
        while (read(p->in, &c, 1) == 1)
                if (write(p->out, &c, 1) != 1)
                        break;
        return NULL;
}

static double process_cpu_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

/*
 * CPU ns of both threads a round trip, or a negative errno; *ret_wall_ns the elapsed time a round
 * trip. The CPU time leaves out what other processes ran on the CPU meanwhile, which on a busy
 * machine is most of the elapsed time's noise. The hooks run in the threads' own context
 * switches and wakeups, so they are in it.
 */
static double ping(int out, int in, unsigned rounds, double *ret_wall_ns) {
        char c = 'x';
        double t0, c0;

        for (unsigned i = 0; i < WARMUP_ROUNDS; i++)
                if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
                        return -errno;
        t0 = bench_now_ms();
        c0 = process_cpu_ns();
        for (unsigned i = 0; i < rounds; i++)
                if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
                        return -errno;
        *ret_wall_ns = (bench_now_ms() - t0) * 1e6 / rounds;
        return (process_cpu_ns() - c0) / rounds;
}

static int first_cpus(int *ret_a, int *ret_b) {
        cpu_set_t set;
        int n = 0;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return -errno;
        for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
                if (CPU_ISSET(c, &set)) {
                        if (n++ == 0)
                                *ret_a = c;
                        else
                                *ret_b = c;
                }
        return n;
}

static int track(BpfEvents *b, pid_t a, pid_t c, bool with_pair) {
        pid_t pids[OTHER_TRACKED + 2];
        size_t n = 0;

        /* Numbers above any real thread's, so that nothing else fills their histograms. */
        for (unsigned i = 0; i < OTHER_TRACKED; i++)
                pids[n++] = (pid_t) (0x3ff000 + i);
        if (with_pair) {
                pids[n++] = a;
                pids[n++] = c;
        }
        return bpf_events_track(b, BPF_TRACK_LATENCY, pids, n);
}

int main(int argc, char **argv) {
        _cleanup_free_ double *v[_MODE_MAX] = {}, *w[_MODE_MAX] = {};
        unsigned iterations = bench_default_iterations(31), rounds = 10000;
        bool spread = false;
        int p1[2], p2[2], cpu_a = 0, cpu_b = 0, r;
        double hist_mean_ns = 0;
        pthread_t th;
        Pong pong;
        pid_t self;

        bpf_options.libbpf_warnings = getenv("SRIOVD_BPF_DEBUG") != NULL;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-h") || streq(argv[i], "--help")) {
                        help();
                        return 0;
                }
                if ((streq(argv[i], "-n") || streq(argv[i], "--iterations")) && i + 1 < argc &&
                    (iterations = (unsigned) atoi(argv[++i])) >= 1 && iterations <= 10000)
                        continue;
                if (streq(argv[i], "--round-trips") && i + 1 < argc &&
                    (rounds = (unsigned) atoi(argv[++i])) >= 100 && rounds <= 100000000)
                        continue;
                if (streq(argv[i], "--spread")) {
                        spread = true;
                        continue;
                }
                fprintf(stderr, "bench-bpf-latency: unexpected '%s'; see --help\n", argv[i]);
                return 2;
        }
        if (geteuid() != 0) {
                fprintf(stderr, "bench-bpf-latency: loading BPF programs needs root: skipping\n");
                return 77;
        }
        /* The programs must load here at all, or there is nothing to measure. */
        {
                _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
                const char *why;

                if (bpf_events_new(getpid(), &bpf_options, &b) < 0)
                        return 1;
                if (!bpf_events_status(b, BPF_FEATURE_LATENCY, &why)) {
                        fprintf(stderr, "bench-bpf-latency: the latency programs do not load here: %s: skipping\n", why);
                        return 77;
                }
        }
        r = first_cpus(&cpu_a, &cpu_b);
        if (r < 1 || (spread && r < 2)) {
                fprintf(stderr, "bench-bpf-latency: not enough CPUs allowed: skipping\n");
                return 77;
        }
        if (!spread)
                cpu_b = cpu_a;
        for (unsigned m = 0; m < _MODE_MAX; m++)
                if (!(v[m] = calloc(iterations, sizeof(double))) || !(w[m] = calloc(iterations, sizeof(double))))
                        return 1;
        if (pipe2(p1, O_CLOEXEC) < 0 || pipe2(p2, O_CLOEXEC) < 0 || pin(cpu_a) < 0)
                return 1;
        pong = (Pong) { .in = p1[0], .out = p2[1], .cpu = cpu_b, .lock = PTHREAD_MUTEX_INITIALIZER };
        if (pthread_create(&th, NULL, pong_main, &pong) != 0)
                return 1;
        for (;;) {
                pthread_mutex_lock(&pong.lock);
                pid_t t = pong.tid;
                pthread_mutex_unlock(&pong.lock);
                if (t > 0)
                        break;
                usleep(1000);
        }
        self = (pid_t) syscall(SYS_gettid);

        for (unsigned it = 0; it < iterations; it++) {
                _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
                /* Half the repetitions run the baseline last and the tracked case first. */
                bool reverse = it % 2;
                LatencyHist h;
                double ns;

                if (!reverse && (v[MODE_BASELINE][it] = ping(p1[1], p2[0], rounds, &w[MODE_BASELINE][it])) < 0)
                        return 1;
                if (bpf_events_new(getpid(), &bpf_options, &b) < 0 || !bpf_events_status(b, BPF_FEATURE_LATENCY, NULL))
                        return 1;
                for (unsigned k = 0; k < 2; k++) {
                        Mode m = (k == 0) != reverse ? MODE_UNTRACKED : MODE_TRACKED;

                        r = track(b, self, pong.tid, m == MODE_TRACKED);
                        if (r < 0) {
                                fprintf(stderr, "bench-bpf-latency: tracking: %s\n", strerror(-r));
                                return 1;
                        }
                        if ((ns = ping(p1[1], p2[0], rounds, &w[m][it])) < 0)
                                return 1;
                        v[m][it] = ns;
                        /* The programs must have done their work, or the figure means nothing. */
                        r = bpf_events_read_latency(b, pong.tid, &h);
                        if (m == MODE_TRACKED) {
                                if (r < 0 || h.count < rounds) {
                                        fprintf(stderr, "bench-bpf-latency: the tracked thread's histogram has %llu "
                                                "wakeups for %u round trips (%s)\n", r < 0 ? 0 : h.count, rounds,
                                                r < 0 ? strerror(-r) : "too few");
                                        return 1;
                                }
                                hist_mean_ns = (double) h.sum_ns / (double) h.count;
                        } else if (r != -ENOENT) {
                                fprintf(stderr, "bench-bpf-latency: an untracked thread has a histogram\n");
                                return 1;
                        }
                }
                b = bpf_events_free(b);
                if (reverse && (v[MODE_BASELINE][it] = ping(p1[1], p2[0], rounds, &w[MODE_BASELINE][it])) < 0)
                        return 1;
        }
        close(p1[1]);
        (void) pthread_join(th, NULL);

        Stats st[_MODE_MAX], wt[_MODE_MAX];
        for (unsigned m = 0; m < _MODE_MAX; m++) {
                st[m] = bench_stats(v[m], iterations);
                wt[m] = bench_stats(w[m], iterations);
        }
        if (spread)
                printf("bench-bpf-latency: pipe ping-pong, threads on CPUs %d and %d, %u round trips a measurement, "
                       "medians of %u\n", cpu_a, cpu_b, rounds, iterations);
        else
                printf("bench-bpf-latency: pipe ping-pong, both threads on CPU %d, %u round trips a measurement "
                       "(2 wakeups and 2 context switches each), medians of %u\n", cpu_a, rounds, iterations);
        for (unsigned m = 0; m < _MODE_MAX; m++)
                printf("  %-28s CPU %6.0f ns a round trip (min %.0f, max %.0f), ratio %.3f; elapsed %6.0f ns, "
                       "ratio %.3f\n", mode_name[m], st[m].median, st[m].min, st[m].max,
                       st[m].median / st[MODE_BASELINE].median, wt[m].median, wt[m].median / wt[MODE_BASELINE].median);
        printf("  cost in CPU: tracked %+.1f%%, untracked %+.1f%% (target: at most +5%%); the tracked thread's mean "
               "wakeup-to-run %.1f us\n", (st[MODE_TRACKED].median / st[MODE_BASELINE].median - 1) * 100,
               (st[MODE_UNTRACKED].median / st[MODE_BASELINE].median - 1) * 100, hist_mean_ns / 1e3);
        return 0;
}
