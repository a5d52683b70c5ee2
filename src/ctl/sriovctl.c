/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl — the operator's CLI over org.sriovd.Manager1, with tables for people and --json for scripts */

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd-config.h"
#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-internal.h"
#include "sriovctl-top.h"

/* Connects to the system bus, or to address when it is not NULL. */
static int connect_bus(const char *address, sd_bus **ret) {
        _cleanup_bus_ sd_bus *bus = NULL;
        int r;

        if (!address) {
                r = sd_bus_open_system(&bus);
        } else {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, address);
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

static int cmd_top(const Ctl *c, char **args, int n) {
        TopOptions o = { .once = c->once || c->json, .json = c->json, .interval_sec = c->interval };
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = top_run(c->bus, &o, &e);
        if (r < 0) {
                int code = ctl_fail(c, "top", &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return r;
}

typedef struct Command {
        const char *name;
        int (*run)(const Ctl *c, char **args, int n);
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
        Ctl ctl = {
                .domain = "",
                .numa_node = -1,
                .vlan = -1,
                .min_tx_rate = -1,
                .max_tx_rate = -1,
        };
        _cleanup_bus_ sd_bus *bus = NULL;
        const Command *cmd = NULL;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case OPT_JSON:
                        ctl.json = true;
                        break;
                case OPT_ADDRESS:
                        ctl.address = optarg;
                        break;
                case OPT_DOMAIN:
                        ctl.domain = optarg;
                        break;
                case OPT_NUMA_NODE: {
                        char *end;
                        long v;
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || v < INT32_MIN || v > INT32_MAX)
                                return ctl_usage_error("--numa-node: not a number: %s", optarg);
                        ctl.numa_node = (int) v;
                        ctl.have_numa_node = true;
                        break;
                }
                case OPT_MAC:
                        ctl.mac = optarg;
                        break;
                case OPT_PF:
                        ctl.pf = optarg;
                        break;
                case OPT_DOMAIN_UUID:
                        ctl.domain_uuid = optarg;
                        break;
                case OPT_OWNER:
                        ctl.owner = optarg;
                        break;
                case OPT_VLAN: {
                        char *end;
                        errno = 0;
                        ctl.vlan = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || ctl.vlan < 0 || ctl.vlan > UINT32_MAX)
                                return ctl_usage_error("--vlan: not a VLAN id: %s", optarg);
                        break;
                }
                case OPT_MIN_TX_RATE:
                case OPT_MAX_TX_RATE: {
                        long *rate = c == OPT_MIN_TX_RATE ? &ctl.min_tx_rate : &ctl.max_tx_rate;
                        char *end;
                        errno = 0;
                        *rate = strtol(optarg, &end, 10);
                        if (errno || *end || !*optarg || *rate < 0 || *rate > UINT32_MAX)
                                return ctl_usage_error(c == OPT_MIN_TX_RATE ? "--min-tx-rate: not a rate in Mbit/s: %s"
                                                                            : "--max-tx-rate: not a rate in Mbit/s: %s",
                                                       optarg);
                        break;
                }
                case OPT_ONCE:
                        ctl.once = true;
                        break;
                case OPT_INTERVAL: {
                        char *end;
                        errno = 0;
                        ctl.interval = strtod(optarg, &end);
                        if (errno || *end || !*optarg || !(ctl.interval >= 0.1 && ctl.interval <= 3600))
                                return ctl_usage_error("--interval: not a number of seconds from 0.1 to 3600: %s", optarg);
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
                return ctl_usage_error("%s", "missing command");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(commands[i].name, argv[optind]))
                        cmd = &commands[i];
        if (!cmd)
                return ctl_usage_error("unknown command \"%s\"", argv[optind]);
        if (argc - optind - 1 < cmd->min_args || argc - optind - 1 > cmd->max_args)
                return ctl_usage_error("wrong number of arguments for %s", cmd->name);
        if ((ctl.have_numa_node || *ctl.domain || ctl.mac || ctl.vlan >= 0 || ctl.pf || ctl.domain_uuid || ctl.owner ||
             ctl.min_tx_rate >= 0 || ctl.max_tx_rate >= 0) && !streq(cmd->name, "allocate"))
                return ctl_usage_error("--domain, --numa-node, --mac, --vlan, --pf, --domain-uuid, --owner, --min-tx-rate "
                                       "and --max-tx-rate go with %s", "allocate");
        if ((ctl.once || ctl.interval > 0) && !streq(cmd->name, "top"))
                return ctl_usage_error("--once and --interval go with %s", "top");

        r = sd_bus_error_add_map(sriovd_bus_errors);
        if (r < 0)
                return EXIT_FAILED;
        r = connect_bus(ctl.address, &bus);
        if (r < 0) {
                fprintf(stderr, "sriovctl: cannot connect to %s: %s\n", ctl.address ?: "the system bus", strerror(-r));
                if (ctl.json)
                        ctl_json_error(SD_BUS_ERROR_NO_SERVER, "cannot connect to the bus");
                return EXIT_UNREACHABLE;
        }
        ctl.bus = bus;
        return cmd->run(&ctl, argv + optind + 1, argc - optind - 1);
}
