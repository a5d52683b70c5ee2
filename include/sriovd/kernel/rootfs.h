/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootfs.h — the one way into /sys and /proc: paths resolved under a root directory fd */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "sriovd/shared/macro.h"

/*
 * Every sysfs and procfs access in sriovd goes through a RootFs. Paths are given as absolute
 * kernel paths, such as "/sys/bus/pci/devices/%s/sriov_numvfs", built with printf-style formats.
 * They are resolved beneath the root directory. openat2() with RESOLVE_IN_ROOT confines absolute
 * symlinks and ".." to it. So a fixture tree behaves like the real one and can never leak to the
 * host.
 */
typedef struct RootFs RootFs;

/*
 * The hooks that tests give a fixture root. They have no effect on the real root. The top of a
 * program reads them, for example the daemon's manager from the environment, and passes them here.
 */
typedef struct RootFsOptions {
        /* PIDs under the fixture's /proc are this host's threads, spawned by the test. */
        bool sched_live;
        /* "SUBSTRING=ERRNO,...": writes to matching paths fail with that errno. See rootfs_write(). */
        const char *fail_writes;
        /* The socket of a test kernel that performs every other write. See rootfs_write(). */
        const char *test_kernel;
} RootFsOptions;

/*
 * Returns 0 and a new RootFs in *ret, which the caller frees with rootfs_free(), or a negative
 * errno. A root of NULL or "/" is the real system. options may be NULL, for no test hooks. Its
 * strings are copied.
 */
int rootfs_new(const char *root, const RootFsOptions *options, RootFs **ret);
RootFs *rootfs_free(RootFs *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RootFs *, rootfs_free);
/* Returns the root as given. It is never NULL, and it is "/" for the real system. */
const char *rootfs_path(const RootFs *r);
bool rootfs_is_real(const RootFs *r);
/*
 * Whether PIDs under this root's /proc are this host's threads, so that sched_setscheduler() on
 * them is meant. It is true for the real root. On a fixture it is true only when a test says so
 * with RootFsOptions.sched_live, for threads that the test spawned.
 */
bool rootfs_sched_live(const RootFs *r);

/* Opens a path beneath the root. Returns an fd, which the caller closes, or a negative errno. */
int rootfs_open(RootFs *r, int flags, const char *fmt, ...) _printf_(3, 4);
/*
 * Opens a regular file for reading, to be read again and again with rootfs_reread(). Returns the
 * fd, which the caller closes. It fails with -EISDIR and -EBADF as rootfs_read() does.
 */
int rootfs_open_file(RootFs *r, const char *fmt, ...) _printf_(2, 3);
/*
 * Reads the file of fd, from rootfs_open_file(), from its start with one pread() into buf. buf is
 * NUL-terminated, and trailing newlines are stripped. Returns its length, or -EFBIG when the file
 * did not fit in size - 1 bytes. A /proc/PID file kept open reads as of now, without the path
 * lookup. For a thread's stat that lookup crosses five directories and is most of the cost. The
 * read fails with -ESRCH once the task has gone, even when its PID has been given to another.
 */
int rootfs_reread(int fd, char *buf, size_t size);
/*
 * Reads a whole file into *ret, with trailing newlines stripped. The caller frees *ret. Only a
 * regular file is read, and sysfs and procfs attributes are regular files. Returns -EISDIR for a
 * directory. Returns -EBADF for a FIFO, socket or device, which is opened O_NONBLOCK and never read.
 */
int rootfs_read(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
/*
 * Does the same, and puts the file's fstat() from the same open in *ret_st. The mode bits tell
 * which knobs are read-only.
 */
int rootfs_read_stat(RootFs *r, char **ret, struct stat *ret_st, const char *fmt, ...) _printf_(4, 5);
/*
 * Reads one attribute, such as an affinity list or a task's stat, into buf with an open, a single
 * read and a close. buf is NUL-terminated, and trailing newlines are stripped. Returns its length,
 * or -EFBIG when it did not fit in size - 1 bytes. It serves the files that every drift check
 * reads by the thousand, so it makes no fstat() and no allocation. A bounded read of a file
 * opened O_NONBLOCK needs no check that the file is regular. A FIFO fails with -ESPIPE and a
 * directory with -EISDIR. A device gives at most size bytes, which the parse refuses.
 */
int rootfs_read_attr(RootFs *r, char *buf, size_t size, const char *fmt, ...) _printf_(4, 5);
/* Reads and parses one integer, in decimal or in hex after 0x. */
int rootfs_read_long(RootFs *r, long *ret, const char *fmt, ...) _printf_(3, 4);
/*
 * Writes value with O_WRONLY|O_TRUNC in a single write(). Returns 0 or a negative errno. It
 * writes only to a regular file. It fails with -EISDIR and -EBADF as reads do, and with -ENXIO
 * for a FIFO without a reader.
 *
 * Two options of rootfs_new() are hooks for tests, and they are never active on the real root.
 * fail_writes="SUBSTRING=ERRNO,..." fails the matching writes with that errno, and nothing is
 * written. test_kernel=SOCKET hands every other write to a test kernel,
 * tests/umockdev/testkernel.py, instead of the file. Each RootFs makes one AF_UNIX SOCK_SEQPACKET
 * connection at its first write and keeps it. The connection carries "PATH\0VALUE", where PATH is
 * the absolute kernel path as given. It returns the errno as decimal text, and "0" means done.
 * The test kernel performs the write and its side effects, such as VF devices and uevents,
 * before it answers, as the kernel's store() methods do. So EBUSY and synchronous VF creation can
 * be tested. A lost connection fails that write, and the next write reconnects.
 */
int rootfs_write(RootFs *r, const char *value, const char *fmt, ...) _printf_(3, 4);
/*
 * Reads the target of a symlink, as stored, into *ret. The caller frees *ret. Returns
 * -ENAMETOOLONG for a target beyond PATH_MAX - 1 bytes.
 */
int rootfs_readlink(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
/* Reads the last component of a symlink's target, so "../../bus/pci/drivers/mlx5_core" gives "mlx5_core". */
int rootfs_readlink_base(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
int rootfs_opendir(RootFs *r, DIR **ret, const char *fmt, ...) _printf_(3, 4);
/*
 * Reads the entries of a directory that are numbers into *ret, sorted. The caller frees *ret.
 * Examples are "/proc/irq" and a device's msi_irqs.
 */
int rootfs_list_numbers(RootFs *r, unsigned **ret, size_t *ret_n, const char *fmt, ...) _printf_(4, 5);
/*
 * mkdir() and rmdir() of the path's last component, beneath the root. They return 0 or a negative
 * errno, such as -EEXIST, -ENOENT, -ENOTEMPTY, or -ENOSPC from resctrl without a free CLOSID. On a
 * fixture root they change the tree, and nothing else plays the kernel's part.
 */
int rootfs_mkdir(RootFs *r, const char *fmt, ...) _printf_(2, 3);
int rootfs_rmdir(RootFs *r, const char *fmt, ...) _printf_(2, 3);
/* fstatat() beneath the root, following symlinks. */
int rootfs_stat(RootFs *r, struct stat *ret, const char *fmt, ...) _printf_(3, 4);
int rootfs_exists(RootFs *r, const char *fmt, ...) _printf_(2, 3);

/* Reads all of fd into *ret, NUL-terminated. The caller frees *ret. Returns -EFBIG beyond max bytes. */
int read_fd_full(int fd, size_t max, char **ret, size_t *ret_size);

/* Whether a name is safe as one path component. It is not empty, not "." or "..", and has no '/'. */
bool path_component_valid(const char *s);
