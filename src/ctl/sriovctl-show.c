/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-show.c — the read-only lists: devices, IRQs, tenants, one tenant, the plan and the RT host check */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-internal.h"

int cmd_devices(const Ctl *c, char **args, int n) {
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = ctl_call_list(c, "ListDevices", &rows);
        if (r != 0)
                return r;
        if (c->json)
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
                if (c->json) {
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
        if (c->json)
                json_print(out);
        return EXIT_OK;
}

int cmd_irqs(const Ctl *c, char **args, int n) {
        static const char *const keys[] = { SRIOVD_KEY_DEVICE, SRIOVD_KEY_EFFECTIVE, SRIOVD_KEY_THREAD, SRIOVD_KEY_NAPI,
                                            NULL };
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = ctl_call_list(c, "ListIrqs", &rows);
        if (r != 0)
                return r;
        if (c->json)
                out = json_object_new_array();
        else
                printf("%5s %-14s %-20s %-20s %-8s %-16s %s\n", "IRQ", "DEVICE", "AFFINITY", "EFFECTIVE", "MANAGED",
                       "THREAD", "NAPI THREAD");
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *q = json_object_array_get_idx(rows, i), *th = rec_get(q, SRIOVD_KEY_THREAD),
                            *napi = rec_get(q, SRIOVD_KEY_NAPI);
                int64_t irq = 0, pid = 0, prio = 0;
                char thread[64] = "-", napi_thread[160] = "-";

                if (c->json) {
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
        if (c->json)
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

int cmd_tenants(const Ctl *c, char **args, int n) {
        _cleanup_json_ json_object *rows = NULL, *out = NULL;
        int r;

        r = ctl_call_list(c, "ListTenants", &rows);
        if (r != 0)
                return r;
        if (c->json)
                out = json_object_new_array();
        else
                printf("%-20s %-16s %-6s %-14s %-16s %-17s %-9s %-16s %4s %-10s %-12s %s\n", "TENANT", "CLASS", "KIND",
                       "ADDRESS", "NETDEV", "MAC", "STATE", "DOMAIN", "NODE", "COALESCE", "OWNER", "RT-CPUS");
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *t = json_object_array_get_idx(rows, i);
                if (c->json)
                        json_object_array_add(out, rec_mirror(t, tenant_keys));
                else
                        tenant_print_row(t);
        }
        if (c->json)
                json_print(out);
        return EXIT_OK;
}

int ctl_tenant_reply(const Ctl *c, sd_bus_message *reply, bool with_class) {
        _cleanup_json_ json_object *t = NULL;
        char rt[64], extra[256] = "";
        int64_t rate;
        int r;

        r = ctl_reply_read(reply, &t);
        if (r != 0)
                return r;
        if (!json_object_is_type(t, json_type_object))
                return ctl_parse_failed(-EBADMSG);
        if (c->json) {
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

int cmd_tenant(const Ctl *c, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r;

        if (n != 1)
                return ctl_usage_error("%s", "tenant TENANT");
        r = ctl_call(c, "GetTenant", &reply, "s", args[0]);
        if (r != 0)
                return r;
        return ctl_tenant_reply(c, reply, true);
}

int cmd_plan(const Ctl *c, char **args, int n) {
        static const char *const note_keys[] = { SRIOVD_KEY_TARGET, NULL };
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *actions = NULL, *notes = NULL, *out = NULL, *out_actions = NULL;
        int r;

        r = ctl_call(c, "Plan", &reply, NULL);
        if (r != 0)
                return r;
        r = ctl_reply_read(reply, &actions);
        if (r == 0)
                r = ctl_reply_read(reply, &notes);
        if (r != 0)
                return r;
        if (!json_object_is_type(actions, json_type_array) || !json_object_is_type(notes, json_type_array))
                return ctl_parse_failed(-EBADMSG);
        if (c->json)
                out_actions = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(actions); i++) {
                json_object *a = json_object_array_get_idx(actions, i);
                const char *target = rec_str(a, SRIOVD_KEY_TARGET) ?: "host", *effect = rec_str(a, SRIOVD_KEY_EFFECT);
                int64_t irq;
                bool is_irq = rec_int(a, SRIOVD_KEY_IRQ, &irq);

                if (c->json) {
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
        if (!c->json && json_object_array_length(actions) == 0)
                printf("Nothing to do.\n");
        if (c->json) {
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
int cmd_check_host(const Ctl *c, char **args, int n) {
        static const char *const keys[] = { SRIOVD_KEY_FIX, NULL };
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *findings = NULL;
        unsigned counts[3] = {};   /* errors, warnings, info */
        int r;

        r = ctl_call(c, "CheckHost", &reply, NULL);
        if (r != 0)
                return r;
        r = ctl_reply_read(reply, &findings);
        if (r != 0)
                return r;
        if (!json_object_is_type(findings, json_type_array))
                return ctl_parse_failed(-EBADMSG);
        if (!c->json)
                printf("%-14s %-8s %-6s %s\n", "CHECK", "SEVERITY", "RESULT", "SEEN");
        for (size_t i = 0; i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i);
                const char *sev = rec_str(f, SRIOVD_KEY_SEVERITY) ?: "", *result = rec_str(f, SRIOVD_KEY_RESULT) ?: "";
                bool failed = streq(result, "fail");

                if (failed)
                        counts[streq(sev, "error") ? 0 : streq(sev, "warning") ? 1 : 2]++;
                if (c->json)
                        continue;
                printf("%-14s %-8s %-6s %s\n", dash(rec_str(f, SRIOVD_KEY_CHECK)), sev, result,
                       rec_str(f, SRIOVD_KEY_SEEN) ?: "");
                if (!failed)
                        continue;
                printf("%-31s expected: %s\n", "", rec_str(f, SRIOVD_KEY_EXPECTED) ?: "");
                printf("%-31s fix: %s\n", "", rec_str(f, SRIOVD_KEY_FIX) ?: "");
        }
        if (c->json) {
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
