/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-record.c — the API's a{sv} records, which hold a key only for a value that exists */

#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "bus-internal.h"

int bus_tenant_path(const char *tenant, char **ret) {
        return sd_bus_path_encode(SRIOVD_BUS_TENANT_PREFIX, tenant, ret);
}

int bus_device_path(const char *addr, char **ret) {
        return sd_bus_path_encode(SRIOVD_BUS_DEVICE_PREFIX, addr, ret);
}

static int append_s(sd_bus_message *m, const char *key, const char *value) {
        if (!value || !value[0])
                return 0;
        return sd_bus_message_append(m, "{sv}", key, "s", value);
}

static int append_u(sd_bus_message *m, const char *key, unsigned value) {
        return sd_bus_message_append(m, "{sv}", key, "u", (uint32_t) value);
}

static int append_i(sd_bus_message *m, const char *key, int value) {
        return sd_bus_message_append(m, "{sv}", key, "i", (int32_t) value);
}

static int append_b(sd_bus_message *m, const char *key, bool value) {
        return sd_bus_message_append(m, "{sv}", key, "b", (int) value);
}

static int append_o(sd_bus_message *m, const char *key, const char *path) {
        return sd_bus_message_append(m, "{sv}", key, "o", path);
}

/* Appends a nested record: key maps to an a{sv} of two unsigned values, such as coalescing's rx and tx. */
static int append_uu(sd_bus_message *m, const char *key, const char *k1, unsigned v1, const char *k2, unsigned v2) {
        return sd_bus_message_append(m, "{sv}", key, "a{sv}", 2, k1, "u", (uint32_t) v1, k2, "u", (uint32_t) v2);
}

int bus_append_tenant_record(sd_bus_message *m, const TenantInfo *t) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = bus_tenant_path(t->tenant, &path);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_TENANT, t->tenant);
        if (r >= 0)
                r = append_o(m, SRIOVD_KEY_PATH, path);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_CLASS, t->class_name);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_KIND, t->kind);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_STATE, t->state);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_MAC, t->mac);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_ADDRESS, t->vf);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_PF, t->pf);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_NETDEV, t->netdev);
        if (r >= 0 && t->vlan >= 0)
                r = append_u(m, SRIOVD_KEY_VLAN, (unsigned) t->vlan);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_DOMAIN, t->domain);
        if (r >= 0 && t->numa_node >= 0)
                r = append_i(m, SRIOVD_KEY_NUMA_NODE, t->numa_node);
        if (r >= 0 && t->vf[0])
                r = append_b(m, SRIOVD_KEY_REMOTE_NUMA, t->remote_numa);
        if (r >= 0 && t->have_coalesce)
                r = append_uu(m, SRIOVD_KEY_COALESCE, SRIOVD_KEY_RX_USECS, t->rx_usecs, SRIOVD_KEY_TX_USECS,
                              t->tx_usecs);
        if (r >= 0 && t->n_rt_cpus > 0) {
                uint32_t cpus[ALLOC_RT_CPUS_MAX];
                for (unsigned i = 0; i < t->n_rt_cpus; i++)
                        cpus[i] = t->rt_cpus[i];
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", SRIOVD_KEY_RT_CPUS);
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "au");
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 'u', cpus, t->n_rt_cpus * sizeof(uint32_t));
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0 && (t->n_rt_cpus > 0 || t->rt_waiting))
                r = append_b(m, SRIOVD_KEY_RT_WAITING, t->rt_waiting);
        if (r >= 0 && t->tx_rates.have_min)
                r = append_u(m, SRIOVD_KEY_MIN_TX_RATE, t->tx_rates.min);
        if (r >= 0 && t->tx_rates.have_max)
                r = append_u(m, SRIOVD_KEY_MAX_TX_RATE, t->tx_rates.max);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_PIN_PF, t->pin_pf);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_DOMAIN_UUID, t->domain_uuid);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_OWNER, t->owner);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_pf_record(sd_bus_message *m, const Pf *pf) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = bus_device_path(pf->addr, &path);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_ADDRESS, pf->addr);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_KIND, "pf");
        if (r >= 0)
                r = append_o(m, SRIOVD_KEY_PATH, path);
        if (r >= 0 && pf->numa_node >= 0)
                r = append_i(m, SRIOVD_KEY_NUMA_NODE, pf->numa_node);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_DRIVER, pf->driver);
        if (r >= 0 && pf->n_netdevs > 0)
                r = append_s(m, SRIOVD_KEY_NETDEV, pf->netdevs[0]);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_NUM_VFS, pf->num_vfs);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_TOTAL_VFS, pf->total_vfs);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_rt_node_record(sd_bus_message *m, const AllocRtNode *n) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");

        if (r >= 0 && n->numa_node >= 0)
                r = append_i(m, SRIOVD_KEY_NUMA_NODE, n->numa_node);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_CPUS, n->cpus);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_BOOKED, n->booked);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_SHARED, n->shared);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_ROOM, n->room);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_GUESTS, n->guests);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_WAITING, n->waiting);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_class_record(sd_bus_message *m, const TenantClass *cls) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");

        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_NAME, cls->name);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_VNIC, vnic_kind_to_string(cls->vnic));
        if (r >= 0)
                r = append_i(m, SRIOVD_KEY_RANK, cls->rank);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_RT_CPUS, tenant_class_rt_cpus(cls));
        if (r >= 0)
                r = append_b(m, SRIOVD_KEY_RT_FALLBACK, cls->rt_cpu_fallback != 0);
        if (r >= 0)
                r = append_b(m, SRIOVD_KEY_ALLOW_REMOTE_NUMA, cls->allow_remote_numa != 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_vf_record(sd_bus_message *m, const Pf *pf, const Vf *vf, const char *tenant) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_ADDRESS, vf->addr);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_KIND, "vf");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_PF, pf->addr);
        if (r >= 0 && pf->numa_node >= 0)
                r = append_i(m, SRIOVD_KEY_NUMA_NODE, pf->numa_node);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_DRIVER, vf->driver);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_NETDEV, vf->netdev);
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_VF_INDEX, vf->index);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_TENANT, tenant);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_irq_record(sd_bus_message *m, const Irq *q, const char *device, const Napi *napi,
                          NapiPairing pairing) {
        char aff[CPUSET_LIST_MAX], eff[CPUSET_LIST_MAX], cpus[CPUSET_LIST_MAX];
        int r;

        cpuset_format_list(&q->affinity, aff, sizeof(aff));
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_u(m, SRIOVD_KEY_IRQ, q->irq);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_DEVICE, device);
        /* An empty affinity is still the kernel's answer, so it is sent as "" instead of left out. */
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_AFFINITY, "s", aff);
        if (r >= 0 && q->has_effective) {
                cpuset_format_list(&q->effective, eff, sizeof(eff));
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_EFFECTIVE, "s", eff);
        }
        if (r >= 0)
                r = append_b(m, SRIOVD_KEY_WRITABLE, q->writable);
        if (r >= 0 && q->thread > 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_THREAD, "a{sv}", 3, SRIOVD_KEY_PID, "i",
                                          (int32_t) q->thread, SRIOVD_KEY_POLICY, "s",
                                          sched_policy_to_string(q->thread_policy), SRIOVD_KEY_PRIORITY, "i",
                                          (int32_t) q->thread_priority);
        if (r >= 0 && napi && napi->thread > 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_NAPI, "a{sv}", 7, SRIOVD_KEY_ID, "u", napi->id,
                                          SRIOVD_KEY_NAME, "s", napi->thread_name, SRIOVD_KEY_PID, "i",
                                          (int32_t) napi->thread, SRIOVD_KEY_POLICY, "s",
                                          sched_policy_to_string(napi->thread_policy), SRIOVD_KEY_PRIORITY, "i",
                                          (int32_t) napi->thread_priority, SRIOVD_KEY_CPUS, "s",
                                          cpuset_format_list(&napi->thread_cpus, cpus, sizeof(cpus)),
                                          SRIOVD_KEY_PAIRED, "s",
                                          pairing == NAPI_PAIRED_KERNEL ? "napi-get" : "queue-order");
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_action_record(sd_bus_message *m, const Action *a) {
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX];
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_ACTION, action_kind_to_string(a->kind));
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_TARGET, a->target);
        if (r >= 0 && (a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD ||
                       ((a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED) && a->irq > 0)))
                r = append_u(m, SRIOVD_KEY_IRQ, a->irq);
        /* The VF key appears only when the target is the PF and the action is on one of its VFs.
         * There it is always sent, because VF 0 is a real VF. */
        if (r >= 0 && a->kind == ACTION_SET_VF_LINK)
                r = append_u(m, SRIOVD_KEY_VF, a->vf);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_BEFORE, "s",
                                          action_format_value(a, false, before, sizeof(before)));
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_AFTER, "s",
                                          action_format_value(a, true, after, sizeof(after)));
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_EFFECT, a->effect);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_note_record(sd_bus_message *m, const PlanNote *n) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_LEVEL, note_level_to_string(n->level));
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_TARGET, n->target);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_TEXT, "s", n->text);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_tenant_record_reply(sd_bus_message *call, const TenantInfo *t, sd_bus_message **ret) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = bus_append_tenant_record(reply, t);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

int bus_reply_tenant_record(sd_bus_message *call, const TenantInfo *t) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r;

        r = bus_tenant_record_reply(call, t, &reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int bus_append_host_finding_record(sd_bus_message *m, const HostFinding *h) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_CHECK, h->check);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_SEVERITY, host_check_severity_to_string(h->severity));
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_RESULT, host_check_status_to_string(h->status));
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_SEEN, h->seen);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_EXPECTED, h->expected);
        if (r >= 0)
                r = append_s(m, SRIOVD_KEY_FIX, h->fix);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}
