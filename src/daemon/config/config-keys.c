/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-keys.c — the sections and keys of sriovd.conf and of a class file, and how each value is read */

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "sriovd/core/cache-partition.h"
#include "config-internal.h"

/* Accepts a strict decimal within [k->min, k->max]. The error message names the range. */
static int parse_int_key(Parser *p, const KeyDef *k, const char *value, int *ret) {
        long l;
        int r;

        r = parse_long_strict(value, &l);
        if (r == -EINVAL)
                return parser_error(p, "%s = \"%s\" is not an integer; expected an integer from %ld to %ld",
                                    k->name, Q(value), k->min, k->max);
        if (r < 0 || l < k->min || l > k->max)
                return parser_error(p, "%s = %s is out of range; expected an integer from %ld to %ld",
                                    k->name, Q(value), k->min, k->max);
        *ret = (int) l;
        return 0;
}

static int key_int(Parser *p, const KeyDef *k, const char *value, void *data) {
        return parse_int_key(p, k, value, (int *) ((uint8_t *) data + k->offset));
}

/* The RT priority checks run after loading and report errors at this key's line. */
static int key_rtnet_prio(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0)
                p->rtnet_prio_line = p->line;
        return r;
}

/* --check-config compares num_vfs with the host's sriov_totalvfs and reports at this line. */
static int key_num_vfs(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0)
                ((PfPolicy *) data)->num_vfs_line = p->line;
        return r;
}

static int key_irq_thread_priority(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && !p->scratch)
                p->irq_prio_line = p->line;
        return r;
}

/* Handles the [rt] *_priority keys. The key's offset tells which kernel thread kind it sets.
 * Its line is kept for the priority order check. */
static int key_kthread_priority(Parser *p, const KeyDef *k, const char *value, void *data) {
        size_t kind = (k->offset - offsetof(Config, kthread_priority)) / sizeof(int);
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && kind < _KTHREAD_KIND_MAX)
                p->kthread_prio_lines[kind] = p->line;
        return r;
}

static int key_napi_thread_priority(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && !p->scratch)
                p->napi_prio_line = p->line;
        return r;
}

/* vcpu_fifo_priority and vhost_priority: their lines are kept for the priority order check. */
static int key_guest_priority(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && !p->scratch) {
                if (k->offset == offsetof(TenantClass, vcpu_fifo_priority))
                        p->vcpu_prio_line = p->line;
                else
                        p->vhost_prio_line = p->line;
        }
        return r;
}

/* A class's min_tx_rate or max_tx_rate. The kernel refuses a minimum above the maximum, so does the second of the two. */
static int key_tx_rate(Parser *p, const KeyDef *k, const char *value, void *data) {
        const TenantClass *cls = data;
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && cls->min_tx_rate > 0 && cls->max_tx_rate > 0 && cls->min_tx_rate > cls->max_tx_rate)
                return parser_error(p, "min_tx_rate = %d exceeds max_tx_rate = %d in this class; expected min <= max",
                                    cls->min_tx_rate, cls->max_tx_rate);
        return r;
}

/* Parses a count or setting that the kernel keeps unless told otherwise.
 * The value is an integer within range, or "leave". */
static int key_long_or_leave(Parser *p, const KeyDef *k, const char *value, void *data) {
        long l;
        int r;

        if (streq(value, "leave")) {
                *(long *) ((uint8_t *) data + k->offset) = -1;
                return 0;
        }
        r = parse_long_strict(value, &l);
        if (r == -EINVAL)
                return parser_error(p, "%s = \"%s\" is not valid; expected an integer from %ld to %ld, or leave",
                                    k->name, Q(value), k->min, k->max);
        if (r < 0 || l < k->min || l > k->max)
                return parser_error(p, "%s = %s is out of range; expected an integer from %ld to %ld, or leave",
                                    k->name, Q(value), k->min, k->max);
        *(long *) ((uint8_t *) data + k->offset) = l;
        return 0;
}

static int key_unsigned(Parser *p, const KeyDef *k, const char *value, void *data) {
        int v, r;

        /* These keys never allow a negative value, because their minimum is 0 or more. */
        r = parse_int_key(p, k, value, &v);
        if (r < 0)
                return r;
        *(unsigned *) ((uint8_t *) data + k->offset) = (unsigned) v;
        return 0;
}

int key_bool(Parser *p, const KeyDef *k, const char *value, void *data) {
        int b = parse_boolean(value);

        if (b < 0)
                return parser_error(p, "%s = \"%s\" is not a boolean; expected yes/no, true/false, on/off or 1/0",
                                    k->name, Q(value));
        *(int *) ((uint8_t *) data + k->offset) = b;
        return 0;
}

static int key_tristate(Parser *p, const KeyDef *k, const char *value, void *data) {
        Tristate t;
        int b;

        if (streq(value, "leave"))
                t = TRISTATE_LEAVE;
        else {
                b = parse_boolean(value);
                if (b < 0)
                        return parser_error(p, "%s = \"%s\" is not valid; expected on, off or leave",
                                            k->name, Q(value));
                t = b ? TRISTATE_ON : TRISTATE_OFF;
        }
        *(Tristate *) ((uint8_t *) data + k->offset) = t;
        return 0;
}

/* napi_thread_priority needs NAPI threads. So a check at the end of the file compares it with this key. */
static int key_napi_threads(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_tristate(p, k, value, data);
        if (r >= 0 && !p->scratch)
                p->napi_threads_line = p->line;
        return r;
}

static int key_enum(Parser *p, const KeyDef *k, const char *value, void *data) {
        Suggestion s = SUGGESTION_INIT(value);
        char expected[256];
        const char *hint;

        for (size_t i = 0; i < k->n_values; i++)
                if (streq(value, k->values[i])) {
                        *(int *) ((uint8_t *) data + k->offset) = (int) i;
                        return 0;
                }

        format_alternatives(expected, sizeof(expected), k->values, k->n_values);
        for (size_t i = 0; i < k->n_values; i++)
                suggestion_consider(&s, k->values[i]);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "%s = \"%s\" is not valid; expected %s; did you mean \"%s\"?",
                                    k->name, Q(value), expected, hint);
        return parser_error(p, "%s = \"%s\" is not valid; expected %s", k->name, Q(value), expected);
}

static int key_vnic(Parser *p, const KeyDef *k, const char *value, void *data) {
        /* A class that does not say which vNIC it wants is incomplete. The check runs at the end of the file. */
        if (!p->scratch)
                p->vnic_set = true;
        return key_enum(p, k, value, data);
}

/* Frees the old value when it replaces it. A duplicate [daemon] is reported, but it must not leak memory. */
static int set_string(Parser *p, char **field, const char *value) {
        char *s = strdup(value);

        if (!s) {
                p->oom = true;
                return -ENOMEM;
        }
        free(*field);
        *field = s;
        return 0;
}

static int key_path(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!absolute_path_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid absolute path; expected a path starting with \"/\", without \"..\"",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

/* An empty value turns the file off. Any other value must be the absolute path of a file. */
static int key_metrics_file(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        if (value[0] && (!absolute_path_valid(value) || value[strlen(value) - 1] == '/'))
                return parser_error(p, "%s = \"%s\" is not valid; expected an absolute file path without \"..\", or \"\" for none",
                                    k->name, Q(value));
        r = set_string(p, (char **) ((uint8_t *) data + k->offset), value);
        if (r >= 0)
                ((Config *) data)->metrics_file_set = true;
        return r;
}

static int key_group(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!group_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid group name; expected [a-z_][a-z0-9_-]*, at most 32 characters",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

/* --check-config looks the group up and reports at this line. */
static int key_group_line(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_group(p, k, value, data);
        if (r >= 0)
                ((Config *) data)->access_group_line = p->line;
        return r;
}

static int key_uri(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!value[0] || has_control_chars(value))
                return parser_error(p, "%s = \"%s\" is not a valid URI; expected a libvirt URI such as qemu:///system",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

static int parse_cpu_list(Parser *p, const char *key, const char *value, const char *example, CpuSet *ret) {
        int r;

        r = cpuset_parse_list(value, ret);
        if (r == -ERANGE)
                return parser_error(p, "%s = \"%s\" names a CPU beyond %d; expected CPUs 0 to %d",
                                    key, Q(value), CPUSET_MAX - 1, CPUSET_MAX - 1);
        if (r < 0)
                return parser_error(p, "%s = \"%s\" is not a valid CPU list; expected a list such as %s",
                                    key, Q(value), example);
        return 0;
}

static int key_cpus_rt(Parser *p, const KeyDef *k, const char *value, void *data) {
        Config *c = data;
        int r;

        /* An empty list is allowed here. It says that this host has no RT CPUs, unlike leaving the key out. */
        r = parse_cpu_list(p, k->name, value, "4-7,20-23", &c->rt_cpus);
        if (r < 0)
                return r;
        c->have_rt_cpus = true;
        p->rt_line = p->line;
        return 0;
}

static int key_cpus_housekeeping(Parser *p, const KeyDef *k, const char *value, void *data) {
        Config *c = data;
        CpuSet set;
        int r;

        r = parse_cpu_list(p, k->name, value, "0-3,8-19", &set);
        if (r < 0)
                return r;
        /* IRQs and everything non-RT must run somewhere. */
        if (cpuset_is_empty(&set))
                return parser_error(p, "%s = \"%s\" is empty; expected at least one CPU, e.g. 0-3", k->name, Q(value));
        c->housekeeping_cpus = set;
        c->have_housekeeping_cpus = true;
        p->housekeeping_line = p->line;
        return 0;
}

static int irq_cpus_parse(Parser *p, const KeyDef *k, const char *value, void *data) {
        static const char *const words[] = { "numa-local", "rt", "vcpu" };
        static const IrqCpuPolicy policies[] = { IRQ_CPUS_NUMA_LOCAL, IRQ_CPUS_RT, IRQ_CPUS_VCPU };
        TenantClass *cls = data;
        Suggestion s = SUGGESTION_INIT(value);
        const char *hint;
        CpuSet set;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(value, words[i])) {
                        cls->irq_cpus = policies[i];
                        return 0;
                }

        if (isdigit((unsigned char) value[0])) {
                r = parse_cpu_list(p, k->name, value, "0-3,8", &set);
                if (r < 0)
                        return r;
                cls->irq_cpus = IRQ_CPUS_LIST;
                cls->irq_cpu_list = set;
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                suggestion_consider(&s, words[i]);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "%s = \"%s\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8; did you mean \"%s\"?",
                                    k->name, Q(value), hint);
        return parser_error(p, "%s = \"%s\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8",
                            k->name, Q(value));
}

static int key_irq_cpus(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = irq_cpus_parse(p, k, value, data);
        if (r < 0 && !p->scratch)
                p->irq_cpus_invalid = true;
        return r;
}

static int key_class_ref(Parser *p, const KeyDef *k, const char *value, void *data) {
        PfPolicy *pf = data;

        /* Whether the class exists is checked once the class files are loaded. */
        if (!class_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid class name; expected [a-z0-9][a-z0-9_-]*, at most %d characters",
                                    k->name, Q(value), CLASS_NAME_MAX - 1);
        strcpy(pf->class_name, value);
        if (!p->scratch)
                p->pf_class_lines[p->pf_index] = p->line;
        return 0;
}

static const char *const vf_attach_values[] = { "interface", "hostdev" };
static const char *const vcpu_pinning_values[] = { "none", "rt" };
static const char *const rt_cpu_fallback_values[] = { "refuse", "housekeeping" };
static const char *const vhost_cpus_values[] = {
        [VHOST_CPUS_LEAVE] = "leave", [VHOST_CPUS_HOUSEKEEPING] = "housekeeping", [VHOST_CPUS_RT] = "rt",
};

/* vhost_cpus = rt needs the class to book RT CPUs, and a later vcpu_pinning key may do that.
 * So the check runs at the end of the file. */
static int key_vhost_cpus(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_enum(p, k, value, data);
        if (r >= 0 && !p->scratch)
                p->vhost_cpus_line = p->line;
        return r;
}

/* A capacity bitmask in hex, as resctrl prints it: one run of set bits. The host's cache is checked
 * at plan time, because a class file does not know the host it will run on. */
static int key_l3_cache_mask(Parser *p, const KeyDef *k, const char *value, void *data) {
        const char *hex = strncmp(value, "0x", 2) == 0 ? value + 2 : value;
        unsigned long long m;
        char *end;

        errno = 0;
        m = *hex && strspn(hex, "0123456789abcdefABCDEF") == strlen(hex) ? strtoull(hex, &end, 16) : 0;
        if (errno == ERANGE || !cache_mask_valid(m))
                return parser_error(p, "%s = \"%s\" is not valid; expected a hex mask of one run of set bits, "
                                    "such as ff000", k->name, Q(value));
        *(uint64_t *) ((uint8_t *) data + k->offset) = m;
        if (!p->scratch)
                p->l3_mask_line = p->line;
        return 0;
}

/* Whether an irq_cpus = vcpu class is RT depends on vcpu_pinning, as config-validate.c checks.
 * So a rejected value is recorded, and the check does not guess. */
static int key_vcpu_pinning(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_enum(p, k, value, data);
        if (r < 0 && !p->scratch)
                p->vcpu_pinning_invalid = true;
        return r;
}

/* A libvirt network or bridge name must be one path component that libvirt accepts. */
static int key_virtio_source(Parser *p, const KeyDef *k, const char *value, void *data, bool bridge) {
        TenantClass *cls = data;
        size_t n = strlen(value);

        if (n == 0 || n >= (bridge ? 16 : sizeof(cls->virtio_source)) || strspn(value,
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
                return parser_error(p, "%s = \"%s\" is not valid; expected a %s name of [A-Za-z0-9._-], at most %d characters",
                                    k->name, Q(value), bridge ? "bridge" : "libvirt network", bridge ? 15 : 63);
        strcpy(cls->virtio_source, value);
        cls->virtio_bridge = bridge;
        return 0;
}

static int key_virtio_network(Parser *p, const KeyDef *k, const char *value, void *data) {
        return key_virtio_source(p, k, value, data, false);
}

static int key_virtio_bridge(Parser *p, const KeyDef *k, const char *value, void *data) {
        return key_virtio_source(p, k, value, data, true);
}

static const char *const alert_direction_values[] = { [ALERT_ABOVE] = "above", [ALERT_BELOW] = "below" };

#define KEY_INT(n, type, field, lo, hi) \
        { .name = n, .parse = key_int, .offset = offsetof(type, field), .min = lo, .max = hi }
#define KEY_UNSIGNED(n, type, field, lo, hi) \
        { .name = n, .parse = key_unsigned, .offset = offsetof(type, field), .min = lo, .max = hi }
#define KEY_ENUM(n, type, field, table) \
        { .name = n, .parse = key_enum, .offset = offsetof(type, field), .values = table, .n_values = ELEMENTSOF(table) }
#define KEY(n, fn, type, field) \
        { .name = n, .parse = fn, .offset = offsetof(type, field) }

static const KeyDef daemon_keys[] = {
        KEY("state_dir", key_path, Config, state_dir),
        KEY_UNSIGNED("drift_check_sec", Config, drift_check_sec, 0, 86400),
        KEY_UNSIGNED("vf_timeout_sec", Config, vf_timeout_sec, 1, 3600),
        KEY_UNSIGNED("vf_headroom", Config, vf_headroom, 0, 4096),
        KEY_UNSIGNED("vf_target_utilization", Config, vf_target_utilization, 1, 100),
        KEY("release_on_stop", key_bool, Config, release_on_stop),
        KEY("restore_on_stop", key_bool, Config, restore_on_stop),
        KEY("access_group", key_group_line, Config, access_group),
        KEY_UNSIGNED("max_tenants", Config, max_tenants, 1, 16384),
        KEY("libvirt_uri", key_uri, Config, libvirt_uri),
        KEY_UNSIGNED("monitor_interval_sec", Config, monitor_interval_sec, 0, 3600),
        KEY("metrics_file", key_metrics_file, Config, metrics_file),
        KEY_UNSIGNED("drift_safety_net_sec", Config, drift_safety_net_sec, 0, 86400),
        KEY("bpf", key_bool, Config, bpf),
};

static const KeyDef cpus_keys[] = {
        KEY("rt", key_cpus_rt, Config, rt_cpus),
        KEY("housekeeping", key_cpus_housekeeping, Config, housekeeping_cpus),
        KEY("keep_irqs_off_rt", key_bool, Config, keep_irqs_off_rt),
};

static const KeyDef rt_keys[] = {
        { .name = "rtnet_prio", .parse = key_rtnet_prio, .offset = offsetof(Config, rtnet_prio), .min = 0, .max = 99 },
        { .name = "ksoftirqd_priority", .parse = key_kthread_priority,
          .offset = offsetof(Config, kthread_priority[KTHREAD_KSOFTIRQD]), .min = 0, .max = 99 },
        { .name = "ktimers_priority", .parse = key_kthread_priority,
          .offset = offsetof(Config, kthread_priority[KTHREAD_KTIMERS]), .min = 0, .max = 99 },
        { .name = "rcuc_priority", .parse = key_kthread_priority,
          .offset = offsetof(Config, kthread_priority[KTHREAD_RCUC]), .min = 0, .max = 99 },
        KEY_ENUM("idle_states", Config, idle_states, idle_states_table),
        KEY_ENUM("cpufreq_governor", Config, cpufreq_governor, governor_table),
};

static int key_vf_link_state(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r = key_enum(p, k, value, data);
        if (r >= 0)
                (*(int *) ((uint8_t *) data + k->offset))--;
        return r;
}

/* The same as TX_RATE_MAX, spelt out for the man page's check. */
#define RATE_MAX 400000
_Static_assert(RATE_MAX == TX_RATE_MAX, "RATE_MAX");
/* ethtool's channel counts are u32, but no NIC has more queues than this. */
#define CHANNELS_MAX 4096
/* The kernel's own limit for defer-hard-irqs in netdev genl napi-set is S32_MAX. */
#define NAPI_DEFER_MAX 2147483647
/* The kernel takes any u64 of nanoseconds. A timeout past 4.29 s is a mistake, not a setting. */
#define NAPI_TIMEOUT_MAX 4294967295

static const KeyDef pf_keys[] = {
        { .name = "num_vfs", .parse = key_num_vfs, .offset = offsetof(PfPolicy, num_vfs), .min = 0, .max = 4096 },
        KEY("drivers_autoprobe", key_bool, PfPolicy, drivers_autoprobe),
        KEY_ENUM("pf_link", PfPolicy, pf_link, pf_link_table),
        KEY("class", key_class_ref, PfPolicy, class_name),
        KEY_ENUM("vf_mac", PfPolicy, vf_mac, vf_mac_table),
        KEY_INT("vf_vlan", PfPolicy, vf_vlan, 0, 4094),
        KEY_INT("vf_qos", PfPolicy, vf_qos, 0, 7),
        KEY("vf_spoofchk", key_tristate, PfPolicy, vf_spoofchk),
        KEY("vf_trust", key_tristate, PfPolicy, vf_trust),
        { .name = "vf_link_state", .parse = key_vf_link_state, .offset = offsetof(PfPolicy, vf_link_state),
          .values = vf_link_state_table, .n_values = ELEMENTSOF(vf_link_state_table) },
        KEY_INT("vf_min_tx_rate", PfPolicy, vf_min_tx_rate, 0, RATE_MAX),
        KEY_INT("vf_max_tx_rate", PfPolicy, vf_max_tx_rate, 0, RATE_MAX),
        KEY_ENUM("vf_driver", PfPolicy, vf_driver, vf_driver_table),
        KEY("vf_clean", key_bool, PfPolicy, vf_clean),
};

_Static_assert(ELEMENTSOF(pf_keys) <= SECTION_KEYS_MAX, "key_lines[] too small");

static const KeyDef class_keys[] = {
        { .name = "vnic", .parse = key_vnic, .offset = offsetof(TenantClass, vnic),
          .values = vnic_kind_table, .n_values = ELEMENTSOF(vnic_kind_table) },
        KEY_INT("rank", TenantClass, rank, -1000, 1000),
        KEY("allow_remote_numa", key_bool, TenantClass, allow_remote_numa),
        KEY_UNSIGNED("coalesce_rx_usecs", TenantClass, coalesce_rx_usecs, 0, 100000),
        KEY_UNSIGNED("coalesce_tx_usecs", TenantClass, coalesce_tx_usecs, 0, 100000),
        KEY_INT("coalesce_rx_frames", TenantClass, coalesce_rx_frames, 0, 65535),
        KEY_INT("coalesce_tx_frames", TenantClass, coalesce_tx_frames, 0, 65535),
        KEY("adaptive_rx", key_tristate, TenantClass, adaptive_rx),
        KEY("adaptive_tx", key_tristate, TenantClass, adaptive_tx),
        KEY("irq_cpus", key_irq_cpus, TenantClass, irq_cpus),
        KEY_ENUM("irq_spread", TenantClass, irq_spread, irq_spread_table),
        { .name = "irq_thread_priority", .parse = key_irq_thread_priority,
          .offset = offsetof(TenantClass, irq_thread_priority), .min = 0, .max = 99 },
        KEY("offload_tso", key_tristate, TenantClass, offload_tso),
        KEY("offload_gso", key_tristate, TenantClass, offload_gso),
        KEY("offload_gro", key_tristate, TenantClass, offload_gro),
        KEY("offload_lro", key_tristate, TenantClass, offload_lro),
        { .name = "channels_combined", .parse = key_long_or_leave, .offset = offsetof(TenantClass, channels.combined),
          .min = 1, .max = CHANNELS_MAX },
        { .name = "channels_rx", .parse = key_long_or_leave, .offset = offsetof(TenantClass, channels.rx),
          .min = 1, .max = CHANNELS_MAX },
        { .name = "channels_tx", .parse = key_long_or_leave, .offset = offsetof(TenantClass, channels.tx),
          .min = 1, .max = CHANNELS_MAX },
        KEY("napi_threads", key_napi_threads, TenantClass, napi_threads),
        { .name = "napi_thread_priority", .parse = key_napi_thread_priority,
          .offset = offsetof(TenantClass, napi_thread_priority), .min = 0, .max = 99 },
        { .name = "napi_defer_hard_irqs", .parse = key_long_or_leave,
          .offset = offsetof(TenantClass, napi_params.defer_hard_irqs), .min = 0, .max = NAPI_DEFER_MAX },
        { .name = "napi_gro_flush_timeout_ns", .parse = key_long_or_leave,
          .offset = offsetof(TenantClass, napi_params.gro_flush_timeout), .min = 0, .max = NAPI_TIMEOUT_MAX },
        { .name = "napi_irq_suspend_timeout_ns", .parse = key_long_or_leave,
          .offset = offsetof(TenantClass, napi_params.irq_suspend_timeout), .min = 0, .max = NAPI_TIMEOUT_MAX },
        KEY_ENUM("vf_attach", TenantClass, vf_attach_hostdev, vf_attach_values),
        KEY("virtio_network", key_virtio_network, TenantClass, virtio_source),
        KEY("virtio_bridge", key_virtio_bridge, TenantClass, virtio_source),
        { .name = "vcpu_pinning", .parse = key_vcpu_pinning, .offset = offsetof(TenantClass, vcpu_pin_rt),
          .values = vcpu_pinning_values, .n_values = ELEMENTSOF(vcpu_pinning_values) },
        { .name = "vcpu_fifo_priority", .parse = key_guest_priority, .offset = offsetof(TenantClass, vcpu_fifo_priority),
          .min = 0, .max = 99 },
        KEY_UNSIGNED("rt_vcpus", TenantClass, rt_vcpus, 1, 8),
        KEY_UNSIGNED("rt_cpu_share", TenantClass, rt_cpu_share, 1, 64),
        KEY_ENUM("rt_cpu_fallback", TenantClass, rt_cpu_fallback, rt_cpu_fallback_values),
        { .name = "vhost_cpus", .parse = key_vhost_cpus, .offset = offsetof(TenantClass, vhost_cpus),
          .values = vhost_cpus_values, .n_values = ELEMENTSOF(vhost_cpus_values) },
        { .name = "vhost_priority", .parse = key_guest_priority, .offset = offsetof(TenantClass, vhost_priority),
          .min = 0, .max = 99 },
        KEY("l3_cache_mask", key_l3_cache_mask, TenantClass, l3_cache_mask),
        { .name = "min_tx_rate", .parse = key_tx_rate, .offset = offsetof(TenantClass, min_tx_rate), .min = 0,
          .max = RATE_MAX },
        { .name = "max_tx_rate", .parse = key_tx_rate, .offset = offsetof(TenantClass, max_tx_rate), .min = 0,
          .max = RATE_MAX },
};

_Static_assert(ELEMENTSOF(class_keys) <= SECTION_KEYS_MAX, "key_lines[] too small");
_Static_assert(ALLOC_RT_CPUS_MAX == 8 && ALLOC_RT_SHARE_MAX == 64, "rt_vcpus and rt_cpu_share ranges");

static const KeyDef alert_keys[] = {
        KEY("metric", key_alert_metric, AlertPolicy, metric),
        KEY("threshold", key_alert_level, AlertPolicy, rule.threshold),
        KEY("clear", key_alert_level, AlertPolicy, rule.clear),
        KEY_ENUM("direction", AlertPolicy, rule.direction, alert_direction_values),
        KEY_UNSIGNED("periods", AlertPolicy, rule.periods, 1, 10000),
        KEY("while", key_alert_gate, AlertPolicy, gate),
        KEY("fallback", key_alert_fallback, AlertPolicy, fallback),
        KEY("enabled", key_alert_enabled, AlertPolicy, enabled),
        KEY("pf", key_alert_filter, AlertPolicy, filters),
        KEY("vf", key_alert_filter, AlertPolicy, filters),
        KEY("tenant", key_alert_filter, AlertPolicy, filters),
        KEY("class", key_alert_filter, AlertPolicy, filters),
        KEY("cpu", key_alert_filter, AlertPolicy, filters),
        KEY("irq", key_alert_filter, AlertPolicy, filters),
        KEY("node", key_alert_filter, AlertPolicy, filters),
        KEY("thread", key_alert_filter, AlertPolicy, filters),
        KEY("kind", key_alert_filter, AlertPolicy, filters),
        KEY("source", key_alert_filter, AlertPolicy, filters),
};

_Static_assert(ELEMENTSOF(alert_keys) <= SECTION_KEYS_MAX, "key_lines[] too small");
_Static_assert(ALERT_PERIODS_MAX == 10000, "periods range");
_Static_assert(sizeof(AlertDirection) == sizeof(int), "key_enum writes an int");

#define SECTION(n, k, arg, table) \
        { .name = n, .kind = k, .arg_syntax = arg, .keys = table, .n_keys = ELEMENTSOF(table) }

const SectionDef config_main_sections[] = {
        SECTION("daemon", SECTION_DAEMON, NULL, daemon_keys),
        SECTION("cpus", SECTION_CPUS, NULL, cpus_keys),
        SECTION("rt", SECTION_RT, NULL, rt_keys),
        SECTION("match", SECTION_MATCH, "VVVV:DDDD", pf_keys),
        SECTION("pf", SECTION_PF, "DDDD:BB:DD.F", pf_keys),
        SECTION("alert", SECTION_ALERT, "NAME", alert_keys),
};

const SectionDef config_class_sections[] = {
        SECTION("class", SECTION_CLASS, NULL, class_keys),
};

const size_t config_n_main_sections = ELEMENTSOF(config_main_sections);
const size_t config_n_class_sections = ELEMENTSOF(config_class_sections);
