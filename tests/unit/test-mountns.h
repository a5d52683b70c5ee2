/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-mountns.h — a private mount namespace for a test, or a skip that says why */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "test.h"

static inline bool test_write_proc(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        bool ok;

        if (fd < 0)
                return false;
        ok = write(fd, text, strlen(text)) == (ssize_t) strlen(text);
        close(fd);
        return ok;
}

/* Writes "0 ID 1" to a uid_map or gid_map, so that the outside id is root inside. */
static inline bool test_write_id_map(const char *path, unsigned id) {
        char buf[32];

        snprintf(buf, sizeof(buf), "0 %u 1", id);
        return test_write_proc(path, buf);
}

/*
 * Makes / private in the caller's new mount namespace, so that nothing mounted there is seen
 * outside. Where / is not a mount point, as in a build chroot, it prints why and calls leave(77).
 */
static inline void test_mount_make_private(void (*leave)(int status)) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr, "SKIP: cannot make / private in a mount namespace (%m%s)\n",
                        errno == EINVAL ? ": / is not a mount point, e.g. a build chroot" : "");
                leave(EXIT_TEST_SKIP);
        }
}

/*
 * Moves the calling process into a mount namespace of its own, with / private, so that nothing
 * it mounts is seen outside. Root may make one. Anyone may where user namespaces are allowed;
 * the user is then mapped to root inside, so that it owns what it creates. Where neither works,
 * or where / is not a mount point as in a build chroot, it prints why and calls leave(77).
 * A child of a forking test passes _exit, so that the parent's atexit handlers do not run.
 */
static inline void test_mount_ns_enter(void (*leave)(int status)) {
        if (unshare(CLONE_NEWNS) < 0) {
                uid_t uid = geteuid();
                gid_t gid = getegid();

                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
                        fprintf(stderr, "SKIP: no private mount namespace (unshare: %m; needs CAP_SYS_ADMIN "
                                        "or user namespaces)\n");
                        leave(EXIT_TEST_SKIP);
                }
                if (!test_write_proc("/proc/self/setgroups", "deny") ||
                    !test_write_id_map("/proc/self/uid_map", (unsigned) uid) ||
                    !test_write_id_map("/proc/self/gid_map", (unsigned) gid)) {
                        fprintf(stderr, "SKIP: cannot map this user in a user namespace: %m\n");
                        leave(EXIT_TEST_SKIP);
                }
        }
        test_mount_make_private(leave);
}
