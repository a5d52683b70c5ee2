/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-stats.c — the stats guest's probe: frames out of a VF netdev, the counters before and after as netdev-stats.c reads them */

/*
 *   vf-stats PF VF PEER FRAMES
 *
 * Reads the PF (route_nl_read_stats: its IFLA_STATS64 and every VF's IFLA_VF_STATS,
 * one request), the VF's and the PEER's netdev (IFLA_STATS64), sends FRAMES broadcast
 * frames out of the VF netdev through a packet socket (source: the VF's own MAC, so
 * the PF's spoof check passes them), waits until the VF's and PEER's counters show
 * them (igbvf and e1000e update theirs from the hardware in their watchdogs), reads
 * everything again, and dumps all netdevs once. Each read is one JSON line on stdout;
 * the host (test-vm.py) decides what they mean.
 */

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/kernel/netdev-stats.h"

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void print_counters(const VfCounters *c) {
        printf("{\"have\":%u,\"rx_packets\":%llu,\"tx_packets\":%llu,\"rx_bytes\":%llu,\"tx_bytes\":%llu,"
               "\"rx_dropped\":%llu,\"tx_dropped\":%llu,\"broadcast\":%llu,\"multicast\":%llu}",
               c->have, (unsigned long long) c->rx_packets, (unsigned long long) c->tx_packets,
               (unsigned long long) c->rx_bytes, (unsigned long long) c->tx_bytes,
               (unsigned long long) c->rx_dropped, (unsigned long long) c->tx_dropped,
               (unsigned long long) c->broadcast, (unsigned long long) c->multicast);
}

static void print_stats(const char *what, const NetdevStats *s, double t) {
        printf("{\"read\":\"%s\",\"t\":%.3f,\"ifindex\":%d,\"ifname\":\"%s\",\"netdev\":", what, t, s->ifindex,
               s->ifname);
        print_counters(&s->netdev);
        printf(",\"vfs\":[");
        for (size_t i = 0; i < s->n_vfs; i++) {
                printf("%s{\"vf\":%u,\"counters\":", i ? "," : "", s->vfs[i].vf);
                print_counters(&s->vfs[i].counters);
                printf("}");
        }
        printf("]}\n");
        fflush(stdout);
}

static int read_one(RouteNl *nl, const char *name, NetdevStats *ret) {
        NlError e;
        int r, ifindex = (int) if_nametoindex(name);

        if (ifindex <= 0) {
                fprintf(stderr, "vf-stats: no netdev %s: %m\n", name);
                return -ENODEV;
        }
        r = route_nl_read_stats(nl, ifindex, ret, &e);
        if (r < 0)
                fprintf(stderr, "vf-stats: reading %s: %s (%s)\n", name, strerror(-r), e.message);
        return r;
}

static int send_frames(const char *ifname, unsigned n) {
        struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = ETH_ALEN };
        uint8_t frame[120] = {};
        struct ifreq ifr = {};
        int fd;

        fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
        if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
                close(fd);
                return -errno;
        }
        to.sll_ifindex = (int) if_nametoindex(ifname);
        memset(to.sll_addr, 0xff, ETH_ALEN);
        memset(frame, 0xff, ETH_ALEN);
        memcpy(frame + ETH_ALEN, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
        frame[12] = 0x88, frame[13] = 0xb5;     /* IEEE local experimental EtherType */
        for (unsigned i = 0; i < n; i++)
                /* A full TX ring answers ENOBUFS: wait for it, every frame must go. */
                while (sendto(fd, frame, sizeof(frame), 0, (struct sockaddr *) &to, sizeof(to)) < 0) {
                        if (errno != ENOBUFS && errno != EAGAIN) {
                                close(fd);
                                return -errno;
                        }
                        usleep(1000);
                }
        close(fd);
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(route_nl_freep) RouteNl *nl = NULL;
        NetdevStats pf = {}, vf = {}, peer = {}, *all = NULL;
        uint64_t vf_tx0, peer_rx0;
        unsigned frames;
        size_t n_all = 0;
        double t0, t;
        NlError e;
        int r;

        if (argc != 5) {
                fprintf(stderr, "usage: vf-stats PF VF PEER FRAMES\n");
                return 2;
        }
        frames = (unsigned) strtoul(argv[4], NULL, 10);
        r = route_nl_open(&nl);
        if (r < 0) {
                fprintf(stderr, "vf-stats: route_nl_open: %s\n", strerror(-r));
                return 1;
        }

        t0 = now();
        if (read_one(nl, argv[1], &pf) < 0 || read_one(nl, argv[2], &vf) < 0 || read_one(nl, argv[3], &peer) < 0)
                return 1;
        print_stats("pf-before", &pf, now() - t0);
        print_stats("vf-before", &vf, now() - t0);
        print_stats("peer-before", &peer, now() - t0);
        vf_tx0 = vf.netdev.tx_packets;
        peer_rx0 = peer.netdev.rx_packets;

        r = send_frames(argv[2], frames);
        if (r < 0) {
                fprintf(stderr, "vf-stats: sending on %s: %s\n", argv[2], strerror(-r));
                return 1;
        }
        t = now();
        printf("{\"sent\":%u,\"t\":%.3f}\n", frames, t - t0);

        /* The deadline bounds a broken run; what the counters say is asserted on the host. */
        do {
                usleep(200 * 1000);
                netdev_stats_done(&vf);
                netdev_stats_done(&peer);
                if (read_one(nl, argv[2], &vf) < 0 || read_one(nl, argv[3], &peer) < 0)
                        return 1;
        } while ((vf.netdev.tx_packets - vf_tx0 < frames || peer.netdev.rx_packets - peer_rx0 < frames) &&
                 now() - t < 15);

        netdev_stats_done(&pf);
        if (read_one(nl, argv[1], &pf) < 0)
                return 1;
        print_stats("pf-after", &pf, now() - t0);
        print_stats("vf-after", &vf, now() - t0);
        print_stats("peer-after", &peer, now() - t0);

        r = route_nl_dump_stats(nl, &all, &n_all, &e);
        if (r < 0) {
                fprintf(stderr, "vf-stats: dump: %s (%s)\n", strerror(-r), e.message);
                return 1;
        }
        for (size_t i = 0; i < n_all; i++)
                print_stats("dump", &all[i], now() - t0);
        netdev_stats_array_free(all, n_all);
        netdev_stats_done(&pf);
        netdev_stats_done(&vf);
        netdev_stats_done(&peer);
        return 0;
}
