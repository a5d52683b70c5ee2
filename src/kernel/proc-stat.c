/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc-stat.c — pure parsers of /proc/PID/stat and of kernel thread names such as "irq/N-name"
 *
 * The scan in irq.c and the re-check before a change in sched.c both use these parsers.
 * Keeping them here means that neither file calls into the other for them.
 */

#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

/*
 * Parses one decimal field by hand. strtoull() handles the locale, a sign and a base, and
 * calling it 39 times a line was most of the sampler's parse of a thread's times.
 * Like strtoull(), it fails with -ERANGE beyond 64 bits.
 */
static int parse_u64(const char **p, unsigned long long *ret) {
        const char *s = *p;
        unsigned long long v = 0;

        for (; *s >= '0' && *s <= '9'; s++) {
                unsigned d = (unsigned) (*s - '0');

                if (v >= ULLONG_MAX / 10 && (v > ULLONG_MAX / 10 || d > ULLONG_MAX % 10))
                        return -ERANGE;
                v = v * 10 + d;
        }
        *p = s;
        *ret = v;
        return 0;
}

int proc_stat_parse(const char *buf, ProcStat *ret) {
        ProcStat st = {};
        const char *open, *close, *p;
        char *end;
        long pid;

        /* The name may itself hold spaces and ')', so it ends at the last ')'. */
        open = strchr(buf, '(');
        close = strrchr(buf, ')');
        if (!open || !close || close < open)
                return -EINVAL;

        errno = 0;
        pid = strtol(buf, &end, 10);
        if (errno || end == buf || pid <= 0 || pid > INT32_MAX)
                return -EINVAL;
        st.pid = (pid_t) pid;
        strscpy(st.comm, MIN(sizeof(st.comm), (size_t) (close - open)), open + 1);

        /* The fields after the name are numbered as in proc(5), where field 3 is the state. */
        p = close + 1;
        for (unsigned field = 3; field <= 41; field++) {
                unsigned long long v;

                while (*p == ' ')
                        p++;
                if (!*p)
                        return -EINVAL;
                if (field == 3) {
                        p++;
                        continue;
                }
                if (*p == '-')
                        p++;   /* priority and nice may be negative, and neither is kept */
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                if (parse_u64(&p, &v) < 0)
                        return -ERANGE;   /* every field fits in 64 bits */
                if (field == 9)
                        st.flags = (unsigned long) v;
                else if (field == 14)
                        st.utime = v;
                else if (field == 15)
                        st.stime = v;
                else if (field == 22)
                        st.start_time = v;
                else if (field == 40)
                        st.rt_priority = (unsigned) MIN(v, 99ULL);
                else if (field == 41)
                        st.policy = (unsigned) MIN(v, 7ULL);
        }

        *ret = st;
        return 0;
}

int irq_thread_name_parse(const char *comm) {
        unsigned long v;
        char *end;

        if (strncmp(comm, "irq/", 4) != 0 || !isdigit((unsigned char) comm[4]))
                return -EINVAL;
        errno = 0;
        v = strtoul(comm + 4, &end, 10);
        /* The kernel cuts visible names at 15 characters, so "irq/1234" alone is a valid name. */
        if (errno || v > INT32_MAX || (*end && *end != '-'))
                return -EINVAL;
        return (int) v;
}

/* Parses a name such as "ksoftirqd/3". The CPU number follows the prefix, and nothing follows the number. */
static int percpu_name_parse(const char *comm, const char *prefix, unsigned *ret) {
        size_t n = strlen(prefix);
        unsigned long v;
        char *end;

        if (strncmp(comm, prefix, n) != 0 || !isdigit((unsigned char) comm[n]))
                return -EINVAL;
        errno = 0;
        v = strtoul(comm + n, &end, 10);
        if (errno || *end || v >= CPUSET_MAX)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int kthread_name_parse(const char *comm, KthreadKind *ret_kind, unsigned *ret_num, char ret_netdev[static IF_NAMESIZE]) {
        static const char *const percpu[_KTHREAD_KIND_MAX] = {
                [KTHREAD_KSOFTIRQD] = "ksoftirqd/", [KTHREAD_KTIMERS] = "ktimers/", [KTHREAD_RCUC] = "rcuc/",
        };
        const char *dash;
        unsigned long v;
        char *end;
        size_t len;

        for (KthreadKind k = 0; k < _KTHREAD_KIND_MAX; k++)
                if (percpu[k] && percpu_name_parse(comm, percpu[k], ret_num) >= 0) {
                        *ret_kind = k;
                        ret_netdev[0] = 0;
                        return 0;
                }

        /* The name has the form napi/DEV-ID. DEV may itself hold '-', so the ID follows the last '-'. */
        if (strncmp(comm, "napi/", 5) != 0)
                return -EINVAL;
        dash = strrchr(comm + 5, '-');
        if (!dash || !isdigit((unsigned char) dash[1]))
                return -EINVAL;
        len = (size_t) (dash - (comm + 5));
        if (len == 0 || len >= IF_NAMESIZE)
                return -EINVAL;
        errno = 0;
        v = strtoul(dash + 1, &end, 10);
        if (errno || *end || v == 0 || v > UINT32_MAX)
                return -EINVAL;
        memcpy(ret_netdev, comm + 5, len);
        ret_netdev[len] = 0;
        *ret_kind = KTHREAD_NAPI;
        *ret_num = (unsigned) v;
        return 0;
}
