/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.h — the one place that logs, to journald with structured fields or to stderr */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "sriovd/shared/macro.h"

/* The structured context of a message. Any member may be NULL, or negative for irq. */
typedef struct LogFields {
        const char *pf;
        const char *vf;
        const char *tenant;
        int irq;                  /* -1 for none */
        const char *message_id;   /* 32 hex digits, for key events */
        /*
         * More journal fields, each "SRIOVD_NAME=value", in a NULL-terminated list. Only the
         * first LOG_EXTRA_MAX are kept, and the rest are dropped. On stderr they print as
         * name=value, in lowercase and without SRIOVD_.
         */
        const char *const *extra;
} LogFields;

#define LOG_EXTRA_MAX 16

#define LOG_FIELDS(...) (&(const LogFields) { .irq = -1, __VA_ARGS__ })

typedef enum LogTarget {
        LOG_TARGET_AUTO,      /* journald when stderr is connected to it, else stderr */
        LOG_TARGET_JOURNAL,
        LOG_TARGET_STDERR,
} LogTarget;

void log_setup(LogTarget target, int max_level);
int log_get_max_level(void);
/* These change the level alone or the target alone at runtime, for org.freedesktop.LogControl1. */
void log_set_max_level(int max_level);
void log_set_target(LogTarget target);
LogTarget log_get_target(void);
/*
 * Returns syslog's name of a level as systemd spells it, such as "err" and not "error". Returns
 * NULL when out of range.
 */
const char *log_level_to_string(int level);
bool log_to_journal(void);
/*
 * Returns the level that s names, or -EINVAL. s is a name such as "debug", "info", "notice",
 * "warning", "err" or "error", "crit", "alert" and "emerg", or a number from 0 to 7.
 */
int log_level_from_string(const char *s);

/*
 * Returns -abs(error), so that callers can write "return log_error_errno(r, ...)". Returns 0 when
 * error is 0. file, line and func are the caller's, and they become the journal entry's
 * CODE_FILE, CODE_LINE and CODE_FUNC.
 */
int log_emit(int level, int error, const LogFields *f, const char *file, int line, const char *func,
             const char *fmt, ...) _printf_(7, 8);

#define log_full_errno(level, error, fields, ...) \
        log_emit(level, error, fields, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, NULL, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, NULL, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, NULL, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, NULL, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, NULL, __VA_ARGS__)
#define log_warning_errno(r, ...) log_full_errno(LOG_WARNING, r, NULL, __VA_ARGS__)
#define log_error_errno(r, ...) log_full_errno(LOG_ERR, r, NULL, __VA_ARGS__)
#define log_oom() log_error_errno(-ENOMEM, "Out of memory")

/*
 * The MESSAGE_IDs of key events, for journalctl MESSAGE_ID=.... They were made with
 * `systemd-id128 new`. Never reuse or edit one; make a new one instead. Each has an entry in
 * catalog/sriovd.catalog, which journalctl -x shows. tests/docs/test-catalog.py fails when the
 * two disagree.
 */
#define SRIOVD_MESSAGE_STARTED     "65c74e1faf954daf96962a3b3ea2873d"
#define SRIOVD_MESSAGE_CYCLE       "63f2ee92601f45a1a2101a9c886789d8"
#define SRIOVD_MESSAGE_ACTION      "d5ae6d281ede495f8855c9a76519fbb5"
#define SRIOVD_MESSAGE_DRIFT       "2a96e7343e7742c2aa1b981aec955101"
#define SRIOVD_MESSAGE_UNMANAGED   "01d2013ad5004443bf64906983c2ec3d"
#define SRIOVD_MESSAGE_RELOAD      "0c4f75ce4bcd408e99b9cac91b5daae2"
#define SRIOVD_MESSAGE_VFS_READY   "4e604473ead84fb1aeb66100380b564d"
#define SRIOVD_MESSAGE_VFS_MISSING "e2aae87d1cf941db9cb7c9201e288640"
#define SRIOVD_MESSAGE_ALLOCATION  "fc781dbc665c49a18dd8c18baaaf914d"
#define SRIOVD_MESSAGE_STATE       "78df8c09e7624d0c8354330a6f5a18e3"
#define SRIOVD_MESSAGE_ALERT_RAISED  "853e3175dcba4be788ba9806f0bc50c8"
#define SRIOVD_MESSAGE_ALERT_CLEARED "58fcbe781d9a41a396bbf0b5c90aa369"
#define SRIOVD_MESSAGE_KERNEL_EVENTS "ad4d09348c9d40e2a843371e8c5fa142"
