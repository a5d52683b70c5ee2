/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runtime.c — the daemon's files in $RUNTIME_DIRECTORY: gone at reboot, kept across a crash */

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd-config.h"
#include "sriovd/kernel/rootfs.h"
#include "runtime.h"

int runtime_file_write(const char *name, mode_t mode, RuntimeFill fill, const void *userdata) {
        return runtime_file_write_at(NULL, name, mode, fill, userdata);
}

int runtime_file_read(const char *name, char **ret) {
        return runtime_file_read_at(NULL, name, ret);
}

int runtime_lock(int *ret_fd) {
        return runtime_lock_at(getenv("RUNTIME_DIRECTORY"), true, ret_fd);
}

int runtime_lock_at(const char *dir, bool create, int *ret_fd) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        if (!dir) {
                *ret_fd = -EBADF;
                return 0;
        }
        if (asprintf(&path, "%s/lock", dir) < 0)
                return -ENOMEM;
        fd = open(path, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int runtime_file_remove(const char *name) {
        _cleanup_free_ char *path = NULL;
        const char *dir = getenv("RUNTIME_DIRECTORY");

        if (!dir)
                return 0;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        if (unlink(path) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

const char *runtime_memory_dir(RootFs *root, const char *state_dir) {
        if (getenv("RUNTIME_DIRECTORY"))
                return NULL;   /* runtime_file_*_at(NULL) picks RuntimeDirectory=. */
        if (rootfs_is_real(root) || !streq(state_dir, CONFIG_DEFAULT_STATE_DIR))
                return state_dir;
        return "";
}

int runtime_file_write_at(const char *dir, const char *name, mode_t mode, RuntimeFill fill, const void *userdata) {
        _cleanup_free_ char *path = NULL, *tmp = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        int fd;

        dir = dir ?: getenv("RUNTIME_DIRECTORY");
        if (!dir)
                return 0;
        if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "w");
        if (!f) {
                close(fd);
                (void) unlink(tmp);
                return -ENOMEM;
        }
        fill(f, userdata);
        if (fflush(f) != 0 || fchmod(fileno(f), mode) < 0 || rename(tmp, path) < 0) {
                int r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

int runtime_file_read_at(const char *dir, const char *name, char **ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;

        dir = dir ?: getenv("RUNTIME_DIRECTORY");
        if (!dir)
                return -ENOENT;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return read_fd_full(fd, 1024 * 1024, ret, NULL);
}

void saved_sched_format(FILE *f, const SavedSched *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%d %u %d %d%s%s\n", (int) s[i].pid, s[i].irq, s[i].policy, s[i].priority,
                        s[i].name[0] ? " " : "", s[i].name);
}

int saved_sched_cmp(const void *a, const void *b) {
        pid_t x = ((const SavedSched *) a)->pid, y = ((const SavedSched *) b)->pid;
        return (x > y) - (x < y);
}

int saved_sched_parse(const char *text, SavedSched **ret, size_t *ret_n) {
        _cleanup_free_ SavedSched *s = NULL;
        size_t n = 0, allocated = 0;

        for (const char *p = text; *p;) {
                int pid, policy, priority, consumed = 0;
                char name[KTHREAD_NAME_MAX] = "";
                unsigned irq;

                if (sscanf(p, "%d %u %d %d%n", &pid, &irq, &policy, &priority, &consumed) != 4 || pid <= 0 ||
                    (policy != SCHED_OTHER && policy != SCHED_FIFO && policy != SCHED_RR && policy != SCHED_BATCH &&
                     policy != SCHED_IDLE) ||
                    priority < 0 || priority > 99)
                        return -EBADMSG;
                p += consumed;
                /*
                 * The thread's name may follow. sriovd checks the name again before it touches
                 * that PID, because the PID may belong to another thread by then.
                 */

                if (*p == ' ') {
                        size_t len = 0;

                        p++;
                        while (p[len] > ' ' && p[len] < 0x7f)
                                len++;
                        if (len == 0 || len >= KTHREAD_NAME_MAX)
                                return -EBADMSG;
                        memcpy(name, p, len);
                        name[len] = 0;
                        p += len;
                }
                if (*p != '\n')
                        return -EBADMSG;
                p++;
                if (GREEDY_REALLOC(s, allocated, n + 1) < 0)
                        return -ENOMEM;
                s[n] = (SavedSched) { .pid = pid, .irq = irq, .policy = policy, .priority = priority };
                strcpy(s[n++].name, name);
        }
        qsort_safe(s, n, sizeof(*s), saved_sched_cmp);
        *ret = TAKE_PTR(s);
        *ret_n = n;
        return 0;
}

void unmanaged_irqs_format(FILE *f, const char *boot_id, const unsigned *irqs, size_t n) {
        fprintf(f, "boot %s\n", boot_id);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%u\n", irqs[i]);
}

int unmanaged_irqs_parse(const char *text, const char *boot_id, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 0, allocated = 0, len = strlen(boot_id);
        const char *p;

        if (strncmp(text, "boot ", 5) != 0)
                return -EBADMSG;
        if (strncmp(text + 5, boot_id, len) != 0 || text[5 + len] != '\n')
                return -ESTALE;
        for (p = text + 5 + len + 1; *p;) {
                unsigned long v;
                char *end;

                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                v = strtoul(p, &end, 10);
                if (*end != '\n' || v > INT32_MAX)
                        return -EBADMSG;
                if (GREEDY_REALLOC(irqs, allocated, n + 1) < 0)
                        return -ENOMEM;
                irqs[n++] = (unsigned) v;
                p = end + 1;
        }
        qsort_safe(irqs, n, sizeof(*irqs), unsigned_cmp);
        *ret = TAKE_PTR(irqs);
        *ret_n = n;
        return 0;
}
