/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootfs-internal.h — the RootFs object and the path resolution that rootfs.c and rootfs-write.c share */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sriovd/kernel/rootfs.h"

struct RootFs {
        int fd;
        char *path;
        bool real;
        bool no_openat2;   /* the kernel lacks openat2(), so opens fall back to openat() */
        bool sched_live;
        /* This is for tests only and never set on the real root.
         * A spec "SUBSTRING=ERRNO,..." makes the writes to matching paths fail. */
        char *fail_writes;
        /* This is for tests only and never set on the real root.
         * It holds the path of the test kernel's socket. */
        char *test_kernel;
        int test_kernel_fd;
};

/*
 * Builds the path relative to the root into buf from fmt. Returns -ENAMETOOLONG when it does not
 * fit, and -EINVAL for a path outside /sys and /proc or one with a ".." component.
 */
int rootfs_format(char *buf, size_t size, const char *fmt, va_list ap);
/* Opens the path beneath the root with flags and O_CLOEXEC. Returns the fd, which the caller closes, or a negative errno. */
int rootfs_openv(RootFs *r, int flags, const char *fmt, va_list ap);
/*
 * Opens the parent directory of the path with O_PATH. Returns its fd and the last component in
 * *ret_base, which the caller frees, or a negative errno and leaves *ret_base NULL. The last
 * component must pass path_component_valid().
 */
int rootfs_parentv(RootFs *r, char **ret_base, const char *fmt, va_list ap);
/* Returns 0 when fd is a regular file, -EISDIR for a directory and -EBADF for anything else. Fills *ret_st when it is not NULL. */
int rootfs_check_regular(int fd, struct stat *ret_st);
