/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootfs.h — the one way into /sys and /proc: paths resolved under a root directory fd */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "sriovd/macro.h"

/*
 * Every sysfs/procfs access in sriovd goes through a RootFs. Paths are given
 * as absolute kernel paths ("/sys/bus/pci/devices/%s/sriov_numvfs") built with
 * printf-style formats; they are resolved beneath the root directory, with
 * absolute symlinks and ".." confined to it (openat2 RESOLVE_IN_ROOT), so a
 * fixture tree behaves like the real one and can never leak to the host.
 */
typedef struct RootFs RootFs;

/* root NULL or "/" = the real system. */
int rootfs_new(const char *root, RootFs **ret);
RootFs *rootfs_free(RootFs *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RootFs *, rootfs_free);
/* The root as given (never NULL; "/" for the real system). */
const char *rootfs_path(const RootFs *r);
bool rootfs_is_real(const RootFs *r);
/*
 * Whether PIDs under this root's /proc are this host's threads, so that
 * sched_setscheduler() on them is meant. True for the real root; on a fixture
 * only when a test says so (SRIOVD_TEST_LIVE_SCHED=1, with threads it spawned).
 */
bool rootfs_sched_live(const RootFs *r);

/* Open a path beneath the root; returns an fd or negative errno. */
int rootfs_open(RootFs *r, int flags, const char *fmt, ...) _printf_(3, 4);
/*
 * Open a regular file for reading, to be read again and again with rootfs_reread(): the fd
 * (the caller's to close) or -EISDIR, -EBADF as for rootfs_read().
 */
int rootfs_open_file(RootFs *r, const char *fmt, ...) _printf_(2, 3);
/*
 * The file of fd (from rootfs_open_file()) from its start, one pread(), into buf (NUL-terminated,
 * trailing newlines stripped); its length, or -EFBIG when it did not fit in size - 1 bytes. A
 * /proc/PID file kept open reads as of now, without the path lookup (five directories for a
 * thread's stat, most of its cost), and fails with -ESRCH once the task has gone, even when its
 * PID has been given to another.
 */
int rootfs_reread(int fd, char *buf, size_t size);
/*
 * Whole file, trailing newlines stripped; *ret is freed by the caller. Only a regular
 * file is read (sysfs and procfs attributes are): -EISDIR for a directory, -EBADF for a
 * FIFO, socket or device, which are opened O_NONBLOCK and never read.
 */
int rootfs_read(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
/* Same, and the file's fstat() from the same open (mode bits tell read-only knobs). */
int rootfs_read_stat(RootFs *r, char **ret, struct stat *ret_st, const char *fmt, ...) _printf_(4, 5);
/*
 * One attribute (an affinity list, a task's stat) into buf, NUL-terminated, trailing newlines
 * stripped: open, a single read, close. Its length, or -EFBIG when it did not fit in size - 1
 * bytes. For the files every drift check reads thousands of: no fstat() and no allocation. A
 * bounded read of a file opened O_NONBLOCK needs no check that it is regular: a FIFO fails
 * (-ESPIPE), a directory too (-EISDIR), a device gives at most size bytes the parse refuses.
 */
int rootfs_read_attr(RootFs *r, char *buf, size_t size, const char *fmt, ...) _printf_(4, 5);
/* Read and parse one integer (decimal or 0x hex). */
int rootfs_read_long(RootFs *r, long *ret, const char *fmt, ...) _printf_(3, 4);
/*
 * Write value with O_WRONLY|O_TRUNC in a single write(); returns 0 or -errno; only to a
 * regular file (-EISDIR, -EBADF as for reads; a FIFO without a reader: -ENXIO).
 *
 * Two test-only hooks, read by rootfs_new() and never active on the real root:
 * SRIOVD_TEST_FAIL_WRITE="SUBSTRING=ERRNO,..." fails matching writes with that
 * errno (nothing written); SRIOVD_TEST_KERNEL=SOCKET hands every other write to
 * a test kernel (tests/umockdev/testkernel.py) instead of the file: one
 * AF_UNIX SOCK_SEQPACKET connection per RootFs, made at the first write and
 * kept, carries "PATH\0VALUE" (PATH the absolute kernel path as given) and
 * returns the errno as decimal text, "0" = done. The test kernel performs the
 * write and its side effects (VF devices, uevents) before it answers, as the
 * kernel's store() methods do, so EBUSY and synchronous VF creation can be
 * tested. A lost connection fails that write and reconnects on the next.
 */
int rootfs_write(RootFs *r, const char *value, const char *fmt, ...) _printf_(3, 4);
/* Target of a symlink, as stored; *ret freed by the caller. -ENAMETOOLONG beyond PATH_MAX - 1. */
int rootfs_readlink(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
/* Last component of a symlink's target ("../../bus/pci/drivers/mlx5_core" -> "mlx5_core"). */
int rootfs_readlink_base(RootFs *r, char **ret, const char *fmt, ...) _printf_(3, 4);
int rootfs_opendir(RootFs *r, DIR **ret, const char *fmt, ...) _printf_(3, 4);
/* The entries of a directory that are numbers ("/proc/irq", a device's msi_irqs), sorted. */
int rootfs_list_numbers(RootFs *r, unsigned **ret, size_t *ret_n, const char *fmt, ...) _printf_(4, 5);
/* fstatat() beneath the root, following symlinks. */
int rootfs_stat(RootFs *r, struct stat *ret, const char *fmt, ...) _printf_(3, 4);
int rootfs_exists(RootFs *r, const char *fmt, ...) _printf_(2, 3);

/* All of fd, NUL-terminated, into *ret (freed by the caller); -EFBIG beyond max bytes. */
int read_fd_full(int fd, size_t max, char **ret, size_t *ret_size);

/* True for a name that is safe as one path component: no '/', not "." or "..", not empty. */
bool path_component_valid(const char *s);
