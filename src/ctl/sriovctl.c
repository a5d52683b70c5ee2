/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl — the operator's CLI over org.sriovd.Manager1, with tables for people and --json for scripts */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "sriovd-config.h"
#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-record.h"
#include "sriovctl-top.h"

/* Scripts may rely on these exit codes. The EXIT STATUS section of sriovctl(8) lists them. */
enum {
        EXIT_OK = 0,
        EXIT_FAILED = 1,          /* refused or failed, e.g. for no capacity or an unknown tenant */
        EXIT_USAGE = 2,           /* a bad command line, or an argument that the daemon rejected */
        EXIT_NOT_PERMITTED = 3,   /* a change without root or access_group */
        EXIT_UNREACHABLE = 4,     /* no bus, or no sriovd on it */
};

static bool arg_json;
static const char *arg_address;
static const char *arg_domain = "";
static int arg_numa_node = -1;
static bool arg_have_numa_node;
static const char *arg_mac;       /* sent as given, because sriovd validates it */
static long arg_vlan = -1;
static const char *arg_pf;            /* these three are sent as given too */
static const char *arg_domain_uuid;
static const char *arg_owner;
static long arg_min_tx_rate = -1, arg_max_tx_rate = -1;   /* Mbit/s, sent as given */
static bool arg_once;
static double arg_interval;   /* top --interval, where 0 means the daemon's period */

/* ---- calls ---- */

static int exit_code_for(const sd_bus_error *e, int r) {
        if (e && e->name) {
                if (streq(e->name, SRIOVD_ERROR_NOT_PERMITTED) || streq(e->name, SD_BUS_ERROR_ACCESS_DENIED))
                        return EXIT_NOT_PERMITTED;
                if (streq(e->name, SRIOVD_ERROR_INVALID_ARGUMENT) || streq(e->name, SD_BUS_ERROR_INVALID_ARGS))
                        return EXIT_USAGE;
                if (streq(e->name, SD_BUS_ERROR_SERVICE_UNKNOWN) || streq(e->name, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
                    streq(e->name, SD_BUS_ERROR_NO_REPLY) || streq(e->name, SD_BUS_ERROR_DISCONNECTED) ||
                    streq(e->name, SD_BUS_ERROR_UNKNOWN_OBJECT) || streq(e->name, SD_BUS_ERROR_TIMEOUT))
                        return EXIT_UNREACHABLE;
                return EXIT_FAILED;
        }
        if (r == -ECONNREFUSED || r == -ENOENT || r == -ENOTCONN || r == -ECONNRESET || r == -ETIMEDOUT ||
            r == -EACCES || r == -ENXIO)
                return EXIT_UNREACHABLE;
        return EXIT_FAILED;
}

static void json_error(const char *name, const char *message) {
        _cleanup_json_ json_object *o = json_object_new_object();

        json_set(o, "error", json_object_new_string(name));
        json_set(o, "message", json_object_new_string(message));
        json_print(o);
}

/* Reports an error as one line on stderr. With --json, it also prints {"error": name, "message": text} on stdout. */
static int fail(const char *what, const sd_bus_error *e, int r) {
        const char *name = e && e->name ? e->name : NULL;
        const char *message = e && e->message ? e->message : strerror(r < 0 ? -r : r);

        fprintf(stderr, "sriovctl: %s: %s%s%s\n", what, name ? name : "", name ? ": " : "", message);
        if (arg_json)
                json_error(name ? name : SRIOVD_ERROR_FAILED, message);
        return exit_code_for(e, r);
}

static int usage_error(const char *fmt, const char *arg) {
        fprintf(stderr, "sriovctl: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\nTry 'sriovctl --help'.\n");
        return EXIT_USAGE;
}

static int connect_bus(sd_bus **ret) {
        _cleanup_bus_ sd_bus *bus = NULL;
        int r;

        if (!arg_address) {
                r = sd_bus_open_system(&bus);
        } else {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, arg_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, 1);
                if (r >= 0)
                        r = sd_bus_start(bus);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Calls a method. On error, says why and returns the exit code. Otherwise returns 0 with *reply. */
static int call(sd_bus *bus, const char *method, sd_bus_message **reply, const char *types, ...) {
        _cleanup_message_ sd_bus_message *m = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &e, reply);
        if (r < 0) {
                int code = fail(method, &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return 0;
}

static int parse_failed(int r) {
        fprintf(stderr, "sriovctl: unexpected reply from sriovd: %s\n", strerror(-r));
        return EXIT_FAILED;
}

/* Reads the next value of a reply as JSON. A record becomes an object, and a list of records an array. */
static int reply_read(sd_bus_message *reply, json_object **ret) {
        int r = read_value(reply, ret);

        return r < 0 ? parse_failed(r) : 0;
}

/* Calls a method whose reply is one list of records. Returns 0 with *ret, or the exit code to return. */
static int call_list(sd_bus *bus, const char *method, json_object **ret) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r = call(bus, method, &reply, NULL);

        if (r != 0)
                return r;
        r = reply_read(reply, ret);
        if (r == 0 && !json_object_is_type(*ret, json_type_array)) {
                json_object_put(*ret);
                return parse_failed(-EBADMSG);
        }
        return r;
}

/* ---- status ---- */

static const char *const rt_node_keys[] = {
        SRIOVD_KEY_NUMA_NODE, SRIOVD_KEY_CPUS, SRIOVD_KEY_BOOKED, SRIOVD_KEY_SHARED,
        SRIOVD_KEY_ROOM, SRIOVD_KEY_GUESTS, SRIOVD_KEY_WAITING, NULL,
};

/* Prints one line per NUMA node of RtCpuNodes. An older sriovd lacks RtCpuNodes, and then nothing is printed. */
static void print_rt_nodes(json_object *nodes) {
        size_t n = nodes && json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;

        if (!nodes)
                return;
        if (n == 0) {
                printf("RT CPUs:     none\n");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *r = json_object_array_get_idx(nodes, i);
                int64_t node = -1, cpus = 0, booked = 0, shared = 0, room = 0, guests = 0, waiting = 0;
                char where[32];

                if (!rec_int(r, SRIOVD_KEY_NUMA_NODE, &node))
                        snprintf(where, sizeof(where), "node unknown");
                else
                        snprintf(where, sizeof(where), "node %" PRId64, node);
                rec_int(r, SRIOVD_KEY_CPUS, &cpus);
                rec_int(r, SRIOVD_KEY_BOOKED, &booked);
                rec_int(r, SRIOVD_KEY_SHARED, &shared);
                rec_int(r, SRIOVD_KEY_ROOM, &room);
                rec_int(r, SRIOVD_KEY_GUESTS, &guests);
                rec_int(r, SRIOVD_KEY_WAITING, &waiting);
                printf("%-13s%s: %" PRId64 " of %" PRId64 " booked, %" PRId64 " shared (room for %" PRId64
                       "), %" PRId64 " guests, %" PRId64 " waiting\n",
                       i == 0 ? "RT CPUs:" : "", where, booked, cpus, shared, room, guests, waiting);
        }
}

static const char *const alert_keys[] = {
        SRIOVD_KEY_NAME, SRIOVD_KEY_METRIC, SRIOVD_KEY_LABELS, SRIOVD_KEY_VALUE, SRIOVD_KEY_THRESHOLD,
        SRIOVD_KEY_CLEAR, SRIOVD_KEY_DIRECTION, SRIOVD_KEY_PERIODS, SRIOVD_KEY_SINCE, NULL,
};

/* Prints one line per active alert, as Prometheus writes a sample: metric{label="value",...}. */
/* "Events:      drift from BPF; latency: off: the host is a fixture tree" */
static void print_kernel_events(json_object *events) {
        static const char *const kinds[] = { "drift", "latency" };

        if (!events || !json_object_is_type(events, json_type_object))
                return;
        printf("Events:     ");
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                const char *v = rec_str(events, kinds[i]);

                if (!v)
                        continue;
                if (streq(v, "bpf"))
                        printf("%s %s from BPF", i ? ";" : "", kinds[i]);
                else
                        printf("%s %s polled (%s)", i ? ";" : "", kinds[i], v);
        }
        printf("\n");
}

static void print_alerts(json_object *alerts) {
        size_t n;

        if (!alerts || !json_object_is_type(alerts, json_type_array))
                return;   /* an older sriovd has no alerts to report */
        n = json_object_array_length(alerts);
        if (n == 0) {
                printf("Alerts:      none\n");
                return;
        }
        printf("Alerts:      %zu active\n", n);
        for (size_t i = 0; i < n; i++) {
                char line[1024];
                printf("  %s\n", alert_format(json_object_array_get_idx(alerts, i), line, sizeof(line)));
        }
}

/*
 * Gives each PF's VFs and the VFs that tenants hold, from ListDevices, with one row per PF in its
 * order. Returns NULL when the list cannot be had, and status then says what it can without it.
 */
static json_object *pf_pools(sd_bus *bus) {
        _cleanup_json_ json_object *devs = NULL;
        json_object *pools;

        if (call_list(bus, "ListDevices", &devs) != 0 || !json_object_is_type(devs, json_type_array))
                return NULL;
        pools = json_object_new_array();
        for (size_t i = 0; pools && i < json_object_array_length(devs); i++) {
                json_object *d = json_object_array_get_idx(devs, i), *pool;
                int64_t num_vfs = 0, node = -1, held = 0;
                const char *pf = rec_str(d, SRIOVD_KEY_ADDRESS);

                if (!pf || !streq_ptr(rec_str(d, SRIOVD_KEY_KIND), "pf"))
                        continue;
                rec_int(d, SRIOVD_KEY_NUM_VFS, &num_vfs);
                rec_int(d, SRIOVD_KEY_NUMA_NODE, &node);
                for (size_t k = 0; k < json_object_array_length(devs); k++) {
                        json_object *vf = json_object_array_get_idx(devs, k);
                        held += streq_ptr(rec_str(vf, SRIOVD_KEY_KIND), "vf") && streq_ptr(rec_str(vf, SRIOVD_KEY_PF), pf) &&
                                rec_str(vf, SRIOVD_KEY_TENANT);
                }
                pool = json_object_new_object();
                json_set(pool, "pf", json_object_new_string(pf));
                json_set(pool, "numa_node", node >= 0 ? json_object_new_int64(node) : NULL);
                json_set(pool, "vfs", json_object_new_int64(num_vfs));
                json_set(pool, "allocated", json_object_new_int64(held));
                json_object_array_add(pools, pool);
        }
        return pools;
}

static int cmd_status(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *props = NULL, *pools = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t total = 0, usable = 0, allocated = 0, tenants = 0, api = 1;
        double util = 0, target = 0;
        const char *version, *state;
        json_object *v;
        int r;

        r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &e,
                               &reply, "s", SRIOVD_BUS_INTERFACE);
        if (r < 0) {
                int code = fail("status", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        r = reply_read(reply, &props);
        if (r != 0)
                return r;
        version = rec_str(props, "Version") ?: "";
        state = rec_str(props, "State") ?: "";
        rec_int(props, "VfTotal", &total);
        rec_int(props, "VfUsable", &usable);
        rec_int(props, "VfAllocated", &allocated);
        rec_int(props, "Tenants", &tenants);
        rec_int(props, "ApiVersion", &api);   /* sriovd 0.1 lacks it and has the positional API */
        if ((v = rec_get(props, "VfUtilization")))
                util = json_object_get_double(v);
        if ((v = rec_get(props, "VfTarget")))
                target = json_object_get_double(v);
        bool rt = rec_bool(props, "RealTime"), thr = rec_bool(props, "ThreadedIrqs"),
             rtnet = rec_bool(props, "RtnetPrio"), iommu = rec_bool(props, "Iommu");
        json_object *rt_nodes = rec_get(props, "RtCpuNodes");
        json_object *alerts = rec_get(props, "ActiveAlerts"), *reasons = rec_get(props, "StateReasons");
        json_object *events = rec_get(props, "KernelEvents");   /* sriovd before kernel events lacks it */
        bool have_reasons = reasons && json_object_is_type(reasons, json_type_array);

        pools = pf_pools(bus);

        if (arg_json) {
                _cleanup_json_ json_object *o = json_object_new_object();
                json_object *kernel = json_object_new_object();

                json_set(o, "version", json_object_new_string(version));
                json_set(o, "api_version", json_object_new_int64(api));
                json_set(o, "state", json_object_new_string(state));
                json_set(o, "state_reasons", have_reasons ? json_object_get(reasons) : json_object_new_array());
                json_set(o, "vf_total", json_object_new_int64(total));
                json_set(o, "vf_usable", json_object_new_int64(usable));
                json_set(o, "vf_allocated", json_object_new_int64(allocated));
                json_set(o, "vf_utilization", json_double(util));
                json_set(o, "vf_target", json_double(target));
                json_set(o, "tenants", json_object_new_int64(tenants));
                json_set(o, "pools", pools ? json_object_get(pools) : NULL);
                if (rt_nodes && json_object_is_type(rt_nodes, json_type_array)) {
                        json_object *rows = json_object_new_array();
                        for (size_t i = 0; i < json_object_array_length(rt_nodes); i++)
                                json_object_array_add(rows, rec_mirror(json_object_array_get_idx(rt_nodes, i),
                                                                       rt_node_keys));
                        json_set(o, "rt_cpus", rows);
                }
                json_set(kernel, "real_time", json_object_new_boolean(rt));
                json_set(kernel, "threaded_irqs", json_object_new_boolean(thr));
                json_set(kernel, "rtnet_prio", json_object_new_boolean(rtnet));
                json_set(kernel, "iommu", json_object_new_boolean(iommu));
                if (events && json_object_is_type(events, json_type_object))
                        json_set(kernel, "events", json_object_get(events));
                json_set(o, "kernel", kernel);
                if (alerts && json_object_is_type(alerts, json_type_array)) {
                        json_object *rows = json_object_new_array();
                        for (size_t i = 0; i < json_object_array_length(alerts); i++)
                                json_object_array_add(rows, rec_mirror(json_object_array_get_idx(alerts, i),
                                                                       alert_keys));
                        json_set(o, "alerts", rows);
                }
                json_print(o);
                return EXIT_OK;
        }
        printf("sriovd %s: %s\n", version, state);
        for (size_t i = 0; have_reasons && i < json_object_array_length(reasons); i++)
                printf("%-13s%s\n", i == 0 ? "Degraded:" : "",
                       json_object_get_string(json_object_array_get_idx(reasons, i)));
        printf("VFs:         %u total, %u usable, %u allocated (%.1f%%, target %.0f%%)\n", (unsigned) total,
               (unsigned) usable, (unsigned) allocated, util * 100, target * 100);
        for (size_t i = 0; pools && i < json_object_array_length(pools); i++) {
                json_object *p = json_object_array_get_idx(pools, i);
                int64_t vfs = 0, held = 0, node = -1;
                char where[32] = "";

                rec_int(p, "vfs", &vfs);
                rec_int(p, "allocated", &held);
                if (rec_int(p, "numa_node", &node))
                        snprintf(where, sizeof(where), " (node %d)", (int) node);
                printf("%-13s%s%s: %u VFs, %u allocated (%.1f%%)\n", i == 0 ? "Pools:" : "", rec_str(p, "pf"), where,
                       (unsigned) vfs, (unsigned) held, vfs > 0 ? 100.0 * (double) held / (double) vfs : 0.0);
        }
        printf("Tenants:     %u\n", (unsigned) tenants);
        print_rt_nodes(rt_nodes);
        printf("Kernel:      PREEMPT_RT %s, threaded IRQs %s, rtnet_prio %s, IOMMU %s\n", rt ? "yes" : "no",
               thr ? "yes" : "no", rtnet ? "yes" : "no", iommu ? "yes" : "no");
        print_kernel_events(events);
        print_alerts(alerts);
        return EXIT_OK;
}

/* ---- lists ---- */

static int cmd_devices(sd_bus *bus, char **args, int n) {
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = call_list(bus, "ListDevices", &rows);
        if (r != 0)
                return r;
        if (arg_json)
                out = json_object_new_array();
        else
                printf("%-14s %-4s %-14s %4s %-10s %-16s %-20s %s\n", "ADDRESS", "KIND", "PF", "NODE", "DRIVER",
                       "NETDEV", "TENANT", "VFS");
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *d = json_object_array_get_idx(rows, i);
                const char *kind = rec_str(d, SRIOVD_KEY_KIND) ?: "";
                bool is_pf = streq(kind, "pf");
                int64_t node = -1, num_vfs = 0, total_vfs = 0, index = 0;
                char nodes[16] = "-";

                if (rec_int(d, SRIOVD_KEY_NUMA_NODE, &node))
                        snprintf(nodes, sizeof(nodes), "%d", (int) node);
                rec_int(d, SRIOVD_KEY_NUM_VFS, &num_vfs);
                rec_int(d, SRIOVD_KEY_TOTAL_VFS, &total_vfs);
                rec_int(d, SRIOVD_KEY_VF_INDEX, &index);
                if (arg_json) {
                        json_object *o = json_object_new_object();
                        json_set(o, "address", rec_ref(d, SRIOVD_KEY_ADDRESS));
                        json_set(o, "kind", rec_ref(d, SRIOVD_KEY_KIND));
                        json_set(o, "pf", is_pf ? NULL : rec_ref(d, SRIOVD_KEY_PF));
                        json_set(o, "numa_node", rec_ref(d, SRIOVD_KEY_NUMA_NODE));
                        json_set(o, "driver", rec_ref(d, SRIOVD_KEY_DRIVER));
                        json_set(o, "netdev", rec_ref(d, SRIOVD_KEY_NETDEV));
                        if (is_pf) {
                                json_set(o, "num_vfs", rec_ref(d, SRIOVD_KEY_NUM_VFS));
                                json_set(o, "total_vfs", rec_ref(d, SRIOVD_KEY_TOTAL_VFS));
                        } else {
                                json_set(o, "vf_index", rec_ref(d, SRIOVD_KEY_VF_INDEX));
                                json_set(o, "tenant", rec_ref(d, SRIOVD_KEY_TENANT));
                        }
                        json_object_array_add(out, o);
                } else if (is_pf)
                        printf("%-14s %-4s %-14s %4s %-10s %-16s %-20s %u/%u\n", dash(rec_str(d, SRIOVD_KEY_ADDRESS)),
                               kind, "-", nodes, dash(rec_str(d, SRIOVD_KEY_DRIVER)),
                               dash(rec_str(d, SRIOVD_KEY_NETDEV)), "-", (unsigned) num_vfs, (unsigned) total_vfs);
                else
                        printf("%-14s %-4s %-14s %4s %-10s %-16s %-20s #%u\n", dash(rec_str(d, SRIOVD_KEY_ADDRESS)),
                               dash(kind), dash(rec_str(d, SRIOVD_KEY_PF)), nodes, dash(rec_str(d, SRIOVD_KEY_DRIVER)),
                               dash(rec_str(d, SRIOVD_KEY_NETDEV)), dash(rec_str(d, SRIOVD_KEY_TENANT)),
                               (unsigned) index);
        }
        if (arg_json)
                json_print(out);
        return EXIT_OK;
}

static int cmd_irqs(sd_bus *bus, char **args, int n) {
        static const char *const keys[] = { SRIOVD_KEY_DEVICE, SRIOVD_KEY_EFFECTIVE, SRIOVD_KEY_THREAD, SRIOVD_KEY_NAPI,
                                            NULL };
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = call_list(bus, "ListIrqs", &rows);
        if (r != 0)
                return r;
        if (arg_json)
                out = json_object_new_array();
        else
                printf("%5s %-14s %-20s %-20s %-8s %-16s %s\n", "IRQ", "DEVICE", "AFFINITY", "EFFECTIVE", "MANAGED",
                       "THREAD", "NAPI THREAD");
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *q = json_object_array_get_idx(rows, i), *th = rec_get(q, SRIOVD_KEY_THREAD),
                            *napi = rec_get(q, SRIOVD_KEY_NAPI);
                int64_t irq = 0, pid = 0, prio = 0;
                char thread[64] = "-", napi_thread[160] = "-";

                if (arg_json) {
                        json_object_array_add(out, rec_mirror(q, keys));
                        continue;
                }
                rec_int(q, SRIOVD_KEY_IRQ, &irq);
                if (th && rec_int(th, SRIOVD_KEY_PID, &pid) && pid > 0) {
                        rec_int(th, SRIOVD_KEY_PRIORITY, &prio);
                        snprintf(thread, sizeof(thread), "%d %s/%d", (int) pid, dash(rec_str(th, SRIOVD_KEY_POLICY)),
                                 (int) prio);
                }
                /* The line reads like "napi/enp65s0-8193 1234 fifo/60 on 3 (queue-order)".
                 * How the thread was paired is part of the answer. */
                if (napi && rec_int(napi, SRIOVD_KEY_PID, &pid) && pid > 0) {
                        rec_int(napi, SRIOVD_KEY_PRIORITY, &prio);
                        snprintf(napi_thread, sizeof(napi_thread), "%s %d %s/%d on %s (%s)",
                                 dash(rec_str(napi, SRIOVD_KEY_NAME)), (int) pid, dash(rec_str(napi, SRIOVD_KEY_POLICY)),
                                 (int) prio, dash(rec_str(napi, SRIOVD_KEY_CPUS)), dash(rec_str(napi, SRIOVD_KEY_PAIRED)));
                }
                printf("%5u %-14s %-20s %-20s %-8s %-16s %s\n", (unsigned) irq, dash(rec_str(q, SRIOVD_KEY_DEVICE)),
                       dash(rec_str(q, SRIOVD_KEY_AFFINITY)), dash(rec_str(q, SRIOVD_KEY_EFFECTIVE)),
                       rec_bool(q, SRIOVD_KEY_WRITABLE) ? "yes" : "kernel", thread, napi_thread);
        }
        if (arg_json)
                json_print(out);
        return EXIT_OK;
}

/* A tenant's JSON always has these keys, with null when sriovd sent none. Any other key that sriovd sends is there too. */
static const char *const tenant_keys[] = {
        SRIOVD_KEY_TENANT, SRIOVD_KEY_CLASS,  SRIOVD_KEY_KIND,      SRIOVD_KEY_ADDRESS,
        SRIOVD_KEY_NETDEV, SRIOVD_KEY_MAC,    SRIOVD_KEY_STATE,     SRIOVD_KEY_DOMAIN,
        SRIOVD_KEY_NUMA_NODE, SRIOVD_KEY_COALESCE, SRIOVD_KEY_RT_CPUS, SRIOVD_KEY_RT_WAITING, NULL,
};

/* Formats the tenant's guest's RT CPUs as a list such as "2,3". Gives "waiting" while the guest needs one and none is free, and "-" otherwise. */
static const char *tenant_rt_cpus(json_object *t, char *buf, size_t size) {
        json_object *a = rec_get(t, SRIOVD_KEY_RT_CPUS);
        size_t k = 0;

        buf[0] = 0;
        for (size_t i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a) &&
                           k + 12 < size; i++)
                k += (size_t) snprintf(buf + k, size - k, "%s%d", i ? "," : "",
                                       json_object_get_int(json_object_array_get_idx(a, i)));
        if (!buf[0])
                snprintf(buf, size, "%s", rec_bool(t, SRIOVD_KEY_RT_WAITING) ? "waiting" : "-");
        return buf;
}

static void tenant_print_row(json_object *t) {
        json_object *co = rec_get(t, SRIOVD_KEY_COALESCE);
        char nodes[16] = "-", coalesce[32] = "class", rt[64];
        int64_t node, rx = 0, tx = 0;

        if (rec_int(t, SRIOVD_KEY_NUMA_NODE, &node))
                snprintf(nodes, sizeof(nodes), "%d", (int) node);
        if (co) {
                rec_int(co, SRIOVD_KEY_RX_USECS, &rx);
                rec_int(co, SRIOVD_KEY_TX_USECS, &tx);
                snprintf(coalesce, sizeof(coalesce), "%u/%u us", (unsigned) rx, (unsigned) tx);
        }
        printf("%-20s %-16s %-6s %-14s %-16s %-17s %-9s %-16s %4s %-10s %-12s %s\n", dash(rec_str(t, SRIOVD_KEY_TENANT)),
               dash(rec_str(t, SRIOVD_KEY_CLASS)), dash(rec_str(t, SRIOVD_KEY_KIND)),
               dash(rec_str(t, SRIOVD_KEY_ADDRESS)), dash(rec_str(t, SRIOVD_KEY_NETDEV)),
               dash(rec_str(t, SRIOVD_KEY_MAC)), dash(rec_str(t, SRIOVD_KEY_STATE)),
               dash(rec_str(t, SRIOVD_KEY_DOMAIN)), nodes, coalesce, dash(rec_str(t, SRIOVD_KEY_OWNER)),
               tenant_rt_cpus(t, rt, sizeof(rt)));
}

static int cmd_tenants(sd_bus *bus, char **args, int n) {
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = call_list(bus, "ListTenants", &rows);
        if (r != 0)
                return r;
        if (arg_json)
                out = json_object_new_array();
        else
                printf("%-20s %-16s %-6s %-14s %-16s %-17s %-9s %-16s %4s %-10s %-12s %s\n", "TENANT", "CLASS", "KIND",
                       "ADDRESS", "NETDEV", "MAC", "STATE", "DOMAIN", "NODE", "COALESCE", "OWNER", "RT-CPUS");
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *t = json_object_array_get_idx(rows, i);
                if (arg_json)
                        json_object_array_add(out, rec_mirror(t, tenant_keys));
                else
                        tenant_print_row(t);
        }
        if (arg_json)
                json_print(out);
        return EXIT_OK;
}

/* Prints a reply of one tenant record as JSON, or as the one line that `tenant` and `allocate` print. */
static int tenant_reply(sd_bus_message *reply, bool with_class) {
        _cleanup_json_ json_object *t = NULL;
        char rt[64], extra[256] = "";
        int64_t rate;
        int r;

        r = reply_read(reply, &t);
        if (r != 0)
                return r;
        if (!json_object_is_type(t, json_type_object))
                return parse_failed(-EBADMSG);
        if (arg_json) {
                _cleanup_json_ json_object *o = rec_mirror(t, tenant_keys);
                json_print(o);
        } else if (with_class) {
                /* What an outside scheduler set is shown only when it did, so that other tenants' lines stay short. */
                size_t k = 0;
                if (rec_str(t, SRIOVD_KEY_PIN_PF))
                        k += (size_t) snprintf(extra + k, sizeof(extra) - k, ", pinned to PF %s", rec_str(t, SRIOVD_KEY_PIN_PF));
                if (rec_str(t, SRIOVD_KEY_DOMAIN_UUID) && k < sizeof(extra))
                        k += (size_t) snprintf(extra + k, sizeof(extra) - k, ", domain UUID %s",
                                               rec_str(t, SRIOVD_KEY_DOMAIN_UUID));
                if (rec_str(t, SRIOVD_KEY_OWNER) && k < sizeof(extra))
                        k += (size_t) snprintf(extra + k, sizeof(extra) - k, ", owner %s", rec_str(t, SRIOVD_KEY_OWNER));
                if (rec_int(t, SRIOVD_KEY_MIN_TX_RATE, &rate) && k < sizeof(extra))
                        k += (size_t) snprintf(extra + k, sizeof(extra) - k, ", min %" PRIi64 " Mbit/s", rate);
                if (rec_int(t, SRIOVD_KEY_MAX_TX_RATE, &rate) && k < sizeof(extra))
                        snprintf(extra + k, sizeof(extra) - k, ", max %" PRIi64 " Mbit/s", rate);
                printf("%s: %s %s, class %s, netdev %s, MAC %s, %s%s, RT CPUs %s\n", dash(rec_str(t, SRIOVD_KEY_TENANT)),
                       dash(rec_str(t, SRIOVD_KEY_KIND)), dash(rec_str(t, SRIOVD_KEY_ADDRESS)),
                       dash(rec_str(t, SRIOVD_KEY_CLASS)), dash(rec_str(t, SRIOVD_KEY_NETDEV)),
                       dash(rec_str(t, SRIOVD_KEY_MAC)), dash(rec_str(t, SRIOVD_KEY_STATE)), extra,
                       tenant_rt_cpus(t, rt, sizeof(rt)));
        } else
                printf("%s: %s %s, netdev %s, MAC %s\n", dash(rec_str(t, SRIOVD_KEY_TENANT)),
                       dash(rec_str(t, SRIOVD_KEY_KIND)), dash(rec_str(t, SRIOVD_KEY_ADDRESS)),
                       dash(rec_str(t, SRIOVD_KEY_NETDEV)), dash(rec_str(t, SRIOVD_KEY_MAC)));
        return EXIT_OK;
}

static int cmd_tenant(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r;

        if (n != 1)
                return usage_error("%s", "tenant TENANT");
        r = call(bus, "GetTenant", &reply, "s", args[0]);
        if (r != 0)
                return r;
        return tenant_reply(reply, true);
}

/* ---- changes ---- */

static int cmd_allocate(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (n != 2)
                return usage_error("%s", "allocate TENANT CLASS [--domain D] [--numa-node N] [--mac MAC] [--vlan ID] "
                                   "[--pf PF] [--domain-uuid UUID] [--owner OWNER] [--min-tx-rate MBIT] "
                                   "[--max-tx-rate MBIT]");
        r = sd_bus_message_new_method_call(bus, &m, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Allocate");
        if (r >= 0)
                r = sd_bus_message_append(m, "sss", args[0], args[1], arg_domain);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && arg_have_numa_node)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_NUMA_NODE, "i", (int32_t) arg_numa_node);
        if (r >= 0 && arg_mac)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MAC, "s", arg_mac);
        if (r >= 0 && arg_vlan >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_VLAN, "u", (uint32_t) arg_vlan);
        if (r >= 0 && arg_pf)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_PF, "s", arg_pf);
        if (r >= 0 && arg_domain_uuid)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_DOMAIN_UUID, "s", arg_domain_uuid);
        if (r >= 0 && arg_owner)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_OWNER, "s", arg_owner);
        if (r >= 0 && arg_min_tx_rate >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MIN_TX_RATE, "u", (uint32_t) arg_min_tx_rate);
        if (r >= 0 && arg_max_tx_rate >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MAX_TX_RATE, "u", (uint32_t) arg_max_tx_rate);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &e, &reply);
        if (r < 0) {
                int code = fail("allocate", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return tenant_reply(reply, false);
}

static int parse_uint(const char *s, uint32_t *ret) {
        char *end;
        unsigned long v;

        if (!s || !*s || *s == '-')
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static void print_ok(void) {
        _cleanup_json_ json_object *o = json_object_new_object();

        json_set(o, "ok", json_object_new_boolean(true));
        json_print(o);
}

static int cmd_simple(sd_bus *bus, const char *method, const char *types, const char *arg) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r = call(bus, method, &reply, types, arg);

        if (r != 0)
                return r;
        if (arg_json)
                print_ok();
        return EXIT_OK;
}

static int cmd_release(sd_bus *bus, char **args, int n) {
        if (n != 1)
                return usage_error("%s", "release TENANT");
        return cmd_simple(bus, "Release", "s", args[0]);
}

static int cmd_force_num_vfs(sd_bus *bus, char **args, int n) {
        if (n != 1)
                return usage_error("%s", "force-num-vfs PF");
        return cmd_simple(bus, "ForceNumVfs", "s", args[0]);
}

/*
 * Returns when sriovd has loaded the new policy and applied it. Otherwise it fails with exit 1 and
 * prints the FILE:LINE: mistakes on stderr, one per line. ExecReload= shows them in `systemctl reload`.
 */
static int cmd_reload(sd_bus *bus, char **args, int n) {
        if (n != 0)
                return usage_error("%s", "reload takes no arguments");
        return cmd_simple(bus, "Reload", NULL, NULL);
}

static int cmd_coalesce(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        uint32_t rx, tx;
        int r;

        if (n != 3)
                return usage_error("%s", "coalesce TENANT RX_USECS TX_USECS");
        if (parse_uint(args[1], &rx) < 0 || parse_uint(args[2], &tx) < 0)
                return usage_error("coalesce: %s", "RX_USECS and TX_USECS must be numbers of microseconds");
        r = call(bus, "SetCoalesce", &reply, "suu", args[0], rx, tx);
        if (r != 0)
                return r;
        if (arg_json)
                print_ok();
        return EXIT_OK;
}

static int cmd_plan(sd_bus *bus, char **args, int n) {
        static const char *const note_keys[] = { SRIOVD_KEY_TARGET, NULL };
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *actions = NULL, *notes = NULL, *out = NULL, *out_actions = NULL;
        int r;

        r = call(bus, "Plan", &reply, NULL);
        if (r != 0)
                return r;
        r = reply_read(reply, &actions);
        if (r == 0)
                r = reply_read(reply, &notes);
        if (r != 0)
                return r;
        if (!json_object_is_type(actions, json_type_array) || !json_object_is_type(notes, json_type_array))
                return parse_failed(-EBADMSG);
        if (arg_json)
                out_actions = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(actions); i++) {
                json_object *a = json_object_array_get_idx(actions, i);
                const char *target = rec_str(a, SRIOVD_KEY_TARGET) ?: "host", *effect = rec_str(a, SRIOVD_KEY_EFFECT);
                int64_t irq;
                bool is_irq = rec_int(a, SRIOVD_KEY_IRQ, &irq);

                if (arg_json) {
                        json_object *o = json_object_get(a);
                        json_set(o, SRIOVD_KEY_TARGET, json_object_new_string(target));
                        if (!effect)
                                json_set(o, SRIOVD_KEY_EFFECT, NULL);
                        json_object_array_add(out_actions, o);
                } else {
                        char where[32] = "";
                        if (is_irq)
                                snprintf(where, sizeof(where), " IRQ %u", (unsigned) irq);
                        printf("%-14s %s%s: %s -> %s%s%s%s\n", dash(rec_str(a, SRIOVD_KEY_ACTION)), target, where,
                               rec_str(a, SRIOVD_KEY_BEFORE) ?: "", rec_str(a, SRIOVD_KEY_AFTER) ?: "",
                               effect ? " (" : "", effect ?: "", effect ? ")" : "");
                }
        }
        if (!arg_json && json_object_array_length(actions) == 0)
                printf("Nothing to do.\n");
        if (arg_json) {
                json_object *out_notes = json_object_new_array();
                out = json_object_new_object();
                for (size_t i = 0; i < json_object_array_length(notes); i++)
                        json_object_array_add(out_notes, rec_mirror(json_object_array_get_idx(notes, i), note_keys));
                json_set(out, "actions", TAKE_PTR(out_actions));
                json_set(out, "notes", out_notes);
                json_print(out);
                return EXIT_OK;
        }
        for (size_t i = 0; i < json_object_array_length(notes); i++) {
                json_object *no = json_object_array_get_idx(notes, i);
                const char *target = rec_str(no, SRIOVD_KEY_TARGET);
                printf("%s: %s%s%s\n", dash(rec_str(no, SRIOVD_KEY_LEVEL)), target ?: "", target ? ": " : "",
                       rec_str(no, SRIOVD_KEY_TEXT) ?: "");
        }
        return EXIT_OK;
}

/* The RT host check's findings, as sriovd --check-host prints them. Exits 1 on an error-level failure. */
static int cmd_check_host(sd_bus *bus, char **args, int n) {
        static const char *const keys[] = { SRIOVD_KEY_FIX, NULL };
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *findings = NULL;
        unsigned counts[3] = {};   /* errors, warnings, info */
        int r;

        r = call(bus, "CheckHost", &reply, NULL);
        if (r != 0)
                return r;
        r = reply_read(reply, &findings);
        if (r != 0)
                return r;
        if (!json_object_is_type(findings, json_type_array))
                return parse_failed(-EBADMSG);
        if (!arg_json)
                printf("%-14s %-8s %-6s %s\n", "CHECK", "SEVERITY", "RESULT", "SEEN");
        for (size_t i = 0; i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i);
                const char *sev = rec_str(f, SRIOVD_KEY_SEVERITY) ?: "", *result = rec_str(f, SRIOVD_KEY_RESULT) ?: "";
                bool failed = streq(result, "fail");

                if (failed)
                        counts[streq(sev, "error") ? 0 : streq(sev, "warning") ? 1 : 2]++;
                if (arg_json)
                        continue;
                printf("%-14s %-8s %-6s %s\n", dash(rec_str(f, SRIOVD_KEY_CHECK)), sev, result,
                       rec_str(f, SRIOVD_KEY_SEEN) ?: "");
                if (!failed)
                        continue;
                printf("%-31s expected: %s\n", "", rec_str(f, SRIOVD_KEY_EXPECTED) ?: "");
                printf("%-31s fix: %s\n", "", rec_str(f, SRIOVD_KEY_FIX) ?: "");
        }
        if (arg_json) {
                _cleanup_json_ json_object *out = json_object_new_object(), *arr = json_object_new_array();

                for (size_t i = 0; i < json_object_array_length(findings); i++)
                        json_object_array_add(arr, rec_mirror(json_object_array_get_idx(findings, i), keys));
                json_set(out, "findings", TAKE_PTR(arr));
                json_set(out, "errors", json_object_new_int64(counts[0]));
                json_set(out, "warnings", json_object_new_int64(counts[1]));
                json_set(out, "info", json_object_new_int64(counts[2]));
                json_print(out);
        } else
                printf("\n%u errors, %u warnings, %u info\n", counts[0], counts[1], counts[2]);
        return counts[0] > 0 ? EXIT_FAILED : EXIT_OK;
}

static int cmd_verify(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *what = NULL;
        uint32_t found, repaired, failed, remaining;
        int r;

        r = call(bus, "Verify", &reply, NULL);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "uuuu", &found, &repaired, &failed, &remaining);
        if (r < 0)
                return parse_failed(r);
        r = reply_read(reply, &what);
        if (r != 0)
                return r;
        if (!json_object_is_type(what, json_type_array))
                return parse_failed(-EBADMSG);
        if (arg_json) {
                _cleanup_json_ json_object *o = json_object_new_object();
                json_set(o, "found", json_object_new_int64(found));
                json_set(o, "repaired", json_object_new_int64(repaired));
                json_set(o, "failed", json_object_new_int64(failed));
                json_set(o, "remaining", json_object_new_int64(remaining));
                json_set(o, "drift", json_object_get(what));
                json_print(o);
        } else {
                printf("%u found, %u repaired, %u failed, %u still differ\n", found, repaired, failed, remaining);
                for (size_t i = 0; i < json_object_array_length(what); i++)
                        printf("  %s\n", json_object_get_string(json_object_array_get_idx(what, i)));
        }
        /* Drift that could not be repaired is a failure that a script should see. */
        return failed || remaining ? EXIT_FAILED : EXIT_OK;
}

/* ---- top ---- */

static int cmd_top(sd_bus *bus, char **args, int n) {
        TopOptions o = { .once = arg_once || arg_json, .json = arg_json, .interval_sec = arg_interval };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = top_run(bus, &o, &e);
        if (r < 0) {
                int code = fail("top", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return r;
}

typedef struct Command {
        const char *name;
        int (*run)(sd_bus *bus, char **args, int n);
        int min_args, max_args;
} Command;

static const Command commands[] = {
        { "status", cmd_status, 0, 0 },
        { "devices", cmd_devices, 0, 0 },
        { "irqs", cmd_irqs, 0, 0 },
        { "tenants", cmd_tenants, 0, 0 },
        { "tenant", cmd_tenant, 1, 1 },
        { "allocate", cmd_allocate, 2, 2 },
        { "release", cmd_release, 1, 1 },
        { "coalesce", cmd_coalesce, 3, 3 },
        { "plan", cmd_plan, 0, 0 },
        { "verify", cmd_verify, 0, 0 },
        { "check-host", cmd_check_host, 0, 0 },
        { "reload", cmd_reload, 0, 0 },
        { "force-num-vfs", cmd_force_num_vfs, 1, 1 },
        { "top", cmd_top, 0, 0 },
};

static void help(void) {
        printf("sriovctl [OPTIONS] COMMAND [ARGS]\n\n"
               "Query and drive sriovd over D-Bus (org.sriovd.Manager1 on the system bus).\n\n"
               "Commands:\n"
               "  status                         daemon state and why degraded, VF figures, kernel features, active alerts\n"
               "  devices                        managed PFs and VFs, with their tenants\n"
               "  irqs                           the NICs' IRQs: affinity, thread priority\n"
               "  tenants                        every tenant and its NIC\n"
               "  tenant TENANT                  one tenant\n"
               "  allocate TENANT CLASS [--domain D] [--numa-node N] [--mac MAC] [--vlan ID]\n"
               "           [--pf PF] [--domain-uuid UUID] [--owner OWNER]\n"
               "           [--min-tx-rate MBIT] [--max-tx-rate MBIT]\n"
               "                                 a VF or virtio-net NIC for a tenant (idempotent)\n"
               "  release TENANT                 give the tenant's NIC back\n"
               "  coalesce TENANT RX TX          the tenant's coalescing window, in microseconds\n"
               "  plan                           what a cycle would change now (dry run)\n"
               "  verify                         run a cycle now; report and repair drift\n"
               "  check-host                     does the host isolate the RT CPUs and keep them quiet;\n"
               "                                 each failed check with its fix\n"
               "  reload                         re-read the configuration and apply it; fails,\n"
               "                                 with the FILE:LINE: errors, on a broken one\n"
               "  force-num-vfs PF               let the next cycle change PF's VF count although\n"
               "                                 tenants hold its VFs\n"
               "  top [--once] [--interval SEC]  interrupt and packet rates per CPU and per tenant,\n"
               "                                 redrawn each period; keys: q quit, s sort, r refresh\n\n"
               "Options:\n"
               "  --json            machine-readable output (errors too: {\"error\", \"message\"})\n"
               "  --address ADDR    D-Bus address (default: the system bus; DBUS_SYSTEM_BUS_ADDRESS)\n"
               "  -h, --help        this text\n"
               "  --version         sriovctl's version\n\n"
               "Exit status: 0 ok, 1 failed or refused, 2 usage error or invalid argument,\n"
               "3 not permitted, 4 sriovd or the bus unreachable.\n");
}

int main(int argc, char **argv) {
        enum { OPT_JSON = 0x100, OPT_ADDRESS, OPT_DOMAIN, OPT_NUMA_NODE, OPT_MAC, OPT_VLAN, OPT_VERSION, OPT_ONCE,
               OPT_INTERVAL, OPT_PF, OPT_DOMAIN_UUID, OPT_OWNER, OPT_MIN_TX_RATE, OPT_MAX_TX_RATE };
        static const struct option options[] = {
                { "json", no_argument, NULL, OPT_JSON },
                { "address", required_argument, NULL, OPT_ADDRESS },
                { "domain", required_argument, NULL, OPT_DOMAIN },
                { "numa-node", required_argument, NULL, OPT_NUMA_NODE },
                { "mac", required_argument, NULL, OPT_MAC },
                { "vlan", required_argument, NULL, OPT_VLAN },
                { "pf", required_argument, NULL, OPT_PF },
                { "domain-uuid", required_argument, NULL, OPT_DOMAIN_UUID },
                { "owner", required_argument, NULL, OPT_OWNER },
                { "min-tx-rate", required_argument, NULL, OPT_MIN_TX_RATE },
                { "max-tx-rate", required_argument, NULL, OPT_MAX_TX_RATE },
                { "once", no_argument, NULL, OPT_ONCE },
                { "interval", required_argument, NULL, OPT_INTERVAL },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        _cleanup_bus_ sd_bus *bus = NULL;
        const Command *cmd = NULL;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case OPT_JSON:
                        arg_json = true;
                        break;
                case OPT_ADDRESS:
                        arg_address = optarg;
                        break;
                case OPT_DOMAIN:
                        arg_domain = optarg;
                        break;
                case OPT_NUMA_NODE: {
                        char *end;
                        long v;
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || v < INT32_MIN || v > INT32_MAX)
                                return usage_error("--numa-node: not a number: %s", optarg);
                        arg_numa_node = (int) v;
                        arg_have_numa_node = true;
                        break;
                }
                case OPT_MAC:
                        arg_mac = optarg;
                        break;
                case OPT_PF:
                        arg_pf = optarg;
                        break;
                case OPT_DOMAIN_UUID:
                        arg_domain_uuid = optarg;
                        break;
                case OPT_OWNER:
                        arg_owner = optarg;
                        break;
                case OPT_VLAN: {
                        char *end;
                        errno = 0;
                        arg_vlan = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || arg_vlan < 0 || arg_vlan > UINT32_MAX)
                                return usage_error("--vlan: not a VLAN id: %s", optarg);
                        break;
                }
                case OPT_MIN_TX_RATE:
                case OPT_MAX_TX_RATE: {
                        long *rate = c == OPT_MIN_TX_RATE ? &arg_min_tx_rate : &arg_max_tx_rate;
                        char *end;
                        errno = 0;
                        *rate = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || *rate < 0 || *rate > UINT32_MAX)
                                return usage_error(c == OPT_MIN_TX_RATE ? "--min-tx-rate: not a rate in Mbit/s: %s"
                                                                        : "--max-tx-rate: not a rate in Mbit/s: %s",
                                                   optarg);
                        break;
                }
                case OPT_ONCE:
                        arg_once = true;
                        break;
                case OPT_INTERVAL: {
                        char *end;
                        errno = 0;
                        arg_interval = strtod(optarg, &end);
                        if (errno || *end || !*optarg || !(arg_interval >= 0.1 && arg_interval <= 3600))
                                return usage_error("--interval: not a number of seconds from 0.1 to 3600: %s", optarg);
                        break;
                }
                case 'h':
                        help();
                        return EXIT_OK;
                case OPT_VERSION:
                        printf("sriovctl %s\n", SRIOVD_VERSION);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc)
                return usage_error("%s", "missing command");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(commands[i].name, argv[optind]))
                        cmd = &commands[i];
        if (!cmd)
                return usage_error("unknown command \"%s\"", argv[optind]);
        if (argc - optind - 1 < cmd->min_args || argc - optind - 1 > cmd->max_args)
                return usage_error("wrong number of arguments for %s", cmd->name);
        if ((arg_have_numa_node || *arg_domain || arg_mac || arg_vlan >= 0 || arg_pf || arg_domain_uuid || arg_owner ||
             arg_min_tx_rate >= 0 || arg_max_tx_rate >= 0) && !streq(cmd->name, "allocate"))
                return usage_error("--domain, --numa-node, --mac, --vlan, --pf, --domain-uuid, --owner, --min-tx-rate "
                                   "and --max-tx-rate go with %s", "allocate");
        if ((arg_once || arg_interval > 0) && !streq(cmd->name, "top"))
                return usage_error("--once and --interval go with %s", "top");

        r = sd_bus_error_add_map(sriovd_bus_errors);
        if (r < 0)
                return EXIT_FAILED;
        r = connect_bus(&bus);
        if (r < 0) {
                fprintf(stderr, "sriovctl: cannot connect to %s: %s\n", arg_address ?: "the system bus", strerror(-r));
                if (arg_json)
                        json_error(SD_BUS_ERROR_NO_SERVER, "cannot connect to the bus");
                return EXIT_UNREACHABLE;
        }
        return cmd->run(bus, argv + optind + 1, argc - optind - 1);
}
