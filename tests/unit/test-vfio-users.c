/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-vfio-users.c — who holds a VF through vfio: the fd link parser, comm cleaning, the /proc walk */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel/vfio-users.h"
#include "test.h"

TEST(fd_target_parse) {
        VfioFd f;

        ASSERT_EQ(vfio_fd_target_parse("/dev/vfio/12", &f), 0);
        ASSERT_EQ(f.kind, VFIO_FD_GROUP);
        ASSERT_EQ(f.number, 12);
        ASSERT_EQ(vfio_fd_target_parse("/dev/vfio/0", &f), 0);
        ASSERT_EQ(f.number, 0);
        ASSERT_EQ(vfio_fd_target_parse("/dev/vfio/devices/vfio3", &f), 0);
        ASSERT_EQ(f.kind, VFIO_FD_DEVICE);
        ASSERT_EQ(f.number, 3);
        ASSERT_EQ(vfio_fd_target_parse("/dev/vfio/2147483647", &f), 0);

        /* The container says nothing of a group; the rest is not vfio, or not a node any more. */
        static const char *const no[] = {
                "/dev/vfio/vfio", "/dev/vfio/", "/dev/vfio/devices/vfio", "/dev/vfio/devices/", "/dev/vfio/012",
                "/dev/vfio/12 (deleted)", "/dev/vfio/-1", "/dev/vfio/+1", "/dev/vfio/2147483648",
                "/dev/vfio/99999999999999999999", "/dev/vfio/devices/vfio03", "/dev/vfio/devices/vfioX",
                "/dev/vfio/devices/iommu", "/dev/iommu", "/dev/null", "socket:[123]", "anon_inode:[eventfd]",
                "/dev/vfio12", "dev/vfio/12", "", "/dev/vfio/1/2",
        };
        for (size_t i = 0; i < ELEMENTSOF(no); i++) {
                f = (VfioFd) { .number = 4242 };
                ASSERT_EQ(vfio_fd_target_parse(no[i], &f), -EINVAL);
                ASSERT_EQ(f.number, 4242);   /* untouched on failure */
        }
}

TEST(comm_clean) {
        char buf[16];

        proc_comm_clean("qemu-system-x86\n", buf, sizeof(buf));
        ASSERT_STREQ(buf, "qemu-system-x86");
        proc_comm_clean("a\x1b[31mb\n", buf, sizeof(buf));
        ASSERT_STREQ(buf, "a?[31mb");
        proc_comm_clean("\xc3\xa9t\xc3\xa9", buf, sizeof(buf));
        ASSERT_STREQ(buf, "??t??");
        proc_comm_clean("x\ny\n", buf, sizeof(buf));
        ASSERT_STREQ(buf, "x?y");
        proc_comm_clean("0123456789abcdefghij", buf, sizeof(buf));
        ASSERT_STREQ(buf, "0123456789abcde");
        proc_comm_clean("", buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
}

static VfioDevice dev(RootFs *r, const char *addr, int group) {
        VfioDevice d = { .group = group, .device = -1 };
        strcpy(d.addr, addr);
        (void) vfio_read_device(r, addr, &d.device);
        return d;
}

/* A fixture host with a QEMU (7000) holding two VFs, one by group, one by its device node, and a
 * DPDK application (7100) holding a VF of the other PF. */
TEST(scan_fixture) {
        char dir[] = "/tmp/sriovd-vfio-users-XXXXXX";
        const char *mkhost = getenv("SRIOVD_MKHOST");
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ VfioUser *users = NULL;
        size_t n = 0;
        unsigned unreadable = 99;
        char root[sizeof(dir) + 8];
        int device = -1;

        ASSERT(mkhost);
        ASSERT(mkdtemp(dir));
        snprintf(root, sizeof(root), "%s/root", dir);
        sh("python3 %s two-socket %s --vfio-user 7000:qemu-system-x86:0000:41:00.6 "
           "--vfio-user 7000:qemu-system-x86:0000:41:00.7:device --vfio-user 7100:dpdk-testpmd:0000:c1:00.6",
           mkhost, root);
        /* A process gone between readdir and its fd walk, and one that names itself badly. */
        sh("mkdir -p %s/proc/7200 && printf 'evil\\033name\\n' > %s/proc/7100/comm", root, root);
        /* A target too long to be a vfio node, and a link to another group. */
        sh("ln -s /dev/vfio/6$(printf '%%0200d' 0) %s/proc/7200/x && mkdir %s/proc/7300 && mkdir %s/proc/7300/fd && "
           "ln -s /dev/vfio/6$(printf '%%0100d' 0) %s/proc/7300/fd/3 && ln -s /dev/vfio/7 %s/proc/7300/fd/4",
           root, root, root, root, root);
        ASSERT_EQ(rootfs_new(root, NULL, &r), 0);

        ASSERT_EQ(vfio_read_device(r, "0000:41:00.7", &device), 0);
        ASSERT_EQ(device, 0);
        ASSERT_EQ(vfio_read_device(r, "0000:41:00.6", &device), -ENOENT);
        ASSERT_EQ(vfio_read_device(r, "../x", &device), -EINVAL);

        /* Groups from the fixture: one per function in device order (nvme 0, PF 1, VFs 2..). */
        const VfioDevice devs[] = {
                dev(r, "0000:c1:00.6", 15), dev(r, "0000:41:00.7", 7), dev(r, "0000:41:00.6", 6),
                dev(r, "0000:41:00.5", 5),
        };
        ASSERT_EQ(devs[1].device, 0);
        ASSERT_EQ(vfio_users_scan(r, devs, ELEMENTSOF(devs), &users, &n, &unreadable), 0);
        ASSERT_EQ(unreadable, 0);
        ASSERT_EQ(n, 4);
        ASSERT_STREQ(users[0].addr, "0000:41:00.6");
        ASSERT_EQ(users[0].pid, 7000);
        ASSERT_STREQ(users[0].comm, "qemu-system-x86");
        /* 41:00.7 twice: QEMU by its device node, 7300 by its group (7) */
        ASSERT_STREQ(users[1].addr, "0000:41:00.7");
        ASSERT_EQ(users[1].pid, 7000);
        ASSERT_STREQ(users[2].addr, "0000:41:00.7");
        ASSERT_EQ(users[2].pid, 7300);
        ASSERT_STREQ(users[2].comm, "?");    /* no comm: named as unknown, still counted */
        ASSERT_STREQ(users[3].addr, "0000:c1:00.6");
        ASSERT_EQ(users[3].pid, 7100);
        ASSERT_STREQ(users[3].comm, "evil?name");
        users = mfree(users);

        /* Nothing asked: nothing read. Only the group of what is asked counts. */
        ASSERT_EQ(vfio_users_scan(r, NULL, 0, &users, &n, NULL), 0);
        ASSERT_EQ(n, 0);
        users = mfree(users);
        ASSERT_EQ(vfio_users_scan(r, &devs[3], 1, &users, &n, NULL), 0);
        ASSERT_EQ(n, 0);
        users = mfree(users);

        sh("rm -rf %s", dir);
}

int main(int argc, char **argv) {
        RUN(fd_target_parse);
        RUN(comm_clean);
        RUN(scan_fixture);
        return 0;
}
