/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-internal.h — what the org.sriovd.Manager1 files share: the Bus object, access, arguments */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "sriovd/bus.h"
#include "sriovd/manager.h"

/* Dry-run plans (a full observe each) for callers who may not change anything: burst, then per second. */
#define BUS_PLAN_BURST 20
#define BUS_PLAN_PER_SEC 10
/* Keys an Allocate options dictionary may hold; more is InvalidArgument. */
#define BUS_OPTIONS_MAX 8
/* The longest libvirt domain name Allocate takes, in bytes. */
#define BUS_DOMAIN_MAX 255

static inline void message_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}
#define _cleanup_message_ __attribute__((cleanup(message_unrefp)))

/* The property values last announced, to say only what changed. */
typedef struct BusProps {
        unsigned vf_total, vf_usable, vf_allocated, tenants;
        double utilization, target;
        bool real_time, threaded_irqs, rtnet_prio, iommu;
        const char *state;
} BusProps;

struct Bus {
        Manager *manager;
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        sd_bus_slot *log_control_slot;
        sd_bus_slot *disconnect_slot;
        sd_event_source *reconnect_timer;   /* the bus daemon went away: try again, backing off */
        uint64_t reconnect_usec;
        BusProps announced;
        /* Token bucket for unprivileged dry-run plans. */
        double plan_tokens;
        uint64_t plan_tokens_at;
};

/* bus-access.c: 1 when the sender may change state (EUID 0 or access_group), 0 when not, <0 on error. */
int bus_sender_privileged(Bus *b, sd_bus_message *m);
/* 0 when allowed; else NotPermitted set in error and its errno returned. */
int bus_check_change(Bus *b, sd_bus_message *m, sd_bus_error *error);

/* bus-args.c: the API's argument rules. */
bool bus_domain_valid(const char *s);
bool bus_class_name_valid(const char *s);
/* Read Allocate's a{sv}; InvalidArgument (set in error) on an unknown key, a wrong type or a bad value. */
int bus_read_allocate_options(sd_bus_message *m, TenantOptions *ret, sd_bus_error *error);

/* bus-logcontrol.c: org.freedesktop.LogControl1 on BUS_LOG_CONTROL_PATH; userdata is the Bus. */
#define BUS_LOG_CONTROL_PATH "/org/freedesktop/LogControl1"
#define BUS_LOG_CONTROL_INTERFACE "org.freedesktop.LogControl1"
extern const sd_bus_vtable bus_log_control_vtable[];

/* bus-read.c: the read-only methods. */
int bus_method_get_tenant(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_tenants(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_devices(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_irqs(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_plan(sd_bus_message *m, void *userdata, sd_bus_error *error);
