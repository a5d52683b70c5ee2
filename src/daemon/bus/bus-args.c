/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-args.c — check the D-Bus API's arguments: domain names, class names and Allocate's options */

#include <string.h>

#include "sriovd/core/allocator.h"
#include "sriovd/protocol/bus-protocol.h"
#include "config/config.h"
#include "state/state.h"
#include "bus-internal.h"

/*
 * A libvirt domain name must fit in the state file and hold nothing that a shell or a path
 * could misread. So it is 1 to 255 bytes of ASCII letters, digits and the characters ._+:@-.
 * sd-bus already guarantees valid UTF-8, but sriovd accepts only ASCII. The empty string
 * means "no domain" and is allowed.
 */
bool bus_domain_valid(const char *s) {
        size_t n = strnlen(s, BUS_DOMAIN_MAX + 1);

        if (n > BUS_DOMAIN_MAX || streq(s, ".") || streq(s, ".."))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      strchr("._+:@-", c)))
                        return false;
        }
        return true;
}

/* A class name follows the rule for tenant class names: [a-z0-9][a-z0-9_-]{0,62}. */
bool bus_class_name_valid(const char *s) {
        size_t n = strnlen(s, CLASS_NAME_MAX);

        if (n == 0 || n >= CLASS_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!alnum && (i == 0 || (c != '_' && c != '-')))
                        return false;
        }
        return true;
}

/* Controllers send an integer option as type i or u, so both are accepted. The value is range-checked. */
static int read_integer(sd_bus_message *m, const char *key, int64_t min, int64_t max, int *ret, sd_bus_error *error) {
        const char *contents = NULL;
        char type;
        int64_t v;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (streq(contents, "i")) {
                int32_t i;
                r = sd_bus_message_read(m, "v", "i", &i);
                v = i;
        } else if (streq(contents, "u")) {
                uint32_t u;
                r = sd_bus_message_read(m, "v", "u", &u);
                v = u;
        } else
                return bus_error_setf(error, -EINVAL, "Option %s must be of type i or u, not %s", key, contents);
        if (r < 0)
                return r;
        if (v < min || v > max)
                return bus_error_setf(error, -EINVAL, "Option %s %lld is out of range %lld..%lld", key, (long long) v,
                                      (long long) min, (long long) max);
        *ret = (int) v;
        return 0;
}

static int read_mac(sd_bus_message *m, uint8_t ret[6], sd_bus_error *error) {
        const char *s;
        uint8_t mac[6];
        int r;

        r = sd_bus_message_read(m, "v", "s", &s);
        if (r < 0)
                return bus_error_setf(error, -EINVAL, "Option mac must be of type s");
        if (!mac_parse(s, mac) || (mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
                return bus_error_setf(error, -EINVAL, "Option mac \"%.32s\" is not a unicast MAC such as 52:54:00:12:34:56", s);
        memcpy(ret, mac, 6);
        return 0;
}

/* A string option, checked by valid and copied into dst. expected says what a valid one looks like. */
static int read_string(sd_bus_message *m, const char *key, bool (*valid)(const char *), const char *expected, char *dst,
                       size_t size, sd_bus_error *error) {
        const char *s;
        int r;

        r = sd_bus_message_read(m, "v", "s", &s);
        if (r < 0)
                return bus_error_setf(error, -EINVAL, "Option %s must be of type s", key);
        if (strlen(s) >= size || !valid(s))
                return bus_error_setf(error, -EINVAL, "Option %s \"%.64s\" is not valid; expected %s", key, s, expected);
        strscpy(dst, size, s);
        return 0;
}

/* An owner follows the tenant id's characters, [A-Za-z0-9._-]{1,63}, "." and ".." included, since it names no file. */
static bool owner_valid(const char *s) {
        size_t n = strnlen(s, TENANT_ID_MAX);

        if (n == 0 || n >= TENANT_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
                        return false;
        return true;
}

int bus_read_allocate_options(sd_bus_message *m, TenantOptions *ret, sd_bus_error *error) {
        TenantOptions o = TENANT_OPTIONS_DEFAULT;
        bool have_numa = false, have_vlan = false, have_pf = false, have_uuid = false, have_owner = false;
        unsigned n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        for (;;) {
                const char *key;

                r = sd_bus_message_enter_container(m, 'e', "sv");
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (++n > BUS_OPTIONS_MAX)
                        return bus_error_setf(error, -EINVAL, "More than %d options", BUS_OPTIONS_MAX);
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, SRIOVD_OPTION_NUMA_NODE)) {
                        if (have_numa)
                                return bus_error_setf(error, -EINVAL, "Option numa_node given twice");
                        r = read_integer(m, "numa_node", -1, ALLOC_NODES_MAX - 1, &o.numa_node, error);
                        have_numa = true;
                } else if (streq(key, SRIOVD_OPTION_MAC)) {
                        if (o.have_mac)
                                return bus_error_setf(error, -EINVAL, "Option mac given twice");
                        r = read_mac(m, o.mac, error);
                        o.have_mac = true;
                } else if (streq(key, SRIOVD_OPTION_VLAN)) {
                        if (have_vlan)
                                return bus_error_setf(error, -EINVAL, "Option vlan given twice");
                        r = read_integer(m, "vlan", 0, 4094, &o.vlan, error);
                        have_vlan = true;
                } else if (streq(key, SRIOVD_OPTION_PF)) {
                        if (have_pf)
                                return bus_error_setf(error, -EINVAL, "Option pf given twice");
                        r = read_string(m, "pf", pci_addr_valid, "a PCI address such as 0000:41:00.0", o.pin_pf,
                                        sizeof(o.pin_pf), error);
                        have_pf = true;
                } else if (streq(key, SRIOVD_OPTION_DOMAIN_UUID)) {
                        if (have_uuid)
                                return bus_error_setf(error, -EINVAL, "Option domain_uuid given twice");
                        r = read_string(m, "domain_uuid", uuid_valid,
                                        "a UUID in lower case such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                                        o.domain_uuid, sizeof(o.domain_uuid), error);
                        have_uuid = true;
                } else if (streq(key, SRIOVD_OPTION_OWNER)) {
                        if (have_owner)
                                return bus_error_setf(error, -EINVAL, "Option owner given twice");
                        r = read_string(m, "owner", owner_valid, "1-63 characters from [A-Za-z0-9._-]", o.owner,
                                        sizeof(o.owner), error);
                        have_owner = true;
                } else if (streq(key, SRIOVD_OPTION_MIN_TX_RATE) || streq(key, SRIOVD_OPTION_MAX_TX_RATE)) {
                        bool max = streq(key, SRIOVD_OPTION_MAX_TX_RATE);
                        bool *have = max ? &o.tx_rates.have_max : &o.tx_rates.have_min;
                        int v;

                        if (*have)
                                return bus_error_setf(error, -EINVAL, "Option %s given twice", key);
                        r = read_integer(m, key, 0, TX_RATE_MAX, &v, error);
                        *have = true;
                        *(max ? &o.tx_rates.max : &o.tx_rates.min) = (unsigned) v;
                } else
                        return bus_error_setf(error, -EINVAL, "Unknown option \"%.64s\"; expected numa_node, mac, vlan, "
                                              "pf, domain_uuid, owner, min_tx_rate or max_tx_rate", key);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        if (o.tx_rates.have_min && o.tx_rates.have_max && o.tx_rates.max > 0 && o.tx_rates.min > o.tx_rates.max)
                return bus_error_setf(error, -EINVAL, "Option min_tx_rate %u exceeds max_tx_rate %u; expected min <= max",
                                      o.tx_rates.min, o.tx_rates.max);
        *ret = o;
        return 0;
}
