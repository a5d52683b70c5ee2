/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootfs-write.c — every change beneath the root: attribute writes with their test hooks, mkdir and rmdir */

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sriovd/kernel/rootfs.h"
#include "rootfs-internal.h"

/* Returns the errno that a test asked the writes to this path to fail with, or 0. */
static int injected_write_error(const RootFs *r, const char *path) {
        _cleanup_free_ char *spec = NULL;
        char *save = NULL;

        if (!r->fail_writes)
                return 0;
        spec = strdup(r->fail_writes);
        if (!spec)
                return 0;
        for (char *item = strtok_r(spec, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                char *eq = strrchr(item, '=');
                if (!eq)
                        continue;
                *eq = 0;
                if (strstr(path, item))
                        return atoi(eq + 1);
        }
        return 0;
}

/*
 * Hands a write to the test kernel as one SOCK_SEQPACKET message "PATH\0VALUE". The one reply
 * is an errno in decimal, and "0" means done. The test kernel performs the write and its side
 * effects, such as new devices and uevents, before it replies, as a kernel store() does.
 */
static int test_kernel_write(RootFs *r, const char *path, const char *value) {
        char msg[PATH_MAX + 4096], reply[32];
        size_t lp = strlen(path) + 1, lv = strlen(value);
        ssize_t n;
        long e;
        char *end;

        if (lp + lv > sizeof(msg))
                return -E2BIG;
        if (r->test_kernel_fd < 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                _cleanup_close_ int fd = -EBADF;

                if (strlen(r->test_kernel) >= sizeof(sa.sun_path))
                        return -ENAMETOOLONG;
                strcpy(sa.sun_path, r->test_kernel);
                fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return negative_errno();
                /* A test kernel that hangs must fail the test, not hang sriovd. */
                struct timeval tv = { .tv_sec = 30 };
                if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                        return negative_errno();
                if (connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                        return negative_errno();
                r->test_kernel_fd = TAKE_FD(fd);
        }
        memcpy(msg, path, lp);
        memcpy(msg + lp, value, lv);
        do
                n = send(r->test_kernel_fd, msg, lp + lv, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n >= 0)
                do
                        n = recv(r->test_kernel_fd, reply, sizeof(reply) - 1, 0);
                while (n < 0 && errno == EINTR);
        if (n <= 0) {
                /* The test kernel went away, so the next write reconnects. */
                int k = n < 0 ? negative_errno() : -ECONNRESET;
                closep(&r->test_kernel_fd);
                r->test_kernel_fd = -EBADF;
                return k;
        }
        reply[n] = 0;
        e = strtol(reply, &end, 10);
        if (end == reply || e < 0 || e > 4095)
                return -EPROTO;
        return (int) -e;
}

int rootfs_write(RootFs *r, const char *value, const char *fmt, ...) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(value);
        va_list ap;
        ssize_t k;
        int e;

        if (r->fail_writes || r->test_kernel) {
                char path[PATH_MAX];

                va_start(ap, fmt);
                e = rootfs_format(path, sizeof(path), fmt, ap);
                va_end(ap);
                if (e < 0)
                        return e;
                e = injected_write_error(r, path);
                if (e > 0)
                        return -e;   /* like the kernel, fail with nothing written */
                if (r->test_kernel)
                        return test_kernel_write(r, path, value);
        }

        va_start(ap, fmt);
        /*
         * O_TRUNC matters on fixture trees, where a shorter value must not keep old bytes.
         * With O_NONBLOCK, a FIFO without a reader fails with ENXIO instead of blocking.
         */
        fd = rootfs_openv(r, O_WRONLY | O_NOCTTY | O_NONBLOCK | (r->real ? 0 : O_TRUNC), fmt, ap);
        va_end(ap);
        if (fd < 0)
                return fd;
        e = rootfs_check_regular(fd, NULL);
        if (e < 0)
                return e;

        /* sysfs takes one write() per value, so a short write is a failure. */
        k = write(fd, value, len);
        if (k < 0)
                return negative_errno();
        if ((size_t) k != len)
                return -EIO;
        return 0;
}

/* Runs mkdirat() or unlinkat() of the path's last component in its parent directory. */
static int rootfs_dir_changev(RootFs *r, bool remove, const char *fmt, va_list ap) {
        _cleanup_free_ char *base = NULL;
        _cleanup_close_ int dfd = -EBADF;
        int k;

        dfd = rootfs_parentv(r, &base, fmt, ap);
        if (dfd < 0)
                return dfd;
        k = remove ? unlinkat(dfd, base, AT_REMOVEDIR) : mkdirat(dfd, base, 0755);
        return k < 0 ? negative_errno() : 0;
}

/*
 * Makes or removes one directory beneath the root. Control filesystems such as resctrl take a
 * mkdir() or an rmdir() as their command, so these are the only calls that change the tree.
 */
int rootfs_mkdir(RootFs *r, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_dir_changev(r, false, fmt, ap);
        va_end(ap);
        return k;
}

int rootfs_rmdir(RootFs *r, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_dir_changev(r, true, fmt, ap);
        va_end(ap);
        return k;
}
