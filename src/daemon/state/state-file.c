/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-file.c — the state file on disk: atomic saves and loads, with corrupt files kept aside */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/kernel/rootfs.h"
#include "state-internal.h"
#include "state.h"

#define TEMP_INFIX ".tmp-"

/*
 * Whether name is a plain file name that sriovd may use. It is not empty, has no '/', and is not
 * hidden, because the temporary files are hidden. It also leaves room for suffixes.
 */
bool state_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;
        return n > 0 && n <= NAME_MAX - 40 && name[0] != '.' && !strchr(name, '/');
}

static bool is_temp_name(const char *name, const char *entry) {
        size_t n = strlen(name);
        return entry[0] == '.' && strncmp(entry + 1, name, n) == 0 &&
               strncmp(entry + 1 + n, TEMP_INFIX, strlen(TEMP_INFIX)) == 0;
}

/* fsync() the directory itself, whatever kind of fd names it, an O_PATH fd included. */
int state_dir_sync(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fsync(fd) < 0)
                return negative_errno();
        return 0;
}

/* Remove ".NAME.tmp-*" left by a save that did not finish. Best effort. */
static void temp_files_remove(int dir_fd, const char *name) {
        _cleanup_closedir_ DIR *d = NULL;
        int fd;
        struct dirent *de;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d)))
                if (is_temp_name(name, de->d_name))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

/*
 * Rename name to NAME.corrupt-TIMESTAMP[-N], never replacing anything, and make it durable.
 * aside receives the new name as soon as the rename is done, so a failure to sync the
 * directory afterwards can still say where the file went.
 */
int state_move_aside(int dir_fd, const char *name, char aside[static NAME_MAX + 1]) {
        char stamp[32];
        struct timespec ts;
        struct tm tm;

        aside[0] = 0;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tm))
                return negative_errno();
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);

        for (unsigned i = 0;; i++) {
                char try[NAME_MAX + 1];

                if (i > 10000)
                        return -EEXIST;
                if (i == 0)
                        snprintf(try, sizeof(try), "%s" ASIDE_INFIX "%s", name, stamp);
                else
                        snprintf(try, sizeof(try), "%s" ASIDE_INFIX "%s-%u", name, stamp, i);

                if (renameat2(dir_fd, name, dir_fd, try, RENAME_NOREPLACE) < 0) {
                        if (errno == EEXIST)
                                continue;
                        if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                                return negative_errno();
                        /*
                         * On a file system without RENAME_NOREPLACE, link and then unlink. link()
                         * fails rather than replace a file.
                         */
                        if (linkat(dir_fd, name, dir_fd, try, 0) < 0) {
                                if (errno == EEXIST)
                                        continue;
                                return negative_errno();
                        }
                        if (unlinkat(dir_fd, name, 0) < 0)
                                return negative_errno();
                }
                strcpy(aside, try);
                break;
        }
        return state_dir_sync(dir_fd);
}

int state_read_file(int dir_fd, const char *name, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* With O_NONBLOCK, a FIFO put there does not hang the open, and the check below refuses it. */
        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return read_fd_full(fd, STATE_FILE_SIZE_MAX, ret, ret_size);
}

int state_load(int dir_fd, const char *name, State *ret, char **ret_aside, StateError *ret_error) {
        _cleanup_free_ char *buf = NULL, *aside = NULL;
        StateError e = {};
        size_t size;
        State s;
        int r;

        if (!state_name_valid(name))
                return -EINVAL;

        temp_files_remove(dir_fd, name);

        r = state_read_file(dir_fd, name, &buf, &size);
        if (r == -EFBIG) {
                /* No valid file is this large, so the file counts as corrupt, like any other. */
                e = (StateError) {};
                snprintf(e.message, sizeof(e.message), "the file is larger than %u bytes; expected at most that",
                         STATE_FILE_SIZE_MAX);
                r = -EBADMSG;
        } else if (r >= 0)
                r = state_parse(buf, size, &s, &e);
        else
                return r;
        if (r == -EBADMSG) {
                /* The name is allocated before the rename, so that nothing can fail to report a rename once it is done. */
                aside = malloc(NAME_MAX + 1);
                if (!aside)
                        return -ENOMEM;
                int k = state_move_aside(dir_fd, name, aside);
                if (k < 0) {
                        /* Keep the corruption's description, shortened if need be, and add what happened to the file. */
                        size_t n = strnlen(e.message, sizeof(e.message) - 200);
                        if (aside[0])
                                snprintf(e.message + n, sizeof(e.message) - n, "; moved to %.100s but syncing the directory failed: %s",
                                         aside, strerror(-k));
                        else
                                snprintf(e.message + n, sizeof(e.message) - n, "; moving the file aside failed: %s", strerror(-k));
                        if (ret_error)
                                *ret_error = e;
                        return k;
                }
                if (ret_aside)
                        *ret_aside = TAKE_PTR(aside);
        }
        if (r < 0) {
                if (ret_error)
                        *ret_error = e;
                return r;
        }
        *ret = s;
        return 0;
}

int state_write_all(int fd, const char *buf, size_t size) {
        while (size > 0) {
                ssize_t k = write(fd, buf, size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                buf += k;
                size -= (size_t) k;
        }
        return 0;
}

/* Create ".NAME.tmp-RANDOM" exclusively, and put its name into tmp. */
static int temp_create(int dir_fd, const char *name, mode_t mode, char tmp[static NAME_MAX + 1]) {
        for (unsigned attempt = 0; attempt < 100; attempt++) {
                uint64_t rnd;
                int fd;

                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = ((uint64_t) getpid() << 32) ^ (uint64_t) time(NULL) ^ attempt;
                snprintf(tmp, NAME_MAX + 1, ".%s" TEMP_INFIX "%016" PRIx64, name, rnd);
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, mode);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return negative_errno();
        }
        return -EEXIST;
}

int state_file_replace(int dir_fd, const char *name, const char *buf, size_t size, mode_t mode) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char tmp[NAME_MAX + 1];
        int r;

        if (!state_name_valid(name))
                return -EINVAL;

        /* One fd for the directory makes the temporary file, the rename and the fsync all see the same directory. */
        dfd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();

        fd = temp_create(dfd, name, mode, tmp);
        if (fd < 0)
                return fd;

        /* The umask must not take permissions from a file that others read, such as node_exporter's metrics file. */
        r = fchmod(fd, mode) < 0 ? negative_errno() : 0;
        if (r >= 0)
                r = state_write_all(fd, buf, size);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0) {
                /* close() can report a delayed write error, for example on NFS. That error must not be lost. */

                int k = close(TAKE_FD(fd));
                if (k < 0 && errno != EINTR)
                        r = negative_errno();
        }
        if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(dfd, tmp, 0);
                return r;
        }

        /* The rename is only durable once the directory is. */
        if (fsync(dfd) < 0)
                return negative_errno();
        return 0;
}

int state_save(int dir_fd, const char *name, State *s, StateError *ret_error) {
        _cleanup_free_ char *buf = NULL;
        State next;
        size_t size;
        int r;

        if (!state_name_valid(name))
                return -EINVAL;
        if (s->generation >= INT64_MAX)
                return -EOVERFLOW;

        next = *s;
        next.generation++;
        r = state_format(&next, &buf, &size, ret_error);
        if (r < 0)
                return r;

        r = state_file_replace(dir_fd, name, buf, size, 0600);
        if (r < 0)
                return r;
        s->generation = next.generation;
        return 0;
}
