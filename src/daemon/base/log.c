/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c — the process-wide log sink: journald with structured fields, or one line on stderr */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

/*
 * Without this define, sd-journal.h turns sd_journal_sendv() into a macro that adds log.c's own
 * CODE_FILE, CODE_LINE and CODE_FUNC to every entry, beside the caller's. Each entry would carry
 * two of each, and one CODE_FUNC would always say log_journal. The caller's location is sent as
 * fields instead.
 */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

/*
 * Logging is process-wide by nature, with one stderr and one journal connection. So this is the
 * one module allowed static state. log_setup() sets it at startup. Later, only
 * org.freedesktop.LogControl1 changes it, from the event loop's thread. sriovd logs from no
 * other thread.
 */
static LogTarget log_target = LOG_TARGET_AUTO;
static int log_max_level = LOG_INFO;
static int log_resolved = -1;   /* -1 until AUTO is resolved, then 0 for stderr or 1 for the journal */

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",
        [LOG_ALERT] = "alert",
        [LOG_CRIT] = "crit",
        [LOG_ERR] = "error",
        [LOG_WARNING] = "warning",
        [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",
        [LOG_DEBUG] = "debug",
};

/* Strict unsigned decimal: strtoull() alone would accept "-1", " 1" and "" too. */
static int parse_u64(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        *ret = v;
        return 0;
}

/*
 * This is systemd's own rule. stderr goes to journald exactly when JOURNAL_STREAM, in the form
 * "DEV:INODE", names the file that stderr is. A guess at whether sriovd runs as a service is not
 * enough. Run by hand from a unit's shell, or with stderr redirected, the native protocol would
 * send the messages where the operator is not looking. And sd-journal drops them silently when
 * there is no journald.
 */
static bool stderr_is_journal(void) {
        const char *e, *colon;
        uint64_t dev, ino;
        struct stat st;

        e = getenv("JOURNAL_STREAM");
        if (!e)
                return false;
        colon = strchr(e, ':');
        if (!colon)
                return false;
        if (parse_u64(e, (size_t) (colon - e), &dev) < 0 ||
            parse_u64(colon + 1, strlen(colon + 1), &ino) < 0)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;

        return (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

void log_set_max_level(int max_level) {
        log_max_level = max_level < LOG_EMERG ? LOG_EMERG : max_level > LOG_DEBUG ? LOG_DEBUG : max_level;
}

void log_setup(LogTarget target, int max_level) {
        log_target = target;
        log_set_max_level(max_level);

        /* Decide now, not per message, because the environment and stderr are fixed after startup. */
        switch (target) {
        case LOG_TARGET_JOURNAL:
                log_resolved = 1;
                break;
        case LOG_TARGET_STDERR:
                log_resolved = 0;
                break;
        case LOG_TARGET_AUTO:
        default:
                log_resolved = stderr_is_journal();
                break;
        }
}

int log_get_max_level(void) {
        return log_max_level;
}

void log_set_target(LogTarget target) {
        log_setup(target, log_max_level);
}

LogTarget log_get_target(void) {
        return log_target;
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(level_names))
                return NULL;
        return level == LOG_ERR ? "err" : level_names[level];
}

bool log_to_journal(void) {
        /* Logging before log_setup() must still work, with the defaults. */
        if (log_resolved < 0)
                log_setup(log_target, log_max_level);
        return log_resolved > 0;
}

int log_level_from_string(const char *s) {
        if (!s)
                return -EINVAL;

        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';

        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (streq(s, level_names[i]))
                        return (int) i;
        /* Also accept syslog's own spelling, as in LOG_ERR and systemd's --log-level=err. */
        if (streq(s, "err"))
                return LOG_ERR;

        return -EINVAL;
}

/* Each journal field must be one "NAME=value" iovec, so the fields are built whole, not split. */
static char *field_new(const char *name, const char *value) {
        char *p;

        if (asprintf(&p, "%s=%s", name, value) < 0)
                return NULL;
        return p;
}

/* NULL means the field could not be built and is left out. */
static void iov_add(struct iovec *iov, size_t *n, const char *s) {
        if (s)
                iov[(*n)++] = (struct iovec) { (void *) s, strlen(s) };
}

static int log_journal(int level, int error, const LogFields *f, const char *file, int line,
                       const char *func, const char *message) {
        char prio[sizeof("PRIORITY=") + 1];
        char line_buf[sizeof("CODE_LINE=") + 12];
        char errno_buf[sizeof("ERRNO=") + 12];
        char irq_buf[sizeof("SRIOVD_IRQ=") + 12];
        _cleanup_free_ char *msg = NULL, *code_file = NULL, *code_func = NULL, *pf = NULL, *vf = NULL,
                            *tenant = NULL, *message_id = NULL;
        struct iovec iov[12 + LOG_EXTRA_MAX];
        size_t n = 0;

        msg = field_new("MESSAGE", message);
        if (!msg)
                return -ENOMEM;
        iov_add(iov, &n, msg);

        snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
        iov_add(iov, &n, prio);
        iov_add(iov, &n, "SYSLOG_IDENTIFIER=sriovd");

        /* Missing optional fields only cost context, so allocation failure just skips them. */
        if (file) {
                code_file = field_new("CODE_FILE", file);
                iov_add(iov, &n, code_file);
        }
        if (line > 0) {
                snprintf(line_buf, sizeof(line_buf), "CODE_LINE=%d", line);
                iov_add(iov, &n, line_buf);
        }
        if (func) {
                code_func = field_new("CODE_FUNC", func);
                iov_add(iov, &n, code_func);
        }
        if (error != 0) {
                snprintf(errno_buf, sizeof(errno_buf), "ERRNO=%d", error);
                iov_add(iov, &n, errno_buf);
        }
        if (f) {
                if (f->pf) {
                        pf = field_new("SRIOVD_PF", f->pf);
                        iov_add(iov, &n, pf);
                }
                if (f->vf) {
                        vf = field_new("SRIOVD_VF", f->vf);
                        iov_add(iov, &n, vf);
                }
                if (f->tenant) {
                        tenant = field_new("SRIOVD_TENANT", f->tenant);
                        iov_add(iov, &n, tenant);
                }
                if (f->irq >= 0) {
                        snprintf(irq_buf, sizeof(irq_buf), "SRIOVD_IRQ=%d", f->irq);
                        iov_add(iov, &n, irq_buf);
                }
                if (f->message_id) {
                        message_id = field_new("MESSAGE_ID", f->message_id);
                        iov_add(iov, &n, message_id);
                }
                for (size_t i = 0; f->extra && f->extra[i] && i < LOG_EXTRA_MAX; i++)
                        iov_add(iov, &n, f->extra[i]);
        }

        return sd_journal_sendv(iov, (int) n);
}

static void log_stderr(int level, const LogFields *f, const char *message) {
        char fields[512] = "";
        size_t len = 0;
        struct iovec iov[6];
        size_t n = 0;

#define FIELD_ADD(fmt, ...)                                                             \
        do {                                                                            \
                if (len < sizeof(fields)) {                                             \
                        int k = snprintf(fields + len, sizeof(fields) - len, "%s" fmt,  \
                                         len == 0 ? "" : " ", __VA_ARGS__);             \
                        if (k > 0)                                                      \
                                len += (size_t) k;                                      \
                }                                                                       \
        } while (0)

        if (f) {
                if (f->pf)
                        FIELD_ADD("pf=%s", f->pf);
                if (f->vf)
                        FIELD_ADD("vf=%s", f->vf);
                if (f->tenant)
                        FIELD_ADD("tenant=%s", f->tenant);
                if (f->irq >= 0)
                        FIELD_ADD("irq=%d", f->irq);
                for (size_t i = 0; f->extra && f->extra[i] && i < LOG_EXTRA_MAX; i++) {
                        const char *e = f->extra[i], *eq = strchr(e, '=');
                        char name[64];
                        size_t w = 0;

                        if (!eq)
                                continue;
                        if (strncmp(e, "SRIOVD_", 7) == 0)
                                e += 7;
                        for (; e < eq && w < sizeof(name) - 1; e++)
                                name[w++] = (char) (*e >= 'A' && *e <= 'Z' ? *e - 'A' + 'a' : *e);
                        name[w] = 0;
                        FIELD_ADD("%s=%s", name, eq + 1);
                }
                /* MESSAGE_ID is for journalctl queries; on a terminal it is only noise. */
        }
#undef FIELD_ADD
        if (len >= sizeof(fields))
                len = sizeof(fields) - 1;

        iov[n++] = (struct iovec) { (void *) level_names[level], strlen(level_names[level]) };
        iov[n++] = (struct iovec) { (void *) ": ", 2 };
        iov[n++] = (struct iovec) { (void *) message, strlen(message) };
        if (len > 0) {
                iov[n++] = (struct iovec) { (void *) " [", 2 };
                fields[len] = ']';
                iov[n++] = (struct iovec) { fields, len + 1 };
        }
        iov[n++] = (struct iovec) { (void *) "\n", 1 };

        /*
         * One writev() per message rather than stdio: stderr is unbuffered, so fprintf() would
         * issue several writes and lines of concurrent writers could interleave mid-line.
         * Nothing useful can be done if stderr itself fails. The result still goes into a variable,
         * because fortify's writev() wants its result used, and a (void) cast does not count.
         */
        ssize_t k = writev(STDERR_FILENO, iov, (int) n);
        (void) k;
}

int log_emit(int level, int error, const LogFields *f, const char *file, int line, const char *func,
             const char *fmt, ...) {
        char message[LINE_MAX];
        int saved_errno = errno;
        va_list ap;

        /* abs(INT_MIN) is undefined; no real errno is anywhere near it. */
        if (error == INT_MIN)
                error = INT_MAX;
        error = abs(error);

        level = LOG_PRI(level);
        /* The cheap path for filtered debug messages: no formatting, no syscalls. */
        if (level > log_max_level)
                return -error;

        /* %m prints glibc's strerror(errno), so point errno at the error that the caller passed. */
        errno = error;
        va_start(ap, fmt);
        (void) vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);

        /*
         * If journald's socket exists but nobody listens, as while journald restarts, sendv fails
         * with ECONNREFUSED. Then stderr still reaches the operator. With no socket at all, sendv
         * returns 0 and the message is lost. That is why AUTO checks JOURNAL_STREAM instead.
         */
        if (!log_to_journal() || log_journal(level, error, f, file, line, func, message) < 0)
                log_stderr(level, f, message);

        /* Callers log between syscalls and then inspect errno, so errno must come back unchanged. */
        errno = saved_errno;
        return -error;
}
