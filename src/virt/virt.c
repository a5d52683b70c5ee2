/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt.c — opens the libvirt connection, passes domain events to one callback and reopens with backoff when it drops */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "virt-internal.h"

#define BACKOFF_MIN_USEC (1000u * 1000u)
#define BACKOFF_MAX_USEC (30u * 1000u * 1000u)
/* Remote connections use keepalive. A daemon that stops answering counts as gone after 3 × 5 s. */
#define KEEPALIVE_INTERVAL 5
#define KEEPALIVE_COUNT 3

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

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque) {
        Virt *v = opaque;

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
        emit(opaque, VIRT_EVENT_DEVICE_ADDED, dom, alias, 0, "");
}

static void on_device_removed(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque) {
        emit(opaque, VIRT_EVENT_DEVICE_REMOVED, dom, alias, 0, "");
}

static void on_device_removal_failed(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque) {
        emit(opaque, VIRT_EVENT_DEVICE_REMOVAL_FAILED, dom, alias, 0, "");
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

        snprintf(key, sizeof(key), VIR_DOMAIN_TUNABLE_CPU_VCPUPIN, 0u);
        if (virTypedParamsGetString(params, n, key, &cpus) < 0) {
                virResetLastError();
                cpus = NULL;
        }
        emit(opaque, VIRT_EVENT_TUNABLE, dom, NULL, 0, cpus ?: "");
}

static int schedule_reconnect(Virt *v);

static void on_close(virConnectPtr conn, int reason, void *opaque) {
        Virt *v = opaque;

        /* This runs inside libvirt, so the connection is dropped later, from the reconnect timer. */
        if (!v->connected)
                return;
        v->connected = false;
        v->backoff = v->backoff_min;
        (void) schedule_reconnect(v);
        emit(v, VIRT_EVENT_DISCONNECTED, NULL, NULL, reason,
             table_name(close_reasons, ELEMENTSOF(close_reasons), reason));
}

static void drop_connection(Virt *v) {
        if (!v->conn)
                return;
        /* These calls fail on a dead connection. What matters is that libvirt lets go of sriovd's callbacks. */
        for (size_t i = 0; i < ELEMENTSOF(v->callbacks); i++)
                if (v->callbacks[i] >= 0) {
                        (void) virConnectDomainEventDeregisterAny(v->conn, v->callbacks[i]);
                        v->callbacks[i] = -1;
                }
        (void) virConnectUnregisterCloseCallback(v->conn, on_close);
        (void) virConnectClose(v->conn);
        virResetLastError();
        v->conn = NULL;
        v->connected = false;
}

static int open_connection(Virt *v, VirtError *err) {
        static const struct {
                int id;
                virConnectDomainEventGenericCallback cb;
        } events[] = {
                { VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_ADDED, VIR_DOMAIN_EVENT_CALLBACK(on_device_added) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED, VIR_DOMAIN_EVENT_CALLBACK(on_device_removed) },
                { VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED, VIR_DOMAIN_EVENT_CALLBACK(on_device_removal_failed) },
                /* libvirt has this event since 1.2.9. sriovd needs 7.0, so there is no fallback for its absence. */
                { VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(on_tunable) },
        };
        _Static_assert(ELEMENTSOF(events) == ELEMENTSOF(((Virt *) NULL)->callbacks), "one id per event");
        int r;

        v->conn = virConnectOpen(v->uri);
        if (!v->conn)
                return virt_error_last(err, -ENOTCONN);

        for (size_t i = 0; i < ELEMENTSOF(events); i++) {
                v->callbacks[i] = virConnectDomainEventRegisterAny(v->conn, NULL, events[i].id, events[i].cb, v, NULL);
                if (v->callbacks[i] < 0) {
                        r = virt_error_last(err, -EIO);
                        drop_connection(v);
                        return r;
                }
        }
        if (virConnectRegisterCloseCallback(v->conn, on_close, v, NULL) < 0) {
                r = virt_error_last(err, -EIO);
                drop_connection(v);
                return r;
        }
        /* Local drivers such as test:// and an in-process qemu:/// have no keepalive, and that is not an error. */
        if (virConnectSetKeepAlive(v->conn, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT) < 0)
                virResetLastError();
        v->connected = true;
        return 0;
}

static int on_reconnect(sd_event_source *s, uint64_t usec, void *userdata) {
        Virt *v = userdata;
        VirtError err = {};

        drop_connection(v);
        if (open_connection(v, &err) < 0) {
                v->backoff = MIN(v->backoff * 2, v->backoff_max);
                (void) schedule_reconnect(v);
                return 0;
        }
        v->backoff = v->backoff_min;
        emit(v, VIRT_EVENT_RECONNECTED, NULL, NULL, 0, "");
        return 0;
}

static int schedule_reconnect(Virt *v) {
        uint64_t now;
        int r;

        r = sd_event_now(v->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        if (!v->reconnect) {
                r = sd_event_add_time(v->event, &v->reconnect, CLOCK_MONOTONIC, now + v->backoff, 0, on_reconnect, v);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(v->reconnect, "libvirt-reconnect");
        } else {
                r = sd_event_source_set_time(v->reconnect, now + v->backoff);
                if (r < 0)
                        return r;
        }
        return sd_event_source_set_enabled(v->reconnect, SD_EVENT_ONESHOT);
}

int virt_new(sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err) {
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
        for (size_t i = 0; i < ELEMENTSOF(v->callbacks); i++)
                v->callbacks[i] = -1;
        v->uri = strdup(uri ?: VIRT_URI_DEFAULT);
        if (!v->uri)
                return virt_error_set(err, -ENOMEM, "out of memory");

        r = open_connection(v, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

Virt *virt_free(Virt *v) {
        if (!v)
                return NULL;
        drop_connection(v);
        /* virConnectClose() has returned, so the stack is clean and libvirt's free callbacks may run. */
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

/* Gives the connection. Returns -ENOTCONN with a message while the connection is being reopened. */
int virt_conn(Virt *v, virConnectPtr *ret, VirtError *err) {
        if (!v->connected || !v->conn)
                return virt_error_set(err, -ENOTCONN, "not connected to libvirt (%s); reconnecting", v->uri);
        *ret = v->conn;
        return 0;
}
