/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vhost.c — finds a guest's QEMU process and its vhost-net workers through /proc, and places the workers */

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <strings.h>

#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/vhost.h"

/* A command line longer than this does not belong to a QEMU that libvirt started.
 * Reading all of it would cost time for nothing. */
#define CMDLINE_MAX (256 * 1024)

bool qemu_cmdline_has_uuid(const char *buf, size_t size, const char *uuid) {
        const char *end = buf + size;
        bool next = false;

        if (!buf || !uuid || !*uuid)
                return false;
        for (const char *p = buf; p < end;) {
                size_t len = strnlen(p, (size_t) (end - p));

                if (next)
                        return len == strlen(uuid) && strncasecmp(p, uuid, len) == 0;
                next = len == 5 && memcmp(p, "-uuid", 5) == 0;
                p += len + 1;
        }
        return false;
}

static int read_cmdline(RootFs *root, pid_t pid, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        /* O_NONBLOCK keeps a FIFO in a hostile tree from blocking the open. */
        fd = rootfs_open(root, O_RDONLY | O_NOCTTY | O_NONBLOCK, "/proc/%d/cmdline", (int) pid);
        if (fd < 0)
                return fd;
        return read_fd_full(fd, CMDLINE_MAX, ret, ret_size);
}

static bool pid_is_qemu(RootFs *root, pid_t pid, const char *uuid) {
        _cleanup_free_ char *buf = NULL;
        size_t size;

        return read_cmdline(root, pid, &buf, &size) >= 0 && qemu_cmdline_has_uuid(buf, size, uuid);
}

int qemu_pid_find(RootFs *root, const char *uuid, pid_t hint, pid_t *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (!uuid || !*uuid)
                return -EINVAL;
        if (hint > 0 && pid_is_qemu(root, hint, uuid)) {
                *ret = hint;
                return 0;
        }
        r = rootfs_opendir(root, &d, "/proc");
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                pid_t pid;

                if (proc_pid_parse(de->d_name, &pid) >= 0 && pid != hint && pid_is_qemu(root, pid, uuid)) {
                        *ret = pid;
                        return 0;
                }
        }
        return -ENOENT;
}

/* Every vhost worker of qemu has the name "vhost-PID", which vhost_worker_create() gives it. */
static void vhost_name(pid_t qemu, char *buf, size_t size) {
        snprintf(buf, size, "vhost-%d", (int) qemu);
}

int proc_status_cpus_parse(const char *status, CpuSet *ret) {
        static const char key[] = "Cpus_allowed_list:";
        _cleanup_free_ char *line = NULL;

        for (const char *p = status; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                const char *eol;

                if (strncmp(p, key, strlen(key)) != 0)
                        continue;
                p += strlen(key);
                eol = strchrnul(p, '\n');
                line = strndup(p, (size_t) (eol - p));
                if (!line)
                        return -ENOMEM;
                return cpuset_parse_list(line, ret) < 0 ? -EBADMSG : 0;
        }
        return -EBADMSG;
}

/* Returns 1 and fills *ret when st, under dir, is a vhost worker of qemu.
 * Returns 0 when it is another thread or is gone. */
static int read_worker(RootFs *root, const char *dir, pid_t qemu, pid_t tid, const ProcStat *st, bool kthread,
                       VhostThread *ret) {
        _cleanup_free_ char *status = NULL;
        char name[32];
        int r;

        vhost_name(qemu, name, sizeof(name));
        if (!streq(st->comm, name) || !!(st->flags & PF_KTHREAD) != kthread)
                return 0;
        r = rootfs_read(root, &status, "%s/%d/status", dir, (int) tid);
        if (r == -ENOENT || r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        *ret = (VhostThread) { .tid = tid, .kthread = kthread, .policy = (int) st->policy,
                               .priority = (int) st->rt_priority };
        r = proc_status_cpus_parse(status, &ret->cpus);
        return r < 0 ? r : 1;
}

static int vhost_thread_cmp(const void *a, const void *b) {
        const VhostThread *x = a, *y = b;
        return (x->tid > y->tid) - (x->tid < y->tid);
}

typedef struct WorkerScan {
        pid_t qemu;
        bool kthread;
        VhostThread *threads;
        size_t n, allocated;
} WorkerScan;

static int scan_one(RootFs *root, const char *dir, pid_t tid, const ProcStat *st, void *userdata) {
        WorkerScan *s = userdata;
        VhostThread t;
        int r;

        r = read_worker(root, dir, s->qemu, tid, st, s->kthread, &t);
        if (r == -EBADMSG || r == 0)
                return 0;   /* a thread that is not a worker, is gone or has an unreadable status is not sriovd's to place */
        if (r < 0)
                return r;
        if (GREEDY_REALLOC(s->threads, s->allocated, s->n + 1) < 0)
                return -ENOMEM;
        s->threads[s->n++] = t;
        return 0;
}

int vhost_threads_scan(RootFs *root, pid_t qemu, VhostThread **ret, size_t *ret_n) {
        _cleanup_free_ VhostThread *threads = NULL;
        WorkerScan s = { .qemu = qemu };
        char task[32];
        int r;

        if (qemu <= 0)
                return -EINVAL;
        snprintf(task, sizeof(task), "/proc/%d/task", (int) qemu);
        r = proc_threads_each(root, task, qemu, scan_one, &s);
        threads = s.threads;
        if (r < 0)
                return r == -ENOTDIR ? -ENOENT : r;
        /* On a kernel without vhost_task, the workers are kernel threads that only their name identifies. */
        if (s.n == 0) {
                s.kthread = true;
                r = proc_threads_each(root, "/proc", qemu, scan_one, &s);
                threads = s.threads;
                if (r < 0)
                        return r;
        }
        qsort_safe(threads, s.n, sizeof(*threads), vhost_thread_cmp);
        *ret = TAKE_PTR(threads);
        *ret_n = s.n;
        return 0;
}

int vhost_thread_set(RootFs *root, pid_t qemu, const VhostThread *t, const CpuSet *cpus, int policy, int priority) {
        VhostThread now;
        char task[32];
        ProcStat st;
        int r;

        snprintf(task, sizeof(task), t->kthread ? "/proc" : "/proc/%d/task", (int) qemu);
        r = proc_thread_stat(root, task, t->tid, &st);
        if (r < 0)
                return r;
        r = read_worker(root, task, qemu, t->tid, &st, t->kthread, &now);
        if (r < 0)
                return r;
        if (r == 0)
                return -ESRCH;

        return sched_thread_change(t->tid, &now.cpus, now.policy, now.priority, cpus, policy, priority);
}
