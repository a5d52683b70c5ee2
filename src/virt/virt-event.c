/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-event.c — implements libvirt's event loop on sd-event, with handles as io sources and timeouts as timers */

#include <libvirt/libvirt.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/shared/util.h"
#include "virt-internal.h"

/*
 * libvirt takes one event loop implementation per process, and virEventRegisterImpl() has no
 * unregister. So this bridge is the one piece of process-global state in src/virt/. Sources are
 * made, changed and dispatched on the thread that runs the sd-event loop, which is not
 * thread-safe. Connections are opened and closed on threads of their own (virt-link.c), and
 * libvirt adds and removes their handles and timeouts from there. Such a call takes its id at
 * once and queues the change; an eventfd wakes the loop, which carries the queue out in order.
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

/* A change asked for on another thread, carried out on the loop's thread. */
typedef enum OpKind {
        OP_ADD_HANDLE,
        OP_UPDATE_HANDLE,
        OP_ADD_TIMEOUT,
        OP_UPDATE_TIMEOUT,
        OP_REMOVE,
} OpKind;

typedef struct Op {
        OpKind kind;
        int id;
        bool timer;                   /* for OP_REMOVE */
        int fd;
        int arg;                      /* the handle's events, or the timeout's interval */
        virEventHandleCallback hcb;
        virEventTimeoutCallback tcb;
        void *opaque;
        virFreeCallback ff;
} Op;

static struct {
        sd_event *event;
        bool registered;
        Source *sources;
        PendingFree *pending;
        size_t n_pending, allocated_pending;
        sd_event_source *flush;       /* a defer source that runs the pending frees */
        pthread_t loop_thread;        /* the thread that registered the loop */
        int wake_fd;                  /* an eventfd that other threads write after queueing */
        sd_event_source *wake;
        pthread_mutex_t lock;         /* for last_id and the queue, taken by any thread */
        int last_id;
        Op *ops;
        size_t n_ops, allocated_ops;
} bridge = {
        .wake_fd = -1,
        .lock = PTHREAD_MUTEX_INITIALIZER,
};

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
        int id;

        pthread_mutex_lock(&bridge.lock);
        /* libvirt keeps the ids as positive ints, so they wrap long before they overflow. */
        if (bridge.last_id >= INT32_MAX - 1)
                bridge.last_id = 0;
        id = ++bridge.last_id;
        pthread_mutex_unlock(&bridge.lock);
        return id;
}

static bool on_loop_thread(void) {
        return pthread_equal(pthread_self(), bridge.loop_thread);
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

static int do_add_handle(int id, int fd, int events, virEventHandleCallback cb, void *opaque, virFreeCallback ff) {
        Source *src;

        src = calloc(1, sizeof(*src));
        if (!src)
                return -1;
        *src = (Source) { .id = id, .fd = fd, .hcb = cb, .opaque = opaque, .ff = ff };
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

static void do_update_handle(int watch, int events) {
        Source *src = find(watch, false);

        if (src)
                (void) handle_set_events(src, events);
}

static int do_remove(int id, bool timer) {
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

static int do_add_timeout(int id, int interval_ms, virEventTimeoutCallback cb, void *opaque, virFreeCallback ff) {
        Source *src;

        src = calloc(1, sizeof(*src));
        if (!src)
                return -1;
        *src = (Source) { .id = id, .timer = true, .fd = -1, .tcb = cb, .opaque = opaque, .ff = ff };
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

static void do_update_timeout(int timer, int interval_ms) {
        Source *src = find(timer, true);

        if (src)
                (void) timer_arm(src, interval_ms);
}

/* ---- changes from other threads ---- */

static void apply(const Op *op) {
        switch (op->kind) {
        case OP_ADD_HANDLE:
                /* A failed add leaves a handle that libvirt thinks it has; its later calls on it do nothing. */
                (void) do_add_handle(op->id, op->fd, op->arg, op->hcb, op->opaque, op->ff);
                break;
        case OP_UPDATE_HANDLE:
                do_update_handle(op->id, op->arg);
                break;
        case OP_ADD_TIMEOUT:
                (void) do_add_timeout(op->id, op->arg, op->tcb, op->opaque, op->ff);
                break;
        case OP_UPDATE_TIMEOUT:
                do_update_timeout(op->id, op->arg);
                break;
        case OP_REMOVE:
                (void) do_remove(op->id, op->timer);
                break;
        }
}

/* Carries out, in order, the changes that other threads queued. On the loop's thread only. */
static void drain(void) {
        Op *ops;
        size_t n;

        pthread_mutex_lock(&bridge.lock);
        ops = TAKE_PTR(bridge.ops);
        n = bridge.n_ops;
        bridge.n_ops = bridge.allocated_ops = 0;
        pthread_mutex_unlock(&bridge.lock);
        for (size_t i = 0; i < n; i++)
                apply(&ops[i]);
        free(ops);
}

/* Queues op from another thread and wakes the loop. Returns op's id, or -1. */
static int queue(Op op) {
        int r = op.id;

        pthread_mutex_lock(&bridge.lock);
        if (GREEDY_REALLOC(bridge.ops, bridge.allocated_ops, bridge.n_ops + 1) < 0)
                r = -1;
        else
                bridge.ops[bridge.n_ops++] = op;
        pthread_mutex_unlock(&bridge.lock);
        if (r >= 0)
                (void) eventfd_write(bridge.wake_fd, 1);
        return r;
}

static int on_wake(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        eventfd_t n;

        (void) eventfd_read(fd, &n);
        drain();
        return 0;
}

/* ---- what libvirt calls, from any thread ---- */

static int add_handle(int fd, int events, virEventHandleCallback cb, void *opaque, virFreeCallback ff) {
        if (!bridge.event)
                return -1;
        if (!on_loop_thread())
                return queue((Op) { OP_ADD_HANDLE, next_id(), .fd = fd, .arg = events, .hcb = cb,
                                    .opaque = opaque, .ff = ff });
        drain();
        return do_add_handle(next_id(), fd, events, cb, opaque, ff);
}

static void update_handle(int watch, int events) {
        if (!on_loop_thread()) {
                (void) queue((Op) { OP_UPDATE_HANDLE, watch, .arg = events });
                return;
        }
        drain();
        do_update_handle(watch, events);
}

static int remove_source(int id, bool timer) {
        if (!on_loop_thread())
                return queue((Op) { OP_REMOVE, id, .timer = timer }) < 0 ? -1 : 0;
        drain();
        return do_remove(id, timer);
}

static int remove_handle(int watch) {
        return remove_source(watch, false);
}

static int add_timeout(int interval_ms, virEventTimeoutCallback cb, void *opaque, virFreeCallback ff) {
        if (!bridge.event)
                return -1;
        if (!on_loop_thread())
                return queue((Op) { OP_ADD_TIMEOUT, next_id(), .arg = interval_ms, .tcb = cb, .opaque = opaque,
                                    .ff = ff });
        drain();
        return do_add_timeout(next_id(), interval_ms, cb, opaque, ff);
}

static void update_timeout(int timer, int interval_ms) {
        if (!on_loop_thread()) {
                (void) queue((Op) { OP_UPDATE_TIMEOUT, timer, .arg = interval_ms });
                return;
        }
        drain();
        do_update_timeout(timer, interval_ms);
}

static int remove_timeout(int timer) {
        return remove_source(timer, true);
}

/* ---- registration ---- */

size_t virt_event_n_sources(void) {
        size_t n = 0;

        if (bridge.event && on_loop_thread())
                drain();
        for (Source *s = bridge.sources; s; s = s->next)
                n++;
        return n;
}

int virt_event_register(sd_event *e) {
        int r;

        if (!e)
                return -EINVAL;
        if (bridge.event == e)
                return 0;
        if (bridge.event) {
                /* Tests run a new loop for each case. A new loop may take over only when the old one holds nothing of libvirt's. */
                if (on_loop_thread())
                        drain();
                if (bridge.sources || bridge.n_ops > 0)
                        return -EBUSY;
                virt_event_flush();
                bridge.flush = sd_event_source_disable_unref(bridge.flush);
                bridge.wake = sd_event_source_disable_unref(bridge.wake);
                sd_event_unref(bridge.event);
                bridge.event = NULL;
        }
        if (bridge.wake_fd < 0) {
                bridge.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (bridge.wake_fd < 0)
                        return -errno;
        }
        r = sd_event_add_io(e, &bridge.wake, bridge.wake_fd, EPOLLIN, on_wake, NULL);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(bridge.wake, "libvirt-wake");
        bridge.loop_thread = pthread_self();
        bridge.event = sd_event_ref(e);
        if (!bridge.registered) {
                virt_error_silence();
                virEventRegisterImpl(add_handle, update_handle, remove_handle,
                                     add_timeout, update_timeout, remove_timeout);
                bridge.registered = true;
        }
        return 0;
}
