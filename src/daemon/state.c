/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.c — the allocation state file's format: reading it from json-c's tree, validating it, writing it */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/state.h"
#include "sriovd/util.h"
#include "state-internal.h"

/* CRC32C, the Castagnoli CRC with the reflected polynomial 0x82f63b78, as iSCSI and ext4 use it. */
uint32_t state_crc32c(const void *data, size_t size) {
        const uint8_t *p = data;
        uint32_t table[256], crc = UINT32_MAX;

        /* At the sizes of sriovd's files, 1 KiB of table per call is cheaper than a global to initialise. */
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
                table[i] = c;
        }
        for (size_t i = 0; i < size; i++)
                crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return crc ^ UINT32_MAX;
}

/*
 * The rules for each field, shared by the parser and state_validate(). Each check returns NULL
 * for a valid value, or else what is expected.
 */

const char *state_tenant_id_check(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= TENANT_ID_MAX)
                return "expected 1-63 characters from [A-Za-z0-9._-]";
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
                        return "expected 1-63 characters from [A-Za-z0-9._-]";
        return NULL;
}

static const char *class_name_check(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= CLASS_NAME_MAX || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", s[0]))
                goto bad;
        for (size_t i = 1; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", s[i]))
                        goto bad;
        return NULL;
bad:
        return "expected [a-z0-9][a-z0-9_-]*, at most 63 characters, as tenant classes are named";
}

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

static const char *pci_addr_check(const char *s) {
        return pci_addr_valid(s) ? NULL : "expected a PCI address such as 0000:41:00.2 (lowercase hex, device 00-1f, function 0-7)";
}

static const char *domain_check(const char *s) {
        size_t n = strlen(s);

        if (n >= STATE_DOMAIN_MAX)
                return "expected at most 255 bytes";
        if (!state_utf8_valid(s, n))
                return "expected valid UTF-8";
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
                        return "expected no control characters and no '/'";
        return NULL;
}

static const char *uuid_check(const char *s) {
        return !s[0] || uuid_valid(s) ? NULL : "expected a UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427 (lowercase hex)";
}

static const char *owner_check(const char *s) {
        return !s[0] ? NULL : state_tenant_id_check(s) ? "expected 1-63 characters from [A-Za-z0-9._-]" : NULL;
}

static const char *mac_check(const uint8_t mac[static 6]) {
        return (mac[0] & 1) ? "expected a unicast MAC address" : NULL;
}

const char *state_kind_to_string(int kind) {
        return kind == STATE_KIND_VF ? "vf" : kind == STATE_KIND_VIRTIO ? "virtio"
               : kind == STATE_KIND_WAITING ? "waiting" : NULL;
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
        TENANT_PIN_PF, TENANT_DOMAIN_UUID, TENANT_OWNER,
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
                why = class_name_check(st->class_name);
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
                why = pci_addr_check(st->vf);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->vf, why);
                return 0;
        case TENANT_MAC:
                r = state_read_string(t, p, v, what, buf, 20);
                if (r < 0)
                        return r;
                if (parse_mac(buf, st->mac) < 0)
                        return state_path_error(t, p, "%s \"%s\" is not valid; expected a MAC address such as 52:54:00:12:34:56", what, buf);
                why = mac_check(st->mac);
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
                why = domain_check(st->domain);
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
                why = pci_addr_check(st->pin_pf);
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->pin_pf, why);
                return 0;
        case TENANT_DOMAIN_UUID:
                r = state_read_string(t, p, v, what, st->domain_uuid, sizeof(st->domain_uuid));
                if (r < 0)
                        return r;
                why = st->domain_uuid[0] ? uuid_check(st->domain_uuid) : "expected a UUID, or no key for none";
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->domain_uuid, why);
                return 0;
        case TENANT_OWNER:
                r = state_read_string(t, p, v, what, st->owner, sizeof(st->owner));
                if (r < 0)
                        return r;
                why = st->owner[0] ? owner_check(st->owner) : "expected 1-63 characters, or no key for none";
                if (why)
                        return state_path_error(t, p, "%s \"%s\" is not valid; %s", what, st->owner, why);
                return 0;
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

enum { DOC_FORMAT, DOC_VERSION, DOC_GENERATION, DOC_TENANTS, DOC_CHECKSUM };
static const char *const doc_keys[] = {
        [DOC_FORMAT] = "format",
        [DOC_VERSION] = "version",
        [DOC_GENERATION] = "generation",
        [DOC_TENANTS] = "tenants",
        [DOC_CHECKSUM] = "checksum",
};

static int doc_member(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata) {
        DocCtx *d = userdata;
        int64_t n;
        int r;

        /* Anything after the checksum would not be covered by it. */
        if (d->have_checksum) {
                JsonPath kp = *p;
                kp.key = true;
                return state_path_error(t, &kp, "\"%s\" after \"checksum\"; the checksum must be the last key", doc_keys[key]);
        }

        switch (key) {
        case DOC_FORMAT:
                return state_read_format(t, p, v, STATE_FORMAT);
        case DOC_VERSION:
                return state_read_version(t, p, v, STATE_FORMAT_VERSION);
        case DOC_GENERATION:
                r = state_read_integer(t, p, v, "generation", 0, INT64_MAX, &n);
                d->generation = (uint64_t) n;
                return r;
        case DOC_TENANTS:
                d->tenants_path = *p;
                return state_read_tenants(t, p, v, d);
        case DOC_CHECKSUM:
                r = state_read_checksum(t, p, v, &d->checksum);
                if (r < 0)
                        return r;
                d->have_checksum = true;
                return 0;
        }
        return -EINVAL;
}

typedef struct DupKey {
        const State *s;
        int which;      /* 0 for the tenant id, 1 for the vf, 2 for the seq */
} DupKey;

static int dup_compare(const void *a, const void *b, void *userdata) {
        const DupKey *k = userdata;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;
        const StateTenant *x = &k->s->tenants[i], *y = &k->s->tenants[j];
        int c = 0;

        if (k->which == 0)
                c = strcmp(x->tenant, y->tenant);
        else if (k->which == 1)
                c = strcmp(x->vf, y->vf);
        else
                c = x->seq < y->seq ? -1 : x->seq > y->seq;
        return c ? c : (i > j) - (i < j);
}

/*
 * Check that tenant ids, VF addresses and seqs are unique. On duplicates, the first entry in
 * the list that repeats an earlier one is reported, together with the entry it repeats. When t
 * is given, the message says where both entries are in t.
 */
int state_check_duplicates(const State *s, const StateText *t, const JsonPath *p, StateError *e) {
        _cleanup_free_ size_t *idx = NULL;
        static const char *const names[] = { "tenant id", "vf", "seq" };
        static const char *const keys[] = { "tenant", "vf", "seq" };

        if (s->n < 2)
                return 0;
        idx = malloc(s->n * sizeof(size_t));
        if (!idx)
                return -ENOMEM;

        for (int which = 0; which < 3; which++) {
                DupKey k = { .s = s, .which = which };
                size_t first = SIZE_MAX, dup = SIZE_MAX;
                char value[STATE_DOMAIN_MAX];

                for (size_t i = 0; i < s->n; i++)
                        idx[i] = i;
                qsort_r(idx, s->n, sizeof(size_t), dup_compare, &k);
                for (size_t i = 1; i < s->n; i++) {
                        const StateTenant *a = &s->tenants[idx[i - 1]], *b = &s->tenants[idx[i]];
                        bool same = which == 0 ? streq(a->tenant, b->tenant)
                                  : which == 1 ? (a->vf[0] && streq(a->vf, b->vf))
                                  : a->seq == b->seq;
                        if (same && idx[i] < dup) {
                                first = idx[i - 1];
                                dup = idx[i];
                        }
                }
                if (dup == SIZE_MAX)
                        continue;

                const StateTenant *x = &s->tenants[dup], *o = &s->tenants[first];
                if (which == 2)
                        snprintf(value, sizeof(value), "%" PRIu64, x->seq);
                else
                        snprintf(value, sizeof(value), "\"%s\"", which == 0 ? x->tenant : x->vf);

                if (t) {
                        JsonPath dp = state_path_index(p, dup), fp = state_path_index(p, first);
                        JsonPath vp = state_path_key(&dp, keys[which]);
                        StateText other = *t;
                        StateError where = {};

                        /* Find the other entry's line by putting an error about it into a scratch StateError. */
                        other.error = &where;
                        (void) state_path_error(&other, &fp, "-");
                        return state_path_error(t, &vp, "%s %s of tenants[%zu] \"%s\" is also that of tenants[%zu] \"%s\" at line %u; expected each %s once",
                                                names[which], value, dup, x->tenant, first, o->tenant, where.line, names[which]);
                }
                state_error_set(e, 0, 0, "%s %s of tenants[%zu] \"%s\" is also that of tenants[%zu] \"%s\"; expected each %s once",
                                names[which], value, dup, x->tenant, first, o->tenant, names[which]);
                return -EINVAL;
        }
        return 0;
}

int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        StateText t = { .buf = buf, .end = size, .root = "the file", .error = ret_error };
        DocCtx d = {};
        size_t end, checksum_key;
        uint32_t actual;
        int r;

        if (size == 0) {
                state_error_set(ret_error, 0, 0, "the file is empty (written but never synced before a crash?)");
                return -EBADMSG;
        }
        if (size > STATE_FILE_SIZE_MAX) {
                state_error_set(ret_error, 0, 0, "the file is %zu bytes; expected at most %u", size, STATE_FILE_SIZE_MAX);
                return -EBADMSG;
        }

        r = state_json_parse(&t, &root, &end, &checksum_key);
        if (r < 0)
                return r;
        r = state_read_object(&t, &(JsonPath) {}, root, "the file", doc_keys, ELEMENTSOF(doc_keys), doc_member, &d);
        if (r < 0)
                goto fail;

        /* The writer ends the file with "}\n". Any other ending is a torn write or an edit. */
        if (end == size) {
                r = state_text_error(&t, end, "the file ends without a newline after the final '}' (truncated?)");
                goto fail;
        }
        if (buf[end] != '\n' || end + 1 != size) {
                r = state_text_error(&t, end + (buf[end] == '\n'), "unexpected content after the final '}'; expected the file to end with \"}\\n\"");
                goto fail;
        }

        State s = { .tenants = d.tenants, .n = d.n, .generation = d.generation };
        r = state_check_duplicates(&s, &t, &d.tenants_path, ret_error);
        if (r < 0)
                goto fail;

        /* doc_member() made sure that the checksum is the last key. It covers everything before it. */
        actual = state_crc32c(buf, checksum_key);
        if (actual != d.checksum) {
                r = state_path_error(&t, &(JsonPath) { .step = { { .key = "checksum" } }, .n = 1 },
                                     "checksum mismatch: the file says " CHECKSUM_PREFIX "%08x, its content has " CHECKSUM_PREFIX "%08x "
                                     "(torn write, disk corruption, or edited by hand)", d.checksum, actual);
                goto fail;
        }

        *ret = s;
        return 0;

fail:
        free(d.tenants);
        return r;
}

int state_validate(const State *s, StateError *ret_error) {
        if (s->n > STATE_TENANTS_MAX) {
                state_error_set(ret_error, 0, 0, "%zu tenants; expected at most %d", s->n, STATE_TENANTS_MAX);
                return -EINVAL;
        }
        if (s->n > 0 && !s->tenants) {
                state_error_set(ret_error, 0, 0, "%zu tenants but no array", s->n);
                return -EINVAL;
        }
        if (s->generation > INT64_MAX) {
                state_error_set(ret_error, 0, 0, "generation %" PRIu64 " is out of range; expected at most %" PRId64, s->generation, INT64_MAX);
                return -EINVAL;
        }

        for (size_t i = 0; i < s->n; i++) {
                const StateTenant *t = &s->tenants[i];
                const char *why = NULL, *field = NULL;

                /* Check the strings first, because every later check may print them. */
                if (strnlen(t->tenant, sizeof(t->tenant)) == sizeof(t->tenant) ||
                    strnlen(t->class_name, sizeof(t->class_name)) == sizeof(t->class_name) ||
                    strnlen(t->vf, sizeof(t->vf)) == sizeof(t->vf) ||
                    strnlen(t->domain, sizeof(t->domain)) == sizeof(t->domain) ||
                    strnlen(t->pin_pf, sizeof(t->pin_pf)) == sizeof(t->pin_pf) ||
                    strnlen(t->domain_uuid, sizeof(t->domain_uuid)) == sizeof(t->domain_uuid) ||
                    strnlen(t->owner, sizeof(t->owner)) == sizeof(t->owner)) {
                        state_error_set(ret_error, 0, 0, "tenants[%zu]: a string field is not NUL-terminated", i);
                        return -EINVAL;
                }

                if ((why = state_tenant_id_check(t->tenant)))
                        field = "tenant id";
                else if ((why = class_name_check(t->class_name)))
                        field = "class";
                else if (!state_kind_to_string(t->kind))
                        field = "kind", why = "expected 0 (virtio), 1 (vf) or 2 (waiting)";
                else if (t->kind == STATE_KIND_VF && (why = pci_addr_check(t->vf)))
                        field = "vf";
                else if (t->kind != STATE_KIND_VF && t->vf[0])
                        field = "vf", why = "expected none unless kind is vf";
                else if ((why = mac_check(t->mac)))
                        field = "mac";
                else if (t->vlan < -1 || t->vlan > STATE_VLAN_MAX)
                        field = "vlan", why = "expected -1 (none) or 0-4094";
                else if ((why = domain_check(t->domain)))
                        field = "domain";
                else if (t->numa_node < -1 || t->numa_node > STATE_NUMA_NODE_MAX)
                        field = "numa_node", why = "expected -1 (any) or 0-1023";
                else if (t->have_coalesce && (t->rx_usecs > STATE_COALESCE_USECS_MAX || t->tx_usecs > STATE_COALESCE_USECS_MAX))
                        field = "coalesce", why = "expected usecs of at most 100000";
                else if (t->seq > INT64_MAX)
                        field = "seq", why = "expected at most 2^63-1";
                else if (t->n_rt_cpus > STATE_RT_CPUS_MAX)
                        field = "rt_cpus", why = "expected at most 8 CPUs";
                else if (t->pin_pf[0] && (why = pci_addr_check(t->pin_pf)))
                        field = "pin_pf";
                else if ((why = uuid_check(t->domain_uuid)))
                        field = "domain_uuid";
                else if ((why = owner_check(t->owner)))
                        field = "owner";
                if (field) {
                        state_error_set(ret_error, 0, 0, "tenants[%zu] \"%s\": %s is not valid; %s", i, t->tenant, field, why);
                        return -EINVAL;
                }
        }
        return state_check_duplicates(s, NULL, NULL, ret_error);
}

static json_object *coalesce_to_json(const StateTenant *t) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add(o, "rx_usecs", json_object_new_int64(t->rx_usecs)) < 0 ||
            jsonc_add(o, "tx_usecs", json_object_new_int64(t->tx_usecs)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *state_tenant_to_json(const StateTenant *t) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char mac[18];

        if (!o)
                return NULL;
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", t->mac[0], t->mac[1], t->mac[2], t->mac[3],
                 t->mac[4], t->mac[5]);
        /* The members go in the format's order, which hand edits and diffs of old files follow. */
        if (jsonc_add(o, "tenant", json_object_new_string(t->tenant)) < 0 ||
            jsonc_add(o, "class", json_object_new_string(t->class_name)) < 0 ||
            jsonc_add(o, "kind", json_object_new_string(state_kind_to_string(t->kind))) < 0 ||
            (t->vf[0] ? jsonc_add(o, "vf", json_object_new_string(t->vf)) : jsonc_add_null(o, "vf")) < 0 ||
            jsonc_add(o, "mac", json_object_new_string(mac)) < 0 ||
            (t->vlan >= 0 ? jsonc_add(o, "vlan", json_object_new_int(t->vlan)) : jsonc_add_null(o, "vlan")) < 0 ||
            (t->domain[0] ? jsonc_add(o, "domain", json_object_new_string(t->domain)) : jsonc_add_null(o, "domain")) < 0 ||
            (t->numa_node >= 0 ? jsonc_add(o, "numa_node", json_object_new_int(t->numa_node)) : jsonc_add_null(o, "numa_node")) < 0 ||
            (t->have_coalesce ? jsonc_add(o, "coalesce", coalesce_to_json(t)) : jsonc_add_null(o, "coalesce")) < 0 ||
            jsonc_add(o, "seq", json_object_new_int64((int64_t) t->seq)) < 0)
                return NULL;
        if (t->n_rt_cpus > 0) {
                json_object *a = json_object_new_array();
                if (jsonc_add(o, "rt_cpus", a) < 0)
                        return NULL;
                for (unsigned i = 0; i < t->n_rt_cpus && i < STATE_RT_CPUS_MAX; i++)
                        if (json_object_array_add(a, json_object_new_int(t->rt_cpus[i])) < 0)
                                return NULL;
        }
        if ((t->pin_pf[0] && jsonc_add(o, "pin_pf", json_object_new_string(t->pin_pf)) < 0) ||
            (t->domain_uuid[0] && jsonc_add(o, "domain_uuid", json_object_new_string(t->domain_uuid)) < 0) ||
            (t->owner[0] && jsonc_add(o, "owner", json_object_new_string(t->owner)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

int state_document_finish(json_object *doc, int flags, char **ret, size_t *ret_size) {
        static const char key[] = "\"checksum\"";
        _cleanup_free_ char *buf = NULL;
        const char *text, *at = NULL, *hex;
        size_t len;
        char crc[9];

        text = jsonc_text(doc, flags, &len);
        if (!text)
                return -ENOMEM;
        buf = malloc(len + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len] = '\n';
        buf[len + 1] = 0;

        /*
         * The last "checksum" key is the placeholder member's. A "checksum" inside a string
         * value cannot match, because the quotes inside a string are escaped.
         */
        for (const char *k = buf; (k = memmem(k, len - (size_t) (k - buf), key, strlen(key))); k++)
                at = k;
        hex = at ? strstr(at, CHECKSUM_PREFIX "00000000") : NULL;
        if (!hex)
                return -EIO;
        snprintf(crc, sizeof(crc), "%08x", state_crc32c(buf, (size_t) (at - buf)));
        memcpy((char *) hex + strlen(CHECKSUM_PREFIX), crc, 8);
        *ret = TAKE_PTR(buf);
        *ret_size = len + 1;
        return 0;
}

int state_format(const State *s, char **ret, size_t *ret_size, StateError *ret_error) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *list;
        int r;

        r = state_validate(s, ret_error);
        if (r < 0)
                return r;

        doc = json_object_new_object();
        list = json_object_new_array_ext((int) s->n);
        if (!doc || jsonc_add(doc, "format", json_object_new_string(STATE_FORMAT)) < 0 ||
            jsonc_add(doc, "version", json_object_new_int(STATE_FORMAT_VERSION)) < 0 ||
            jsonc_add(doc, "generation", json_object_new_int64((int64_t) s->generation)) < 0 ||
            jsonc_add(doc, "tenants", list) < 0)   /* list now belongs to doc, or has been put. */
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                if (jsonc_append(list, state_tenant_to_json(&s->tenants[i])) < 0)
                        return -ENOMEM;
        /* This placeholder is replaced by the checksum of everything before its key. */

        if (jsonc_add(doc, "checksum", json_object_new_string(CHECKSUM_PREFIX "00000000")) < 0)
                return -ENOMEM;
        return state_document_finish(doc, JSONC_PRETTY, ret, ret_size);
}

void state_done(State *s) {
        free(s->tenants);
        *s = (State) {};
}
