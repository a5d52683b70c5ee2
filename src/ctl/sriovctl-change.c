/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-change.c — the commands that change sriovd's state: allocate, release, coalesce, reload, force-num-vfs, verify */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-internal.h"

int cmd_allocate(const Ctl *c, char **args, int n) {
        _cleanup_message_ sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (n != 2)
                return ctl_usage_error("%s", "allocate TENANT CLASS [--domain D] [--numa-node N] [--mac MAC] [--vlan ID] "
                                       "[--pf PF] [--domain-uuid UUID] [--owner OWNER] [--min-tx-rate MBIT] "
                                       "[--max-tx-rate MBIT]");
        r = sd_bus_message_new_method_call(c->bus, &m, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Allocate");
        if (r >= 0)
                r = sd_bus_message_append(m, "sss", args[0], args[1], c->domain);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && c->have_numa_node)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_NUMA_NODE, "i", (int32_t) c->numa_node);
        if (r >= 0 && c->mac)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MAC, "s", c->mac);
        if (r >= 0 && c->vlan >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_VLAN, "u", (uint32_t) c->vlan);
        if (r >= 0 && c->pf)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_PF, "s", c->pf);
        if (r >= 0 && c->domain_uuid)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_DOMAIN_UUID, "s", c->domain_uuid);
        if (r >= 0 && c->owner)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_OWNER, "s", c->owner);
        if (r >= 0 && c->min_tx_rate >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MIN_TX_RATE, "u", (uint32_t) c->min_tx_rate);
        if (r >= 0 && c->max_tx_rate >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_OPTION_MAX_TX_RATE, "u", (uint32_t) c->max_tx_rate);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(c->bus, m, 0, &e, &reply);
        if (r < 0) {
                int code = ctl_fail(c, "allocate", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return ctl_tenant_reply(c, reply, false);
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

static int cmd_simple(const Ctl *c, const char *method, const char *types, const char *arg) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r = ctl_call(c, method, &reply, types, arg);

        if (r != 0)
                return r;
        if (c->json)
                print_ok();
        return EXIT_OK;
}

int cmd_release(const Ctl *c, char **args, int n) {
        if (n != 1)
                return ctl_usage_error("%s", "release TENANT");
        return cmd_simple(c, "Release", "s", args[0]);
}

int cmd_force_num_vfs(const Ctl *c, char **args, int n) {
        if (n != 1)
                return ctl_usage_error("%s", "force-num-vfs PF");
        return cmd_simple(c, "ForceNumVfs", "s", args[0]);
}

/*
 * Returns when sriovd has loaded the new policy and applied it. Otherwise it fails with exit 1 and
 * prints the FILE:LINE: mistakes on stderr, one per line. ExecReload= shows them in `systemctl reload`.
 */
int cmd_reload(const Ctl *c, char **args, int n) {
        if (n != 0)
                return ctl_usage_error("%s", "reload takes no arguments");
        return cmd_simple(c, "Reload", NULL, NULL);
}

int cmd_coalesce(const Ctl *c, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        uint32_t rx, tx;
        int r;

        if (n != 3)
                return ctl_usage_error("%s", "coalesce TENANT RX_USECS TX_USECS");
        if (parse_uint(args[1], &rx) < 0 || parse_uint(args[2], &tx) < 0)
                return ctl_usage_error("coalesce: %s", "RX_USECS and TX_USECS must be numbers of microseconds");
        r = ctl_call(c, "SetCoalesce", &reply, "suu", args[0], rx, tx);
        if (r != 0)
                return r;
        if (c->json)
                print_ok();
        return EXIT_OK;
}

int cmd_verify(const Ctl *c, char **args, int n) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *what = NULL;
        uint32_t found, repaired, failed, remaining;
        int r;

        r = ctl_call(c, "Verify", &reply, NULL);
        if (r != 0)
                return r;
        r = sd_bus_message_read(reply, "uuuu", &found, &repaired, &failed, &remaining);
        if (r < 0)
                return ctl_parse_failed(r);
        r = ctl_reply_read(reply, &what);
        if (r != 0)
                return r;
        if (!json_object_is_type(what, json_type_array))
                return ctl_parse_failed(-EBADMSG);
        if (c->json) {
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
