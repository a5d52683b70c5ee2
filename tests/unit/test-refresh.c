/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-refresh.c — a drift check's read: a copy of the inventory refreshed, and when it must not be */

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/refresh.h"
#include "sriovd/kernel/sriov.h"
#include "test-fixture.h"

static const char *fixtures_dir;
static char tree[] = "/tmp/sriovd-refresh-XXXXXX";

static void put(const char *rel, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tree, rel);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

static char *slurp(const char *path) {
        char *buf = malloc(4096);
        FILE *f = fopen(path, "re");
        size_t n;

        ASSERT(buf && f);
        n = fread(buf, 1, 4095, f);
        buf[n] = 0;
        fclose(f);
        return buf;
}

/* Makes thread tid's stat name another thread, as when its PID was reused. Returns the stat as it was. */
static char *thread_reused(pid_t tid) {
        char path[512], other[1024];
        char *stat;

        snprintf(path, sizeof(path), "%s/proc/%d/stat", tree, (int) tid);
        stat = slurp(path);
        char *open = strchr(stat, '('), *close = strrchr(stat, ')');
        ASSERT(open && close);
        snprintf(other, sizeof(other), "%.*s(kworker/0:1%s", (int) (open - stat), stat, close);
        snprintf(path, sizeof(path), "proc/%d/stat", (int) tid);
        put(path, other);
        return stat;
}

static Inventory *read_tree(RootFs *r) {
        Inventory *inv = NULL;

        ASSERT_EQ(inventory_read(r, NULL, &inv), 0);
        return inv;
}

static Inventory *copy(const Inventory *inv) {
        Inventory *c = NULL;

        ASSERT_EQ(inventory_dup(inv, &c), 0);
        return c;
}

TEST(copy_is_whole_and_its_own) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL, *c = NULL;

        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        inv = read_tree(r);
        c = copy(inv);
        ASSERT_EQ(c->n_pfs, inv->n_pfs);
        ASSERT_EQ(c->n_irqs, inv->n_irqs);
        ASSERT_EQ(c->n_other_irqs, inv->n_other_irqs);
        ASSERT_EQ(c->n_kthreads, inv->n_kthreads);
        ASSERT_EQ(c->topo.n_nodes, inv->topo.n_nodes);
        for (size_t i = 0; i < inv->n_pfs; i++) {
                ASSERT_STREQ(c->pfs[i].addr, inv->pfs[i].addr);
                ASSERT_EQ(c->pfs[i].n_vfs, inv->pfs[i].n_vfs);
                ASSERT(c->pfs[i].vfs != inv->pfs[i].vfs);   /* its own memory: freed apart */
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++) {
                        ASSERT_EQ(c->pfs[i].vfs[j].n_irqs, inv->pfs[i].vfs[j].n_irqs);
                        ASSERT(inv->pfs[i].vfs[j].n_irqs == 0 || c->pfs[i].vfs[j].irqs != inv->pfs[i].vfs[j].irqs);
                }
                ASSERT(!c->pfs[i].vf_links_known);   /* the daemon reads those again */
        }
        ASSERT_EQ(memcmp(c->irqs, inv->irqs, inv->n_irqs * sizeof(Irq)), 0);
        /* Nothing changed: the refresh agrees with a full read. */
        ASSERT_EQ(inventory_refresh(r, NULL, c), 0);
        ASSERT_EQ(memcmp(c->irqs, inv->irqs, inv->n_irqs * sizeof(Irq)), 0);
}

TEST(refresh_sees_what_drifts) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL, *c = NULL, *full = NULL;
        char buf[CPUSET_LIST_MAX];
        const Irq *q;

        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        inv = read_tree(r);
        c = copy(inv);
        /* An affinity moved behind sriovd's back, and its effective one with it. */
        put("proc/irq/60/smp_affinity_list", "2-7\n");
        put("proc/irq/60/effective_affinity_list", "3\n");
        ASSERT_EQ(inventory_refresh(r, NULL, c), 0);
        q = inventory_find_irq(c, 60);
        ASSERT(q);
        ASSERT_STREQ(cpuset_format_list(&q->affinity, buf, sizeof(buf)), "2-7");
        ASSERT_STREQ(cpuset_format_list(&q->effective, buf, sizeof(buf)), "3");
        full = read_tree(r);
        ASSERT_EQ(memcmp(inventory_find_irq(full, 60), q, sizeof(Irq)), 0);
}

/* A drift event's repair reads what the event named, and nothing else. */
TEST(refresh_only_reads_what_events_named) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL, *c = NULL;
        _cleanup_free_ char *aff60 = NULL, *aff44 = NULL, *stat = NULL;
        char buf[CPUSET_LIST_MAX], path[512];
        unsigned named[] = { 60, 9999 };

        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        inv = read_tree(r);
        c = copy(inv);
        snprintf(path, sizeof(path), "%s/proc/irq/60/smp_affinity_list", tree);
        aff60 = slurp(path);
        snprintf(path, sizeof(path), "%s/proc/irq/44/smp_affinity_list", tree);
        aff44 = slurp(path);
        put("proc/irq/60/smp_affinity_list", "2-7\n");
        put("proc/irq/44/smp_affinity_list", "1\n");
        /* IRQ 9999 is no IRQ of the host's: passed over. */
        ASSERT_EQ(inventory_refresh_only(r, NULL, c, named, ELEMENTSOF(named), NULL, 0), 0);
        ASSERT_STREQ(cpuset_format_list(&inventory_find_irq(c, 60)->affinity, buf, sizeof(buf)), "2-7");
        ASSERT_EQ(memcmp(inventory_find_irq(c, 44), inventory_find_irq(inv, 44), sizeof(Irq)), 0);
        put("proc/irq/60/smp_affinity_list", aff60);
        put("proc/irq/44/smp_affinity_list", aff44);

        /* A thread named by its PID is read again: here it is another thread now, so the host is read whole. */
        const Irq *q = inventory_find_irq(inv, 44);
        ASSERT(q && q->thread > 0);
        stat = thread_reused(q->thread);
        snprintf(path, sizeof(path), "proc/%d/stat", (int) q->thread);
        ASSERT_EQ(inventory_refresh_only(r, NULL, c, NULL, 0, NULL, 0), 0);
        ASSERT_EQ(inventory_refresh_only(r, NULL, c, NULL, 0, &q->thread, 1), -ESTALE);

        /* One vector, only what was named: its affinity alone does not look at the thread. */
        Irq one = *q;
        _cleanup_free_ char *eff44 = NULL;
        snprintf(buf, sizeof(buf), "%s/proc/irq/44/effective_affinity_list", tree);
        eff44 = slurp(buf);
        put("proc/irq/44/smp_affinity_list", "1\n");
        put("proc/irq/44/effective_affinity_list", "1\n");
        ASSERT_EQ(irq_refresh_named(r, NULL, &one, true, false), 0);
        ASSERT_STREQ(cpuset_format_list(&one.affinity, buf, sizeof(buf)), "1");
        ASSERT(cpuset_equal(&one.effective, &q->effective));   /* not read */
        ASSERT(!cpuset_equal(&one.effective, &one.affinity));
        put("proc/irq/44/effective_affinity_list", eff44);
        ASSERT_EQ(irq_refresh_named(r, NULL, &one, false, true), -ESTALE);
        put("proc/irq/44/smp_affinity_list", aff44);
        put(path, stat);
        ASSERT_EQ(irq_refresh_named(r, NULL, &one, false, true), 0);
        ASSERT_EQ(inventory_refresh_only(r, NULL, c, NULL, 0, &q->thread, 1), 0);
}

/* A repair keeps what the last cycle read over netlink: copied whole, and its own memory. */
TEST(netlink_state_copied) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL, *c = NULL, *other = NULL;
        Napi napis[2] = { { .id = 8193 }, { .id = 8194 } };
        VfLink links[1] = { { .vf = 0, .vlan = 100, .max_tx_rate = 1000 } };

        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        inv = read_tree(r);
        ASSERT(inv->n_pfs > 0 && inv->pfs[0].n_vfs > 0);
        Pf *pf = &inv->pfs[0];
        pf->vf_links = malloc(sizeof(links));
        ASSERT(pf->vf_links);
        memcpy(pf->vf_links, links, sizeof(links));
        pf->n_vf_links = 1;
        pf->vf_links_known = true;
        pf->tune.known = true;
        pf->tune.coalesce_error = -EOPNOTSUPP;
        pf->vfs[0].tune.known = true;
        pf->vfs[0].tune.napi.napis = malloc(sizeof(napis));
        ASSERT(pf->vfs[0].tune.napi.napis);
        memcpy(pf->vfs[0].tune.napi.napis, napis, sizeof(napis));
        pf->vfs[0].tune.napi.n_napis = 2;

        c = copy(inv);
        ASSERT(!c->pfs[0].vf_links_known && !c->pfs[0].vfs[0].tune.known);
        ASSERT_EQ(inventory_copy_netlink(inv, c), 0);
        ASSERT(c->pfs[0].vf_links_known);
        ASSERT_EQ(c->pfs[0].n_vf_links, 1);
        ASSERT_EQ(c->pfs[0].vf_links[0].vlan, 100);
        ASSERT(c->pfs[0].vf_links != pf->vf_links);
        ASSERT(c->pfs[0].tune.known && c->pfs[0].tune.coalesce_error == -EOPNOTSUPP);
        ASSERT_EQ(c->pfs[0].vfs[0].tune.napi.n_napis, 2);
        ASSERT_EQ(c->pfs[0].vfs[0].tune.napi.napis[1].id, 8194);
        ASSERT(c->pfs[0].vfs[0].tune.napi.napis != pf->vfs[0].tune.napi.napis);
        /* Copied twice, the first copy is freed, not leaked (ASan would say). */
        ASSERT_EQ(inventory_copy_netlink(inv, c), 0);

        /* Not a copy of src: stale. */
        other = copy(inv);
        other->pfs[0].n_vfs--;
        ASSERT_EQ(inventory_copy_netlink(inv, other), -ESTALE);
        other->pfs[0].n_vfs++;
}

TEST(stale_when_the_host_is_not_the_copy) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        char path[512];

        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        inv = read_tree(r);

        /* A VF count written behind its back (a tree sends no uevent). */
        {
                _cleanup_(inventory_freep) Inventory *c = copy(inv);
                put("sys/bus/pci/devices/0000:41:00.0/sriov_numvfs", "3\n");
                ASSERT_EQ(inventory_refresh(r, NULL, c), -ESTALE);
                put("sys/bus/pci/devices/0000:41:00.0/sriov_numvfs", "8\n");
        }
        /* An IRQ thread whose PID is now another thread. */
        {
                _cleanup_(inventory_freep) Inventory *c = copy(inv);
                const Irq *q = inventory_find_irq(inv, 44);
                _cleanup_free_ char *stat = NULL;

                ASSERT(q && q->thread > 0);
                stat = thread_reused(q->thread);
                snprintf(path, sizeof(path), "proc/%d/stat", (int) q->thread);
                ASSERT_EQ(inventory_refresh(r, NULL, c), -ESTALE);
                put(path, stat);
                ASSERT_EQ(inventory_refresh(r, NULL, c), 0);
        }
        /*
         * A handler requested after the full read (igbvf at open, vfio when the guest enables
         * MSI-X): on a kernel that threads IRQs it comes with a new irq/N- thread and no event.
         */
        {
                _cleanup_(inventory_freep) Inventory *before = NULL, *c = NULL;
                const Irq *q = inventory_find_irq(inv, 44);
                char cmd[1024], thread[64];

                ASSERT(q && q->thread > 0 && inv->caps.threaded_irqs);
                snprintf(thread, sizeof(thread), "proc/%d", (int) q->thread);
                snprintf(cmd, sizeof(cmd), "mv %s/%s %s/hidden-thread && mv %s/proc/irq/44/mlx5_async0@pci:0000:41:00.0 %s/hidden-action",
                         tree, thread, tree, tree, tree);
                ASSERT_EQ(system(cmd), 0);
                before = read_tree(r);
                q = inventory_find_irq(before, 44);
                ASSERT(q && q->thread == 0 && !q->action[0]);
                c = copy(before);
                ASSERT_EQ(inventory_refresh(r, NULL, c), 0);   /* still no handler: nothing to see */
                snprintf(cmd, sizeof(cmd), "mv %s/hidden-thread %s/%s && mv %s/hidden-action %s/proc/irq/44/mlx5_async0@pci:0000:41:00.0",
                         tree, tree, thread, tree, tree);
                ASSERT_EQ(system(cmd), 0);
                ASSERT_EQ(inventory_refresh(r, NULL, c), -ESTALE);
                inventory_free(c);
                c = copy(inv);
                ASSERT_EQ(inventory_refresh(r, NULL, c), 0);   /* the full read's copy knows the thread */
        }
        /*
         * A vector in the VF's msi_irqs/ with no /proc/irq entry at the full read: the kernel makes
         * one when the first handler is requested (igbvf at open), and says nothing.
         */
        {
                _cleanup_(inventory_freep) Inventory *before = NULL, *c = NULL;
                char cmd[1024];

                snprintf(cmd, sizeof(cmd), "mv %s/proc/irq/58 %s/hidden-irq", tree, tree);
                ASSERT_EQ(system(cmd), 0);
                before = read_tree(r);
                ASSERT(!inventory_find_irq(before, 58) && inventory_find_irq(before, 57));
                c = copy(before);
                ASSERT_EQ(inventory_refresh(r, NULL, c), 0);   /* still not requested */
                snprintf(cmd, sizeof(cmd), "mv %s/hidden-irq %s/proc/irq/58", tree, tree);
                ASSERT_EQ(system(cmd), 0);
                ASSERT_EQ(inventory_refresh(r, NULL, c), -ESTALE);
                inventory_free(c);
                c = copy(inv);
                ASSERT_EQ(inventory_refresh(r, NULL, c), 0);   /* the full read's copy has it */
        }
        /* An IRQ that is gone. */
        {
                _cleanup_(inventory_freep) Inventory *c = copy(inv);
                snprintf(path, sizeof(path), "rm -rf %s/proc/irq/61", tree);
                ASSERT_EQ(system(path), 0);
                ASSERT_EQ(inventory_refresh(r, NULL, c), -ESTALE);
        }
}

/* fds open in this process now. */
static size_t count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        size_t n = 0;

        ASSERT(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* The fd of this process whose link is target, -1 for none. */
static int fd_of(const char *target) {
        char link[64], path[512];

        for (int fd = 3; fd < 4096; fd++) {
                ssize_t n;

                snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
                n = readlink(link, path, sizeof(path) - 1);
                if (n < 0)
                        continue;
                path[n] = 0;
                if (streq(path, target))
                        return fd;
        }
        return -1;
}

/*
 * The affinity files held open: on this machine's own /proc (read only), every read through a held
 * file is what a read by path gives, at most budget files are held, a held file that fails is
 * dropped and the path read, and a prune closes the files of IRQs the inventory no longer has. A
 * fixture's files are read by path, so one replaced is read as it is now.
 */
TEST(held_affinity_files) {
        _cleanup_(rootfs_freep) RootFs *real = NULL, *r = NULL;
        _cleanup_(irq_files_freep) IrqFiles *f = NULL;
        _cleanup_free_ unsigned *all = NULL;
        unsigned irqs[8];
        size_t n_all, n = 0, fds;
        char a[CPUSET_LIST_MAX], b[CPUSET_LIST_MAX], path[512];

        ASSERT_EQ(rootfs_new("/", NULL, &real), 0);
        ASSERT_EQ(irq_list(real, &all, &n_all), 0);
        for (size_t i = 0; i < n_all && n < ELEMENTSOF(irqs); i++)
                if (rootfs_read_attr(real, a, sizeof(a), "/proc/irq/%u/smp_affinity_list", all[i]) >= 0)
                        irqs[n++] = all[i];
        if (n < 3) {
                fprintf(stderr, "this machine has %zu readable IRQ affinity files, 3 needed: skipping the held files\n", n);
                return;
        }

        fds = count_fds();
        ASSERT_EQ(irq_files_new(n - 1, &f), 0);
        for (unsigned round = 0; round < 3; round++)
                for (size_t i = 0; i < n; i++) {
                        ASSERT(irq_files_read_affinity(f, real, irqs[i], a, sizeof(a)) > 0);
                        ASSERT(rootfs_read_attr(real, b, sizeof(b), "/proc/irq/%u/smp_affinity_list", irqs[i]) > 0);
                        ASSERT_STREQ(a, b);
                }
        /* The budget: all but the last, and that one read by path each time. */
        ASSERT_EQ(irq_files_held(f), n - 1);
        ASSERT_EQ(count_fds(), fds + n - 1);

        /* A held file that fails (here: made a directory's fd) is dropped, and the path read. */
        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irqs[0]);
        int held = fd_of(path), dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT(held >= 0 && dir >= 0);
        ASSERT(dup2(dir, held) == held);
        close(dir);
        ASSERT(irq_files_read_affinity(f, real, irqs[0], a, sizeof(a)) > 0);
        ASSERT(rootfs_read_attr(real, b, sizeof(b), "/proc/irq/%u/smp_affinity_list", irqs[0]) > 0);
        ASSERT_STREQ(a, b);
        ASSERT_EQ(irq_files_held(f), n - 1);   /* opened again, by path, and held */

        /* An inventory with only the first two: the others' files are closed. */
        Irq kept[2] = { { .irq = irqs[0] }, { .irq = irqs[1] } };
        Inventory inv = { .irqs = kept, .n_irqs = 2 };
        irq_files_prune(f, &inv);
        ASSERT_EQ(irq_files_held(f), 2);
        ASSERT_EQ(count_fds(), fds + 2);
        f = irq_files_free(f);
        ASSERT_EQ(count_fds(), fds);

        /* A fixture tree: nothing held, a file replaced (rename) read as it is now. */
        ASSERT_EQ(rootfs_new(tree, NULL, &r), 0);
        ASSERT_EQ(irq_files_new(16, &f), 0);
        put("proc/irq/40/smp_affinity_list.new", "3\n");
        ASSERT(irq_files_read_affinity(f, r, 40, a, sizeof(a)) >= 0);
        snprintf(path, sizeof(path), "%s/proc/irq/40/smp_affinity_list", tree);
        char *orig = slurp(path);
        char from[600];
        snprintf(from, sizeof(from), "%s.new", path);
        ASSERT_EQ(rename(from, path), 0);
        ASSERT_EQ(irq_files_read_affinity(f, r, 40, a, sizeof(a)), 1);
        ASSERT_STREQ(a, "3");
        ASSERT_EQ(irq_files_held(f), 0);
        put("proc/irq/40/smp_affinity_list", orig);
        free(orig);
}

int main(int argc, char **argv) {
        char cmd[1024];

        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        ASSERT(mkdtemp(tree));
        snprintf(cmd, sizeof(cmd), "cp -a %s/fixture-two-socket/. %s/", fixtures_dir, tree);
        ASSERT_EQ(system(cmd), 0);
        RUN(copy_is_whole_and_its_own);
        RUN(refresh_sees_what_drifts);
        RUN(refresh_only_reads_what_events_named);
        RUN(netlink_state_copied);
        RUN(stale_when_the_host_is_not_the_copy);
        RUN(held_affinity_files);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tree);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
