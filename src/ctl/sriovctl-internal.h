/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-internal.h — what sriovctl's files share: the exit codes, the options, the calls to sriovd and the commands */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "sriovctl-record.h"

/* Scripts may rely on these exit codes. The EXIT STATUS section of sriovctl(8) lists them. */
enum {
        EXIT_OK = 0,
        EXIT_FAILED = 1,          /* refused or failed, e.g. for no capacity or an unknown tenant */
        EXIT_USAGE = 2,           /* a bad command line, or an argument that the daemon rejected */
        EXIT_NOT_PERMITTED = 3,   /* a change without root or access_group */
        EXIT_UNREACHABLE = 4,     /* no bus, or no sriovd on it */
};

/* The connection and the command line's options, which main() fills and every command reads. */
typedef struct Ctl {
        sd_bus *bus;
        bool json;
        const char *address;
        /* The options of allocate. Each is sent as given, because sriovd validates it. */
        const char *domain;               /* "" when not given */
        int numa_node;
        bool have_numa_node;
        const char *mac;
        long vlan;                        /* -1 when not given */
        const char *pf;
        const char *domain_uuid;
        const char *owner;
        long min_tx_rate, max_tx_rate;    /* Mbit/s, -1 when not given */
        /* The options of top. */
        bool once;
        double interval;                  /* 0 means the daemon's period */
} Ctl;

/* ---- sriovctl-call.c ---- */

/* Prints {"error": name, "message": message} on stdout, for --json. */
void ctl_json_error(const char *name, const char *message);
/* Reports an error as one line on stderr. With --json, it also prints {"error": name, "message": text} on stdout.
 * Returns the exit code for e, or for r when e holds no error name. */
int ctl_fail(const Ctl *c, const char *what, const sd_bus_error *e, int r);
/* Prints the usage error fmt, with arg for its one %s, and a hint. Returns EXIT_USAGE. */
int ctl_usage_error(const char *fmt, const char *arg);
/* Calls a method. On error, says why and returns the exit code. Otherwise returns 0 with *reply. */
int ctl_call(const Ctl *c, const char *method, sd_bus_message **reply, const char *types, ...);
/* Says that sriovd's reply was not as expected, and returns EXIT_FAILED. */
int ctl_parse_failed(int r);
/* Reads the next value of a reply as JSON. A record becomes an object, and a list of records an array.
 * Returns 0 with *ret, which the caller puts, or the exit code to return. */
int ctl_reply_read(sd_bus_message *reply, json_object **ret);
/* Calls a method whose reply is one list of records. Returns 0 with *ret, or the exit code to return. */
int ctl_call_list(const Ctl *c, const char *method, json_object **ret);

/* ---- the commands. Each returns the exit code. ---- */

/* sriovctl-status.c */
int cmd_status(const Ctl *c, char **args, int n);

/* sriovctl-show.c */
int cmd_devices(const Ctl *c, char **args, int n);
int cmd_irqs(const Ctl *c, char **args, int n);
int cmd_tenants(const Ctl *c, char **args, int n);
int cmd_tenant(const Ctl *c, char **args, int n);
int cmd_plan(const Ctl *c, char **args, int n);
int cmd_check_host(const Ctl *c, char **args, int n);
/* Prints a reply of one tenant record as JSON, or as the one line that `tenant` and `allocate` print. */
int ctl_tenant_reply(const Ctl *c, sd_bus_message *reply, bool with_class);

/* sriovctl-change.c */
int cmd_allocate(const Ctl *c, char **args, int n);
int cmd_release(const Ctl *c, char **args, int n);
int cmd_coalesce(const Ctl *c, char **args, int n);
int cmd_reload(const Ctl *c, char **args, int n);
int cmd_force_num_vfs(const Ctl *c, char **args, int n);
int cmd_verify(const Ctl *c, char **args, int n);
