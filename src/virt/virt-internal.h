/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-internal.h — the error capture and the connection that the files of src/virt/ share */
#pragma once

#include <stdarg.h>

#include "sriovd/virt.h"

void virt_error_silence(void);
/* Fills err, which may be NULL, with error and a message from sriovd. Returns error. */
int virt_error_set(VirtError *err, int error, const char *fmt, ...) _printf_(3, 4);
/* Fills err from virGetLastError() and resets libvirt's error. Uses fallback when libvirt has
 * no error. Returns the errno. */
int virt_error_last(VirtError *err, int fallback);

#include <libvirt/libvirt.h>

struct sd_event_source;

struct Virt {
        struct sd_event *event;
        char *uri;
        virConnectPtr conn;
        bool connected;
        int callbacks[5];             /* lifecycle, device added, device removed, removal failed, tunable */
        struct sd_event_source *reconnect;
        uint64_t backoff, backoff_min, backoff_max;
        VirtEventFn fn;
        void *userdata;
};

/* Gives the open connection. Returns -ENOTCONN and fills err while sriovd reconnects. */
int virt_conn(Virt *v, virConnectPtr *ret, VirtError *err);
