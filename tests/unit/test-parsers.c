/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-parsers.c — /proc/PID/stat, irq thread names, PCI addresses, and the rooted path helper */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "base/runtime.h"
#include "test.h"

/* A real irq thread's stat line from a 6.1 PREEMPT_RT kernel (FIFO 50). */
static const char irq_thread_stat[] =
        "1021 (irq/62-mlx5_co) S 2 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 -51 0 1 0 412 0 0 "
        "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 5 50 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(proc_stat) {
        ProcStat st;
        ASSERT_EQ(proc_stat_parse(irq_thread_stat, &st), 0);
        ASSERT_EQ(st.pid, 1021);
        ASSERT_STREQ(st.comm, "irq/62-mlx5_co");
        ASSERT(st.flags & PF_KTHREAD);
        ASSERT_EQ(st.rt_priority, 50);
        ASSERT_EQ(st.policy, 1);

        /* Names with spaces and parentheses end at the last ')'. */
        ASSERT_EQ(proc_stat_parse("77 (a) b (c)) R 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 "
                                  "0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", &st), 0);
        ASSERT_STREQ(st.comm, "a) b (c)");
        ASSERT(!(st.flags & PF_KTHREAD));
        ASSERT_EQ(st.policy, 0);

        ASSERT_EQ(proc_stat_parse("", &st), -EINVAL);
        ASSERT_EQ(proc_stat_parse("12 (x", &st), -EINVAL);
        ASSERT_EQ(proc_stat_parse("12 (x) S 1 2", &st), -EINVAL);   /* truncated */
        ASSERT_EQ(proc_stat_parse("-1 (x) S 1 1 1 0 -1 4194304", &st), -EINVAL);
        ASSERT_EQ(proc_stat_parse("1 (x) S 1 1 1 0 -1 zz", &st), -EINVAL);
}

TEST(irq_thread_name) {
        ASSERT_EQ(irq_thread_name_parse("irq/62-mlx5_co"), 62);
        ASSERT_EQ(irq_thread_name_parse("irq/24-ACPI:Ged"), 24);
        ASSERT_EQ(irq_thread_name_parse("irq/12345678-x"), 12345678);
        ASSERT_EQ(irq_thread_name_parse("irq/1234567890"), 1234567890);  /* cut at 15 chars */
        ASSERT_EQ(irq_thread_name_parse("irq/"), -EINVAL);
        ASSERT_EQ(irq_thread_name_parse("irq/x-1"), -EINVAL);
        ASSERT_EQ(irq_thread_name_parse("irq/12x"), -EINVAL);
        ASSERT_EQ(irq_thread_name_parse("ksoftirqd/0"), -EINVAL);
        ASSERT_EQ(irq_thread_name_parse("irq/99999999999"), -EINVAL);
}

TEST(pci_addr) {
        ASSERT(pci_addr_valid("0000:41:00.0"));
        ASSERT(pci_addr_valid("0000:c1:1f.7"));
        ASSERT(!pci_addr_valid("0000:C1:00.0"));
        ASSERT(!pci_addr_valid("0000:41:20.0"));
        ASSERT(!pci_addr_valid("0000:41:00.8"));
        ASSERT(!pci_addr_valid("41:00.0"));
        ASSERT(!pci_addr_valid("0000:41:00.0x"));
        ASSERT(!pci_addr_valid("../../../etc"));
        ASSERT(!pci_addr_valid(""));
        ASSERT(!pci_addr_valid(NULL));
}

TEST(rootfs_confined) {
        char tmpl[] = "/tmp/sriovd-rootfs-XXXXXX", path[512];
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ char *s = NULL;
        struct stat st;
        long v;

        ASSERT(mkdtemp(tmpl));
        snprintf(path, sizeof(path), "mkdir -p %s/sys/a %s/proc && echo 0x2a > %s/sys/a/val && "
                 "ln -s /sys/a %s/sys/abs && ln -s ../../../../../../etc %s/sys/up", tmpl, tmpl, tmpl, tmpl, tmpl);
        ASSERT_EQ(system(path), 0);
        ASSERT_EQ(rootfs_new(tmpl, NULL, &r), 0);

        ASSERT_EQ(rootfs_read_long(r, &v, "/sys/a/val"), 0);
        ASSERT_EQ(v, 42);
        /* An absolute symlink resolves inside the root, not on the host. */
        ASSERT_EQ(rootfs_read_long(r, &v, "/sys/abs/val"), 0);
        ASSERT_EQ(v, 42);
        /* ".." in a link target stops at the root: the host's /etc/passwd is out of reach. */
        ASSERT(rootfs_read(r, &s, "/sys/up/passwd") < 0);
        /* Paths outside /sys and /proc, and ".." components, are refused before any syscall. */
        ASSERT_EQ(rootfs_read(r, &s, "/etc/passwd"), -EINVAL);
        ASSERT_EQ(rootfs_read(r, &s, "/sys/../etc/passwd"), -EINVAL);
        ASSERT_EQ(rootfs_read(r, &s, "/sys/a/%s", ".."), -EINVAL);

        /* Writes truncate: a shorter value leaves no old bytes behind. */
        ASSERT_EQ(rootfs_write(r, "7", "/sys/a/val"), 0);
        ASSERT_EQ(rootfs_read(r, &s, "/sys/a/val"), 0);
        ASSERT_STREQ(s, "7");
        ASSERT_EQ(rootfs_exists(r, "/sys/a/val"), 1);
        ASSERT_EQ(rootfs_exists(r, "/sys/a/none"), 0);
        ASSERT_EQ(rootfs_stat(r, &st, "/sys/a"), 0);
        ASSERT(S_ISDIR(st.st_mode));

        ASSERT(path_component_valid("enp65s0f0np0"));
        ASSERT(!path_component_valid(".."));
        ASSERT(!path_component_valid("a/b"));
        ASSERT(!path_component_valid(""));

        snprintf(path, sizeof(path), "rm -rf %s", tmpl);
        ASSERT_EQ(system(path), 0);
}

TEST(saved_sched) {
        char long_name[KTHREAD_NAME_MAX + 32];
        static const char *const bad[] = { "1 44 1\n", "0 44 0 0\n", "12 44 9 0\n", "12 44 1 100\n",
                                           "12 44 1 70", "12 44 1 70 x y\n", "-3 44 0 0\n",
                                           /* a name: printable, no spaces, not empty */
                                           "12 0 1 70 \n", "12 0 1 70  ksoftirqd/3\n", "12 0 1 70 ksoft\tirqd/3\n",
                                           "12 0 1 70 ksoftirqd/3 \n", "12 0 1 70 k\xc3\xa9\n",
                                           "12 0 1 70 napi/eth0-8193", "12 0 1 70 a\x7f\n" };
        SavedSched *s = NULL;
        char *text = NULL;
        size_t n = 0, size = 0;
        FILE *f;

        ASSERT_EQ(saved_sched_parse("1005 45 0 0\n1004 44 1 50\n", &s, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(s[0].pid, 1004);   /* sorted by PID */
        ASSERT_EQ(s[0].irq, 44);
        ASSERT_EQ(s[0].policy, SCHED_FIFO);
        ASSERT_EQ(s[0].priority, 50);
        /* Written and read back, the same. */
        f = open_memstream(&text, &size);
        ASSERT(f);
        saved_sched_format(f, s, n);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(text, "1004 44 1 50\n1005 45 0 0\n");
        free(text);
        free(s);
        ASSERT_EQ(saved_sched_parse("", &s, &n), 0);
        ASSERT_EQ(n, 0);
        free(s);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_EQ(saved_sched_parse(bad[i], &s, &n), -EBADMSG);

        /* The NAPI and per-CPU kernel threads' lines carry the name, beside the old 4-field lines. */
        ASSERT_EQ(saved_sched_parse("1005 45 0 0\n300 0 0 0 ksoftirqd/3\n301 0 1 4 napi/enp65s0f0np0-8193\n",
                                    &s, &n), 0);
        ASSERT_EQ(n, 3);
        ASSERT_EQ(s[0].pid, 300);
        ASSERT_EQ(s[0].irq, 0);
        ASSERT_STREQ(s[0].name, "ksoftirqd/3");
        ASSERT_EQ(s[1].policy, SCHED_FIFO);
        ASSERT_EQ(s[1].priority, 4);
        ASSERT_STREQ(s[1].name, "napi/enp65s0f0np0-8193");
        ASSERT_STREQ(s[2].name, "");
        f = open_memstream(&text, &size);
        ASSERT(f);
        saved_sched_format(f, s, n);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(text, "300 0 0 0 ksoftirqd/3\n301 0 1 4 napi/enp65s0f0np0-8193\n1005 45 0 0\n");
        free(s);
        ASSERT_EQ(saved_sched_parse(text, &s, &n), 0);   /* and read back */
        ASSERT_EQ(n, 3);
        ASSERT_STREQ(s[1].name, "napi/enp65s0f0np0-8193");
        free(text);
        free(s);

        /* The longest name fits; one more byte does not. */
        memset(long_name, 0, sizeof(long_name));
        strcpy(long_name, "7 0 1 2 ");
        memset(long_name + strlen(long_name), 'n', KTHREAD_NAME_MAX - 1);
        strcat(long_name, "\n");
        ASSERT_EQ(saved_sched_parse(long_name, &s, &n), 0);
        ASSERT_EQ(strlen(s[0].name), KTHREAD_NAME_MAX - 1);
        free(s);
        long_name[strlen(long_name) - 1] = 'n';
        strcat(long_name, "\n");
        ASSERT_EQ(saved_sched_parse(long_name, &s, &n), -EBADMSG);
}

int main(void) {
        RUN(proc_stat);
        RUN(irq_thread_name);
        RUN(pci_addr);
        RUN(rootfs_confined);
        RUN(saved_sched);
        return 0;
}
