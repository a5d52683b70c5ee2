/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-check.c — the rules for each tenant field, and the check of a whole state before it is written */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "state-internal.h"
#include "state.h"

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

const char *state_class_name_check(const char *s) {
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

const char *state_pci_addr_check(const char *s) {
        return pci_addr_valid(s) ? NULL : "expected a PCI address such as 0000:41:00.2 (lowercase hex, device 00-1f, function 0-7)";
}

const char *state_domain_check(const char *s) {
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

const char *state_uuid_check(const char *s) {
        return !s[0] || uuid_valid(s) ? NULL : "expected a UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427 (lowercase hex)";
}

const char *state_owner_check(const char *s) {
        return !s[0] ? NULL : state_tenant_id_check(s) ? "expected 1-63 characters from [A-Za-z0-9._-]" : NULL;
}

const char *state_mac_check(const uint8_t mac[static 6]) {
        return (mac[0] & 1) ? "expected a unicast MAC address" : NULL;
}

const char *state_kind_to_string(int kind) {
        return kind == STATE_KIND_VF ? "vf" : kind == STATE_KIND_VIRTIO ? "virtio"
               : kind == STATE_KIND_WAITING ? "waiting" : NULL;
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
                else if ((why = state_class_name_check(t->class_name)))
                        field = "class";
                else if (!state_kind_to_string(t->kind))
                        field = "kind", why = "expected 0 (virtio), 1 (vf) or 2 (waiting)";
                else if (t->kind == STATE_KIND_VF && (why = state_pci_addr_check(t->vf)))
                        field = "vf";
                else if (t->kind != STATE_KIND_VF && t->vf[0])
                        field = "vf", why = "expected none unless kind is vf";
                else if ((why = state_mac_check(t->mac)))
                        field = "mac";
                else if (t->vlan < -1 || t->vlan > STATE_VLAN_MAX)
                        field = "vlan", why = "expected -1 (none) or 0-4094";
                else if ((why = state_domain_check(t->domain)))
                        field = "domain";
                else if (t->numa_node < -1 || t->numa_node > STATE_NUMA_NODE_MAX)
                        field = "numa_node", why = "expected -1 (any) or 0-1023";
                else if (t->have_coalesce && (t->rx_usecs > STATE_COALESCE_USECS_MAX || t->tx_usecs > STATE_COALESCE_USECS_MAX))
                        field = "coalesce", why = "expected usecs of at most 100000";
                else if (t->seq > INT64_MAX)
                        field = "seq", why = "expected at most 2^63-1";
                else if (t->n_rt_cpus > STATE_RT_CPUS_MAX)
                        field = "rt_cpus", why = "expected at most 8 CPUs";
                else if (t->pin_pf[0] && (why = state_pci_addr_check(t->pin_pf)))
                        field = "pin_pf";
                else if ((why = state_uuid_check(t->domain_uuid)))
                        field = "domain_uuid";
                else if ((why = state_owner_check(t->owner)))
                        field = "owner";
                else if ((t->tx_rates.have_min && t->tx_rates.min > TX_RATE_MAX) ||
                         (t->tx_rates.have_max && t->tx_rates.max > TX_RATE_MAX))
                        field = "tx_rates", why = "expected at most 400000 Mbit/s";
                if (field) {
                        state_error_set(ret_error, 0, 0, "tenants[%zu] \"%s\": %s is not valid; %s", i, t->tenant, field, why);
                        return -EINVAL;
                }
        }
        return state_check_duplicates(s, NULL, NULL, ret_error);
}
