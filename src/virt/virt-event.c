/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-event.c — implements libvirt's event loop on sd-event, with handles as io sources and timeouts as timers */

#include <libvirt/libvirt.h>
#include <sys/epoll.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "sriovd/util.h"
#include "virt-internal.h"

/*
 * libvirt takes one event loop implementation per process, and virEventRegisterImpl() has no
 * unregister. So this bridge is the one piece of process-global state in src/virt/. Everything
 * runs on the thread that dispatches the sd-event loop. sriovd starts no libvirt threads, so
 * libvirt's client library calls these functions from that thread only.
 */

typedef struct Source Source;
struct Source {
        int id;
        bool timer;
        sd_event_source *s;
        int fd;                       /* for handles */
        int interval_ms;              /* for timeouts: -1 is off, 0 is every iteration, else the period */
        virEventHandleCallback hcb;
        virEventTimeoutCallback tcb;
        void *opaque;
        virFreeCallback ff;
        Source *next;
};

/* A free callback that libvirt asked for. It runs later from a clean stack, because libvirt would deadlock otherwise. */
typedef struct PendingFree {
        virFreeCallback ff;
        void *opaque;
} PendingFree;

static struct {
        sd_event *event;
        bool registered;
        Source *sources;
        int last_id;
        PendingFree *pending;
        size_t n_pending, allocated_pending;
        sd_event_source *flush;       /* a defer source that runs the pending frees */
} bridge;

static Source *find(int id, bool timer) {
        for (Source *s = bridge.sources; s; s = s->next)
                if (s->id == id && s->timer == timer)
                        return s;
        return NULL;
}

static void unlink_source(Source *src) {
        for (Source **p = &bridge.sources; *p; p = &(*p)->next)
                if (*p == src) {
                        *p = src->next;
                        return;
                }
}

static int next_id(void) {
        /* libvirt keeps the ids as positive ints, so they wrap long before they overflow. */
        if (bridge.last_id >= INT32_MAX - 1)
                bridge.last_id = 0;
        return ++bridge.last_id;
}

/* ---- pending frees ---- */

void virt_event_flush(void) {
        /* A free callback may remove more sources and so queue more frees. The loop runs until none is left. */
        while (bridge.n_pending > 0) {
                PendingFree p = bridge.pending[--bridge.n_pending];
                p.ff(p.opaque);
        }
        if (bridge.flush)
                sd_event_source_set_enabled(bridge.flush, SD_EVENT_OFF);
}

static int on_flush(sd_event_source *s, void *userdata) {
        virt_event_flush();
        return 0;
}

static void queue_free(virFreeCallback ff, void *opaque) {
        if (!ff)
                return;
        if (GREEDY_REALLOC(bridge.pending, bridge.allocated_pending, bridge.n_pending + 1) < 0)
                return;  /* leaking opaque is better than risking libvirt's deadlock */
        bridge.pending[bridge.n_pending++] = (PendingFree) { ff, opaque };
        if (!bridge.flush && sd_event_add_defer(bridge.event, &bridge.flush, on_flush, NULL) < 0)
                return;
        sd_event_source_set_enabled(bridge.flush, SD_EVENT_ONESHOT);
}

/* ---- handles ---- */

static uint32_t to_epoll(int events) {
        uint32_t e = 0;

        if (events & VIR_EVENT_HANDLE_READABLE)
                e |= EPOLLIN;
        if (events & VIR_EVENT_HANDLE_WRITABLE)
                e |= EPOLLOUT;
        /* epoll always reports EPOLLERR and EPOLLHUP, so they need no flag. */
        return e;
}

static int from_epoll(uint32_t e) {
        int events = 0;

        if (e & (EPOLLIN | EPOLLPRI))
                events |= VIR_EVENT_HANDLE_READABLE;
        if (e & EPOLLOUT)
                events |= VIR_EVENT_HANDLE_WRITABLE;
        if (e & EPOLLERR)
                events |= VIR_EVENT_HANDLE_ERROR;
        if (e & EPOLLHUP)
                events |= VIR_EVENT_HANDLE_HANGUP;
        return events;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Source *src = userdata;

        /* The callback may remove this very handle, so nothing touches src after it. */
        src->hcb(src->id, fd, from_epoll(revents), src->opaque);
        return 0;
}

/* To libvirt, events 0 means "watch nothing". epoll would still report HUP and ERR, so the source is turned off. */
static int handle_set_events(Source *src, int events) {
        int r;

        if (events == 0)
                return sd_event_source_set_enabled(src->s, SD_EVENT_OFF);
        r = sd_event_source_set_io_events(src->s, to_epoll(events));
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(src->s, SD_EVENT_ON);
}

static int add_handle(int fd, int events, virEventHandleCallback cb, void *opaque, virFreeCallback ff) {
        Source *src;

        if (!bridge.event)
                return -1;
        src = calloc(1, sizeof(*src));
        if (!src)
                return -1;
        *src = (Source) { .id = next_id(), .fd = fd, .hcb = cb, .opaque = opaque, .ff = ff };
        if (sd_event_add_io(bridge.event, &src->s, fd, to_epoll(events), on_io, src) < 0) {
                free(src);
                return -1;
        }
        sd_event_source_set_description(src->s, "libvirt-handle");
        if (handle_set_events(src, events) < 0) {
                sd_event_source_disable_unref(src->s);
                free(src);
                return -1;
        }
        src->next = bridge.sources;
        bridge.sources = src;
        return src->id;
}

static void update_handle(int watch, int events) {
        Source *src = find(watch, false);

        if (src)
                (void) handle_set_events(src, events);
}

static int remove_source(int id, bool timer) {
        Source *src = find(id, timer);

        if (!src)
                return -1;
        unlink_source(src);
        /* This is safe from within src's own callback, because sd-event keeps the source until dispatch returns. */
        sd_event_source_disable_unref(src->s);
        queue_free(src->ff, src->opaque);
        free(src);
        return 0;
}

static int remove_handle(int watch) {
        return remove_source(watch, false);
}

/* ---- timeouts ---- */

static int timer_arm(Source *src, int interval_ms) {
        src->interval_ms = interval_ms;
        if (interval_ms < 0)
                return sd_event_source_set_enabled(src->s, SD_EVENT_OFF);
        /* An interval of 0 means due on every iteration of the loop. So the time is one already past,
         * and on_time() arms it again. */
        (void) sd_event_source_set_time(src->s, interval_ms == 0 ? 1 : now_usec() + (uint64_t) interval_ms * 1000u);
        return sd_event_source_set_enabled(src->s, SD_EVENT_ON);
}

static int on_time(sd_event_source *s, uint64_t usec, void *userdata) {
        Source *src = userdata;

        /* The timer is armed again before the callback, because the callback may update or remove this very timer. */
        if (src->interval_ms > 0)
                (void) sd_event_source_set_time(s, now_usec() + (uint64_t) src->interval_ms * 1000u);
        src->tcb(src->id, src->opaque);
        return 0;
}

static int add_timeout(int interval_ms, virEventTimeoutCallback cb, void *opaque, virFreeCallback ff) {
        Source *src;

        if (!bridge.event)
                return -1;
        src = calloc(1, sizeof(*src));
        if (!src)
                return -1;
        *src = (Source) { .id = next_id(), .timer = true, .fd = -1, .tcb = cb, .opaque = opaque, .ff = ff };
        if (sd_event_add_time(bridge.event, &src->s, CLOCK_MONOTONIC, 0, 1000, on_time, src) < 0) {
                free(src);
                return -1;
        }
        sd_event_source_set_description(src->s, "libvirt-timeout");
        if (timer_arm(src, interval_ms) < 0) {
                sd_event_source_disable_unref(src->s);
                free(src);
                return -1;
        }
        src->next = bridge.sources;
        bridge.sources = src;
        return src->id;
}

static void update_timeout(int timer, int interval_ms) {
        Source *src = find(timer, true);

        if (src)
                (void) timer_arm(src, interval_ms);
}

static int remove_timeout(int timer) {
        return remove_source(timer, true);
}

/* ---- registration ---- */

size_t virt_event_n_sources(void) {
        size_t n = 0;

        for (Source *s = bridge.sources; s; s = s->next)
                n++;
        return n;
}

int virt_event_register(sd_event *e) {
        if (!e)
                return -EINVAL;
        if (bridge.event == e)
                return 0;
        if (bridge.event) {
                /* Tests run a new loop for each case. A new loop may take over only when the old one holds nothing of libvirt's. */
                if (bridge.sources)
                        return -EBUSY;
                virt_event_flush();
                bridge.flush = sd_event_source_disable_unref(bridge.flush);
                sd_event_unref(bridge.event);
        }
        bridge.event = sd_event_ref(e);
        if (!bridge.registered) {
                virt_error_silence();
                virEventRegisterImpl(add_handle, update_handle, remove_handle,
                                     add_timeout, update_timeout, remove_timeout);
                bridge.registered = true;
        }
        return 0;
}
