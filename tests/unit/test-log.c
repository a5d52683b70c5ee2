/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-log.c — stderr format, level filtering, %m, return values and the journald decision */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "test-mountns.h"
#include "test.h"

/*
 * LOG_FIELDS() defaults .irq to -1 and lets the caller override it, which is exactly what
 * -Woverride-init (in -Wextra) flags. Until log.h or the build settles that, callers that
 * pass .irq need this.
 */
#pragma GCC diagnostic ignored "-Woverride-init"

/*
 * stderr is swapped for an unlinked temp file while the code under test runs. Assertions are
 * made only after capture_end(), so their own messages reach the real stderr.
 */
static int saved_stderr = -1;
static int capture_fd = -1;

static void capture_begin(void) {
        char path[] = "/tmp/test-log-XXXXXX";

        ASSERT(saved_stderr < 0);
        capture_fd = mkstemp(path);
        ASSERT(capture_fd >= 0);
        ASSERT(unlink(path) == 0);
        saved_stderr = dup(STDERR_FILENO);
        ASSERT(saved_stderr >= 0);
        ASSERT(dup2(capture_fd, STDERR_FILENO) == STDERR_FILENO);
}

/* Returns what was written to stderr since capture_begin(); the caller frees it. */
static char *capture_end(void) {
        struct stat st;
        char *buf;
        ssize_t n;

        ASSERT(dup2(saved_stderr, STDERR_FILENO) == STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;

        ASSERT(fstat(capture_fd, &st) == 0);
        buf = calloc(1, (size_t) st.st_size + 1);
        ASSERT(buf);
        n = pread(capture_fd, buf, (size_t) st.st_size, 0);
        ASSERT_EQ(n, st.st_size);
        close(capture_fd);
        capture_fd = -1;
        return buf;
}

TEST(stderr_format) {
        char *out;
        int r;

        log_setup(LOG_TARGET_STDERR, LOG_DEBUG);
        capture_begin();
        r = log_full_errno(LOG_WARNING, -EBUSY, LOG_FIELDS(.pf = "0000:41:00.0", .vf = "3"),
                           "Failed to set VF %u MAC: %m", 3u);
        out = capture_end();
        ASSERT_EQ(r, -EBUSY);
        ASSERT_STREQ(out, "warning: Failed to set VF 3 MAC: Device or resource busy "
                          "[pf=0000:41:00.0 vf=3]\n");
        free(out);

        /* No fields: no brackets. Every level name an operator will see. */
        capture_begin();
        log_full_errno(LOG_EMERG, 0, NULL, "a");
        log_full_errno(LOG_ALERT, 0, NULL, "b");
        log_full_errno(LOG_CRIT, 0, NULL, "c");
        log_error("d");
        log_warning("e");
        log_notice("f");
        log_info("g");
        log_debug("h %d", 8);
        out = capture_end();
        ASSERT_STREQ(out, "emerg: a\nalert: b\ncrit: c\nerror: d\nwarning: e\n"
                          "notice: f\ninfo: g\ndebug: h 8\n");
        free(out);
}

TEST(stderr_fields) {
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_INFO);

        /* All fields in a fixed order; MESSAGE_ID is journal-only. */
        capture_begin();
        log_full_errno(LOG_INFO, 0,
                       LOG_FIELDS(.pf = "0000:41:00.0", .vf = "0000:41:00.2", .tenant = "acme",
                                  .irq = 142, .message_id = SRIOVD_MESSAGE_ACTION),
                       "Pinned");
        out = capture_end();
        ASSERT_STREQ(out, "info: Pinned [pf=0000:41:00.0 vf=0000:41:00.2 tenant=acme irq=142]\n");
        free(out);

        /* IRQ 0 is a real IRQ; only negative means "none". */
        capture_begin();
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.irq = 0), "x");
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = "t"), "y");
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_STARTED), "z");
        out = capture_end();
        ASSERT_STREQ(out, "info: x [irq=0]\ninfo: y [tenant=t]\ninfo: z\n");
        free(out);
}

TEST(return_value) {
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_DEBUG);
        capture_begin();
        ASSERT_EQ(log_error_errno(-EIO, "neg"), -EIO);
        ASSERT_EQ(log_error_errno(EIO, "pos"), -EIO);
        ASSERT_EQ(log_warning_errno(0, "zero"), 0);
        ASSERT_EQ(log_info("plain"), 0);
        /* Must not be undefined behaviour (abs(INT_MIN)); any negative result will do. */
        ASSERT(log_error_errno(INT_MIN, "min") < 0);
        out = capture_end();
        ASSERT_CONTAINS(out, "error: neg\n");
        ASSERT_CONTAINS(out, "error: pos\n");
        free(out);
}

TEST(percent_m) {
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        capture_begin();
        errno = EPERM;  /* must be ignored: the error argument wins */
        log_error_errno(-ENOENT, "open: %m");
        log_error_errno(ENOSPC, "%s failed: %m, ignoring", "write");
        out = capture_end();
        ASSERT_STREQ(out, "error: open: No such file or directory\n"
                          "error: write failed: No space left on device, ignoring\n");
        free(out);
}

TEST(errno_preserved) {
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        capture_begin();
        errno = EAGAIN;
        log_error_errno(-ENOENT, "%m");
        ASSERT_EQ(errno, EAGAIN);
        log_debug("filtered");
        ASSERT_EQ(errno, EAGAIN);
        out = capture_end();
        free(out);
}

TEST(level_filter) {
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_NOTICE);
        ASSERT_EQ(log_get_max_level(), LOG_NOTICE);
        capture_begin();
        /* Dropped messages still hand the error back, so "return log_..." works at any level. */
        ASSERT_EQ(log_full_errno(LOG_INFO, -EBUSY, NULL, "dropped"), -EBUSY);
        ASSERT_EQ(log_debug("dropped too"), 0);
        ASSERT_EQ(log_full_errno(LOG_NOTICE, EBUSY, NULL, "kept"), -EBUSY);
        log_warning("kept too");
        out = capture_end();
        ASSERT_STREQ(out, "notice: kept\nwarning: kept too\n");
        free(out);

        /* Out-of-range levels are clamped, not trusted. */
        log_setup(LOG_TARGET_STDERR, 42);
        ASSERT_EQ(log_get_max_level(), LOG_DEBUG);
        log_setup(LOG_TARGET_STDERR, -3);
        ASSERT_EQ(log_get_max_level(), LOG_EMERG);
}

TEST(truncation) {
        char *big, *out;
        size_t n = 3 * LINE_MAX;

        big = malloc(n + 1);
        ASSERT(big);
        memset(big, 'x', n);
        big[n] = '\0';

        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        capture_begin();
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.pf = big), "%s", big);
        out = capture_end();
        /* Cut, but still one line with its closing bracket. */
        ASSERT(strncmp(out, "info: xxx", 9) == 0);
        ASSERT(strlen(out) < n);
        ASSERT_EQ(strchr(out, '\n') - out, (long) strlen(out) - 1);
        ASSERT_CONTAINS(out, "]\n");
        free(out);
        free(big);
}

TEST(level_from_string) {
        static const struct {
                const char *s;
                int level;
        } cases[] = {
                { "debug", LOG_DEBUG },    { "info", LOG_INFO },   { "notice", LOG_NOTICE },
                { "warning", LOG_WARNING }, { "err", LOG_ERR },     { "error", LOG_ERR },
                { "crit", LOG_CRIT },      { "alert", LOG_ALERT }, { "emerg", LOG_EMERG },
                { "0", 0 },                { "3", 3 },             { "7", 7 },
                { "8", -EINVAL },          { "-1", -EINVAL },      { "07", -EINVAL },
                { "", -EINVAL },           { "inf", -EINVAL },     { "info ", -EINVAL },
                { "warn", -EINVAL },       { "3x", -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r = log_level_from_string(cases[i].s);
                if (r != cases[i].level)
                        fprintf(stderr, "case \"%s\"\n", cases[i].s);
                ASSERT_EQ(r, cases[i].level);
        }
        ASSERT_EQ(log_level_from_string(NULL), -EINVAL);
}

TEST(auto_target) {
        struct stat st;
        char buf[64];

        /* stderr is the temp file here, so its dev:ino is known and unique to this test. */
        capture_begin();
        ASSERT(fstat(STDERR_FILENO, &st) == 0);

        snprintf(buf, sizeof(buf), "%" PRIu64 ":%" PRIu64, (uint64_t) st.st_dev,
                 (uint64_t) st.st_ino);
        ASSERT(setenv("JOURNAL_STREAM", buf, 1) == 0);
        log_setup(LOG_TARGET_AUTO, LOG_INFO);
        bool matched = log_to_journal();
        /* An explicit target overrides the environment either way. */
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        bool forced_stderr = log_to_journal();

        snprintf(buf, sizeof(buf), "%" PRIu64 ":%" PRIu64, (uint64_t) st.st_dev,
                 (uint64_t) st.st_ino + 1);
        ASSERT(setenv("JOURNAL_STREAM", buf, 1) == 0);
        log_setup(LOG_TARGET_AUTO, LOG_INFO);
        bool other_inode = log_to_journal();

        bool garbage = false;
        static const char *const bad[] = { "", ":", "1", "1:", ":1", "a:b", "-1:2", " 1:2",
                                           "1:2:3", "99999999999999999999999:1" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ASSERT(setenv("JOURNAL_STREAM", bad[i], 1) == 0);
                log_setup(LOG_TARGET_AUTO, LOG_INFO);
                garbage = garbage || log_to_journal();
        }

        ASSERT(unsetenv("JOURNAL_STREAM") == 0);
        log_setup(LOG_TARGET_AUTO, LOG_INFO);
        bool unset = log_to_journal();
        log_setup(LOG_TARGET_JOURNAL, LOG_INFO);
        bool forced_journal = log_to_journal();
        log_setup(LOG_TARGET_STDERR, LOG_INFO);

        free(capture_end());
        ASSERT(matched);
        ASSERT(!forced_stderr);
        ASSERT(!other_inode);
        ASSERT(!garbage);
        ASSERT(!unset);
        ASSERT(forced_journal);
}

/* Occurrences of needle in haystack. */
static unsigned count(const char *haystack, const char *needle) {
        unsigned n = 0;

        for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/*
 * Journal mode, checked on the wire: a child gets a private mount namespace with a tmpfs on
 * /run and binds its own datagram socket where journald's would be. The host's /run and
 * journal are never touched; where no such namespace can be made the test skips (77).
 */
static void journal_child(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX,
                                  .sun_path = "/run/systemd/journal/socket" };
        static char buf[65536];
        char *out;
        ssize_t n;
        int fd, r;

        /* Without a private /, the tmpfs below would appear on the host's /run too. */
        test_mount_ns_enter(_exit);
        if (mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0) {
                fprintf(stderr, "SKIP: cannot mount a tmpfs on /run in a mount namespace: %m\n");
                _exit(EXIT_TEST_SKIP);
        }
        ASSERT(mkdir("/run/systemd", 0755) == 0);
        ASSERT(mkdir("/run/systemd/journal", 0755) == 0);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ASSERT(fd >= 0);
        ASSERT(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);

        log_setup(LOG_TARGET_JOURNAL, LOG_INFO);
        capture_begin();
        r = log_full_errno(LOG_ERR, -EBUSY,
                           LOG_FIELDS(.pf = "0000:41:00.0", .vf = "3", .tenant = "acme",
                                      .irq = 142, .message_id = SRIOVD_MESSAGE_ACTION),
                           "Failed to set VF %u MAC: %m", 3u);
        out = capture_end();
        ASSERT_EQ(r, -EBUSY);
        ASSERT_STREQ(out, "");  /* journal only, not both */
        free(out);

        n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        ASSERT(n > 0);
        buf[n] = '\0';
        ASSERT_CONTAINS(buf, "MESSAGE=Failed to set VF 3 MAC: Device or resource busy\n");
        ASSERT_CONTAINS(buf, "PRIORITY=3\n");
        ASSERT_CONTAINS(buf, "SYSLOG_IDENTIFIER=sriovd\n");
        ASSERT_CONTAINS(buf, "ERRNO=16\n");
        /* The caller's location, once: not log.c's beside it (sd-journal.h's macros add theirs). */
        ASSERT_CONTAINS(buf, "CODE_FILE=" __FILE__ "\n");
        ASSERT_EQ(count(buf, "CODE_FILE="), 1);
        ASSERT_EQ(count(buf, "CODE_LINE="), 1);
        ASSERT_EQ(count(buf, "CODE_FUNC="), 1);
        ASSERT_CONTAINS(buf, "\nCODE_FUNC=journal_child\n");
        ASSERT_EQ(count(buf, "daemon/log.c"), 0);
        ASSERT_CONTAINS(buf, "SRIOVD_PF=0000:41:00.0\n");
        ASSERT_CONTAINS(buf, "SRIOVD_VF=3\n");
        ASSERT_CONTAINS(buf, "SRIOVD_TENANT=acme\n");
        ASSERT_CONTAINS(buf, "SRIOVD_IRQ=142\n");
        ASSERT_CONTAINS(buf, "MESSAGE_ID=" SRIOVD_MESSAGE_ACTION "\n");

        /* No error, no fields: none of the optional entries. Filtered: nothing sent. */
        log_debug("not sent");
        log_info("plain");
        n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        ASSERT(n > 0);
        buf[n] = '\0';
        ASSERT(strncmp(buf, "MESSAGE=plain\n", 14) == 0);
        ASSERT_EQ(count(buf, "CODE_FILE="), 1);
        ASSERT_EQ(count(buf, "CODE_FUNC="), 1);
        ASSERT_CONTAINS(buf, "\nCODE_FUNC=journal_child\n");
        ASSERT(!strstr(buf, "ERRNO="));
        ASSERT(!strstr(buf, "SRIOVD_"));
        ASSERT(!strstr(buf, "MESSAGE_ID="));
        ASSERT(recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN);

        /* A journald that is gone but left its socket behind: the message falls back. */
        close(fd);
        capture_begin();
        log_full_errno(LOG_WARNING, 0, LOG_FIELDS(.irq = 7), "still seen");
        out = capture_end();
        ASSERT_STREQ(out, "warning: still seen [irq=7]\n");
        free(out);

        _exit(EXIT_SUCCESS);
}

TEST(journal) {
        int status;
        pid_t pid;

        fflush(stderr);
        pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0)
                journal_child();
        ASSERT(waitpid(pid, &status, 0) == pid);
        /* The child said why. This is its own meson test (log-journal): skip it as a whole. */
        if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_TEST_SKIP)
                exit(EXIT_TEST_SKIP);
        ASSERT(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(defaults) {
        /* Must run first: what the daemon gets before parsing --log-level. */
        ASSERT_EQ(log_get_max_level(), LOG_INFO);
}

int main(int argc, char **argv) {
        /* "journal": the wire test alone, which needs a mount namespace and may skip (77). */
        if (argc > 1 && streq(argv[1], "journal")) {
                RUN(journal);
                return EXIT_SUCCESS;
        }
        RUN(defaults);
        RUN(stderr_format);
        RUN(stderr_fields);
        RUN(return_value);
        RUN(percent_m);
        RUN(errno_preserved);
        RUN(level_filter);
        RUN(truncation);
        RUN(level_from_string);
        RUN(auto_target);
        return EXIT_SUCCESS;
}
