/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-netdev-genl.c — napi-set built and napi-get parsed attribute by attribute, kernel thread names; a veth's NAPIs in a netns */

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "sriovd/kernel/ethtool.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/napi.h"
#include "sriovd/kernel/netdev-genl.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "test-mountns.h"
#include "test.h"

#define FAMILY 29       /* any id will do for messages that are never sent */
#define BIT(t) (1u << (t))

/* The attribute numbers of Documentation/netlink/specs/netdev.yaml, written again here so that a
 * wrong number in the module does not pass by agreeing with itself. */
enum {
        CMD_NAPI_GET = 11,
        CMD_NAPI_SET = 14,
        A_IFINDEX = 1,
        A_ID,
        A_IRQ,
        A_PID,
        A_DEFER_HARD_IRQS,
        A_GRO_FLUSH_TIMEOUT,
        A_IRQ_SUSPEND_TIMEOUT,
        A_THREADED,
};

/* --- 1. Kernel thread names --- */

TEST(kthread_names) {
        const struct {
                const char *comm;
                KthreadKind kind;
                unsigned num;
                const char *netdev;
        } good[] = {
                { "napi/eth0-8193", KTHREAD_NAPI, 8193, "eth0" },
                { "napi/my-dev-12", KTHREAD_NAPI, 12, "my-dev" },
                { "napi/enp1s0f0np0-8200", KTHREAD_NAPI, 8200, "enp1s0f0np0" },
                { "ksoftirqd/3", KTHREAD_KSOFTIRQD, 3, "" },
                { "ktimers/0", KTHREAD_KTIMERS, 0, "" },
                { "rcuc/15", KTHREAD_RCUC, 15, "" },
        };
        const char *const bad[] = {
                "napi/eth0-", "napi/-5", "napi/eth0", "napi/eth0-0", "napi/eth0-12x", "napi/eth0-99999999999",
                "ksoftirqd/", "ksoftirqd/3x", "ksoftirqd/-1", "ksoftirqd", "irq/5-x", "kworker/0:1", "rcuc/",
                "ktimers/a", "rcu_preempt", "",
                /* a DEV longer than any netdev's name (IF_NAMESIZE - 1 = 15): 20 characters */
                "napi/abcdefghijklmnopqrst-8193",
                /* 16: one too many */
                "napi/abcdefghijklmnop-8193",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char netdev[IF_NAMESIZE] = "junk";
                KthreadKind kind = _KTHREAD_KIND_MAX;
                unsigned num = 7777;

                fprintf(stderr, "   %s\n", good[i].comm);
                ASSERT_EQ(kthread_name_parse(good[i].comm, &kind, &num, netdev), 0);
                ASSERT_EQ(kind, good[i].kind);
                ASSERT_EQ(num, good[i].num);
                ASSERT_STREQ(netdev, good[i].netdev);
        }
        /* 15 characters is a netdev name still */
        {
                char netdev[IF_NAMESIZE];
                KthreadKind kind;
                unsigned num;

                ASSERT_EQ(kthread_name_parse("napi/abcdefghijklmno-9", &kind, &num, netdev), 0);
                ASSERT_STREQ(netdev, "abcdefghijklmno");
                ASSERT_EQ(num, 9);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char netdev[IF_NAMESIZE];
                KthreadKind kind;
                unsigned num;

                fprintf(stderr, "   not: \"%s\"\n", bad[i]);
                ASSERT_EQ(kthread_name_parse(bad[i], &kind, &num, netdev), -EINVAL);
        }
}

/* --- 2. napi-set requests, parsed back with libnl --- */

TEST(build_napi_set) {
        const struct {
                const char *name;
                unsigned id;
                NapiParams p;
                unsigned present;
        } cases[] = {
                { "defer alone", 8193, { 2, -1, -1 }, BIT(A_DEFER_HARD_IRQS) },
                { "zero is a value", 8194, { 0, 0, -1 }, BIT(A_DEFER_HARD_IRQS) | BIT(A_GRO_FLUSH_TIMEOUT) },
                { "all three, large", UINT32_MAX, { INT32_MAX, 20000, (long) UINT32_MAX + 5 },
                  BIT(A_DEFER_HARD_IRQS) | BIT(A_GRO_FLUSH_TIMEOUT) | BIT(A_IRQ_SUSPEND_TIMEOUT) },
        };
        const struct {
                const char *name;
                int family;
                unsigned id;
                NapiParams p;
                int expect;
        } bad[] = {
                { "nothing asked", FAMILY, 8193, NAPI_PARAMS_NONE, -ENODATA },
                { "id 0", FAMILY, 0, { 1, -1, -1 }, -EINVAL },
                { "no family", 0, 8193, { 1, -1, -1 }, -EINVAL },
                { "below -1", FAMILY, 8193, { -1, -2, -1 }, -EINVAL },
                { "defer beyond S32_MAX", FAMILY, 8193, { (long) INT32_MAX + 1, -1, -1 }, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
                const long want[] = { [A_DEFER_HARD_IRQS] = cases[i].p.defer_hard_irqs,
                                      [A_GRO_FLUSH_TIMEOUT] = cases[i].p.gro_flush_timeout,
                                      [A_IRQ_SUSPEND_TIMEOUT] = cases[i].p.irq_suspend_timeout };
                struct nlmsghdr *h;
                struct genlmsghdr *g;
                struct nlattr *a;
                unsigned seen = 0;
                int rem;

                fprintf(stderr, "   %s\n", cases[i].name);
                ASSERT_EQ(netdev_nl_build_napi_set(FAMILY, cases[i].id, &cases[i].p, &msg), 0);
                h = nlmsg_hdr(msg);
                ASSERT_EQ(h->nlmsg_type, FAMILY);
                ASSERT(h->nlmsg_flags & NLM_F_REQUEST);
                ASSERT(!(h->nlmsg_flags & NLM_F_DUMP));
                ASSERT(genlmsg_valid_hdr(h, 0));
                g = nlmsg_data(h);
                ASSERT_EQ(g->cmd, CMD_NAPI_SET);
                ASSERT_EQ(g->version, 1);
                nlmsg_for_each_attr(a, h, GENL_HDRLEN, rem) {
                        int t = nla_type(a);

                        ASSERT(t >= A_IFINDEX && t <= A_THREADED);
                        ASSERT(!(seen & BIT(t)));
                        seen |= BIT(t);
                        if (t == A_ID) {
                                ASSERT_EQ(nla_len(a), 4);
                                ASSERT_EQ(nla_get_u32(a), cases[i].id);
                        } else if (t == A_DEFER_HARD_IRQS) {
                                ASSERT_EQ(nla_len(a), 4);
                                ASSERT_EQ(nla_get_u32(a), want[t]);
                        } else {
                                /* NLA_UINT: the kernel takes 4 or 8 bytes */
                                ASSERT(t == A_GRO_FLUSH_TIMEOUT || t == A_IRQ_SUSPEND_TIMEOUT);
                                ASSERT(nla_len(a) == 4 || nla_len(a) == 8);
                                ASSERT_EQ(nla_len(a) == 8 ? (long) nla_get_u64(a) : (long) nla_get_u32(a), want[t]);
                        }
                }
                ASSERT_EQ(rem, 0);
                /* by id only: never the ifindex, never anything not asked for */
                ASSERT_EQ(seen, BIT(A_ID) | cases[i].present);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct nl_msg *msg = NULL;

                fprintf(stderr, "   %s\n", bad[i].name);
                ASSERT_EQ(netdev_nl_build_napi_set(bad[i].family, bad[i].id, &bad[i].p, &msg), bad[i].expect);
                ASSERT(msg == NULL);
        }
}

/* --- 3. napi-get replies as the kernel builds them --- */

static struct nl_msg *reply_new(uint8_t cmd) {
        struct nl_msg *msg = nlmsg_alloc();

        ASSERT(msg);
        ASSERT(genlmsg_put(msg, 0, 1, FAMILY, 0, 0, cmd, 1));
        return msg;
}

TEST(parse_napi) {
        NapiInfo n;

        {
                /* 6.13+: everything, the timeouts as the kernel's nla_put_uint() sends them */
                _cleanup_(nlmsg_freep) struct nl_msg *m = reply_new(CMD_NAPI_GET);
                ASSERT_EQ(nla_put_u32(m, A_ID, 8195), 0);
                ASSERT_EQ(nla_put_u32(m, A_IFINDEX, 4), 0);
                ASSERT_EQ(nla_put_u32(m, A_IRQ, 131), 0);
                ASSERT_EQ(nla_put_u32(m, A_PID, 4242), 0);
                ASSERT_EQ(nla_put_u32(m, A_DEFER_HARD_IRQS, 2), 0);
                ASSERT_EQ(nla_put_u32(m, A_GRO_FLUSH_TIMEOUT, 20000), 0);            /* fits: 4 bytes */
                ASSERT_EQ(nla_put_u64(m, A_IRQ_SUSPEND_TIMEOUT, 5000000000ULL), 0);  /* does not: 8 */
                ASSERT_EQ(nla_put_u32(m, A_THREADED, 1), 0);                         /* 6.18, not ours */
                ASSERT_EQ(netdev_nl_napi_parse(nlmsg_hdr(m), &n), 0);
                ASSERT_EQ(n.id, 8195);
                ASSERT_EQ(n.ifindex, 4);
                ASSERT_EQ(n.irq, 131);
                ASSERT_EQ(n.pid, 4242);
                ASSERT_EQ(n.params.defer_hard_irqs, 2);
                ASSERT_EQ(n.params.gro_flush_timeout, 20000);
                ASSERT_EQ(n.params.irq_suspend_timeout, 5000000000L);
        }
        {
                /* 6.8: id, ifindex, no IRQ (veth), not threaded, no settings */
                _cleanup_(nlmsg_freep) struct nl_msg *m = reply_new(CMD_NAPI_GET);
                ASSERT_EQ(nla_put_u32(m, A_IFINDEX, 4), 0);
                ASSERT_EQ(nla_put_u32(m, A_ID, 8193), 0);
                ASSERT_EQ(netdev_nl_napi_parse(nlmsg_hdr(m), &n), 0);
                ASSERT_EQ(n.id, 8193);
                ASSERT_EQ(n.ifindex, 4);
                ASSERT_EQ(n.irq, 0);
                ASSERT_EQ(n.pid, 0);
                ASSERT_EQ(n.params.defer_hard_irqs, -1);
                ASSERT_EQ(n.params.gro_flush_timeout, -1);
                ASSERT_EQ(n.params.irq_suspend_timeout, -1);
        }

        /* malformed: each -EBADMSG */
        const struct {
                const char *name;
                uint8_t cmd;
                int attr;           /* put with len bytes of value after a valid id (0: no id either) */
                int len;
                bool id;
        } bad[] = {
                { "no id", CMD_NAPI_GET, A_IFINDEX, 4, false },
                { "id 0", CMD_NAPI_GET, A_ID, 4, false },
                { "another command", CMD_NAPI_SET, 0, 0, true },
                { "a u32 of 2 bytes", CMD_NAPI_GET, A_IRQ, 2, true },
                { "a u32 of 8 bytes", CMD_NAPI_GET, A_PID, 8, true },
                { "id twice", CMD_NAPI_GET, A_ID, 4, true },
                { "a uint of 6 bytes", CMD_NAPI_GET, A_GRO_FLUSH_TIMEOUT, 6, true },
                { "a uint of 2 bytes", CMD_NAPI_GET, A_IRQ_SUSPEND_TIMEOUT, 2, true },
                { "a uint beyond long", CMD_NAPI_GET, A_GRO_FLUSH_TIMEOUT, -8, true },
                { "ifindex 0", CMD_NAPI_GET, A_IFINDEX, -4, true },
                { "defer beyond S32_MAX", CMD_NAPI_GET, A_DEFER_HARD_IRQS, -4, true },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *m = reply_new(bad[i].cmd);
                uint8_t zero[8] = {};

                fprintf(stderr, "   %s\n", bad[i].name);
                if (bad[i].id)
                        ASSERT_EQ(nla_put_u32(m, A_ID, 8193), 0);
                if (bad[i].len > 0)
                        ASSERT_EQ(nla_put(m, bad[i].attr, bad[i].len, zero), 0);
                else if (bad[i].len == -8)
                        ASSERT_EQ(nla_put_u64(m, bad[i].attr, UINT64_MAX), 0);
                else if (bad[i].len == -4)
                        ASSERT_EQ(nla_put_u32(m, bad[i].attr, bad[i].attr == A_IFINDEX ? 0 : UINT32_MAX), 0);
                ASSERT_EQ(netdev_nl_napi_parse(nlmsg_hdr(m), &n), -EBADMSG);
        }
        {
                /* a truncated message: the header alone */
                struct {
                        struct nlmsghdr h;
                        uint8_t g[2];
                } tiny = { { .nlmsg_len = sizeof(struct nlmsghdr) + 2, .nlmsg_type = FAMILY }, { CMD_NAPI_GET, 1 } };
                ASSERT_EQ(netdev_nl_napi_parse(&tiny.h, &n), -EBADMSG);
        }
}

/* --- 4. A veth's NAPIs, in a network and mount namespace of the test's own --- */

static struct nl_sock *rtnl;
static RootFs *root;
static int veth;                /* ifindex of nv0 */

static int link_add(void) {
        struct rtnl_link *l, *peer, *got = NULL;
        int ifindex;

        l = rtnl_link_veth_alloc();
        ASSERT(l);
        peer = rtnl_link_veth_get_peer(l);
        /* Short names: napi/nv0-ID fits in 15 characters on any kernel. */
        rtnl_link_set_name(l, "nv0");
        rtnl_link_set_name(peer, "nv1");
        rtnl_link_set_num_tx_queues(l, 4);
        rtnl_link_set_num_rx_queues(l, 4);
        rtnl_link_set_num_tx_queues(peer, 4);
        rtnl_link_set_num_rx_queues(peer, 4);
        ASSERT_EQ(rtnl_link_add(rtnl, l, NLM_F_CREATE | NLM_F_EXCL), 0);
        rtnl_link_put(peer);
        rtnl_link_veth_release(l);
        ASSERT_EQ(rtnl_link_get_kernel(rtnl, 0, "nv0", &got), 0);
        ifindex = rtnl_link_get_ifindex(got);
        rtnl_link_put(got);
        ASSERT(ifindex > 0);
        return ifindex;
}

static void link_up(const char *name) {
        struct rtnl_link *cur = NULL, *change;

        ASSERT_EQ(rtnl_link_get_kernel(rtnl, 0, name, &cur), 0);
        change = rtnl_link_alloc();
        ASSERT(change);
        rtnl_link_set_flags(change, IFF_UP);
        ASSERT_EQ(rtnl_link_change(rtnl, cur, change, 0), 0);
        rtnl_link_put(change);
        rtnl_link_put(cur);
}

/* PID 2 is kthreadd in the initial PID namespace, and only there. */
static bool kernel_threads_visible(void) {
        char comm[32] = "";
        FILE *f = fopen("/proc/2/comm", "re");

        if (!f)
                return false;
        if (!fgets(comm, sizeof(comm), f))
                comm[0] = '\0';
        fclose(f);
        return streq(comm, "kthreadd\n");
}

static void netns_setup(void) {
        _cleanup_(netdev_nl_freep) NetdevNl *n = NULL;
        int r;

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root for a network namespace with a veth pair\n");
                exit(EXIT_TEST_SKIP);
        }
        /* The NAPI threads are kernel threads, and those have a PID in the initial PID namespace
         * only: in a container, napi-get reports pid 0 and /proc lists none of them. */
        if (!kernel_threads_visible()) {
                fprintf(stderr, "SKIP: kernel threads have no PID here (a PID namespace, e.g. a container)\n");
                exit(EXIT_TEST_SKIP);
        }
        /* A mount namespace too: /sys/class/net shows the netns of whoever mounted sysfs. */
        if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
                fprintf(stderr, "SKIP: unshare(CLONE_NEWNET|CLONE_NEWNS): %m\n");
                exit(EXIT_TEST_SKIP);
        }
        /* Without this, the sysfs below would appear on the host's /sys too. */
        test_mount_make_private(exit);
        if (mount("sysfs", "/sys", "sysfs", 0, NULL) < 0) {
                fprintf(stderr, "SKIP: cannot mount the network namespace's sysfs on /sys: %m\n");
                exit(EXIT_TEST_SKIP);
        }
        ASSERT_EQ(rootfs_new("/", NULL, &root), 0);
        ASSERT(rootfs_sched_live(root));

        r = netdev_nl_open(&n);
        if (r == -EOPNOTSUPP) {
                fprintf(stderr, "SKIP: the kernel has no netdev genl family (before Linux 6.5)\n");
                exit(EXIT_TEST_SKIP);
        }
        ASSERT_EQ(r, 0);

        rtnl = nl_socket_alloc();
        ASSERT(rtnl);
        ASSERT_EQ(nl_connect(rtnl, NETLINK_ROUTE), 0);
        veth = link_add();
}

/* veth has NAPIs only with GRO (or XDP) on and the link up. */
static void gro_on(const char *name) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        int want[_OFFLOAD_MAX] = { -1, -1, -1, -1 };
        NlError err;

        want[OFFLOAD_GRO] = 1;
        ASSERT_EQ(ethtool_nl_open(&e), 0);
        ASSERT(ethtool_features_set(e, (int) if_nametoindex(name), want, &err) >= 0);
}

static void napis_print(const char *when, const NapiInfo *n, size_t k) {
        for (size_t i = 0; i < k; i++)
                fprintf(stderr, "   %s: napi %u ifindex %d irq %u pid %d defer %ld gro-flush %ld irq-suspend %ld\n", when,
                        n[i].id, n[i].ifindex, n[i].irq, (int) n[i].pid, n[i].params.defer_hard_irqs,
                        n[i].params.gro_flush_timeout, n[i].params.irq_suspend_timeout);
}

TEST(kernel_napi) {
        _cleanup_(netdev_nl_freep) NetdevNl *n = NULL;
        _cleanup_free_ NapiInfo *napis = NULL, *after = NULL;
        _cleanup_free_ IrqThread *irq_threads = NULL;
        _cleanup_free_ Kthread *kthreads = NULL;
        size_t n_napis = 0, n_after = 0, n_irq_threads, n_kthreads, found = 0;
        const Kthread *mine = NULL;
        NapiParams want = NAPI_PARAMS_NONE;
        bool irqbalance;
        int threaded, r;
        NlError err;

        ASSERT_EQ(netdev_nl_open(&n), 0);
        fprintf(stderr, "   napi-set: %s\n", netdev_nl_has_napi_set(n) ? "yes" : "no");

        /* No NAPIs yet (down, GRO off): an empty list, and threaded refused by the kernel. */
        r = netdev_nl_napi_list(n, veth, &napis, &n_napis, &err);
        if (r == -EOPNOTSUPP) {
                fprintf(stderr, "SKIP: the kernel has no napi-get (before Linux 6.8)\n");
                exit(EXIT_TEST_SKIP);
        }
        ASSERT_EQ(r, 0);
        ASSERT_EQ(n_napis, 0);
        ASSERT(napis == NULL);

        gro_on("nv0");
        gro_on("nv1");
        link_up("nv1");
        link_up("nv0");
        ASSERT_EQ(netdev_nl_napi_list(n, veth, &napis, &n_napis, &err), 0);
        napis_print("up, GRO on", napis, n_napis);
        /* one NAPI per rx queue */
        ASSERT_EQ(n_napis, 4);
        for (size_t i = 0; i < n_napis; i++) {
                ASSERT(napis[i].id > 0);
                ASSERT(i == 0 || napis[i].id > napis[i - 1].id);
                ASSERT_EQ(napis[i].ifindex, veth);
                ASSERT_EQ(napis[i].pid, 0);
        }

        /* Threaded NAPI through sysfs: each NAPI gets its napi/nv0-ID thread. */
        ASSERT_EQ(netdev_threaded_read(root, "nv0", &threaded), 0);
        ASSERT_EQ(threaded, 0);
        ASSERT_EQ(netdev_threaded_set(root, "nv0", true), 1);
        ASSERT_EQ(netdev_threaded_set(root, "nv0", true), 0);
        ASSERT_EQ(netdev_threaded_read(root, "nv0", &threaded), 0);
        ASSERT_EQ(threaded, 1);
        ASSERT_EQ(netdev_nl_napi_list(n, veth, &after, &n_after, &err), 0);
        napis_print("threaded", after, n_after);
        ASSERT_EQ(n_after, n_napis);
        for (size_t i = 0; i < n_after; i++) {
                ASSERT_EQ(after[i].id, napis[i].id);
                ASSERT(after[i].pid > 0);
        }

        /* The same threads in the /proc walk, by name, paired with napi-get by id and pid. */
        ASSERT_EQ(irq_threads_scan(root, &irq_threads, &n_irq_threads, &kthreads, &n_kthreads, &irqbalance), 0);
        for (size_t i = 0; i < n_kthreads; i++) {
                const Kthread *k = &kthreads[i];

                if (k->kind != KTHREAD_NAPI || !streq(k->netdev, "nv0"))
                        continue;
                fprintf(stderr, "   thread %s pid %d num %u policy %d prio %d\n", k->name, (int) k->pid, k->num,
                        k->policy, k->priority);
                found++;
                for (size_t j = 0; j < n_after; j++)
                        if (after[j].id == k->num) {
                                ASSERT_EQ(after[j].pid, k->pid);
                                mine = k;
                        }
                ASSERT(mine && mine->num == k->num);
        }
        ASSERT_EQ(found, n_after);
        /* and the per-CPU threads of this host, which every kernel has */
        ASSERT(inventory_find_kthread(&(Inventory) { .kthreads = kthreads, .n_kthreads = n_kthreads },
                                      KTHREAD_KSOFTIRQD, 0));

        /* One of them to CPU 0 at FIFO 5, read back from the scheduler; a second time changes nothing. */
        {
                CpuSet cpu0 = {}, got = {};
                cpu_set_t set;
                struct sched_param p;
                int policy;

                cpuset_add(&cpu0, 0);
                ASSERT_EQ(sched_kthread_set(root, mine->pid, mine->name, &cpu0, SCHED_FIFO, 5), 1);
                ASSERT_EQ(sched_getaffinity(mine->pid, sizeof(set), &set), 0);
                ASSERT_EQ(CPU_COUNT(&set), 1);
                ASSERT(CPU_ISSET(0, &set));
                policy = sched_getscheduler(mine->pid);
                ASSERT_EQ(policy, SCHED_FIFO);
                ASSERT_EQ(sched_getparam(mine->pid, &p), 0);
                ASSERT_EQ(p.sched_priority, 5);
                ASSERT_EQ(sched_thread_cpus_get(root, mine->pid, &got), 0);
                ASSERT(cpuset_equal(&got, &cpu0));
                ASSERT_EQ(sched_kthread_set(root, mine->pid, mine->name, &cpu0, SCHED_FIFO, 5), 0);
                /* a PID that is not that thread (any more): refused, nothing changed */
                ASSERT_EQ(sched_kthread_set(root, getpid(), mine->name, &cpu0, SCHED_FIFO, 5), -ESRCH);
                ASSERT_EQ(sched_kthread_set(root, mine->pid, "napi/nv0-1", &cpu0, SCHED_FIFO, 5), -ESRCH);
                ASSERT_EQ(sched_getscheduler(getpid()), SCHED_OTHER);
        }

        /* Per-NAPI settings. */
        want = (NapiParams) { .defer_hard_irqs = 2, .gro_flush_timeout = 20000, .irq_suspend_timeout = -1 };
        if (!netdev_nl_has_napi_set(n)) {
                /* before 6.13: unavailable, never a crash */
                ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &want, &err), -EOPNOTSUPP);
                fprintf(stderr, "   (no napi-set on this kernel: the rest is not run)\n");
                return;
        }
        ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &NAPI_PARAMS_NONE, &err), 0);
        r = netdev_nl_napi_set(n, mine->num, &want, &err);
        fprintf(stderr, "   napi-set %u defer 2 gro-flush 20000: %d, extack \"%s\"\n", mine->num, r, err.message);
        ASSERT_EQ(r, 1);
        free(after);
        after = NULL;
        ASSERT_EQ(netdev_nl_napi_list(n, veth, &after, &n_after, &err), 0);
        napis_print("napi-set", after, n_after);
        for (size_t i = 0; i < n_after; i++)
                if (after[i].id == mine->num) {
                        ASSERT_EQ(after[i].params.defer_hard_irqs, 2);
                        ASSERT_EQ(after[i].params.gro_flush_timeout, 20000);
                        ASSERT(after[i].params.irq_suspend_timeout >= 0);
                } else
                        /* only that NAPI */
                        ASSERT_EQ(after[i].params.defer_hard_irqs, 0);
        ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &want, &err), 0);
        /* one field again, the other changed */
        want = (NapiParams) { .defer_hard_irqs = 2, .gro_flush_timeout = 0, .irq_suspend_timeout = -1 };
        ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &want, &err), 1);
        ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &want, &err), 0);

        /* A NAPI that is not there: napi-get answers for this netns's NAPIs only, nv0's and nv1's. */
        r = netdev_nl_napi_set(n, INT32_MAX, &want, &err);
        fprintf(stderr, "   napi-set id %d: %d (%s), extack \"%s\"\n", INT32_MAX, r, strerror(-r), err.message);
        ASSERT_EQ(r, -ENOENT);
        ASSERT_EQ(netdev_nl_napi_set(n, 0, &want, &err), -EINVAL);
        want.defer_hard_irqs = -2;
        ASSERT_EQ(netdev_nl_napi_set(n, mine->num, &want, &err), -EINVAL);

        /* Threaded off: the threads go, napi-get says so. */
        ASSERT_EQ(netdev_threaded_set(root, "nv0", false), 1);
        free(after);
        after = NULL;
        ASSERT_EQ(netdev_nl_napi_list(n, veth, &after, &n_after, &err), 0);
        ASSERT_EQ(n_after, 4);
        for (size_t i = 0; i < n_after; i++)
                ASSERT_EQ(after[i].pid, 0);
}

TEST(kernel_nodev) {
        _cleanup_(netdev_nl_freep) NetdevNl *n = NULL;
        _cleanup_free_ NapiInfo *napis = NULL;
        size_t k = 7;
        NlError err;
        int r;

        ASSERT_EQ(netdev_nl_open(&n), 0);
        r = netdev_nl_napi_list(n, 999999, &napis, &k, &err);
        fprintf(stderr, "   napi-get ifindex 999999: %d, extack \"%s\"\n", r, err.message);
        ASSERT_EQ(r, -ENODEV);
        ASSERT_EQ(err.error, -ENODEV);
        ASSERT_EQ(netdev_nl_napi_list(n, 0, &napis, &k, &err), -ENODEV);
        /* lo has no NAPIs */
        ASSERT_EQ(netdev_nl_napi_list(n, 1, &napis, &k, &err), 0);
        ASSERT_EQ(k, 0);
        ASSERT(!napis);
        ASSERT(!netdev_nl_has_napi_set(NULL));
}

int main(int argc, char **argv) {
        /* "kernel": against the kernel's netdev family, in namespaces made here (77 if they cannot be). */
        if (argc > 1 && strcmp(argv[1], "kernel") == 0) {
                netns_setup();
                RUN(kernel_napi);
                RUN(kernel_nodev);
                nl_socket_free(rtnl);
                rootfs_free(root);
                return 0;
        }
        RUN(kthread_names);
        RUN(build_napi_set);
        RUN(parse_napi);
        return 0;
}
