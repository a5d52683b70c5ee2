/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-live.c — drives src/virt/ against a real libvirtd, one command per line on stdin (tests/virt/test-virt-live.py) */

#include <errno.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/virt/virt.h"

/*
 * Commands (words separated by spaces, "-" = empty):
 *   define FILE | start DOM | destroy DOM | undefine DOM | connected
 *   attach DOM KIND SRC MAC TENANT | detach DOM KIND SRC MAC
 *   swap DOM OLDKIND OLDSRC NEWKIND NEWSRC MAC TENANT
 *   nics DOM            one "nic TYPE PCI MAC ALIAS" line per NIC of the live XML
 *   vcpu0 DOM
 *   place DOM RTCPU HOUSEKEEPING PRIO   virt_place_guest() with the placement the daemon would build
 *                                       (guest_placement()) for a guest booking RTCPU, in a class
 *                                       with vcpu_fifo_priority = PRIO; answers the changes made
 *   vcpupin DOM VCPU CPUS            virDomainPinVcpuFlags(LIVE) from a connection of its own, as virsh would
 *   wait EVENT DOM DEVICE SECONDS [DETAIL]   dispatch sd-event until that event (with that detail) arrived
 * KIND: vf-interface, vf-hostdev, virtio-network, virtio-bridge, virtio-ethernet; SRC: VF address or source name.
 * Answers: "ok N", or "err -ERRNO CODE MESSAGE"; events as "event KIND DOM DEVICE DETAIL" when they arrive.
 */

static const char *const kinds[] = {
        "defined", "undefined", "started", "stopped", "suspended", "resumed",
        "device-added", "device-removed", "device-removal-failed", "disconnected", "reconnected", "tunable",
        "connected", "connect-failed",
};
_Static_assert(ELEMENTSOF(kinds) == _VIRT_EVENT_KIND_MAX, "a name per event kind");

static struct {
        char line[160];               /* KIND DOM DEVICE */
        char detail[64];
} seen[256];
static size_t n_seen;

static void on_event(const VirtEvent *ev, void *userdata) {
        char line[160];

        snprintf(line, sizeof(line), "%s %s %s", kinds[ev->kind], ev->domain ?: "-", ev->device ?: "-");
        printf("event %s %s\n", line, ev->detail_str);
        fflush(stdout);
        if (n_seen < ELEMENTSOF(seen)) {
                strcpy(seen[n_seen].line, line);
                strscpy(seen[n_seen++].detail, sizeof(seen[0].detail), ev->detail_str ?: "");
        }
}

static int parse_nic(const char *kind, const char *src, const char *mac, const char *tenant, VirtNic *ret) {
        VirtNic n = VIRT_NIC_INIT;
        int k = -1;

        for (int i = 0; i < _VIRT_NIC_KIND_MAX; i++)
                if (streq(kind, virt_nic_kind_to_string(i)))
                        k = i;
        if (k < 0)
                return -EINVAL;
        n.kind = k;
        if (k == VIRT_NIC_VF_INTERFACE || k == VIRT_NIC_VF_HOSTDEV)
                strscpy(n.vf, sizeof(n.vf), src);
        else if (!streq(src, "-"))
                strscpy(n.source, sizeof(n.source), src);
        if (!streq(mac, "-"))
                strscpy(n.mac, sizeof(n.mac), mac);
        /* No vhost-net where the tests run: userspace virtio. */
        if (k >= VIRT_NIC_VIRTIO_NETWORK)
                n.driver = VIRT_NIC_DRIVER_QEMU;
        if (tenant && !streq(tenant, "-") && virt_nic_set_alias(&n, tenant) < 0)
                return -EINVAL;
        *ret = n;
        return 0;
}

/*
 * The placement sriovd makes for an RT guest (src/daemon/guests/guests.c): guest_placement() from the
 * host's CPUs ([cpus] rt = the booked CPU, housekeeping = the list; one NUMA node, so numatune is
 * left), the class (vcpu_pinning = rt, vcpu_fifo_priority = prio) and the booking; then applied.
 */
static int place(Virt *v, const char *domain, const char *rt, const char *housekeeping, int prio,
                 VirtPlaceChanges *ch, VirtError *err) {
        _cleanup_(config_freep) Config *cfg = NULL;
        long ncpus = sysconf(_SC_NPROCESSORS_CONF);
        CpuSet node0 = {};
        Inventory inv = { .topo = { .n_nodes = 1, .node_cpus = &node0 } };
        uint16_t booked;
        TenantClass cls;
        GuestPlacement p;
        int r;

        if (ncpus <= 0 || ncpus > CPUSET_MAX)
                return -ERANGE;
        for (long c = 0; c < ncpus; c++) {
                cpuset_add(&inv.topo.online, (unsigned) c);
                cpuset_add(&node0, (unsigned) c);
        }
        r = config_new("/virt-live.conf", "/virt-live.d", &cfg);
        if (r < 0)
                return r;
        cfg->have_rt_cpus = cfg->have_housekeeping_cpus = true;
        r = cpuset_parse_list(rt, &cfg->rt_cpus);
        if (r >= 0)
                r = cpuset_parse_list(housekeeping, &cfg->housekeeping_cpus);
        if (r < 0 || cpuset_count(&cfg->rt_cpus) != 1)
                return -EINVAL;
        booked = (uint16_t) cpuset_nth(&cfg->rt_cpus, 0);
        tenant_class_init(&cls);
        cls.vcpu_pin_rt = 1;
        cls.vcpu_fifo_priority = prio;
        r = guest_placement(&inv, cfg, &cls, &booked, 1, &p);
        if (r < 0)
                return r;
        return virt_place_guest(v, domain, &p, false, ch, err);
}

/* Another client's vcpupin (virsh vcpupin --live): sriovd must hear of it through the event alone. */
static int vcpupin_elsewhere(const char *uri, const char *domain, const char *vcpu, const char *cpus, VirtError *err) {
        virConnectPtr c = virConnectOpen(uri);
        virDomainPtr d = NULL;
        unsigned char map[VIR_CPU_MAPLEN(CPUSET_MAX)] = {};
        CpuSet set;
        int r = -EIO, last;

        if (cpuset_parse_list(cpus, &set) < 0 || cpuset_is_empty(&set))
                return -EINVAL;
        last = cpuset_nth(&set, cpuset_count(&set) - 1);
        for (int i = 0; i <= last; i++)
                if (cpuset_has(&set, (unsigned) i))
                        VIR_USE_CPU(map, i);
        if (c)
                d = virDomainLookupByName(c, domain);
        if (d && virDomainPinVcpuFlags(d, (unsigned) atoi(vcpu), map, VIR_CPU_MAPLEN(last + 1), VIR_DOMAIN_AFFECT_LIVE) == 0)
                r = 0;
        if (r < 0) {
                virErrorPtr e = virGetLastError();
                snprintf(err->message, sizeof(err->message), "%s", e && e->message ? e->message : "vcpupin failed");
                err->error = r;
        }
        if (d)
                virDomainFree(d);
        if (c)
                virConnectClose(c);
        return r;
}

static void answer(int r, const VirtError *err) {
        if (r >= 0)
                printf("ok %d\n", r);
        else
                printf("err %d %d %s\n", r, err->code, err->error ? err->message : "(no message)");
        fflush(stdout);
}

int main(int argc, char **argv) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(virt_freep) Virt *v = NULL;
        VirtError err = {};
        char line[1024];

        if (argc != 2) {
                fprintf(stderr, "usage: %s URI < commands\n", argv[0]);
                return 2;
        }
        if (sd_event_new(&e) < 0)
                return 1;
        if (virt_new(e, argv[1], on_event, NULL, &v, &err) < 0) {
                answer(err.error, &err);
                return 1;
        }
        virt_set_backoff(v, 200 * 1000, 1000 * 1000);
        printf("ok 0\n");
        fflush(stdout);

        /* Unbuffered, so that poll() on fd 0 tells the truth about what fgets() has left to read. */
        setvbuf(stdin, NULL, _IONBF, 0);
        for (;;) {
                /* Keep dispatching while the test is quiet (it may wait minutes for a slow TCG guest):
                 * libvirtd closes a connection whose keepalive pings go unanswered for 30 s. */
                struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
                int p = poll(&in, 1, 100);
                if (p < 0 && errno != EINTR)
                        return 1;
                if (p <= 0) {
                        if (sd_event_run(e, 0) < 0)
                                return 1;
                        continue;
                }
                if (!fgets(line, sizeof(line), stdin))
                        break;
                char *w[9] = {}, *save = NULL;
                size_t n = 0;
                int r = -EINVAL;

                line[strcspn(line, "\n")] = 0;
                for (char *t = strtok_r(line, " ", &save); t && n < ELEMENTSOF(w); t = strtok_r(NULL, " ", &save))
                        w[n++] = t;
                if (n == 0)
                        continue;
                err = (VirtError) {};
                /* Pick up what arrived meanwhile. */
                while (sd_event_run(e, 0) > 0)
                        ;

                if (streq(w[0], "define") && n == 2) {
                        _cleanup_free_ char *xml = NULL;
                        size_t size = 0;
                        FILE *f = fopen(w[1], "re");
                        if (f) {
                                xml = calloc(1, 1 << 20);
                                size = fread(xml, 1, (1 << 20) - 1, f);
                                fclose(f);
                        }
                        r = xml && size > 0 ? virt_define_xml(v, xml, &err) : -ENOENT;
                } else if (streq(w[0], "start") && n == 2)
                        r = virt_domain_start(v, w[1], &err);
                else if (streq(w[0], "destroy") && n == 2)
                        r = virt_domain_destroy(v, w[1], &err);
                else if (streq(w[0], "undefine") && n == 2)
                        r = virt_domain_undefine(v, w[1], &err);
                else if (streq(w[0], "connected"))
                        r = virt_is_connected(v);
                else if ((streq(w[0], "attach") && n == 6) || (streq(w[0], "detach") && (n == 5 || n == 6))) {
                        VirtNic nic;
                        r = parse_nic(w[2], w[3], w[4], n == 6 && !streq(w[5], "-") ? w[5] : NULL, &nic);
                        if (r >= 0)
                                r = streq(w[0], "attach") ? virt_attach(v, w[1], &nic, &err) : virt_detach(v, w[1], &nic, &err);
                } else if (streq(w[0], "swap") && n == 8) {
                        VirtNic a, b;
                        VirtError err2 = {};
                        VirtSwapResult res = VIRT_SWAP_DONE;
                        r = parse_nic(w[2], w[3], w[6], w[7], &a);
                        if (r >= 0)
                                r = parse_nic(w[4], w[5], w[6], w[7], &b);
                        if (r >= 0) {
                                r = virt_swap(v, w[1], &a, &b, &res, &err, &err2);
                                printf("swap %s%s%s\n", virt_swap_result_to_string(res),
                                       err2.error ? " rollback-error " : "", err2.error ? err2.message : "");
                        }
                } else if (streq(w[0], "nics") && n == 2) {
                        _cleanup_(virt_domain_info_done) VirtDomainInfo d = {};
                        r = virt_get_domain(v, w[1], &d, &err);
                        for (size_t i = 0; r >= 0 && i < d.n_nics; i++)
                                printf("nic %s %s %s %s\n", d.nics[i].type, d.nics[i].pci[0] ? d.nics[i].pci : "-",
                                       d.nics[i].mac[0] ? d.nics[i].mac : "-", d.nics[i].alias[0] ? d.nics[i].alias : "-");
                        if (r >= 0)
                                r = (int) d.n_nics;
                } else if (streq(w[0], "vcpu0") && n == 2)
                        r = virt_vcpu0_host_cpu(v, w[1], &err);
                else if (streq(w[0], "place") && n == 5) {
                        VirtPlaceChanges ch = {};
                        r = place(v, w[1], w[2], w[3], atoi(w[4]), &ch, &err);
                        if (r >= 0)
                                r = (int) ch.n;
                        virt_place_changes_done(&ch);
                } else if (streq(w[0], "vcpupin") && n == 4)
                        r = vcpupin_elsewhere(argv[1], w[1], w[2], w[3], &err);
                else if (streq(w[0], "wait") && (n == 5 || n == 6)) {
                        char want[160];
                        uint64_t deadline = now_usec() + (uint64_t) atoi(w[4]) * 1000000u;

                        snprintf(want, sizeof(want), "%s %s %s", w[1], w[2], w[3]);
                        r = -ETIMEDOUT;
                        while (r < 0 && now_usec() < deadline) {
                                for (size_t i = 0; i < n_seen; i++)
                                        if (streq(seen[i].line, want) && (n == 5 || streq(seen[i].detail, w[5]))) {
                                                /* Consumed: the same event may be awaited again later. */
                                                seen[i].line[0] = 0;
                                                r = 0;
                                                break;
                                        }
                                if (r < 0 && sd_event_run(e, 100 * 1000) < 0)
                                        break;
                        }
                        if (r < 0)
                                err = (VirtError) { .error = r, .message = "timed out" };
                }
                answer(r, &err);
        }
        return 0;
}
