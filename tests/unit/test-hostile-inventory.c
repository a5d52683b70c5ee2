/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-hostile-inventory.c — observe on trees no kernel writes: what is wrong is left out and said, the rest served */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "test-fixture.h"

#define PF0 "0000:41:00.0"
#define PF1 "0000:c1:00.0"
#define DEV "/sys/bus/pci/devices/"

static const char *fixtures_dir;

typedef struct Scratch {
        char dir[64];
        char root[128];
} Scratch;

static void scratch_new(Scratch *s) {
        /* tmpfs where there is one: thousands of files copied and removed per case are slow on ext4. */
        strcpy(s->dir, access("/dev/shm", W_OK) == 0 ? "/dev/shm/sriovd-hostile-XXXXXX" : "/tmp/sriovd-hostile-XXXXXX");
        ASSERT(mkdtemp(s->dir));
        snprintf(s->root, sizeof(s->root), "%s/root", s->dir);
        sh("cp -a %s/fixture-two-socket %s", fixtures_dir, s->root);
}

static void scratch_done(Scratch *s) {
        sh("rm -rf %s", s->dir);
}

static const char *at(const Scratch *s, const char *rel) {
        static char buf[4][1024];
        static unsigned i;
        char *b = buf[i++ % 4];
        snprintf(b, sizeof(buf[0]), "%s%s", s->root, rel);
        return b;
}

static void put(const Scratch *s, const char *rel, const char *value) {
        const char *path = at(s, rel);
        struct stat st;
        bool had = stat(path, &st) == 0;
        FILE *f;

        /* Fixture files are 0444 like sysfs's: root writes them anyway, a build user needs the w bit
         * for a moment; the mode sriovd sees is the fixture's. */
        if (had)
                ASSERT_EQ(chmod(path, st.st_mode | S_IWUSR), 0);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(value, f);
        ASSERT_EQ(fclose(f), 0);
        if (had)
                ASSERT_EQ(chmod(path, st.st_mode & 07777), 0);
}

static void relink(const Scratch *s, const char *rel, const char *target) {
        (void) unlink(at(s, rel));
        ASSERT_EQ(symlink(target, at(s, rel)), 0);
}

static void fifo(const Scratch *s, const char *rel) {
        ASSERT_EQ(unlink(at(s, rel)), 0);
        ASSERT_EQ(mkfifo(at(s, rel), 0644), 0);
}

/* The inventory and its plan (built-in policy): the plan's notes are where problems are said. */
static void observe(const Scratch *s, Inventory **ret_inv, Plan **ret_plan) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_(config_freep) Config *c = test_config("", NULL);

        ASSERT_EQ(rootfs_new(s->root, NULL, &r), 0);
        ASSERT_EQ(inventory_read(r, NULL, ret_inv), 0);
        ASSERT_EQ(plan_build(*ret_inv, c, NULL, ret_plan), 0);
}

static void assert_note(const Plan *p, const char *target, const char *text) {
        for (size_t i = 0; i < p->n_notes; i++)
                if (streq(p->notes[i].target, target) && strstr(p->notes[i].text, text))
                        return;
        for (size_t i = 0; i < p->n_notes; i++)
                fprintf(stderr, "note: %s: %s\n", p->notes[i].target, p->notes[i].text);
        fprintf(stderr, "no note for %s containing \"%s\"\n", target, text);
        abort();
}

/* No VF address twice, and never a PF's: the allocator refuses the whole pool otherwise. */
static void assert_vfs_unique(const Inventory *inv) {
        for (size_t i = 0; i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++) {
                        const char *a = inv->pfs[i].vfs[j].addr;
                        unsigned seen = 0;

                        ASSERT(!inventory_find_pf(inv, a));
                        for (size_t k = 0; k < inv->n_pfs; k++)
                                for (size_t l = 0; l < inv->pfs[k].n_vfs; l++)
                                        seen += streq(inv->pfs[k].vfs[l].addr, a);
                        ASSERT_EQ(seen, 1);
                }
}

static unsigned open_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        ASSERT(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

TEST(numvfs_beyond_totalvfs) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        Scratch s;

        scratch_new(&s);
        put(&s, DEV PF0 "/sriov_numvfs", "2147483647\n");
        put(&s, DEV PF1 "/sriov_totalvfs", "70000\n");
        observe(&s, &inv, &p);
        /* Every loop over a PF's VFs is bounded by what the kernel allows, not by the file. */
        ASSERT_EQ(inv->n_pfs, 1);
        ASSERT_STREQ(inv->pfs[0].addr, PF0);
        ASSERT_EQ(inv->pfs[0].total_vfs, 16);
        ASSERT_EQ(inv->pfs[0].num_vfs, 16);
        ASSERT_EQ(inv->pfs[0].n_vfs, 8);
        assert_note(p, PF0, "sriov_numvfs 2147483647 is beyond sriov_totalvfs 16: taken as 16");
        assert_note(p, PF1, "sriov_totalvfs 70000 is beyond PCI's 0-65535: PF left out");
        scratch_done(&s);
}

TEST(numa_node_out_of_range) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        Scratch s;

        scratch_new(&s);
        put(&s, DEV PF0 "/numa_node", "4096\n");   /* beyond MAX_NUMNODES */
        put(&s, DEV PF1 "/numa_node", "7\n");      /* a node this host does not have */
        observe(&s, &inv, &p);
        ASSERT_EQ(inv->n_pfs, 2);
        ASSERT_EQ(inv->pfs[0].numa_node, -1);
        ASSERT_EQ(inv->pfs[1].numa_node, -1);
        assert_note(p, PF0, "numa_node 4096 is beyond the kernel's 1024 nodes: taken as unknown");
        assert_note(p, PF1, "numa_node 7 is not a node of this host (2): taken as unknown");
        scratch_done(&s);
}

/* README: every /sys and /proc access stays beneath --root. */
TEST(links_out_of_root_not_followed) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        char secret[128], path[160], rel[256];
        Scratch s;
        FILE *f;

        scratch_new(&s);
        /* Outside the root, with a value an escape would show: node 1 where the tree has none. */
        snprintf(secret, sizeof(secret), "%s/secret", s.dir);
        ASSERT_EQ(mkdir(secret, 0755), 0);
        snprintf(path, sizeof(path), "%s/numa_node", secret);
        f = fopen(path, "we");
        ASSERT(f);
        fputs("1\n", f);
        ASSERT_EQ(fclose(f), 0);
        /* Absolute, and relative with more ".." than the tree is deep: both stay inside. */
        relink(&s, DEV PF0 "/numa_node", path);
        snprintf(rel, sizeof(rel), "../../../../../../../../../../../../../..%s", path);
        relink(&s, "/sys/devices/pci0000:c0/" PF1 "/numa_node", rel);
        observe(&s, &inv, &p);
        ASSERT_EQ(inv->n_pfs, 2);
        ASSERT_EQ(inv->pfs[0].numa_node, -1);
        ASSERT_EQ(inv->pfs[1].numa_node, -1);
        scratch_done(&s);
}

/* libpci 3.9 overflowed a stack buffer on links of 1024 bytes or more (sysfs_deref_link) and aborted. */
TEST(overlong_links) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        char driver[1400] = "../../../bus/pci/drivers/", group[1400] = "../../../kernel/iommu_groups/";
        char name[128] = "../../../bus/pci/drivers/";
        Scratch s;

        scratch_new(&s);
        for (size_t k = strlen(driver); k < sizeof(driver) - 16; k += 2)
                memcpy(driver + k, "./", 3);
        strcat(driver, "mlx5_core");
        for (size_t k = strlen(group); k < sizeof(group) - 16; k += 2)
                memcpy(group + k, "./", 3);
        strcat(group, "11");
        /* Long but meaningful: read as what they name. */
        relink(&s, "/sys/devices/pci0000:40/" PF0 "/driver", driver);
        relink(&s, "/sys/devices/pci0000:c0/0000:c1:00.2/iommu_group", group);
        /* A name no driver has (it would not even fit): that VF is left out. */
        memset(name + strlen(name), 'x', 80);
        relink(&s, "/sys/devices/pci0000:c0/0000:c1:00.3/driver", name);
        observe(&s, &inv, &p);
        ASSERT_EQ(inv->n_pfs, 2);
        ASSERT_STREQ(inv->pfs[0].driver, "mlx5_core");
        ASSERT_EQ(inv->pfs[1].vfs[0].iommu_group, 11);
        ASSERT_EQ(inv->pfs[1].n_vfs, 7);
        ASSERT_EQ(inv->pfs[1].vfs[1].index, 2);
        assert_note(p, "0000:c1:00.3", "driver link names \"xxxxxxxx");
        scratch_done(&s);
}

/* A tree libpci gave up on leaked its open directory each time: 3 fds and ~98 KB a cycle. */
TEST(rejected_tree_no_fd_leak) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        unsigned before, after;
        Scratch s;
        int k = 0;

        scratch_new(&s);
        ASSERT_EQ(mkdir(at(&s, DEV "not-a-function"), 0755), 0);
        ASSERT_EQ(unlink(at(&s, "/sys/devices/pci0000:00/0000:01:00.0/vendor")), 0);
        ASSERT_EQ(rootfs_new(s.root, NULL, &r), 0);

        before = open_fds();
        for (unsigned i = 0; i < 20; i++) {
                Inventory *inv = NULL;

                k = inventory_read(r, NULL, &inv);
                inventory_free(inv);
        }
        after = open_fds();
        ASSERT_EQ(after, before);
        /* And the two NICs are served as ever. */
        ASSERT_EQ(k, 0);
        scratch_done(&s);
}

TEST(vf_claimed_twice_or_pf_as_vf) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        Scratch s;

        scratch_new(&s);
        /* PF1's virtfn0 names PF0's VF 0, whose physfn names PF0. */
        relink(&s, "/sys/devices/pci0000:c0/" PF1 "/virtfn0", "../../pci0000:40/0000:41:00.2");
        /* PF0's virtfn6 names PF0 itself, virtfn7 PF1; virtfn9 repeats virtfn1's VF. */
        relink(&s, "/sys/devices/pci0000:40/" PF0 "/virtfn6", "../" PF0);
        relink(&s, "/sys/devices/pci0000:40/" PF0 "/virtfn7", "../../pci0000:c0/" PF1);
        relink(&s, "/sys/devices/pci0000:40/" PF0 "/virtfn9", "../0000:41:00.3");
        observe(&s, &inv, &p);
        ASSERT_EQ(inv->n_pfs, 2);
        assert_vfs_unique(inv);
        ASSERT_EQ(inv->pfs[0].n_vfs, 6);
        ASSERT_EQ(inv->pfs[1].n_vfs, 7);
        ASSERT_STREQ(inv->pfs[0].vfs[1].addr, "0000:41:00.3");
        ASSERT_EQ(inv->pfs[0].vfs[1].index, 1);
        assert_note(p, PF1, "virtfn0 points at 0000:41:00.2, whose physfn names 0000:41:00.0: kept only under that PF");
        assert_note(p, PF0, "virtfn6 points at the PF itself: left out");
        assert_note(p, PF0, "virtfn7 points at 0000:c1:00.0, which has no physfn link");
        assert_note(p, PF0, "virtfn1 and virtfn9 both name 0000:41:00.3: virtfn9 left out");
        scratch_done(&s);
}

/* A FIFO blocked open() forever: no writer ever comes. */
TEST(fifos_and_directories) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        Scratch s;

        scratch_new(&s);
        fifo(&s, DEV PF0 "/sriov_numvfs");
        fifo(&s, DEV PF1 "/numa_node");
        fifo(&s, "/proc/irq/90/smp_affinity_list");
        ASSERT_EQ(unlink(at(&s, "/proc/irq/91/smp_affinity_list")), 0);
        ASSERT_EQ(mkdir(at(&s, "/proc/irq/91/smp_affinity_list"), 0755), 0);
        alarm(20);   /* the old code hung here; fail instead of waiting for meson's timeout */
        observe(&s, &inv, &p);
        alarm(0);
        ASSERT_EQ(inv->n_pfs, 1);
        ASSERT_STREQ(inv->pfs[0].addr, PF1);
        ASSERT_EQ(inv->pfs[0].numa_node, -1);
        ASSERT(!inventory_find_irq(inv, 90));
        ASSERT(!inventory_find_irq(inv, 91));
        ASSERT(inventory_find_irq(inv, 92));
        assert_note(p, PF0, "sriov_numvfs unreadable (Bad file descriptor): PF left out");
        assert_note(p, PF1, "numa_node unreadable (Bad file descriptor): taken as unknown");
        assert_note(p, "", "IRQ 90: smp_affinity_list unreadable (Bad file descriptor): left alone");
        assert_note(p, "", "IRQ 91: smp_affinity_list unreadable (Is a directory): left alone");
        scratch_done(&s);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(numvfs_beyond_totalvfs);
        RUN(numa_node_out_of_range);
        RUN(links_out_of_root_not_followed);
        RUN(overlong_links);
        RUN(rejected_tree_no_fd_leak);
        RUN(vf_claimed_twice_or_pf_as_vf);
        RUN(fifos_and_directories);
        return 0;
}
