/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* traffic-probe.c — the traffic guest's probe: frames out of a VF at a steady rate; sriovd's metrics file and journal entries as they come */

/*
 *   traffic-probe send IFACE RATE SECONDS
 *   traffic-probe watch SOCKET FILE [PREFIX]
 *   traffic-probe hog CPU PRIORITY ON_MS OFF_MS SECONDS
 *
 * send: RATE broadcast frames a second out of IFACE for SECONDS (a packet socket, source
 * the netdev's own MAC so that the PF's spoof check passes them); one JSON line with the
 * CLOCK_MONOTONIC times of the first and the last frame and how many went.
 *
 * watch: stands in for journald, whose native socket SOCKET it binds (the guest has none),
 * and watches FILE being replaced. Each version of FILE (read when it is renamed into
 * place) and each journal entry is one JSON line on stdout, in the order they arrived,
 * with its CLOCK_MONOTONIC time: sriovd writes the file and then logs the alerts of that
 * period, so an entry belongs to the last version before it. Runs until SIGTERM. With PREFIX,
 * only the lines of FILE that begin with it are recorded, which keeps the output small.
 * The host (test-vm.py) decides what they mean.
 *
 * hog: a SCHED_FIFO thread at PRIORITY on CPU that spins for ON_MS and sleeps for OFF_MS, for
 * SECONDS. Above an RT tenant's IRQ thread, it keeps the thread waiting up to ON_MS each time,
 * and lets it run in between. One JSON line with the CLOCK_MONOTONIC times of its start and end.
 */

#include <errno.h>
#include <sched.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void json_string(const char *s, size_t n) {
        putchar('"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c == '"' || c == '\\')
                        printf("\\%c", c);
                else if (c == '\n')
                        fputs("\\n", stdout);
                else if (c < 0x20 || c >= 0x7f)
                        printf("\\u%04x", c);
                else
                        putchar(c);
        }
        putchar('"');
}

static int do_send(const char *ifname, unsigned rate, unsigned seconds) {
        struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = ETH_ALEN };
        uint8_t frame[120] = {};
        struct ifreq ifr = {};
        unsigned total = rate * seconds, sent = 0;
        double t0, t1 = 0;
        int fd;

        fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
        if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
                return -errno;
        to.sll_ifindex = (int) if_nametoindex(ifname);
        memset(to.sll_addr, 0xff, ETH_ALEN);
        memset(frame, 0xff, ETH_ALEN);
        memcpy(frame + ETH_ALEN, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
        frame[12] = 0x88, frame[13] = 0xb5;     /* IEEE local experimental EtherType */

        t0 = now();
        /* Paced against the clock, not by sleeps: a slow TCG guest catches up instead of drifting. */
        while (sent < total) {
                double due = t0 + (double) sent / rate, t = now();

                if (t < due) {
                        usleep((useconds_t) ((due - t) * 1e6));
                        continue;
                }
                if (sendto(fd, frame, sizeof(frame), 0, (struct sockaddr *) &to, sizeof(to)) < 0) {
                        if (errno != ENOBUFS && errno != EAGAIN)
                                return -errno;
                        usleep(1000);
                        continue;
                }
                sent++;
                t1 = now();
        }
        close(fd);
        printf("{\"sent\":%u,\"t0\":%.3f,\"t1\":%.3f}\n", sent, t0, t1);
        return 0;
}

/* The native protocol: KEY=VALUE lines, or KEY\n + little-endian 64-bit length + VALUE\n. */
static void print_entry(const char *buf, size_t n, double t) {
        size_t i = 0;
        bool first = true;

        printf("{\"t\":%.3f,\"journal\":{", t);
        while (i < n) {
                const char *line = buf + i, *nl = memchr(line, '\n', n - i), *eq;
                size_t len = nl ? (size_t) (nl - line) : n - i;

                eq = memchr(line, '=', len);
                printf("%s", first ? "" : ",");
                first = false;
                if (eq) {
                        json_string(line, (size_t) (eq - line));
                        putchar(':');
                        json_string(eq + 1, len - (size_t) (eq - line) - 1);
                        i += len + 1;
                } else {
                        uint64_t vlen = 0;

                        json_string(line, len);
                        putchar(':');
                        i += len + 1;
                        if (i + 8 > n)
                                break;
                        for (int k = 7; k >= 0; k--)
                                vlen = vlen << 8 | (uint8_t) buf[i + (size_t) k];
                        i += 8;
                        if (vlen > n - i)
                                vlen = n - i;
                        json_string(buf + i, (size_t) vlen);
                        i += (size_t) vlen + 1;
                }
        }
        printf("}}\n");
        fflush(stdout);
}

/* With a prefix, only the file's lines that begin with it are recorded. */
static const char *keep_prefix;

static void print_file(const char *path, double t) {
        static char buf[1 << 20];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return;
        n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        if (keep_prefix) {
                size_t k = 0, len = strlen(keep_prefix);

                for (size_t i = 0; i < n;) {
                        const char *nl = memchr(buf + i, '\n', n - i);
                        size_t end = nl ? (size_t) (nl - buf) + 1 : n;

                        if (end - i >= len && memcmp(buf + i, keep_prefix, len) == 0) {
                                memmove(buf + k, buf + i, end - i);
                                k += end - i;
                        }
                        i = end;
                }
                n = k;
        }
        printf("{\"t\":%.3f,\"file\":", t);
        json_string(buf, n);
        printf("}\n");
        fflush(stdout);
}

static volatile sig_atomic_t stop;

static void on_term(int sig) {
        (void) sig;
        stop = 1;
}

static int do_watch(const char *socket_path, const char *file) {
        static char buf[1 << 16];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
        char dir[256];
        int sfd, ifd;

        snprintf(dir, sizeof(dir), "%.*s", slash ? (int) (slash - file) : 1, slash ? file : ".");
        strncpy(sa.sun_path, socket_path, sizeof(sa.sun_path) - 1);
        unlink(socket_path);
        sfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (sfd < 0 || bind(sfd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        ifd = inotify_init1(IN_CLOEXEC);
        if (ifd < 0 || inotify_add_watch(ifd, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0)
                return -errno;
        signal(SIGTERM, on_term);
        printf("{\"t\":%.3f,\"watching\":\"%s\"}\n", now(), file);
        fflush(stdout);

        while (!stop) {
                struct pollfd p[2] = { { .fd = ifd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };

                if (poll(p, 2, -1) < 0)
                        continue;
                /* The journal first, every datagram waiting: in one period sriovd feeds its alerts
                 * (and logs what they do) before it writes the file. */
                if (p[1].revents & POLLIN)
                        for (;;) {
                                ssize_t k = recv(sfd, buf, sizeof(buf), MSG_DONTWAIT);

                                if (k <= 0)
                                        break;
                                print_entry(buf, (size_t) k, now());
                        }
                if (p[0].revents & POLLIN) {
                        ssize_t k = read(ifd, buf, sizeof(buf));
                        bool seen = false;

                        for (ssize_t off = 0; k > 0 && off < k;) {
                                const struct inotify_event *e = (const struct inotify_event *) (buf + off);

                                if (e->len > 0 && strcmp(e->name, base) == 0)
                                        seen = true;
                                off += (ssize_t) (sizeof(*e) + e->len);
                        }
                        if (seen)
                                print_file(file, now());
                }
        }
        return 0;
}

static int do_hog(int cpu, int priority, unsigned on_ms, unsigned off_ms, unsigned seconds) {
        struct sched_param sp = { .sched_priority = priority };
        struct timespec off = { .tv_sec = off_ms / 1000, .tv_nsec = (long) (off_ms % 1000) * 1000000 };
        cpu_set_t set;
        double t0, t1, burst;
        unsigned bursts = 0;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0 || sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
                return -errno;
        t0 = now();
        while (now() - t0 < seconds) {
                burst = now();
                while (now() - burst < on_ms / 1000.0)
                        ;
                bursts++;
                nanosleep(&off, NULL);
        }
        t1 = now();
        printf("{\"t0\":%.6f,\"t1\":%.6f,\"bursts\":%u}\n", t0, t1, bursts);
        return 0;
}

int main(int argc, char **argv) {
        int r = -EINVAL;

        if (argc == 5 && strcmp(argv[1], "send") == 0)
                r = do_send(argv[2], (unsigned) strtoul(argv[3], NULL, 10), (unsigned) strtoul(argv[4], NULL, 10));
        else if ((argc == 4 || argc == 5) && strcmp(argv[1], "watch") == 0) {
                keep_prefix = argc == 5 ? argv[4] : NULL;
                r = do_watch(argv[2], argv[3]);
        }
        else if (argc == 7 && strcmp(argv[1], "hog") == 0)
                r = do_hog(atoi(argv[2]), atoi(argv[3]), (unsigned) strtoul(argv[4], NULL, 10),
                           (unsigned) strtoul(argv[5], NULL, 10), (unsigned) strtoul(argv[6], NULL, 10));
        else
                fprintf(stderr, "usage: traffic-probe send IFACE RATE SECONDS | watch SOCKET FILE [PREFIX] | "
                        "hog CPU PRIORITY ON_MS OFF_MS SECONDS\n");
        if (r < 0 && argc > 1)
                fprintf(stderr, "traffic-probe %s: %s\n", argv[1], strerror(-r));
        return r < 0 ? 1 : 0;
}
