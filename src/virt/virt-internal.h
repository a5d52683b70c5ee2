/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-internal.h — what the files of src/virt/ share: error capture */
#pragma once

#include <stdarg.h>

#include "sriovd/virt.h"

void virt_error_silence(void);
/* Fill err (may be NULL) with error and a message of ours; returns error. */
int virt_error_set(VirtError *err, int error, const char *fmt, ...) _printf_(3, 4);
/* Fill err from virGetLastError() (fallback when libvirt has none), reset it; returns the errno. */
int virt_error_last(VirtError *err, int fallback);

#include <libvirt/libvirt.h>

struct sd_event_source;

struct Virt {
        struct sd_event *event;
        char *uri;
        virConnectPtr conn;
        bool connected;
        int callbacks[5];             /* lifecycle, device added, removed, removal failed, tunable */
        struct sd_event_source *reconnect;
        uint64_t backoff, backoff_min, backoff_max;
        VirtEventFn fn;
        void *userdata;
};

/* The open connection, or -ENOTCONN (err filled) while reconnecting. */
int virt_conn(Virt *v, virConnectPtr *ret, VirtError *err);
