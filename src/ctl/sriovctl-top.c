/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top.c — `sriovctl top`: the terminal, its keys and signals, and the loop that fetches and redraws each period */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/shared/macro.h"
#include "sriovctl-top-internal.h"
#include "sriovctl-top.h"

/* ---- the terminal ---- */

/* These are file-static, because a signal handler and atexit() need them to put the terminal back. */
static struct termios saved_tio;
static bool tio_saved, screen_on, keys_on;
static volatile sig_atomic_t quit_signal, resized, suspended;

static void term_restore(void) {
        if (screen_on) {
                /* show the cursor, reset the attributes and leave the alternate screen, so the shell's screen is back */
                static const char leave[] = "\033[0m\033[?25h\033[?1049l";
                (void) !write(STDOUT_FILENO, leave, sizeof(leave) - 1);
                screen_on = false;
        }
        if (tio_saved) {
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
                tio_saved = false;
        }
}

static void on_signal(int sig) {
        if (sig == SIGWINCH)
                resized = 1;
        else if (sig == SIGTSTP)
                suspended = 1;
        else
                quit_signal = sig;
}

static void term_size(size_t *cols, size_t *rows) {
        struct winsize ws = {};
        const char *e;

        *cols = 80;
        *rows = 24;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
                *cols = ws.ws_col;
                *rows = ws.ws_row;
                return;
        }
        if ((e = getenv("COLUMNS")) && atoi(e) > 0)
                *cols = (size_t) atoi(e);
        if ((e = getenv("LINES")) && atoi(e) > 0)
                *rows = (size_t) atoi(e);
}

/* Reads keys without Enter and without echo. ISIG stays on, so ^C is a SIGINT and ends the view the same way. */
static int term_enter(bool screen) {
        struct termios t;

        if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
                t = saved_tio;
                t.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
                t.c_cc[VMIN] = 1;
                t.c_cc[VTIME] = 0;
                tio_saved = keys_on = true;
                if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0)
                        return -errno;
        }
        if (screen) {
                static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
                screen_on = true;
                if (write(STDOUT_FILENO, enter, sizeof(enter) - 1) < 0)
                        return -errno;
        }
        return 0;
}

/* Cuts one line to cols bytes, but never inside a UTF-8 sequence. */
static size_t cut(const char *s, size_t cols) {
        size_t n = strlen(s);

        if (n <= cols)
                return n;
        while (cols > 0 && ((unsigned char) s[cols] & 0xC0) == 0x80)
                cols--;
        return cols;
}

static int print_frame(const Lines *ls, size_t cols, size_t rows, bool escapes) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);

        if (!m)
                return -ENOMEM;
        if (escapes)
                fputs("\033[H", m);
        for (size_t i = 0; i < ls->n && (!rows || i < rows); i++) {
                fwrite(ls->l[i], 1, cols ? cut(ls->l[i], cols) : strlen(ls->l[i]), m);
                /* The last row gets no newline, because it would scroll the header away. */
                if (escapes)
                        fputs(i + 1 < MIN(ls->n, rows) ? "\033[K\r\n" : "\033[K", m);
                else
                        fputc('\n', m);
        }
        if (escapes)
                fputs("\033[J", m);
        if (fclose(m) != 0)
                return -ENOMEM;
        for (size_t done = 0; done < size;) {
                ssize_t w = write(STDOUT_FILENO, buf + done, size - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                done += (size_t) w;
        }
        return 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/*
 * Handles ^Z. The shell gets the terminal during the stop, so its screen and modes come back first.
 * At SIGCONT the view takes the terminal again, and the frame is redrawn.
 */
static int suspend(bool screen) {
        struct sigaction dfl = { .sa_handler = SIG_DFL }, ours = { .sa_handler = on_signal };

        suspended = 0;
        term_restore();
        sigemptyset(&dfl.sa_mask);
        sigemptyset(&ours.sa_mask);
        sigaction(SIGTSTP, &dfl, NULL);
        raise(SIGTSTP);
        /* execution continues here after SIGCONT */
        sigaction(SIGTSTP, &ours, NULL);
        return term_enter(screen);
}

/* Reads keys until the deadline. s and S change *sort. Returns 1 to quit, 2 to redraw now, 3 to fetch now,
 * 4 to suspend and 0 at the deadline. */
static int wait_keys(uint64_t deadline, SortKey *sort) {
        for (;;) {
                uint64_t now = now_usec();
                struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
                int timeout = now >= deadline ? 0 : (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT32_MAX);
                char c;
                int r;

                if (quit_signal)
                        return 1;
                if (suspended)
                        return 4;
                if (resized) {
                        resized = 0;
                        return 2;
                }
                if (now >= deadline)
                        return 0;
                r = poll(&p, keys_on ? 1 : 0, timeout);
                if (r <= 0)
                        continue;
                r = (int) read(STDIN_FILENO, &c, 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r != 1) {
                        /* stdin is at its end after a hangup, so nobody can press q. The view runs on without keys. */
                        keys_on = false;
                        continue;
                }
                switch (c) {
                case 'q':
                case 'Q':
                        return 1;
                case 's':
                        *sort = (SortKey) ((*sort + 1) % _SORT_MAX);
                        return 2;
                case 'S':
                        *sort = (SortKey) ((*sort + _SORT_MAX - 1) % _SORT_MAX);
                        return 2;
                case 'r':
                case ' ':
                        return 3;
                default:
                        break;
                }
        }
}

int top_run(sd_bus *bus, const TopOptions *o, sd_bus_error *error) {
        const char *term = getenv("TERM");
        bool tty = isatty(STDOUT_FILENO), escapes = tty && term && *term && !streq(term, "dumb");
        struct sigaction sa = { .sa_handler = on_signal }, ign = { .sa_handler = SIG_IGN }, old[5], old_pipe;
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP };
        _cleanup_(frame_done) Frame f = {};
        SortKey sort = SORT_RATE;
        uint64_t next = 0;
        int r, status = 0;

        if (o->once) {
                size_t cols, rows;

                r = frame_fetch(bus, &f, error);
                if (r < 0)
                        return r;
                if (o->json) {
                        top_print_json(&f, sort);
                        return 0;
                }
                _cleanup_(lines_done) Lines ls = {};
                term_size(&cols, &rows);
                r = top_draw(&ls, &f, sort, 0, false);
                if (r >= 0)
                        r = print_frame(&ls, tty ? cols : 0, 0, false);
                return r < 0 ? sd_bus_error_set_errnof(error, r, "cannot print: %s", strerror(-r)) : 0;
        }

        /* The first answer comes before the screen changes, so an error appears on the shell's screen. */
        r = frame_fetch(bus, &f, error);
        if (r < 0)
                return r;
        sigemptyset(&sa.sa_mask);
        sigemptyset(&ign.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, &old[i]);
        /* With `sriovctl top | head`, EPIPE ends the loop and the tty is put back.
         * SIGPIPE is ignored, because it would kill the process before that. */
        sigaction(SIGPIPE, &ign, &old_pipe);
        atexit(term_restore);
        r = term_enter(escapes);
        for (bool fetched = true; r >= 0;) {
                _cleanup_(lines_done) Lines ls = {};
                uint64_t interval;
                size_t cols, rows;

                if (!fetched) {
                        frame_done(&f);
                        r = frame_fetch(bus, &f, error);
                        if (r < 0)
                                break;
                }
                interval = o->interval_sec > 0 ? (uint64_t) (o->interval_sec * 1e6)
                                               : f.period_usec ?: 1000000;   /* after the first sample, look again soon */
                if (!fetched || next == 0)
                        next = now_usec() + interval;
                term_size(&cols, &rows);
                /* A dumb terminal gets lines cut to its width, and a pipe gets whole frames. */
                r = top_draw(&ls, &f, sort, escapes ? rows : 0, true);
                if (r >= 0)
                        r = print_frame(&ls, tty ? cols : 0, escapes ? rows : 0, escapes);
                /* A dumb terminal gets the frames one after another, with a blank line between them. */
                if (r >= 0 && !escapes && write(STDOUT_FILENO, "\n", 1) < 0)
                        r = -errno;
                if (r == -EPIPE) {
                        r = 0;        /* the reader has all it wanted */
                        goto out;
                }
                if (r < 0) {
                        sd_bus_error_set_errnof(error, r, "cannot draw: %s", strerror(-r));
                        break;
                }
                switch (wait_keys(next, &sort)) {
                case 1:
                        status = quit_signal ? 128 + quit_signal : 0;
                        goto out;
                case 2:
                        fetched = true;       /* draw the same period again, sorted anew and resized */
                        break;
                case 4:
                        r = suspend(escapes);
                        fetched = true;
                        break;
                default:
                        fetched = false;
                        break;
                }
        }
out:
        term_restore();
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &old[i], NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        return r < 0 ? r : status;
}
