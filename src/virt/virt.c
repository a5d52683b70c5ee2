/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt.c — keeps one libvirt connection open, passes its domain events to one callback, and reopens it with backoff */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <inttypes.h>
#include <sys/epoll.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "virt-internal.h"

#define BACKOFF_MIN_USEC (1000u * 1000u)
#define BACKOFF_MAX_USEC (30u * 1000u * 1000u)
/* At boot, libvirt may take its whole start-up to answer; a libvirt that is stuck never does. */
#define OPEN_TIMEOUT_USEC (15u * 1000u * 1000u)

static const char *const lifecycle_started[] = { "booted", "migrated", "restored", "from-snapshot", "wakeup" };
static const char *const lifecycle_stopped[] = { "shutdown", "destroyed", "crashed", "migrated", "saved", "failed", "from-snapshot" };
static const char *const close_reasons[] = { "error", "end-of-file", "keepalive", "client" };

static const char *table_name(const char *const *t, size_t n, int i) {
        return i >= 0 && (size_t) i < n ? t[i] : "other";
}

/* dom is NULL for connection events. Its UUID goes with its name, because a tenant may know its domain by either. */
static void emit(Virt *v, VirtEventKind kind, virDomainPtr dom, const char *device, int detail, const char *detail_str) {
        char uuid[VIR_UUID_STRING_BUFLEN];
        VirtEvent ev = {
                .kind = kind, .device = device, .detail = detail, .detail_str = detail_str ?: "",
        };

        if (dom) {
                ev.domain = virDomainGetName(dom);
                if (virDomainGetUUIDString(dom, uuid) >= 0)
                        ev.uuid = uuid;
                else
                        virResetLastError();
        }

        if (v->fn)
                v->fn(&ev, v->userdata);
}

/* The Virt that a link's callback is for, or NULL when it is not the live connection (yet, or any more). */
static Virt *owner(void *opaque) {
        VirtLink *l = opaque;

        return l->owner && l->owner->connected && l->owner->link == l ? l->owner : NULL;
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque) {
        Virt *v = owner(opaque);

        if (!v)
                return 0;
        switch (event) {
        case VIR_DOMAIN_EVENT_DEFINED:
                emit(v, VIRT_EVENT_DEFINED, dom, NULL, detail, detail == VIR_DOMAIN_EVENT_DEFINED_UPDATED ? "updated" : "added");
                break;
        case VIR_DOMAIN_EVENT_UNDEFINED:
                emit(v, VIRT_EVENT_UNDEFINED, dom, NULL, detail, "removed");
                break;
        case VIR_DOMAIN_EVENT_STARTED:
                emit(v, VIRT_EVENT_STARTED, dom, NULL, detail,
                     table_name(lifecycle_started, ELEMENTSOF(lifecycle_started), detail));
                break;
        case VIR_DOMAIN_EVENT_STOPPED:
                emit(v, VIRT_EVENT_STOPPED, dom, NULL, detail,
                     table_name(lifecycle_stopped, ELEMENTSOF(lifecycle_stopped), detail));
                break;
        case VIR_DOMAIN_EVENT_SUSPENDED:
        case VIR_DOMAIN_EVENT_PMSUSPENDED:
                emit(v, VIRT_EVENT_SUSPENDED, dom, NULL, detail, event == VIR_DOMAIN_EVENT_PMSUSPENDED ? "pm" : "paused");
                break;
        case VIR_DOMAIN_EVENT_RESUMED:
                emit(v, VIRT_EVENT_RESUMED, dom, NULL, detail, "resumed");
                break;
        default:
                /* SHUTDOWN and CRASHED need nothing. A STOPPED follows a SHUTDOWN, and it follows a CRASHED unless the domain is preserved. */
                break;
        }
        return 0;
}

static void on_device_added(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque) {
        Virt *v = owner(opaque);

        if (v)
                emit(v, VIRT_EVENT_DEVICE_ADDED, dom, alias, 0, "");
}

static void on_device_removed(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque) {
        Virt *v = owner(opaque);

        if (v)
                emit(v, VIRT_EVENT_DEVICE_REMOVED, dom, alias, 0, "");
}

static void on_device_removal_failed(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque) {
        Virt *v = owner(opaque);

        if (v)
                emit(v, VIRT_EVENT_DEVICE_REMOVAL_FAILED, dom, alias, 0, "");
}

/*
 * libvirt's QEMU driver sends this event for every live vcpupin and emulatorpin. That includes
 * sriovd's own in virt_place_guest() and anyone else's, such as virsh vcpupin. It also sends it
 * for the other cputune and blkdeviotune tunables. vCPU 0's new pinning is passed on when it is
 * among the changes.
 */
static void on_tunable(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params, int n, void *opaque) {
        char key[VIR_TYPED_PARAM_FIELD_LENGTH];
        const char *cpus = NULL;
        Virt *v = owner(opaque);

        if (!v)
                return;
        snprintf(key, sizeof(key), VIR_DOMAIN_TUNABLE_CPU_VCPUPIN, 0u);
        if (virTypedParamsGetString(params, n, key, &cpus) < 0) {
                virResetLastError();
                cpus = NULL;
        }
        emit(v, VIRT_EVENT_TUNABLE, dom, NULL, 0, cpus ?: "");
}

static int schedule_attempt(Virt *v, uint64_t after);

static void on_close(virConnectPtr conn, int reason, void *opaque) {
        Virt *v = owner(opaque);

        /* This runs inside libvirt, so the link is let go later, from the reconnect timer. */
        if (!v)
                return;
        v->connected = false;
        v->backoff = v->backoff_min;
        (void) schedule_attempt(v, v->backoff);
        emit(v, VIRT_EVENT_DISCONNECTED, NULL, NULL, reason,
             table_name(close_reasons, ELEMENTSOF(close_reasons), reason));
}

const VirtLinkEvents virt_link_events = {
        .domain = {
                { VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_ADDED, VIR_DOMAIN_EVENT_CALLBACK(on_device_added) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED, VIR_DOMAIN_EVENT_CALLBACK(on_device_removed) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED, VIR_DOMAIN_EVENT_CALLBACK(on_device_removal_failed) },
                /* libvirt has this event since 1.2.9. sriovd needs 7.0, so there is no fallback for its absence. */
                { VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(on_tunable) },
        },
        .close = on_close,
};

/* Local drivers such as test:// run in this process and never wait on a socket, so they open here. */
static bool uri_is_in_process(const char *uri) {
        return strncmp(uri, "test:", 5) == 0;
}

/* Lets go of the link, open or still opening. */
static void let_go(Virt *v) {
        v->link_done = sd_event_source_disable_unref(v->link_done);
        v->open_timer = sd_event_source_disable_unref(v->open_timer);
        v->connected = false;
        if (!v->link)
                return;
        /* The link's own URI: after virt_set_uri(), v->uri already names the next one. */
        if (virt_link_done_or_abandon(v->link))
                virt_link_close(v->link, uri_is_in_process(v->link->uri));
        else
                virt_link_unref(v->link);   /* its thread closes what it opens */
        v->link = NULL;
}

/* An attempt failed: the next one follows after the backoff, which doubles, and fn hears why. */
static void attempt_failed(Virt *v, int error, const char *why) {
        let_go(v);
        (void) schedule_attempt(v, v->backoff);
        v->backoff = MIN(v->backoff * 2, v->backoff_max);
        emit(v, VIRT_EVENT_CONNECT_FAILED, NULL, NULL, error, why);
}

/* The link's open returned: the connection is up, or the next attempt is scheduled. */
static void opened(Virt *v) {
        VirtLink *l = v->link;

        v->link_done = sd_event_source_disable_unref(v->link_done);
        v->open_timer = sd_event_source_disable_unref(v->open_timer);
        if (l->result < 0) {
                VirtError err = l->error;   /* a copy: letting go frees the link */

                attempt_failed(v, err.error, err.message);
                return;
        }
        l->owner = v;
        v->connected = true;
        v->backoff = v->backoff_min;
        emit(v, v->ever_connected ? VIRT_EVENT_RECONNECTED : VIRT_EVENT_CONNECTED, NULL, NULL, 0, "");
        v->ever_connected = true;
}

static int on_link_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        opened(userdata);
        return 0;
}

static int on_open_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Virt *v = userdata;
        char msg[VIRT_ERROR_MESSAGE_MAX];

        if (virt_link_done_or_abandon(v->link)) {
                opened(v);
                return 0;
        }
        if (v->open_timeout % (1000u * 1000u) == 0)
                snprintf(msg, sizeof(msg), "libvirt at %s did not answer in %" PRIu64 " s", v->uri,
                         v->open_timeout / (1000u * 1000u));
        else
                snprintf(msg, sizeof(msg), "libvirt at %s did not answer in %" PRIu64 " ms", v->uri,
                         v->open_timeout / 1000u);
        attempt_failed(v, -ETIMEDOUT, msg);
        return 0;
}

/* One attempt: in-process drivers open here, the others on a thread, bounded by open_timeout. */
static void attempt(Virt *v) {
        char msg[VIRT_ERROR_MESSAGE_MAX];
        int r;

        let_go(v);
        r = virt_link_new(v->uri, &v->link);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "cannot make a connection: %s", strerror(-r));
                goto fail;
        }
        if (uri_is_in_process(v->uri)) {
                (void) virt_link_open(v->link);
                opened(v);
                return;
        }
        r = sd_event_add_io(v->event, &v->link_done, v->link->done_fd, EPOLLIN, on_link_done, v);
        if (r >= 0)
                r = sd_event_add_time_relative(v->event, &v->open_timer, CLOCK_MONOTONIC, v->open_timeout, 0,
                                               on_open_timeout, v);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "cannot watch the attempt: %s", strerror(-r));
                goto fail;
        }
        (void) sd_event_source_set_description(v->link_done, "libvirt-open");
        r = virt_link_open_async(v->link);
        if (r < 0) {
                snprintf(msg, sizeof(msg), r == -EAGAIN ? "earlier attempts have not come back yet"
                         : "cannot start a thread: %s", strerror(-r));
                goto fail;
        }
        return;
fail:
        attempt_failed(v, r, msg);
}

static int on_reconnect(sd_event_source *s, uint64_t usec, void *userdata) {
        attempt(userdata);
        return 0;
}

static int schedule_attempt(Virt *v, uint64_t after) {
        int r;

        if (!v->reconnect) {
                r = sd_event_add_time_relative(v->event, &v->reconnect, CLOCK_MONOTONIC, after, 0, on_reconnect, v);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(v->reconnect, "libvirt-reconnect");
        } else {
                r = sd_event_source_set_time_relative(v->reconnect, after);
                if (r < 0)
                        return r;
        }
        return sd_event_source_set_enabled(v->reconnect, SD_EVENT_ONESHOT);
}

static int virt_alloc(sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err) {
        _cleanup_(virt_freep) Virt *v = NULL;
        int r;

        if (!e)
                return virt_error_set(err, -EINVAL, "no event loop");
        r = virt_event_register(e);
        if (r < 0)
                return virt_error_set(err, r, "libvirt's event loop is registered on another sd-event loop");

        v = calloc(1, sizeof(*v));
        if (!v)
                return virt_error_set(err, -ENOMEM, "out of memory");
        v->event = sd_event_ref(e);
        v->fn = fn;
        v->userdata = userdata;
        v->backoff_min = v->backoff = BACKOFF_MIN_USEC;
        v->backoff_max = BACKOFF_MAX_USEC;
        v->open_timeout = OPEN_TIMEOUT_USEC;
        v->uri = strdup(uri ?: VIRT_URI_DEFAULT);
        if (!v->uri)
                return virt_error_set(err, -ENOMEM, "out of memory");
        *ret = TAKE_PTR(v);
        return 0;
}

int virt_new(sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err) {
        _cleanup_(virt_freep) Virt *v = NULL;
        int r;

        r = virt_alloc(e, uri, fn, userdata, &v, err);
        if (r < 0)
                return r;
        r = virt_link_new(v->uri, &v->link);
        if (r < 0)
                return virt_error_set(err, r, "out of memory");
        r = virt_link_open(v->link);
        if (r < 0) {
                if (err)
                        *err = v->link->error;
                return r;
        }
        v->link->owner = v;
        v->connected = v->ever_connected = true;
        *ret = TAKE_PTR(v);
        return 0;
}

int virt_start(sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err) {
        _cleanup_(virt_freep) Virt *v = NULL;
        int r;

        r = virt_alloc(e, uri, fn, userdata, &v, err);
        if (r < 0)
                return r;
        /* From the loop, not from here: the caller's own start-up comes first. */
        r = schedule_attempt(v, 0);
        if (r < 0)
                return virt_error_set(err, r, "cannot schedule the first attempt");
        *ret = TAKE_PTR(v);
        return 0;
}

Virt *virt_free(Virt *v) {
        if (!v)
                return NULL;
        let_go(v);
        /* An in-process connection closed here, so the stack is clean and libvirt's free callbacks may run. */
        virt_event_flush();
        sd_event_source_disable_unref(v->reconnect);
        sd_event_unref(v->event);
        free(v->uri);
        free(v);
        return NULL;
}

void virt_set_event_fn(Virt *v, VirtEventFn fn, void *userdata) {
        v->fn = fn;
        v->userdata = userdata;
}

bool virt_is_connected(const Virt *v) {
        return v->connected;
}

void virt_set_backoff(Virt *v, uint64_t min_usec, uint64_t max_usec) {
        v->backoff_min = v->backoff = MAX(min_usec, 1u);
        v->backoff_max = MAX(max_usec, v->backoff_min);
}

int virt_set_uri(Virt *v, const char *uri) {
        bool was_connected = v->connected;
        char *copy;

        uri = uri ?: VIRT_URI_DEFAULT;
        if (streq(v->uri, uri))
                return 0;
        copy = strdup(uri);
        if (!copy)
                return -ENOMEM;
        free(v->uri);
        v->uri = copy;
        let_go(v);
        v->backoff = v->backoff_min;
        (void) schedule_attempt(v, 0);
        if (was_connected)
                emit(v, VIRT_EVENT_DISCONNECTED, NULL, NULL, 0, "the URI changed");
        return 1;
}

void virt_set_open_timeout(Virt *v, uint64_t usec) {
        v->open_timeout = MAX(usec, 1u);
}

/* Gives the connection. Returns -ENOTCONN with a message while the connection is being reopened. */
int virt_conn(Virt *v, virConnectPtr *ret, VirtError *err) {
        if (!v->connected || !v->link || !v->link->conn)
                return virt_error_set(err, -ENOTCONN, "not connected to libvirt (%s); reconnecting", v->uri);
        *ret = v->link->conn;
        return 0;
}
