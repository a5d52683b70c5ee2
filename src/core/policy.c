/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy.c — the policy model's defaults, lookups and names; the INI reader fills it, the planner reads it */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/policy.h"

#define DEFAULT_DRIFT_CHECK_SEC 5
/*
 * While BPF reports each outside change, the drift check only catches what has no event: another
 * device's new IRQ, which the default affinity keeps off the RT CPUs anyway, or a CPU that went
 * offline. Each such check is a full read of the host. Every 2 minutes, watching the large host
 * costs a fifth of irqbalance's CPU (bench-steady); every minute, two fifths.
 */
#define DEFAULT_DRIFT_SAFETY_NET_SEC 120
/* mlx5 creates 64 VFs in seconds, and igb resets the PF for about 5 s. Slower means that something is wrong. */
#define DEFAULT_VF_TIMEOUT_SEC 30
#define DEFAULT_ACCESS_GROUP "sriovd"

const char *const vnic_kind_table[VNIC_KIND_COUNT] = {
        [VNIC_SRIOV_REQUIRED] = "sriov-required",
        [VNIC_SRIOV_PREFERRED] = "sriov-preferred",
        [VNIC_VIRTIO] = "virtio",
};

const char *const irq_spread_table[IRQ_SPREAD_COUNT] = {
        [IRQ_SPREAD_SPREAD] = "spread",
        [IRQ_SPREAD_SINGLE] = "single",
};

const char *const pf_link_table[PF_LINK_COUNT] = {
        [PF_LINK_AUTO] = "auto",
        [PF_LINK_UP] = "up",
        [PF_LINK_LEAVE] = "leave",
};

const char *const idle_states_table[IDLE_STATES_COUNT] = {
        [IDLE_STATES_LEAVE] = "leave",
        [IDLE_STATES_LIMIT] = "limit",
};

const char *const governor_table[GOVERNOR_COUNT] = {
        [GOVERNOR_LEAVE] = "leave",
        [GOVERNOR_PERFORMANCE] = "performance",
};

const char *const vf_mac_table[VF_MAC_COUNT] = {
        [VF_MAC_LEAVE] = "leave",
        [VF_MAC_DERIVE] = "derive",
};

/* The table is shifted by one, because VF_LINK_STATE_LEAVE is -1. */
const char *const vf_link_state_table[VF_LINK_STATE_COUNT] = { "leave", "auto", "enable", "disable" };

const char *const vf_driver_table[VF_DRIVER_COUNT] = {
        [VF_DRIVER_LEAVE] = "leave",
        [VF_DRIVER_VFIO] = "vfio-pci",
        [VF_DRIVER_HOST] = "host",
};

const PfPolicy pf_policy_default = {
        .num_vfs = -1,
        .drivers_autoprobe = -1,
        .vf_vlan = -1,
        .vf_qos = -1,
        .vf_spoofchk = TRISTATE_LEAVE,
        .vf_trust = TRISTATE_LEAVE,
        .vf_link_state = VF_LINK_STATE_LEAVE,
        .vf_min_tx_rate = -1,
        .vf_max_tx_rate = -1,
        /*
         * The allocator hands out the VFs of every PF in scope, with a section or not. So no VF
         * may keep a tenant's past.
         */
        .vf_clean = 1,
};

void pf_policy_init(PfPolicy *pf, unsigned line) {
        *pf = pf_policy_default;
        pf->line = line;
}

void tenant_class_init(TenantClass *cls) {
        *cls = (TenantClass) {
                .vnic = VNIC_SRIOV_PREFERRED,   /* This is not a default, because a class must set it. */
                .coalesce_rx_usecs = COALESCE_DEFAULT_USECS,
                .coalesce_tx_usecs = COALESCE_DEFAULT_USECS,
                .coalesce_rx_frames = -1,
                .coalesce_tx_frames = -1,
                .adaptive_rx = TRISTATE_LEAVE,
                .adaptive_tx = TRISTATE_LEAVE,
                .irq_cpus = IRQ_CPUS_NUMA_LOCAL,
                .irq_spread = IRQ_SPREAD_SPREAD,
                .offload_tso = TRISTATE_LEAVE,
                .offload_gso = TRISTATE_LEAVE,
                .offload_gro = TRISTATE_LEAVE,
                .offload_lro = TRISTATE_LEAVE,
                .channels = CHANNELS_CHANGE_NONE,
                .napi_threads = TRISTATE_LEAVE,
                .napi_thread_priority = -1,
                .napi_params = NAPI_PARAMS_NONE,
                .virtio_source = "default",
                .rt_vcpus = 1,
                .rt_cpu_share = 1,
                .min_tx_rate = -1,
                .max_tx_rate = -1,
        };
}

void tx_rates_resolve(const TxRates *own, const TenantClass *cls, int fallback_min, int fallback_max,
                      int *ret_min, int *ret_max) {
        int min = own && own->have_min ? (int) own->min : cls && cls->min_tx_rate >= 0 ? cls->min_tx_rate : fallback_min;
        int max = own && own->have_max ? (int) own->max : cls && cls->max_tx_rate >= 0 ? cls->max_tx_rate : fallback_max;

        *ret_min = min > 0 && max > 0 && min > max ? max : min;
        *ret_max = max;
}

const char *kthread_priority_key(KthreadKind k) {
        static const char *const keys[_KTHREAD_KIND_MAX] = {
                [KTHREAD_KSOFTIRQD] = "ksoftirqd_priority",
                [KTHREAD_KTIMERS] = "ktimers_priority",
                [KTHREAD_RCUC] = "rcuc_priority",
        };
        return (unsigned) k < _KTHREAD_KIND_MAX ? keys[k] : NULL;
}

bool tenant_class_wants_channels(const TenantClass *cls) {
        return cls && (cls->channels.rx >= 0 || cls->channels.tx >= 0 || cls->channels.combined >= 0);
}

bool tenant_class_wants_napi_params(const TenantClass *cls) {
        const NapiParams *p = cls ? &cls->napi_params : NULL;
        return p && (p->defer_hard_irqs >= 0 || p->gro_flush_timeout >= 0 || p->irq_suspend_timeout >= 0);
}

int tenant_class_napi_priority(const TenantClass *cls) {
        if (!cls)
                return 0;
        return cls->napi_thread_priority >= 0 ? cls->napi_thread_priority : cls->irq_thread_priority;
}

unsigned tenant_class_rt_cpus(const TenantClass *cls) {
        return cls && cls->vcpu_pin_rt ? cls->rt_vcpus : 0;
}

bool tenant_class_is_rt(const TenantClass *cls) {
        return cls && (cls->irq_cpus == IRQ_CPUS_RT || cls->irq_cpus == IRQ_CPUS_VCPU || cls->vcpu_pin_rt);
}

int config_new(const char *path, const char *classes_dir, Config **ret) {
        _cleanup_(config_freep) Config *c = NULL;

        c = calloc(1, sizeof(Config));
        if (!c)
                return -ENOMEM;

        *c = (Config) {
                .path = strdup(path),
                .classes_dir = classes_dir ? strdup(classes_dir) : NULL,
                .state_dir = strdup(CONFIG_DEFAULT_STATE_DIR),
                .drift_check_sec = DEFAULT_DRIFT_CHECK_SEC,
                .drift_safety_net_sec = DEFAULT_DRIFT_SAFETY_NET_SEC,
                .bpf = true,
                .vf_timeout_sec = DEFAULT_VF_TIMEOUT_SEC,
                /*
                 * bench-allocator measured the choice. At 128 VFs, a headroom of 2 moves about 115
                 * tenants an hour, and a headroom of 8 costs 5 points of utilization. 4 lies between.
                 */
                .vf_headroom = 4,
                .max_tenants = 16384,
                .vf_target_utilization = 85,
                .access_group = strdup(DEFAULT_ACCESS_GROUP),
                .libvirt_uri = strdup(CONFIG_DEFAULT_LIBVIRT_URI),
                .monitor_interval_sec = DEFAULT_MONITOR_INTERVAL_SEC,
                .metrics_file = strdup(CONFIG_DEFAULT_METRICS_FILE),
                .rtnet_prio = -1,
                .keep_irqs_off_rt = true,
        };
        if (!c->path || (classes_dir && !c->classes_dir) || !c->state_dir || !c->access_group || !c->libvirt_uri ||
            !c->metrics_file)
                return -ENOMEM;

        *ret = TAKE_PTR(c);
        return 0;
}

int config_build_scope(Config *c) {
        size_t n_ids = 0, n_addrs = 0;

        /* Never allocate zero bytes, because calloc(0) may return NULL, which is not a failure. */

        c->scope_ids = calloc(scope_default_n_ids + c->n_pfs + 1, sizeof(PciId));
        c->scope_addrs = calloc(c->n_pfs + 1, PCI_ADDR_MAX);
        if (!c->scope_ids || !c->scope_addrs)
                return -ENOMEM;

        for (size_t i = 0; i < scope_default_n_ids; i++)
                c->scope_ids[n_ids++] = scope_default_ids[i];

        for (size_t i = 0; i < c->n_pfs; i++) {
                const PfPolicy *pf = &c->pfs[i];
                bool found = false;

                if (pf->by_addr) {
                        memcpy(c->scope_addrs[n_addrs++], pf->addr, PCI_ADDR_MAX);
                        continue;
                }
                for (size_t j = 0; j < n_ids && !found; j++)
                        found = c->scope_ids[j].vendor == pf->id.vendor && c->scope_ids[j].device == pf->id.device;
                if (!found)
                        c->scope_ids[n_ids++] = pf->id;
        }

        c->n_scope_ids = n_ids;
        c->n_scope_addrs = n_addrs;
        return 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;

        free(c->path);
        free(c->classes_dir);
        free(c->state_dir);
        free(c->access_group);
        free(c->libvirt_uri);
        free(c->metrics_file);
        free(c->pfs);
        for (size_t i = 0; i < c->n_classes; i++)
                free(c->classes[i].file);
        free(c->classes);
        free(c->alerts);
        free(c->scope_ids);
        free(c->scope_addrs);
        free(c);
        return NULL;
}

static int class_compare(const void *key, const void *elem) {
        return strcmp(key, ((const TenantClass *) elem)->name);
}

const char *vf_driver_policy_to_string(VfDriverPolicy p) {
        return (unsigned) p < ELEMENTSOF(vf_driver_table) ? vf_driver_table[p] : "unknown";
}

const TenantClass *config_find_class(const Config *c, const char *name) {
        if (!c || !name || c->n_classes == 0)
                return NULL;
        return bsearch(name, c->classes, c->n_classes, sizeof(TenantClass), class_compare);
}

const PfPolicy *config_pf_policy(const Config *c, const char *addr, uint16_t vendor, uint16_t device) {
        if (!c)
                return NULL;

        if (addr)
                for (size_t i = 0; i < c->n_pfs; i++)
                        if (c->pfs[i].by_addr && streq(c->pfs[i].addr, addr))
                                return &c->pfs[i];

        for (size_t i = 0; i < c->n_pfs; i++)
                if (!c->pfs[i].by_addr && c->pfs[i].id.vendor == vendor && c->pfs[i].id.device == device)
                        return &c->pfs[i];

        return NULL;
}

void config_scope(const Config *c, Scope *ret) {
        *ret = (Scope) {
                .ids = c->scope_ids,
                .n_ids = c->n_scope_ids,
                .addrs = (const char (*)[PCI_ADDR_MAX]) c->scope_addrs,
                .n_addrs = c->n_scope_addrs,
        };
}

const char *vnic_kind_to_string(VnicKind k) {
        return (size_t) k < ELEMENTSOF(vnic_kind_table) ? vnic_kind_table[k] : NULL;
}

const char *irq_cpu_policy_to_string(IrqCpuPolicy p) {
        static const char *const table[] = {
                [IRQ_CPUS_NUMA_LOCAL] = "numa-local",
                [IRQ_CPUS_RT] = "rt",
                [IRQ_CPUS_VCPU] = "vcpu",
                [IRQ_CPUS_LIST] = "list",
        };

        return (size_t) p < ELEMENTSOF(table) ? table[p] : NULL;
}

const char *irq_spread_to_string(IrqSpread s) {
        return (size_t) s < ELEMENTSOF(irq_spread_table) ? irq_spread_table[s] : NULL;
}

const char *tristate_to_string(Tristate t) {
        switch (t) {
        case TRISTATE_LEAVE:
                return "leave";
        case TRISTATE_OFF:
                return "off";
        case TRISTATE_ON:
                return "on";
        }
        return NULL;
}
