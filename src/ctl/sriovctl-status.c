/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-status.c — `sriovctl status`: the daemon's state, its VF pools, the RT CPUs, kernel features and alerts */

#include <inttypes.h>
#include <stdio.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-internal.h"

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

/* Prints one line such as "Events:      drift from BPF; latency polled (off: the host is a fixture tree)". */
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

/* Prints one line per active alert, as Prometheus writes a sample: metric{label="value",...}. */
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
static json_object *pf_pools(const Ctl *c) {
        _cleanup_json_ json_object *devs = NULL;
        json_object *pools;

        if (ctl_call_list(c, "ListDevices", &devs) != 0 || !json_object_is_type(devs, json_type_array))
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

int cmd_status(const Ctl *c, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *props = NULL, *pools = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int64_t total = 0, usable = 0, allocated = 0, tenants = 0, api = 1;
        double util = 0, target = 0;
        const char *version, *state;
        json_object *v;
        int r;

        r = sd_bus_call_method(c->bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &e,
                               &reply, "s", SRIOVD_BUS_INTERFACE);
        if (r < 0) {
                int code = ctl_fail(c, "status", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        r = ctl_reply_read(reply, &props);
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

        pools = pf_pools(c);

        if (c->json) {
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
