/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfio-msix.c — a test bed guest's stand-in for QEMU: take a vfio-pci VF and enable its MSI-X */

/*
 * What QEMU does for a guest whose driver enables MSI-X on a passed-through VF: the VF's VFIO
 * group into a type1 container, the device fd, then VFIO_DEVICE_SET_IRQS with one eventfd per
 * vector. The kernel then requests real vfio-msix[N](ADDR) IRQs on the host (here: the test bed
 * guest), listed in the VF's msi_irqs/, exactly those sriovd must find and pin.
 *
 *   vfio-msix ADDR COUNT    prints "enabled N" once the vectors exist, then holds them until
 *                           SIGTERM/SIGINT (closing the device fd disables MSI-X again)
 *
 * Exit 1 with the failing step on stderr. A test program, not part of sriovd: it touches /dev
 * and /sys directly.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fail(const char *what) {
        fprintf(stderr, "vfio-msix: %s: %s\n", what, strerror(errno));
        return 1;
}

int main(int argc, char **argv) {
        char path[512], link[256], *group;
        struct vfio_group_status status = { .argsz = sizeof(status) };
        struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_MSIX_IRQ_INDEX };
        struct vfio_irq_set *set;
        int container, groupfd, device, count, *fds;
        ssize_t n;
        sigset_t mask;
        int sig;

        if (argc != 3 || (count = atoi(argv[2])) <= 0) {
                fprintf(stderr, "usage: vfio-msix PCI-ADDRESS COUNT\n");
                return 2;
        }
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", argv[1]);
        n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
                return fail(path);
        link[n] = 0;
        group = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;

        container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
        if (container < 0)
                return fail("/dev/vfio/vfio");
        if (ioctl(container, VFIO_GET_API_VERSION) != VFIO_API_VERSION)
                return fail("VFIO_GET_API_VERSION");
        if (ioctl(container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0)
                return fail("VFIO_CHECK_EXTENSION type1");

        snprintf(path, sizeof(path), "/dev/vfio/%s", group);
        groupfd = open(path, O_RDWR | O_CLOEXEC);
        if (groupfd < 0)
                return fail(path);
        if (ioctl(groupfd, VFIO_GROUP_GET_STATUS, &status) < 0)
                return fail("VFIO_GROUP_GET_STATUS");
        if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
                errno = EBUSY;
                return fail("group not viable (a device of it is not on vfio-pci)");
        }
        if (ioctl(groupfd, VFIO_GROUP_SET_CONTAINER, &container) < 0)
                return fail("VFIO_GROUP_SET_CONTAINER");
        if (ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) < 0)
                return fail("VFIO_SET_IOMMU type1");
        device = ioctl(groupfd, VFIO_GROUP_GET_DEVICE_FD, argv[1]);
        if (device < 0)
                return fail("VFIO_GROUP_GET_DEVICE_FD");

        if (ioctl(device, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0)
                return fail("VFIO_DEVICE_GET_IRQ_INFO MSI-X");
        if (info.count < (unsigned) count) {
                fprintf(stderr, "vfio-msix: %s has %u MSI-X vectors, not %d\n", argv[1], info.count, count);
                return 1;
        }

        set = calloc(1, sizeof(*set) + (size_t) count * sizeof(int));
        if (!set)
                return fail("calloc");
        *set = (struct vfio_irq_set) {
                .argsz = (unsigned) (sizeof(*set) + (size_t) count * sizeof(int)),
                .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
                .index = VFIO_PCI_MSIX_IRQ_INDEX,
                .start = 0,
                .count = (unsigned) count,
        };
        fds = (int *) set->data;
        for (int i = 0; i < count; i++) {
                fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (fds[i] < 0)
                        return fail("eventfd");
        }
        /* Block the signals first: the vectors are held until one comes. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if (ioctl(device, VFIO_DEVICE_SET_IRQS, set) < 0)
                return fail("VFIO_DEVICE_SET_IRQS MSI-X");
        printf("enabled %d\n", count);
        fflush(stdout);

        sigwait(&mask, &sig);
        return 0;
}
