/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootfs.c — the root directory fd, every /sys and /proc path resolved beneath it, and the reads */

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>

#include "sriovd/kernel/rootfs.h"
#include "rootfs-internal.h"

/* Copies a test hook's string, which may be NULL. Returns 0, or -ENOMEM. */
static int hook_dup(const char *s, char **ret) {
        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int rootfs_new(const char *root, const RootFsOptions *options, RootFs **ret) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_close_ int fd = -EBADF;
        int k;

        if (!root || !*root)
                root = "/";

        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->fd = TAKE_FD(fd);
        r->test_kernel_fd = -EBADF;
        r->path = strdup(root);
        if (!r->path)
                return -ENOMEM;
        r->real = streq(root, "/");
        /* The test hooks never act on the real root. */
        r->sched_live = r->real || (options && options->sched_live);
        if (!r->real && options) {
                k = hook_dup(options->fail_writes, &r->fail_writes);
                if (k >= 0)
                        k = hook_dup(options->test_kernel, &r->test_kernel);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(r);
        return 0;
}

RootFs *rootfs_free(RootFs *r) {
        if (!r)
                return NULL;
        closep(&r->fd);
        closep(&r->test_kernel_fd);
        free(r->fail_writes);
        free(r->test_kernel);
        free(r->path);
        free(r);
        return NULL;
}

const char *rootfs_path(const RootFs *r) {
        return r->path;
}

bool rootfs_is_real(const RootFs *r) {
        return r->real;
}

bool rootfs_sched_live(const RootFs *r) {
        return r->sched_live;
}

bool path_component_valid(const char *s) {
        return s && *s && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..") &&
               strlen(s) <= NAME_MAX;
}

/* Only /sys and /proc may be reached, because no other part of sriovd has any business going through here. */
int rootfs_format(char *buf, size_t size, const char *fmt, va_list ap) {
        int n = vsnprintf(buf, size, fmt, ap);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        if (strncmp(buf, "/sys/", 5) != 0 && strncmp(buf, "/proc/", 6) != 0 &&
            !streq(buf, "/sys") && !streq(buf, "/proc"))
                return -EINVAL;
        /* Path components come from outside, from directory entries or the config, so any ".." is refused. */
        for (const char *p = buf; (p = strstr(p, "..")); p += 2)
                if (p[-1] == '/' && (p[2] == '/' || p[2] == 0))
                        return -EINVAL;
        return 0;
}

int rootfs_openv(RootFs *r, int flags, const char *fmt, va_list ap) {
        char path[PATH_MAX];
        int fd, k;

        k = rootfs_format(path, sizeof(path), fmt, ap);
        if (k < 0)
                return k;

        if (!r->real && !r->no_openat2) {
                /* RESOLVE_IN_ROOT keeps absolute symlinks and ".." in link targets inside the fixture. */
                struct open_how how = {
                        .flags = (uint64_t) (flags | O_CLOEXEC),
                        .resolve = RESOLVE_IN_ROOT,
                };
                /* EAGAIN means that a rename or a mount somewhere raced the ".." check.
                 * openat2(2) says to retry then. */
                for (unsigned i = 0; i < 64; i++) {
                        fd = (int) syscall(SYS_openat2, r->fd, path + 1, &how, sizeof(how));
                        if (fd >= 0 || errno != EAGAIN)
                                break;
                }
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS)
                        return negative_errno();
                r->no_openat2 = true;
        }

        fd = openat(r->fd, path + 1, flags | O_CLOEXEC);
        return fd >= 0 ? fd : negative_errno();
}

int rootfs_open(RootFs *r, int flags, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int fd = rootfs_openv(r, flags, fmt, ap);
        va_end(ap);
        return fd;
}

int read_fd_full(int fd, size_t max, char **ret, size_t *ret_size) {
        /* sysfs and procfs files are small, so one page covers nearly all of them. */
        size_t size = 4096, n = 0;
        _cleanup_free_ char *buf = malloc(size);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k;

                if (n + 1 >= size) {
                        char *b;
                        if (n > max)
                                return -EFBIG;
                        b = realloc(buf, size * 2);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        size *= 2;
                }
                k = read(fd, buf + n, size - n - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        if (n > max)
                return -EFBIG;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

static int read_fd_all(int fd, char **ret) {
        size_t n;
        int r;

        r = read_fd_full(fd, 64 * 1024 * 1024, ret, &n);
        if (r < 0)
                return r;
        while (n > 0 && (*ret)[n - 1] == '\n')
                (*ret)[--n] = 0;
        return 0;
}

/*
 * Every sysfs and procfs attribute is a regular file. Its st_size is 0, so the size says
 * nothing. Anything else where an attribute belongs means a broken or hostile tree.
 * A FIFO would block open() and read() forever, and a directory or a socket has nothing to read.
 */
int rootfs_check_regular(int fd, struct stat *ret_st) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        if (ret_st)
                *ret_st = st;
        return 0;
}

/* All readers take this one path: open, fstat() the same fd, then read. */
static int rootfs_readv(RootFs *r, char **ret, struct stat *ret_st, const char *fmt, va_list ap) {
        _cleanup_close_ int fd = -EBADF;
        int k;

        /* O_NONBLOCK keeps the open of a FIFO from waiting for a writer. Regular files ignore the flag. */
        fd = rootfs_openv(r, O_RDONLY | O_NOCTTY | O_NONBLOCK, fmt, ap);
        if (fd < 0)
                return fd;
        k = rootfs_check_regular(fd, ret_st);
        if (k < 0)
                return k;
        return read_fd_all(fd, ret);
}

int rootfs_open_file(RootFs *r, const char *fmt, ...) {
        _cleanup_close_ int fd = -EBADF;
        va_list ap;
        int k;

        va_start(ap, fmt);
        fd = rootfs_openv(r, O_RDONLY | O_NOCTTY | O_NONBLOCK, fmt, ap);
        va_end(ap);
        if (fd < 0)
                return fd;
        k = rootfs_check_regular(fd, NULL);
        if (k < 0)
                return k;
        return TAKE_FD(fd);
}

int rootfs_reread(int fd, char *buf, size_t size) {
        ssize_t n;

        if (size == 0)
                return -EINVAL;
        do
                n = pread(fd, buf, size, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if ((size_t) n >= size)
                return -EFBIG;
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = 0;
        return (int) n;
}

int rootfs_read_attr(RootFs *r, char *buf, size_t size, const char *fmt, ...) {
        _cleanup_close_ int fd = -EBADF;
        va_list ap;

        va_start(ap, fmt);
        fd = rootfs_openv(r, O_RDONLY | O_NOCTTY | O_NONBLOCK, fmt, ap);
        va_end(ap);
        if (fd < 0)
                return fd;
        return rootfs_reread(fd, buf, size);
}

int rootfs_read(RootFs *r, char **ret, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_readv(r, ret, NULL, fmt, ap);
        va_end(ap);
        return k;
}

int rootfs_read_stat(RootFs *r, char **ret, struct stat *ret_st, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_readv(r, ret, ret_st, fmt, ap);
        va_end(ap);
        return k;
}

int rootfs_read_long(RootFs *r, long *ret, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        char *end;
        va_list ap;
        long v;
        int k;

        va_start(ap, fmt);
        k = rootfs_readv(r, &s, NULL, fmt, ap);
        va_end(ap);
        if (k < 0)
                return k;

        errno = 0;
        v = strtol(s, &end, 0);
        if (errno == ERANGE)
                return -ERANGE;
        if (end == s || (*end && *end != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}

int rootfs_parentv(RootFs *r, char **ret_base, const char *fmt, va_list ap) {
        char path[PATH_MAX], *slash;
        int k, fd;

        k = rootfs_format(path, sizeof(path), fmt, ap);
        if (k < 0)
                return k;
        slash = strrchr(path, '/');
        if (!path_component_valid(slash + 1))
                return -EINVAL;
        *ret_base = strdup(slash + 1);
        if (!*ret_base)
                return -ENOMEM;
        *slash = 0;
        fd = rootfs_open(r, O_PATH | O_DIRECTORY, "%s", path);
        if (fd < 0) {
                free(*ret_base);
                *ret_base = NULL;
        }
        return fd;
}

/* Reads the symlink's target into buf, which holds PATH_MAX bytes. */
static int rootfs_readlinkv(RootFs *r, char *buf, const char *fmt, va_list ap) {
        _cleanup_free_ char *base = NULL;
        _cleanup_close_ int dfd = -EBADF;
        ssize_t n;

        dfd = rootfs_parentv(r, &base, fmt, ap);
        if (dfd < 0)
                return dfd;
        n = readlinkat(dfd, base, buf, PATH_MAX);
        if (n < 0)
                return negative_errno();
        /* readlinkat() truncates silently, so a target that fills the buffer may not be whole. */
        if (n >= PATH_MAX)
                return -ENAMETOOLONG;
        buf[n] = 0;
        return 0;
}

int rootfs_readlink(RootFs *r, char **ret, const char *fmt, ...) {
        char target[PATH_MAX];
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_readlinkv(r, target, fmt, ap);
        va_end(ap);
        if (k < 0)
                return k;
        *ret = strdup(target);
        return *ret ? 0 : -ENOMEM;
}

int rootfs_readlink_base(RootFs *r, char **ret, const char *fmt, ...) {
        char target[PATH_MAX], *slash;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_readlinkv(r, target, fmt, ap);
        va_end(ap);
        if (k < 0)
                return k;
        slash = strrchr(target, '/');
        *ret = strdup(slash ? slash + 1 : target);
        return *ret ? 0 : -ENOMEM;
}

static int rootfs_opendirv(RootFs *r, DIR **ret, const char *fmt, va_list ap) {
        int fd = rootfs_openv(r, O_RDONLY | O_DIRECTORY | O_NONBLOCK, fmt, ap);
        DIR *d;

        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                int k = negative_errno();
                close(fd);
                return k;
        }
        *ret = d;
        return 0;
}

int rootfs_opendir(RootFs *r, DIR **ret, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_opendirv(r, ret, fmt, ap);
        va_end(ap);
        return k;
}

int rootfs_stat(RootFs *r, struct stat *ret, const char *fmt, ...) {
        _cleanup_close_ int fd = -EBADF;
        va_list ap;

        va_start(ap, fmt);
        fd = rootfs_openv(r, O_PATH, fmt, ap);
        va_end(ap);
        if (fd < 0)
                return fd;
        if (fstat(fd, ret) < 0)
                return negative_errno();
        return 0;
}

int rootfs_exists(RootFs *r, const char *fmt, ...) {
        _cleanup_close_ int fd = -EBADF;
        va_list ap;

        va_start(ap, fmt);
        fd = rootfs_openv(r, O_PATH, fmt, ap);
        va_end(ap);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        return fd < 0 ? fd : 1;
}

int rootfs_list_numbers(RootFs *r, unsigned **ret, size_t *ret_n, const char *fmt, ...) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ unsigned *nums = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = rootfs_opendirv(r, &d, fmt, ap);
        va_end(ap);
        if (k < 0)
                return k;
        while ((de = readdir(d))) {
                unsigned long v;
                char *end;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                v = strtoul(de->d_name, &end, 10);
                if (*end || v > INT32_MAX)
                        continue;
                if (GREEDY_REALLOC(nums, allocated, n + 1) < 0)
                        return -ENOMEM;
                nums[n++] = (unsigned) v;
        }
        qsort_safe(nums, n, sizeof(*nums), unsigned_cmp);
        *ret = TAKE_PTR(nums);
        *ret_n = n;
        return 0;
}
