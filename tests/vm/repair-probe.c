/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * repair-probe.c — how long sriovd takes to put back what another process changed, measured in
 * a vm suite guest (tests/vm/guest/events.sh) as an operator would see it: from the write to
 * the moment the kernel shows the planned value again.
 *
 *   repair-probe irq N WRONG WANT COUNT [TIMEOUT_MS]
 *       writes WRONG to /proc/irq/N/smp_affinity_list, then reads the file until it shows WANT
 *   repair-probe thread TID PRIO WANT_PRIO COUNT [TIMEOUT_MS]
 *       sets thread TID to SCHED_FIFO PRIO, as chrt does, then reads its scheduling until it is
 *       SCHED_FIFO WANT_PRIO
 *
 *   repair-probe floor irq N WANT | floor thread TID PRIO
 *       the baseline: the least that repairs on events, until SIGTERM. It loads sriovd's drift
 *       programs through bpf-events.c and, for each event that names the IRQ or the thread,
 *       writes the planned value back at once, with nothing else to do. The same measurement
 *       against it gives what the kernel, the BPF ring buffer and the emulated machine take.
 *
 * COUNT times, with a pause of 20 to 80 ms between two changes. Each change prints one line,
 * "sample MS", or "missed MS" when the value did not come back within TIMEOUT_MS (2000 by
 * default); the next change then waits up to 10 s more for it. The reads are 200 us apart. A change that the kernel refused ends the run with exit
 * status 1: a fault that did not happen proves nothing.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/kernel/bpf-events.h"

/* SRIOVD_BPF_DEBUG shows libbpf's warnings, as it does for the daemon. main() reads it. */
static BpfEventsOptions bpf_options;

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void pause_us(long us) {
        struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

static int irq_read(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return 0;
}

static int irq_change(const char *path, const char *wrong) {
        int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

        if (fd < 0)
                return -errno;
        if (write(fd, wrong, strlen(wrong)) < 0)
                r = -errno;
        close(fd);
        return r;
}

static int irq_back(const char *path, const char *want) {
        char buf[256];

        return irq_read(path, buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0;
}

static int thread_change(pid_t tid, int prio) {
        struct sched_param p = { .sched_priority = prio };

        return sched_setscheduler(tid, SCHED_FIFO, &p) < 0 ? -errno : 0;
}

static int thread_back(pid_t tid, int want) {
        struct sched_param p;

        return sched_getscheduler(tid) == SCHED_FIFO && sched_getparam(tid, &p) == 0 && p.sched_priority == want;
}

typedef struct Floor {
        bool irq;
        unsigned id;
        const char *path, *want;
        int want_prio;
        unsigned n_repaired;
} Floor;

static volatile sig_atomic_t stop;

static void on_term(int sig) {
        stop = 1;
}

static void on_event(const BpfEvent *e, void *userdata) {
        Floor *f = userdata;

        if (e->id != f->id || (e->kind == BPF_EVENT_IRQ_AFFINITY) != f->irq || e->kind == BPF_EVENT_LOST)
                return;
        if (f->irq ? irq_change(f->path, f->want) == 0 : thread_change((pid_t) f->id, f->want_prio) == 0)
                f->n_repaired++;
}

static int floor_main(int argc, char **argv) {
        _cleanup_(bpf_events_freep) BpfEvents *b = NULL;
        char path[64];
        const char *why;
        Floor f = {};

        if (argc < 5 || (strcmp(argv[2], "irq") != 0 && strcmp(argv[2], "thread") != 0))
                return 2;
        f.irq = strcmp(argv[2], "irq") == 0;
        f.id = (unsigned) atoi(argv[3]);
        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", f.id);
        f.path = path;
        f.want = argv[4];
        f.want_prio = atoi(argv[4]);
        if (bpf_events_new(getpid(), &bpf_options, &b) < 0)
                return 1;
        if (!bpf_events_status(b, BPF_FEATURE_DRIFT, &why)) {
                fprintf(stderr, "floor: the drift programs did not load: %s\n", why);
                return 1;
        }
        if (!f.irq) {
                pid_t tid = (pid_t) f.id;
                if (bpf_events_track(b, BPF_TRACK_SCHED, &tid, 1) < 0)
                        return 1;
        }
        signal(SIGTERM, on_term);
        printf("floor: ready\n");
        fflush(stdout);
        while (!stop) {
                struct pollfd p = { .fd = bpf_events_fd(b), .events = POLLIN };

                if (poll(&p, 1, 1000) > 0 && bpf_events_dispatch(b, on_event, &f) < 0)
                        return 1;
        }
        printf("floor: %u repairs\n", f.n_repaired);
        return 0;
}

int main(int argc, char **argv) {
        char path[64];
        const char *wrong = NULL, *want = NULL;
        int prio = 0, want_prio = 0, count, timeout_ms = 2000;
        pid_t tid = 0;
        bool irq;
        uint64_t seed = 1;

        bpf_options.libbpf_warnings = getenv("SRIOVD_BPF_DEBUG") != NULL;
        if (argc >= 2 && strcmp(argv[1], "floor") == 0)
                return floor_main(argc, argv);
        if (argc >= 6 && strcmp(argv[1], "irq") == 0) {
                irq = true;
                snprintf(path, sizeof(path), "/proc/irq/%s/smp_affinity_list", argv[2]);
                wrong = argv[3];
                want = argv[4];
        } else if (argc >= 6 && strcmp(argv[1], "thread") == 0) {
                irq = false;
                tid = (pid_t) atoi(argv[2]);
                prio = atoi(argv[3]);
                want_prio = atoi(argv[4]);
        } else {
                fprintf(stderr, "usage: repair-probe irq N WRONG WANT COUNT [TIMEOUT_MS] | "
                        "thread TID PRIO WANT_PRIO COUNT [TIMEOUT_MS] | floor irq N WANT | floor thread TID PRIO\n");
                return 2;
        }
        count = atoi(argv[5]);
        if (argc >= 7)
                timeout_ms = atoi(argv[6]);
        setvbuf(stdout, NULL, _IOLBF, 0);

        for (int i = 0; i < count; i++) {
                double t0, t;
                int r;

                if (!(irq ? irq_back(path, want) : thread_back(tid, want_prio))) {
                        fprintf(stderr, "change %d: the planned value is not there to begin with\n", i + 1);
                        return 1;
                }
                t0 = now_ms();
                r = irq ? irq_change(path, wrong) : thread_change(tid, prio);
                if (r < 0) {
                        fprintf(stderr, "change %d: the kernel refused it: %s\n", i + 1, strerror(-r));
                        return 1;
                }
                for (;;) {
                        t = now_ms();
                        if (irq ? irq_back(path, want) : thread_back(tid, want_prio)) {
                                printf("sample %.3f\n", t - t0);
                                break;
                        }
                        if (t - t0 > timeout_ms) {
                                printf("missed %.3f\n", t - t0);
                                /* Later, at least, before the next change. */
                                for (int k = 0; k < 100 && !(irq ? irq_back(path, want) : thread_back(tid, want_prio)); k++)
                                        pause_us(100000);
                                break;
                        }
                        pause_us(200);
                }
                /* A pause that follows no period of sriovd's. */
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                pause_us(20000 + (long) ((seed >> 33) % 60000));
        }
        return 0;
}
