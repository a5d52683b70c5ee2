/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-internal.h — the error capture and the connection that the files of src/virt/ share */
#pragma once

#include <pthread.h>
#include <stdarg.h>

#include "sriovd/virt/virt.h"

void virt_error_silence(void);
/* Fills err, which may be NULL, with error and a message from sriovd. Returns error. */
int virt_error_set(VirtError *err, int error, const char *fmt, ...) _printf_(3, 4);
/* Fills err from virGetLastError() and resets libvirt's error. Uses fallback when libvirt has
 * no error. Returns the errno. */
int virt_error_last(VirtError *err, int fallback);

#include <libvirt/libvirt.h>

struct sd_event_source;

/* Remote connections use keepalive. A daemon that stops answering counts as gone after 3 × 5 s. */
#define VIRT_KEEPALIVE_INTERVAL 5
#define VIRT_KEEPALIVE_COUNT 3

/* The callbacks a link subscribes, from virt.c. Each gets the link as its opaque. */
typedef struct VirtLinkEvents {
        struct {
                int id;
                virConnectDomainEventGenericCallback cb;
        } domain[5];                  /* lifecycle, device added, device removed, removal failed, tunable */
        virConnectCloseFunc close;
} VirtLinkEvents;

extern const VirtLinkEvents virt_link_events;

/* One connection, from the attempt to open it until it is closed. */
typedef struct VirtLink {
        unsigned n_ref;               /* atomic: the Virt's and a running thread's */
        pthread_mutex_t lock;         /* for done and abandoned */
        char *uri;
        virConnectPtr conn;           /* set once open */
        int callbacks[5];
        bool close_registered;
        int result;                   /* the open's: 0 or a negative errno */
        VirtError error;              /* why the open failed */
        bool done, abandoned;
        int done_fd;                  /* an eventfd that the open's thread writes when done */
        Virt *owner;                  /* on the loop's thread only; NULL until open, and once let go */
} VirtLink;

int virt_link_new(const char *uri, VirtLink **ret);
VirtLink *virt_link_unref(VirtLink *l);
/* Opens l->uri and subscribes, on the calling thread. Returns l->result. */
int virt_link_open(VirtLink *l);
/* Does virt_link_open() on a thread of its own, and done_fd turns readable when it returns.
 * Returns -EAGAIN while too many earlier attempts have not come back. */
int virt_link_open_async(VirtLink *l);
/* Whether the thread is done. If not, it is abandoned: it closes what it opens. */
bool virt_link_done_or_abandon(VirtLink *l);
/* Lets go of l: closes its connection on a thread of its own, or here when here is set, and drops
 * the caller's reference. */
void virt_link_close(VirtLink *l, bool here);

struct Virt {
        struct sd_event *event;
        char *uri;
        VirtLink *link;               /* the open connection, or the one being opened */
        bool connected;
        bool ever_connected;          /* whether the next open is a reconnect */
        struct sd_event_source *link_done;   /* link->done_fd while an open runs on its thread */
        struct sd_event_source *open_timer;  /* the bound on that open */
        struct sd_event_source *reconnect;   /* the next attempt */
        uint64_t backoff, backoff_min, backoff_max, open_timeout;
        VirtEventFn fn;
        void *userdata;
};

/* Gives the open connection. Returns -ENOTCONN and fills err while sriovd reconnects. */
int virt_conn(Virt *v, virConnectPtr *ret, VirtError *err);
