/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.h — one logging boundary: journald with structured fields, or stderr */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "sriovd/macro.h"

/* Structured context; any member may be NULL/negative. */
typedef struct LogFields {
        const char *pf;
        const char *vf;
        const char *tenant;
        int irq;                  /* -1 = none */
        const char *message_id;   /* 32 hex digits, for key events */
} LogFields;

#define LOG_FIELDS(...) (&(const LogFields) { .irq = -1, __VA_ARGS__ })

typedef enum LogTarget {
        LOG_TARGET_AUTO,      /* journald when stderr is connected to it, else stderr */
        LOG_TARGET_JOURNAL,
        LOG_TARGET_STDERR,
} LogTarget;

void log_setup(LogTarget target, int max_level);
int log_get_max_level(void);
/* At runtime (org.freedesktop.LogControl1): the level alone, the target alone. */
void log_set_max_level(int max_level);
void log_set_target(LogTarget target);
LogTarget log_get_target(void);
/* syslog's names, as systemd spells them: "err", not "error". NULL when out of range. */
const char *log_level_to_string(int level);
bool log_to_journal(void);
/* "debug", "info", "notice", "warning", "err"/"error", "crit", or 0-7. */
int log_level_from_string(const char *s);

/*
 * Returns -abs(error) so callers can "return log_error_errno(r, ...)"; 0 when error is 0.
 * file, line and func are the caller's: the journal entry's CODE_FILE, CODE_LINE, CODE_FUNC.
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

/* MESSAGE_IDs of key events (journalctl MESSAGE_ID=...). */
#define SRIOVD_MESSAGE_STARTED     "5f2e6c1e0b3a4d6f9a51c2d7e8b40a11"
#define SRIOVD_MESSAGE_CYCLE       "8c1d2a7f4e5b46b3a9d0e1f2c3b4a512"
#define SRIOVD_MESSAGE_ACTION      "a3b9d1e7c2f04a58b6e1d2c3f4a5b613"
#define SRIOVD_MESSAGE_DRIFT       "d4e1f2a3b5c64d7e8f9a0b1c2d3e4f14"
#define SRIOVD_MESSAGE_UNMANAGED   "b7c8d9e0f1a24b3c9d4e5f6a7b8c9016"
#define SRIOVD_MESSAGE_RELOAD      "e6f7a8b9c0d14e2f8a3b4c5d6e7f8015"
#define SRIOVD_MESSAGE_VFS_READY   "1a2b3c4d5e6f47a8b9c0d1e2f3a4b517"
#define SRIOVD_MESSAGE_VFS_MISSING "9f8e7d6c5b4a43928170f6e5d4c3b218"
#define SRIOVD_MESSAGE_ALLOCATION  "3c4d5e6f708142a3b4c5d6e7f8091a19"
#define SRIOVD_MESSAGE_STATE       "7a6b5c4d3e2f41a0b9c8d7e6f5a4b320"
