/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-link.c — one libvirt connection, opened and closed on a thread of its own */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "virt-internal.h"

/*
 * virConnectOpen() on a socket whose server accepts and never answers blocks without a bound,
 * and so may every call on such a connection before keepalive runs. A link therefore opens,
 * subscribes and closes on a detached thread. The loop learns that the open is done through an
 * eventfd. A thread that never comes back is abandoned: it closes what it opens, if it ever
 * does, and frees the link with the last reference.
 */

#define LINK_THREADS_MAX 4

static unsigned n_threads;    /* running link threads, atomic */

int virt_link_new(const char *uri, VirtLink **ret) {
        VirtLink *l;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        *l = (VirtLink) { .n_ref = 1, .lock = PTHREAD_MUTEX_INITIALIZER, .done_fd = -1 };
        for (size_t i = 0; i < ELEMENTSOF(l->callbacks); i++)
                l->callbacks[i] = -1;
        l->uri = strdup(uri);
        l->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (!l->uri || l->done_fd < 0) {
                int r = l->uri ? -errno : -ENOMEM;
                virt_link_unref(l);
                return r;
        }
        *ret = l;
        return 0;
}

static VirtLink *link_ref(VirtLink *l) {
        __atomic_add_fetch(&l->n_ref, 1, __ATOMIC_RELAXED);
        return l;
}

VirtLink *virt_link_unref(VirtLink *l) {
        if (!l || __atomic_sub_fetch(&l->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        if (l->done_fd >= 0)
                close(l->done_fd);
        free(l->uri);
        free(l);
        return NULL;
}

/* Lets go of the connection. These calls fail on a dead one; what matters is that libvirt drops l. */
static void link_drop(VirtLink *l) {
        if (!l->conn)
                return;
        for (size_t i = 0; i < ELEMENTSOF(l->callbacks); i++)
                if (l->callbacks[i] >= 0) {
                        (void) virConnectDomainEventDeregisterAny(l->conn, l->callbacks[i]);
                        l->callbacks[i] = -1;
                }
        if (l->close_registered)
                (void) virConnectUnregisterCloseCallback(l->conn, virt_link_events.close);
        l->close_registered = false;
        (void) virConnectClose(l->conn);
        virResetLastError();
        l->conn = NULL;
}

static int link_subscribe(VirtLink *l) {
        _Static_assert(ELEMENTSOF(virt_link_events.domain) == ELEMENTSOF(((VirtLink *) NULL)->callbacks),
                       "one callback id per event");
        int r;

        l->conn = virConnectOpen(l->uri);
        if (!l->conn)
                return virt_error_last(&l->error, -ENOTCONN);
        for (size_t i = 0; i < ELEMENTSOF(virt_link_events.domain); i++) {
                l->callbacks[i] = virConnectDomainEventRegisterAny(l->conn, NULL, virt_link_events.domain[i].id,
                                                                   virt_link_events.domain[i].cb, l, NULL);
                if (l->callbacks[i] < 0) {
                        r = virt_error_last(&l->error, -EIO);
                        link_drop(l);
                        return r;
                }
        }
        if (virConnectRegisterCloseCallback(l->conn, virt_link_events.close, l, NULL) < 0) {
                r = virt_error_last(&l->error, -EIO);
                link_drop(l);
                return r;
        }
        l->close_registered = true;
        /* Local drivers such as test:// and an in-process qemu:/// have no keepalive, and that is not an error. */
        if (virConnectSetKeepAlive(l->conn, VIRT_KEEPALIVE_INTERVAL, VIRT_KEEPALIVE_COUNT) < 0)
                virResetLastError();
        return 0;
}

int virt_link_open(VirtLink *l) {
        int r = link_subscribe(l);

        /* From here on conn, result and error stay as they are, and abandoned can no longer be set. */
        pthread_mutex_lock(&l->lock);
        l->result = r;
        l->done = true;
        pthread_mutex_unlock(&l->lock);
        return r;
}

static void *open_thread(void *userdata) {
        VirtLink *l = userdata;
        bool abandoned;

        (void) virt_link_open(l);
        pthread_mutex_lock(&l->lock);
        abandoned = l->abandoned;
        pthread_mutex_unlock(&l->lock);
        if (abandoned)
                link_drop(l);
        else
                (void) eventfd_write(l->done_fd, 1);
        virt_link_unref(l);
        __atomic_sub_fetch(&n_threads, 1, __ATOMIC_RELAXED);
        return NULL;
}

static void *close_thread(void *userdata) {
        VirtLink *l = userdata;

        link_drop(l);
        virt_link_unref(l);
        __atomic_sub_fetch(&n_threads, 1, __ATOMIC_RELAXED);
        return NULL;
}

/* Runs fn(l) on a detached thread that holds its own reference to l. */
static int link_spawn(VirtLink *l, void *(*fn)(void *)) {
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (__atomic_add_fetch(&n_threads, 1, __ATOMIC_RELAXED) > LINK_THREADS_MAX) {
                __atomic_sub_fetch(&n_threads, 1, __ATOMIC_RELAXED);
                return -EAGAIN;
        }
        r = -pthread_attr_init(&attr);
        if (r == 0)
                r = -pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (r == 0) {
                link_ref(l);
                r = -pthread_create(&t, &attr, fn, l);
                if (r < 0)
                        virt_link_unref(l);
        }
        (void) pthread_attr_destroy(&attr);
        if (r < 0)
                __atomic_sub_fetch(&n_threads, 1, __ATOMIC_RELAXED);
        return r;
}

int virt_link_open_async(VirtLink *l) {
        return link_spawn(l, open_thread);
}

bool virt_link_done_or_abandon(VirtLink *l) {
        bool done;

        pthread_mutex_lock(&l->lock);
        done = l->done;
        if (!done)
                l->abandoned = true;
        pthread_mutex_unlock(&l->lock);
        return done;
}

void virt_link_close(VirtLink *l, bool here) {
        if (!l)
                return;
        l->owner = NULL;
        /* Another thread, unless asked otherwise: on a live connection, closing is a call that may never be answered. */
        if (l->conn && (here || link_spawn(l, close_thread) < 0))
                link_drop(l);
        virt_link_unref(l);
}
