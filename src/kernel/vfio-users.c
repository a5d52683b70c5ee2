/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfio-users.c — finds the processes that hold a PCI function through vfio
 *
 * Such a process may be a QEMU started by hand or a DPDK application. A change of the VF count
 * destroys the VFs. For a held VF, the kernel would wait for the holder to let go, and then
 * take the device from under it.
 */

#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel/vfio-users.h"

/* Parses a kernel device number as a node's name prints it: in decimal, with no sign and no leading zero. */
static int parse_number(const char *s, unsigned *ret) {
        unsigned long v;
        char *end;

        if (!isdigit((unsigned char) s[0]) || (s[0] == '0' && s[1]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > INT32_MAX)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int vfio_fd_target_parse(const char *target, VfioFd *ret) {
        static const char group[] = "/dev/vfio/", device[] = "/dev/vfio/devices/vfio";
        VfioFd f;

        if (strncmp(target, device, strlen(device)) == 0) {
                f.kind = VFIO_FD_DEVICE;
                if (parse_number(target + strlen(device), &f.number) < 0)
                        return -EINVAL;
        } else if (strncmp(target, group, strlen(group)) == 0) {
                f.kind = VFIO_FD_GROUP;
                if (parse_number(target + strlen(group), &f.number) < 0)
                        return -EINVAL;
        } else
                return -EINVAL;
        *ret = f;
        return 0;
}

void proc_comm_clean(const char *comm, char *buf, size_t size) {
        size_t k = 0;

        if (size == 0)
                return;
        for (const char *p = comm; *p && k + 1 < size; p++) {
                unsigned char c = (unsigned char) *p;
                if (c == '\n' && !p[1])
                        break;
                buf[k++] = c >= 0x20 && c < 0x7f ? (char) c : '?';
        }
        buf[k] = 0;
}

int vfio_read_device(RootFs *root, const char *addr, int *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (!pci_addr_valid(addr))
                return -EINVAL;
        r = rootfs_opendir(root, &d, "/sys/bus/pci/devices/%s/vfio-dev", addr);
        if (r < 0)
                return r == -ENOTDIR ? -ENOENT : r;
        while ((de = readdir(d))) {
                unsigned n;

                if (strncmp(de->d_name, "vfio", 4) == 0 && parse_number(de->d_name + 4, &n) >= 0) {
                        *ret = (int) n;
                        return 0;
                }
        }
        return -ENOENT;
}

static int vfio_user_cmp(const void *a, const void *b) {
        const VfioUser *x = a, *y = b;
        int c = strcmp(x->addr, y->addr);
        return c ?: (x->pid > y->pid) - (x->pid < y->pid);
}

/* Returns whether dev is the device that f opens. */
static bool vfio_fd_matches(const VfioFd *f, const VfioDevice *dev) {
        int want = f->kind == VFIO_FD_GROUP ? dev->group : dev->device;
        return want >= 0 && (unsigned) want == f->number;
}

/* Marks in held[] the devices of devs that process pid holds open. Returns 1 when it holds any. */
static int scan_process(RootFs *root, const char *pid, const VfioDevice *devs, size_t n_devs, bool *held) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        bool any = false;
        int r;

        r = rootfs_opendir(root, &d, "/proc/%s/fd", pid);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                char target[64];
                ssize_t len;
                VfioFd f;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                /* The name is one entry of the directory that the rooted open gave, and the link is
                 * only read, never resolved. A vfio node's path is short, so a longer target, which
                 * readlinkat() may have cut, is not a vfio node. */
                len = readlinkat(dirfd(d), de->d_name, target, sizeof(target));
                if (len <= 0 || (size_t) len >= sizeof(target))
                        continue;
                target[len] = 0;
                if (vfio_fd_target_parse(target, &f) < 0)
                        continue;
                for (size_t i = 0; i < n_devs; i++)
                        if (vfio_fd_matches(&f, &devs[i])) {
                                held[i] = true;
                                any = true;
                        }
        }
        return any;
}

int vfio_users_scan(RootFs *root, const VfioDevice *devs, size_t n_devs, VfioUser **ret, size_t *ret_n,
                    unsigned *ret_n_unreadable) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ VfioUser *users = NULL;
        _cleanup_free_ bool *held = NULL;
        size_t n = 0, allocated = 0;
        unsigned unreadable = 0;
        struct dirent *de;
        int r;

        held = calloc(n_devs ?: 1, sizeof(*held));
        if (!held)
                return -ENOMEM;
        r = rootfs_opendir(root, &d, "/proc");
        if (r < 0)
                return r;

        while (n_devs > 0 && (de = readdir(d))) {
                _cleanup_free_ char *comm = NULL;
                char *end;
                long pid;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                errno = 0;
                pid = strtol(de->d_name, &end, 10);
                if (errno || *end || pid <= 0 || pid > INT32_MAX)
                        continue;
                memset(held, 0, n_devs * sizeof(*held));
                r = scan_process(root, de->d_name, devs, n_devs, held);
                if (r == -EACCES || r == -EPERM)
                        unreadable++;
                if (r <= 0)
                        continue;   /* the process holds none, or it is gone */
                (void) rootfs_read(root, &comm, "/proc/%s/comm", de->d_name);
                for (size_t i = 0; i < n_devs; i++) {
                        if (!held[i])
                                continue;
                        if (GREEDY_REALLOC(users, allocated, n + 1) < 0)
                                return -ENOMEM;
                        users[n] = (VfioUser) { .pid = (pid_t) pid };
                        strscpy(users[n].addr, sizeof(users[n].addr), devs[i].addr);
                        proc_comm_clean(comm ?: "?", users[n].comm, sizeof(users[n].comm));
                        n++;
                }
        }

        qsort_safe(users, n, sizeof(*users), vfio_user_cmp);
        *ret = TAKE_PTR(users);
        *ret_n = n;
        if (ret_n_unreadable)
                *ret_n_unreadable = unreadable;
        return 0;
}
