/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-read.c — the state's values and tenants, read from json-c's tree with messages that say where */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "state-internal.h"
#include "state.h"

static bool is_lower_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Find where a message about the value at p should point, and describe what is there, such as "'x'". */
static const char *found_at(const StateText *t, const JsonPath *p, size_t *ret_at, char buf[static 16]) {
        *ret_at = state_json_locate(t, p);
        return state_describe_at(t, *ret_at, buf);
}

/* Read a string of at most cap - 1 bytes into dst. It has no NUL inside, because the scan refuses \u0000. */
int state_read_string(const StateText *t, const JsonPath *p, json_object *v, const char *what, char *dst, size_t cap) {
        size_t n, at;
        char d[16];

        if (!json_object_is_type(v, json_type_string)) {
                const char *found = found_at(t, p, &at, d);
                return state_text_error(t, at, "expected a string for %s, found %s", what, found);
        }
        n = (size_t) json_object_get_string_len(v);
        if (n >= cap)
                return state_path_error(t, p, "%s is longer than %zu bytes", what, cap - 1);
        memcpy(dst, json_object_get_string(v), n + 1);
        return 0;
}

/* Read an integer in [min, max], written without a fraction or an exponent. */
int state_read_integer(const StateText *t, const JsonPath *p, json_object *v, const char *what, int64_t min, int64_t max,
                       int64_t *ret) {
        size_t at;
        char d[16];
        int64_t r;

        if (json_object_is_type(v, json_type_double))
                return state_path_error(t, p, "%s must be a whole number", what);
        if (!json_object_is_type(v, json_type_int)) {
                const char *found = found_at(t, p, &at, d);
                return state_text_error(t, at, "expected an integer for %s, found %s", what, found);
        }
        r = json_object_get_int64(v);
        /* json-c saturates a number that does not fit, so an INT64_MAX may come from a larger number. */
        if (r == INT64_MAX && json_object_get_uint64(v) != (uint64_t) INT64_MAX)
                return state_path_error(t, p, "%s is out of range; expected %" PRId64 "..%" PRId64, what, min, max);
        if (r < min || r > max)
                return state_path_error(t, p, "%s = %" PRId64 " is out of range; expected %" PRId64 "..%" PRId64, what, r, min, max);
        *ret = r;
        return 0;
}

/* A null reads as -1, which means none for vlan and numa_node. */
static int read_integer_or_null(const StateText *t, const JsonPath *p, json_object *v, const char *what, int64_t min,
                                int64_t max, int64_t *ret) {
        if (!v) {
                *ret = -1;
                return 0;
        }
        return state_read_integer(t, p, v, what, min, max, ret);
}

/* Keys from index n_required on may be absent, because they were added to the format later. */
static int read_object(const StateText *t, const JsonPath *p, json_object *o, const char *what, const char *const *keys,
                       unsigned n_keys, unsigned n_required, MemberFn fn, void *userdata) {
        uint32_t seen = 0;
        size_t at;
        char d[16];
        int r;

        if (!json_object_is_type(o, json_type_object)) {
                const char *found = found_at(t, p, &at, d);
                return state_text_error(t, at, "expected '{', found %s", found);
        }
        /* The members come in file order, which json-c keeps. The scan has already refused a repeated key. */
        json_object_object_foreach(o, key, v) {
                JsonPath vp = state_path_key(p, key);
                unsigned k;

                for (k = 0; k < n_keys; k++)
                        if (streq(key, keys[k]))
                                break;
                if (k == n_keys) {
                        char list[256] = "";
                        size_t len = 0;
                        for (unsigned i = 0; i < n_keys; i++)
                                strjoin_appendf(list, sizeof(list), &len, "%s", keys[i]);
                        vp.key = true;
                        return state_path_error(t, &vp, "unknown key \"%.64s\" in %s; expected one of: %s", key, what, list);
                }
                seen |= 1u << k;
                r = fn(t, k, &vp, v, userdata);
                if (r < 0)
                        return r;
        }
        for (unsigned k = 0; k < n_required; k++)
                if (!(seen & (1u << k)))
                        return state_path_error(t, p, "%s has no \"%s\" key", what, keys[k]);
        return 0;
}

int state_read_object(const StateText *t, const JsonPath *p, json_object *o, const char *what, const char *const *keys,
                      unsigned n_keys, MemberFn fn, void *userdata) {
        return read_object(t, p, o, what, keys, n_keys, n_keys, fn, userdata);
}

enum { COALESCE_RX, COALESCE_TX };
static const char *const coalesce_keys[] = { [COALESCE_RX] = "rx_usecs", [COALESCE_TX] = "tx_usecs" };

typedef struct TenantCtx {
        StateTenant *t;
        char what[40];          /* "tenants[3]" */
} TenantCtx;

static int coalesce_member(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata) {
        TenantCtx *c = userdata;
        char what[64];
        int64_t n;
        int r;

        snprintf(what, sizeof(what), "%s.coalesce.%s", c->what, coalesce_keys[key]);
        r = state_read_integer(t, p, v, what, 0, STATE_COALESCE_USECS_MAX, &n);
        if (r < 0)
                return r;
        if (key == COALESCE_RX)
                c->t->rx_usecs = (unsigned) n;
        else
                c->t->tx_usecs = (unsigned) n;
        return 0;
}

enum {
        TENANT_ID, TENANT_CLASS, TENANT_KIND, TENANT_VF, TENANT_MAC, TENANT_VLAN,
        TENANT_DOMAIN, TENANT_NUMA, TENANT_COALESCE, TENANT_SEQ,
        TENANT_RT_CPUS,         /* optional, because files from version 0.2 and earlier have none */
        /* Optional too, and written only when set, so that a file without them stays readable by older versions. */
        TENANT_PIN_PF, TENANT_DOMAIN_UUID, TENANT_OWNER, TENANT_MIN_TX_RATE, TENANT_MAX_TX_RATE,
};
static const char *const tenant_keys[] = {
        [TENANT_ID] = "tenant",
        [TENANT_CLASS] = "class",
        [TENANT_KIND] = "kind",
        [TENANT_VF] = "vf",
        [TENANT_MAC] = "mac",
        [TENANT_VLAN] = "vlan",
        [TENANT_DOMAIN] = "domain",
        [TENANT_NUMA] = "numa_node",
        [TENANT_COALESCE] = "coalesce",
        [TENANT_SEQ] = "seq",
        [TENANT_RT_CPUS] = "rt_cpus",
        [TENANT_PIN_PF] = "pin_pf",
        [TENANT_DOMAIN_UUID] = "domain_uuid",
        [TENANT_OWNER] = "owner",
        [TENANT_MIN_TX_RATE] = "min_tx_rate",
        [TENANT_MAX_TX_RATE] = "max_tx_rate",
};

static int parse_mac(const char *s, uint8_t mac[static 6]) {
        if (strlen(s) != 17)
                return -EINVAL;
        for (size_t i = 0; i < 6; i++) {
                int hi = hex_digit(s[i * 3]), lo = hex_digit(s[i * 3 + 1]);
                if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != ':'))
                        return -EINVAL;
                mac[i] = (uint8_t) (hi << 4 | lo);
        }
        return 0;
}

static int tenant_member(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata) {
        TenantCtx *c = userdata;
        StateTenant *st = c->t;
        const char *why;
        char what[64], buf[STATE_DOMAIN_MAX];
        int64_t n = -1;
        int r;

        /* The name for messages, such as "tenants[3].vlan". This runs per member, so it avoids snprintf(). */
        strcpy(stpcpy(stpcpy(what, c->what), "."), tenant_keys[key]);
        switch (key) {
        case TENANT_ID:
                r = state_read_string(t, p, v, what, st->tenant, sizeof(st->tenant));
                if (r < 0)
                        return r;
                why = state_tenant_id_check(st->tenant);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not a valid tenant id; %s", what, st->tenant, why);
                return 0;
        case TENANT_CLASS:
                r = state_read_string(t, p, v, what, st->class_name, sizeof(st->class_name));
                if (r < 0)
                        return r;
                why = state_class_name_check(st->class_name);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not a valid class name; %s", what, st->class_name, why);
                return 0;
        case TENANT_KIND:
                r = state_read_string(t, p, v, what, buf, 16);
                if (r < 0)
                        return r;
                if (streq(buf, "vf"))
                        st->kind = STATE_KIND_VF;
                else if (streq(buf, "virtio"))
                        st->kind = STATE_KIND_VIRTIO;
                else if (streq(buf, "waiting"))
                        st->kind = STATE_KIND_WAITING;
                else
                        return state_path_error(t, p, "%s \"%s\" is not valid; expected \"vf\", \"virtio\" or \"waiting\"", what, buf);
                return 0;
        case TENANT_VF:
                if (!v)
                        return 0;
                r = state_read_string(t, p, v, what, st->vf, sizeof(st->vf));
                if (r < 0)
                        return r;
                why = state_pci_addr_check(st->vf);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->vf, why);
                return 0;
        case TENANT_MAC:
                r = state_read_string(t, p, v, what, buf, 20);
                if (r < 0)
                        return r;
                if (parse_mac(buf, st->mac) < 0)
                        return state_path_error(t, p, "%s \"%s\" is not valid; expected a MAC address such as 52:54:00:12:34:56", what, buf);
                why = state_mac_check(st->mac);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, buf, why);
                return 0;
        case TENANT_VLAN:
                r = read_integer_or_null(t, p, v, what, 0, STATE_VLAN_MAX, &n);
                st->vlan = (int) n;
                return r;
        case TENANT_DOMAIN:
                if (!v)
                        return 0;
                r = state_read_string(t, p, v, what, st->domain, sizeof(st->domain));
                if (r < 0)
                        return r;
                if (!st->domain[0])
                        return state_path_error(t, p, "%s is empty; expected a libvirt domain name, or null for none", what);
                why = state_domain_check(st->domain);
                if (why)
                        return state_path_error(t, p, "%s is not a valid domain name; %s", what, why);
                return 0;
        case TENANT_NUMA:
                r = read_integer_or_null(t, p, v, what, 0, STATE_NUMA_NODE_MAX, &n);
                st->numa_node = (int) n;
                return r;
        case TENANT_COALESCE:
                if (!v)
                        return 0;
                snprintf(what, sizeof(what), "%s.coalesce", c->what);
                st->have_coalesce = true;
                return state_read_object(t, p, v, what, coalesce_keys, ELEMENTSOF(coalesce_keys), coalesce_member, c);
        case TENANT_SEQ:
                r = state_read_integer(t, p, v, what, 0, INT64_MAX, &n);
                st->seq = (uint64_t) n;
                return r;
        case TENANT_RT_CPUS: {
                size_t len;
                if (!v)
                        return 0;
                if (!json_object_is_type(v, json_type_array))
                        return state_path_error(t, p, "%s is not a list; expected a list of CPU numbers such as [4, 5]", what);
                len = json_object_array_length(v);
                if (len > STATE_RT_CPUS_MAX)
                        return state_path_error(t, p, "%s has %zu CPUs; expected at most %d", what, len, STATE_RT_CPUS_MAX);
                for (size_t i = 0; i < len; i++) {
                        JsonPath ip = state_path_index(p, i);
                        r = state_read_integer(t, &ip, json_object_array_get_idx(v, i), what, 0, STATE_RT_CPU_MAX, &n);
                        if (r < 0)
                                return r;
                        for (size_t j = 0; j < i; j++)
                                if (st->rt_cpus[j] == n)
                                        return state_path_error(t, &ip, "%s lists CPU %" PRIi64 " twice", what, n);
                        st->rt_cpus[i] = (uint16_t) n;
                }
                st->n_rt_cpus = (unsigned) len;
                return 0;
        }
        case TENANT_PIN_PF:
                r = state_read_string(t, p, v, what, st->pin_pf, sizeof(st->pin_pf));
                if (r < 0)
                        return r;
                why = state_pci_addr_check(st->pin_pf);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->pin_pf, why);
                return 0;
        case TENANT_DOMAIN_UUID:
                r = state_read_string(t, p, v, what, st->domain_uuid, sizeof(st->domain_uuid));
                if (r < 0)
                        return r;
                why = st->domain_uuid[0] ? state_uuid_check(st->domain_uuid) : "expected a UUID, or no key for none";
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->domain_uuid, why);
                return 0;
        case TENANT_OWNER:
                r = state_read_string(t, p, v, what, st->owner, sizeof(st->owner));
                if (r < 0)
                        return r;
                why = st->owner[0] ? state_owner_check(st->owner) : "expected 1-63 characters, or no key for none";
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->owner, why);
                return 0;
        case TENANT_MIN_TX_RATE:
                r = state_read_integer(t, p, v, what, 0, TX_RATE_MAX, &n);
                st->tx_rates.have_min = true;
                st->tx_rates.min = (unsigned) n;
                return r;
        case TENANT_MAX_TX_RATE:
                r = state_read_integer(t, p, v, what, 0, TX_RATE_MAX, &n);
                st->tx_rates.have_max = true;
                st->tx_rates.max = (unsigned) n;
                return r;
        }
        return -EINVAL;
}

int state_read_tenants(const StateText *t, const JsonPath *p, json_object *v, DocCtx *d) {
        size_t n, at;
        char f[16];
        int r;

        if (!json_object_is_type(v, json_type_array)) {
                const char *found = found_at(t, p, &at, f);
                return state_text_error(t, at, "expected '[' (the list of tenants), found %s", found);
        }
        n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
                JsonPath tp = state_path_index(p, i), vfp = state_path_key(&tp, "vf");
                TenantCtx c;

                if (d->n >= STATE_TENANTS_MAX)
                        return state_path_error(t, &tp, "more than %d tenants; expected at most that many", STATE_TENANTS_MAX);
                if (GREEDY_REALLOC(d->tenants, d->n_alloc, d->n + 1) < 0)
                        return -ENOMEM;
                d->tenants[d->n] = (StateTenant) { .vlan = -1, .numa_node = -1 };
                c = (TenantCtx) { .t = &d->tenants[d->n] };
                snprintf(c.what, sizeof(c.what), "tenants[%zu]", d->n);
                r = read_object(t, &tp, json_object_array_get_idx(v, i), c.what, tenant_keys, ELEMENTSOF(tenant_keys), TENANT_RT_CPUS,
                                      tenant_member, &c);
                if (r < 0)
                        return r;
                if (c.t->kind == STATE_KIND_VF && !c.t->vf[0])
                        return state_path_error(t, &vfp, "%s is of kind \"vf\" but its vf is null; expected its PCI address", c.what);
                if (c.t->kind != STATE_KIND_VF && c.t->vf[0])
                        return state_path_error(t, &vfp, "%s is of kind \"%s\" but has vf \"%s\"; expected null", c.what,
                                                state_kind_to_string(c.t->kind), c.t->vf);
                d->n++;
        }
        return 0;
}

int state_read_checksum(const StateText *t, const JsonPath *p, json_object *v, uint32_t *ret) {
        size_t lp = strlen(CHECKSUM_PREFIX);
        char buf[64];
        uint32_t c = 0;
        bool ok;
        int r;

        r = state_read_string(t, p, v, "checksum", buf, sizeof(buf));
        if (r < 0)
                return r;
        ok = strlen(buf) == lp + 8 && strncmp(buf, CHECKSUM_PREFIX, lp) == 0;
        /* Only lowercase is accepted, so that every single-bit flip changes what is read, even 'a' to 'A'. */
        for (size_t i = lp; ok && i < lp + 8; i++) {
                ok = is_lower_hex(buf[i]);
                c = c << 4 | (uint32_t) (hex_digit(buf[i]) & 0xf);
        }
        if (!ok)
                return state_path_error(t, p, "checksum \"%s\" is not valid; expected \"" CHECKSUM_PREFIX "\" and 8 lowercase hex digits", buf);
        *ret = c;
        return 0;
}

int state_read_format(const StateText *t, const JsonPath *p, json_object *v, const char *want) {
        char buf[64];
        int r;

        r = state_read_string(t, p, v, "format", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (!streq(buf, want))
                return state_path_error(t, p, "format \"%s\" is not \"%s\"; not a sriovd state file?", buf, want);
        return 0;
}

int state_read_version(const StateText *t, const JsonPath *p, json_object *v, int version) {
        int64_t n;
        int r;

        r = state_read_integer(t, p, v, "version", INT64_MIN, INT64_MAX, &n);
        if (r < 0)
                return r;
        if (n != version)
                return state_path_error(t, p, "version %" PRId64 " is not supported; this sriovd reads version %d%s", n,
                                        version, n > version ? " (written by a newer sriovd?)" : "");
        return 0;
}
