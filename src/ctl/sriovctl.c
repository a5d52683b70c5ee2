/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl — the operator's CLI over org.sriovd.Manager1: tables for people, --json for scripts */

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "sriovd-config.h"
#include "sriovd/bus-error.h"
#include "sriovd/json.h"
#include "sriovd/macro.h"

/* Exit codes scripts may rely on (README, "D-Bus API"). */
enum {
        EXIT_OK = 0,
        EXIT_FAILED = 1,          /* refused or failed: no capacity, unknown tenant, ... */
        EXIT_USAGE = 2,           /* bad command line, or an argument the daemon rejected */
        EXIT_NOT_PERMITTED = 3,   /* a change without root or access_group */
        EXIT_UNREACHABLE = 4,     /* no bus, or no sriovd on it */
};

static bool arg_json;
static const char *arg_address;
static const char *arg_domain = "";
static int arg_numa_node = -1;
static bool arg_have_numa_node;
static const char *arg_mac;       /* sent as given: sriovd validates */
static long arg_vlan = -1;

static void bus_unrefp(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}
static void message_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}
#define _cleanup_bus_ __attribute__((cleanup(bus_unrefp)))
#define _cleanup_message_ __attribute__((cleanup(message_unrefp)))

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

/* Errors: one line on stderr; with --json also {"error": name, "message": text} on stdout. */
static int fail(const char *what, const sd_bus_error *e, int r) {
        const char *name = e && e->name ? e->name : NULL;
        const char *message = e && e->message ? e->message : strerror(r < 0 ? -r : r);

        fprintf(stderr, "sriovctl: %s: %s%s%s\n", what, name ? name : "", name ? ": " : "", message);
        if (arg_json) {
                JsonWriter w;
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_string(&w, "error", name ? name : "org.sriovd.Error.Failed");
                json_string(&w, "message", message);
                json_object_end(&w);
        }
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

/* Call a method; on error returns the exit code (after saying why), else 0 with *reply. */
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

/* ---- status ---- */

static int cmd_status(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *version = "", *state = "";
        uint32_t total = 0, usable = 0, allocated = 0, tenants = 0;
        double util = 0, target = 0;
        int rt = 0, thr = 0, rtnet = 0, iommu = 0, r;

        r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &e,
                               &reply, "s", SRIOVD_BUS_INTERFACE);
        if (r < 0) {
                int code = fail("status", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name;
                r = sd_bus_message_read(reply, "s", &name);
                if (r < 0)
                        break;
#define P(n, t, v) else if (streq(name, n)) r = sd_bus_message_read(reply, "v", t, v)
                if (false) {}
                P("Version", "s", &version);
                P("State", "s", &state);
                P("VfTotal", "u", &total);
                P("VfUsable", "u", &usable);
                P("VfAllocated", "u", &allocated);
                P("Tenants", "u", &tenants);
                P("VfUtilization", "d", &util);
                P("VfTarget", "d", &target);
                P("RealTime", "b", &rt);
                P("ThreadedIrqs", "b", &thr);
                P("RtnetPrio", "b", &rtnet);
                P("Iommu", "b", &iommu);
                else
                        r = sd_bus_message_skip(reply, "v");
#undef P
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return parse_failed(r);

        if (arg_json) {
                JsonWriter w;
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_string(&w, "version", version);
                json_string(&w, "state", state);
                json_int(&w, "vf_total", total);
                json_int(&w, "vf_usable", usable);
                json_int(&w, "vf_allocated", allocated);
                json_double(&w, "vf_utilization", util);
                json_double(&w, "vf_target", target);
                json_int(&w, "tenants", tenants);
                json_object_begin(&w, "kernel");
                json_bool(&w, "real_time", rt);
                json_bool(&w, "threaded_irqs", thr);
                json_bool(&w, "rtnet_prio", rtnet);
                json_bool(&w, "iommu", iommu);
                json_object_end(&w);
                json_object_end(&w);
                return EXIT_OK;
        }
        printf("sriovd %s: %s\n", version, state);
        printf("VFs:         %u total, %u usable, %u allocated (%.1f%%, target %.0f%%)\n", total, usable, allocated,
               util * 100, target * 100);
        printf("Tenants:     %u\n", tenants);
        printf("Kernel:      PREEMPT_RT %s, threaded IRQs %s, rtnet_prio %s, IOMMU %s\n", rt ? "yes" : "no",
               thr ? "yes" : "no", rtnet ? "yes" : "no", iommu ? "yes" : "no");
        return EXIT_OK;
}

/* ---- lists ---- */

static const char *dash(const char *s) {
        return s && *s ? s : "-";
}

/*
 * A List* reply: called, its array of rows entered, and with --json the array
 * opened (the caller prints its table header). 0, or the exit code to return.
 */
static int list_begin(sd_bus *bus, const char *method, const char *row, sd_bus_message **reply, JsonWriter *w) {
        int r = call(bus, method, reply, NULL);

        if (r != 0)
                return r;
        r = sd_bus_message_enter_container(*reply, 'a', row);
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_init(w, stdout);
                json_array_begin(w, NULL);
        }
        return 0;
}

/* After the last row: r is the last sd_bus_message_read()'s. */
static int list_end(int r, JsonWriter *w) {
        if (r < 0)
                return parse_failed(r);
        if (arg_json)
                json_array_end(w);
        return EXIT_OK;
}

static int cmd_devices(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const char *addr, *kind, *pf, *driver, *netdev, *tenant;
        int32_t node;
        uint32_t index, num_vfs, total_vfs;
        JsonWriter w;
        int r;

        r = list_begin(bus, "ListDevices", "(sssisssuuu)", &reply, &w);
        if (r != 0)
                return r;
        if (!arg_json)
                printf("%-14s %-4s %-14s %4s %-10s %-16s %-20s %s\n", "ADDRESS", "KIND", "PF", "NODE", "DRIVER",
                       "NETDEV", "TENANT", "VFS");
        while ((r = sd_bus_message_read(reply, "(sssisssuuu)", &addr, &kind, &pf, &node, &driver, &netdev, &tenant,
                                        &index, &num_vfs, &total_vfs)) > 0) {
                bool is_pf = streq(kind, "pf");
                if (arg_json) {
                        json_object_begin(&w, NULL);
                        json_string(&w, "address", addr);
                        json_string(&w, "kind", kind);
                        json_string(&w, "pf", is_pf ? NULL : pf);
                        json_int(&w, "numa_node", node);
                        json_string(&w, "driver", driver[0] ? driver : NULL);
                        json_string(&w, "netdev", netdev[0] ? netdev : NULL);
                        if (is_pf) {
                                json_int(&w, "num_vfs", num_vfs);
                                json_int(&w, "total_vfs", total_vfs);
                        } else {
                                json_int(&w, "vf_index", index);
                                json_string(&w, "tenant", tenant[0] ? tenant : NULL);
                        }
                        json_object_end(&w);
                } else if (is_pf)
                        printf("%-14s %-4s %-14s %4d %-10s %-16s %-20s %u/%u\n", addr, kind, "-", node, dash(driver),
                               dash(netdev), "-", num_vfs, total_vfs);
                else
                        printf("%-14s %-4s %-14s %4d %-10s %-16s %-20s #%u\n", addr, kind, pf, node, dash(driver),
                               dash(netdev), dash(tenant), index);
        }
        return list_end(r, &w);
}

static int cmd_irqs(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const char *device, *aff, *eff, *policy;
        uint32_t irq;
        int writable;
        int32_t pid, prio;
        JsonWriter w;
        int r;

        r = list_begin(bus, "ListIrqs", "(usssbisi)", &reply, &w);
        if (r != 0)
                return r;
        if (!arg_json)
                printf("%5s %-14s %-20s %-20s %-8s %s\n", "IRQ", "DEVICE", "AFFINITY", "EFFECTIVE", "MANAGED", "THREAD");
        while ((r = sd_bus_message_read(reply, "(usssbisi)", &irq, &device, &aff, &eff, &writable, &pid, &policy,
                                        &prio)) > 0) {
                if (arg_json) {
                        json_object_begin(&w, NULL);
                        json_int(&w, "irq", irq);
                        json_string(&w, "device", device[0] ? device : NULL);
                        json_string(&w, "affinity", aff);
                        json_string(&w, "effective", eff[0] ? eff : NULL);
                        json_bool(&w, "writable", writable);
                        if (pid > 0) {
                                json_object_begin(&w, "thread");
                                json_int(&w, "pid", pid);
                                json_string(&w, "policy", policy);
                                json_int(&w, "priority", prio);
                                json_object_end(&w);
                        } else
                                json_null(&w, "thread");
                        json_object_end(&w);
                } else {
                        char thread[64] = "-";
                        if (pid > 0)
                                snprintf(thread, sizeof(thread), "%d %s/%d", pid, policy, prio);
                        printf("%5u %-14s %-20s %-20s %-8s %s\n", irq, dash(device), dash(aff), dash(eff),
                               writable ? "yes" : "kernel", thread);
                }
        }
        return list_end(r, &w);
}

static int cmd_tenants(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const char *tenant, *cls, *kind, *addr, *netdev, *mac, *state, *domain;
        int32_t node;
        int have_coalesce;
        uint32_t rx, tx;
        JsonWriter w;
        int r;

        r = list_begin(bus, "ListTenants", "(ssssssssibuu)", &reply, &w);
        if (r != 0)
                return r;
        if (!arg_json)
                printf("%-20s %-16s %-6s %-14s %-16s %-17s %-9s %-16s %4s %s\n", "TENANT", "CLASS", "KIND", "ADDRESS",
                       "NETDEV", "MAC", "STATE", "DOMAIN", "NODE", "COALESCE");
        while ((r = sd_bus_message_read(reply, "(ssssssssibuu)", &tenant, &cls, &kind, &addr, &netdev, &mac, &state,
                                        &domain, &node, &have_coalesce, &rx, &tx)) > 0) {
                if (arg_json) {
                        json_object_begin(&w, NULL);
                        json_string(&w, "tenant", tenant);
                        json_string(&w, "class", cls);
                        json_string(&w, "kind", kind);
                        json_string(&w, "address", addr[0] ? addr : NULL);
                        json_string(&w, "netdev", netdev[0] ? netdev : NULL);
                        json_string(&w, "mac", mac);
                        json_string(&w, "state", state);
                        json_string(&w, "domain", domain[0] ? domain : NULL);
                        if (node >= 0)
                                json_int(&w, "numa_node", node);
                        else
                                json_null(&w, "numa_node");
                        if (have_coalesce) {
                                json_object_begin(&w, "coalesce");
                                json_int(&w, "rx_usecs", rx);
                                json_int(&w, "tx_usecs", tx);
                                json_object_end(&w);
                        } else
                                json_null(&w, "coalesce");
                        json_object_end(&w);
                } else {
                        char nodes[16] = "-", co[32] = "class";
                        if (node >= 0)
                                snprintf(nodes, sizeof(nodes), "%d", node);
                        if (have_coalesce)
                                snprintf(co, sizeof(co), "%u/%u us", rx, tx);
                        printf("%-20s %-16s %-6s %-14s %-16s %-17s %-9s %-16s %4s %s\n", tenant, cls, kind, dash(addr),
                               dash(netdev), mac, state, dash(domain), nodes, co);
                }
        }
        return list_end(r, &w);
}

static int cmd_tenant(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const char *kind, *addr, *netdev, *mac, *cls, *state;
        int r;

        if (n != 1)
                return usage_error("%s", "tenant TENANT");
        r = call(bus, "GetTenant", &reply, "s", args[0]);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "ssssss", &kind, &addr, &netdev, &mac, &cls, &state);
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                JsonWriter w;
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_string(&w, "tenant", args[0]);
                json_string(&w, "class", cls);
                json_string(&w, "kind", kind);
                json_string(&w, "address", addr[0] ? addr : NULL);
                json_string(&w, "netdev", netdev[0] ? netdev : NULL);
                json_string(&w, "mac", mac);
                json_string(&w, "state", state);
                json_object_end(&w);
        } else
                printf("%s: %s %s, class %s, netdev %s, MAC %s, %s\n", args[0], kind, dash(addr), cls, dash(netdev),
                       mac, state);
        return EXIT_OK;
}

/* ---- changes ---- */

static int cmd_allocate(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *kind, *addr, *netdev, *mac;
        int r;

        if (n != 2)
                return usage_error("%s", "allocate TENANT CLASS [--domain D] [--numa-node N] [--mac MAC] [--vlan ID]");
        r = sd_bus_message_new_method_call(bus, &m, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Allocate");
        if (r >= 0)
                r = sd_bus_message_append(m, "sss", args[0], args[1], arg_domain);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && arg_have_numa_node)
                r = sd_bus_message_append(m, "{sv}", "numa_node", "i", (int32_t) arg_numa_node);
        if (r >= 0 && arg_mac)
                r = sd_bus_message_append(m, "{sv}", "mac", "s", arg_mac);
        if (r >= 0 && arg_vlan >= 0)
                r = sd_bus_message_append(m, "{sv}", "vlan", "u", (uint32_t) arg_vlan);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &e, &reply);
        if (r < 0) {
                int code = fail("allocate", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        r = sd_bus_message_read(reply, "ssss", &kind, &addr, &netdev, &mac);
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                JsonWriter w;
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_string(&w, "tenant", args[0]);
                json_string(&w, "kind", kind);
                json_string(&w, "address", addr[0] ? addr : NULL);
                json_string(&w, "netdev", netdev[0] ? netdev : NULL);
                json_string(&w, "mac", mac);
                json_object_end(&w);
        } else
                printf("%s: %s %s, netdev %s, MAC %s\n", args[0], kind, dash(addr), dash(netdev), mac);
        return EXIT_OK;
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

static int cmd_simple(sd_bus *bus, const char *method, const char *types, const char *arg) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r = call(bus, method, &reply, types, arg);

        if (r != 0)
                return r;
        if (arg_json) {
                JsonWriter w;
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_bool(&w, "ok", true);
                json_object_end(&w);
        }
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
 * Returns when sriovd has loaded the new policy and applied it, or fails (exit 1) with its
 * FILE:LINE: mistakes on stderr, one per line: what ExecReload= shows in `systemctl reload`.
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
                printf("{\n  \"ok\": true\n}\n");
        return EXIT_OK;
}

static int cmd_plan(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const char *action, *target, *before, *after, *effect, *level, *text;
        uint32_t irq, vf;
        JsonWriter w;
        size_t count = 0;
        int r;

        r = call(bus, "Plan", &reply, NULL);
        if (r != 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(ssuusss)");
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_array_begin(&w, "actions");
        }
        while ((r = sd_bus_message_read(reply, "(ssuusss)", &action, &target, &irq, &vf, &before, &after, &effect)) > 0) {
                bool is_irq = streq(action, "irq-affinity") || streq(action, "irq-thread");
                count++;
                if (arg_json) {
                        json_object_begin(&w, NULL);
                        json_string(&w, "action", action);
                        json_string(&w, "target", target[0] ? target : "host");
                        if (is_irq)
                                json_int(&w, "irq", irq);
                        json_string(&w, "before", before);
                        json_string(&w, "after", after);
                        json_string(&w, "effect", effect[0] ? effect : NULL);
                        json_object_end(&w);
                } else {
                        char where[32] = "";
                        if (is_irq)
                                snprintf(where, sizeof(where), " IRQ %u", irq);
                        printf("%-14s %s%s: %s -> %s%s%s%s\n", action, target[0] ? target : "host", where, before,
                               after, effect[0] ? " (" : "", effect, effect[0] ? ")" : "");
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(sss)");
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_array_end(&w);
                json_array_begin(&w, "notes");
        } else if (count == 0)
                printf("Nothing to do.\n");
        while ((r = sd_bus_message_read(reply, "(sss)", &level, &target, &text)) > 0) {
                if (arg_json) {
                        json_object_begin(&w, NULL);
                        json_string(&w, "level", level);
                        json_string(&w, "target", target[0] ? target : NULL);
                        json_string(&w, "text", text);
                        json_object_end(&w);
                } else
                        printf("%s: %s%s%s\n", level, target, target[0] ? ": " : "", text);
        }
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_array_end(&w);
                json_object_end(&w);
        }
        return EXIT_OK;
}

static int cmd_verify(sd_bus *bus, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        uint32_t found, repaired, failed, remaining;
        const char *what;
        JsonWriter w;
        int r;

        r = call(bus, "Verify", &reply, NULL);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "uuuu", &found, &repaired, &failed, &remaining);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "s");
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_init(&w, stdout);
                json_object_begin(&w, NULL);
                json_int(&w, "found", found);
                json_int(&w, "repaired", repaired);
                json_int(&w, "failed", failed);
                json_int(&w, "remaining", remaining);
                json_array_begin(&w, "drift");
        } else
                printf("%u found, %u repaired, %u failed, %u still differ\n", found, repaired, failed, remaining);
        while ((r = sd_bus_message_read(reply, "s", &what)) > 0) {
                if (arg_json)
                        json_string(&w, NULL, what);
                else
                        printf("  %s\n", what);
        }
        if (r < 0)
                return parse_failed(r);
        if (arg_json) {
                json_array_end(&w);
                json_object_end(&w);
        }
        /* Drift that could not be repaired is a failure a script should see. */
        return failed || remaining ? EXIT_FAILED : EXIT_OK;
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
        { "reload", cmd_reload, 0, 0 },
        { "force-num-vfs", cmd_force_num_vfs, 1, 1 },
};

static void help(void) {
        printf("sriovctl [OPTIONS] COMMAND [ARGS]\n\n"
               "Query and drive sriovd over D-Bus (org.sriovd.Manager1 on the system bus).\n\n"
               "Commands:\n"
               "  status                         daemon state, VF figures, kernel features\n"
               "  devices                        managed PFs and VFs, with their tenants\n"
               "  irqs                           the NICs' IRQs: affinity, thread priority\n"
               "  tenants                        every tenant and its NIC\n"
               "  tenant TENANT                  one tenant\n"
               "  allocate TENANT CLASS [--domain D] [--numa-node N] [--mac MAC] [--vlan ID]\n"
               "                                 a VF or virtio-net NIC for a tenant (idempotent)\n"
               "  release TENANT                 give the tenant's NIC back\n"
               "  coalesce TENANT RX TX          the tenant's coalescing window, in microseconds\n"
               "  plan                           what a cycle would change now (dry run)\n"
               "  verify                         run a cycle now; report and repair drift\n"
               "  reload                         re-read the configuration and apply it; fails,\n"
               "                                 with the FILE:LINE: errors, on a broken one\n"
               "  force-num-vfs PF               let the next cycle change PF's VF count although\n"
               "                                 tenants hold its VFs\n\n"
               "Options:\n"
               "  --json            machine-readable output (errors too: {\"error\", \"message\"})\n"
               "  --address ADDR    D-Bus address (default: the system bus; DBUS_SYSTEM_BUS_ADDRESS)\n"
               "  -h, --help        this text\n"
               "  --version         sriovctl's version\n\n"
               "Exit status: 0 ok, 1 failed or refused, 2 usage error or invalid argument,\n"
               "3 not permitted, 4 sriovd or the bus unreachable.\n");
}

int main(int argc, char **argv) {
        enum { OPT_JSON = 0x100, OPT_ADDRESS, OPT_DOMAIN, OPT_NUMA_NODE, OPT_MAC, OPT_VLAN, OPT_VERSION };
        static const struct option options[] = {
                { "json", no_argument, NULL, OPT_JSON },
                { "address", required_argument, NULL, OPT_ADDRESS },
                { "domain", required_argument, NULL, OPT_DOMAIN },
                { "numa-node", required_argument, NULL, OPT_NUMA_NODE },
                { "mac", required_argument, NULL, OPT_MAC },
                { "vlan", required_argument, NULL, OPT_VLAN },
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
                case OPT_VLAN: {
                        char *end;
                        errno = 0;
                        arg_vlan = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || arg_vlan < 0 || arg_vlan > UINT32_MAX)
                                return usage_error("--vlan: not a VLAN id: %s", optarg);
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
        if ((arg_have_numa_node || *arg_domain || arg_mac || arg_vlan >= 0) && !streq(cmd->name, "allocate"))
                return usage_error("--domain, --numa-node, --mac and --vlan go with %s", "allocate");

        r = sd_bus_error_add_map(sriovd_bus_errors);
        if (r < 0)
                return EXIT_FAILED;
        r = connect_bus(&bus);
        if (r < 0) {
                fprintf(stderr, "sriovctl: cannot connect to %s: %s\n", arg_address ?: "the system bus", strerror(-r));
                if (arg_json)
                        printf("{\n  \"error\": \"org.freedesktop.DBus.Error.NoServer\",\n  \"message\": \"cannot connect to the bus\"\n}\n");
                return EXIT_UNREACHABLE;
        }
        return cmd->run(bus, argv + optind + 1, argc - optind - 1);
}
