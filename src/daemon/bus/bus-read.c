/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-read.c — the read-only methods of org.sriovd.Manager1: tenants, devices, IRQs, metrics and the plan */

#include <string.h>
#include <time.h>

#include "sriovd/core/allocator.h"
#include "sriovd/core/metrics.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "bus-internal.h"

int bus_check_tenant_arg(const char *tenant, sd_bus_error *error) {
        if (!tenant_id_valid(tenant))
                return bus_error_setf(error, -EINVAL, "Invalid tenant id \"%.64s\"; expected [A-Za-z0-9._-]{1,63}",
                                      tenant);
        return 0;
}

int bus_method_get_tenant(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *tenant;
        TenantInfo t;
        int r;

        r = sd_bus_message_read(m, "s", &tenant);
        if (r < 0)
                return r;
        r = bus_check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        r = manager_get_tenant(b->manager, tenant, &t);
        if (r == -ENOENT)
                return bus_error_setf(error, -ESRCH, "No tenant \"%s\"", tenant);
        if (r < 0)
                return bus_error_setf(error, r, "Failed to look up tenant %s: %s", tenant, strerror(-r));
        return bus_reply_tenant_record(m, &t);
}

int bus_method_list_tenants(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        Bus *b = userdata;
        size_t n = manager_n_tenants(b->manager);
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                TenantInfo t;

                r = manager_tenant(b->manager, i, &t);
                if (r < 0)
                        return r;
                r = bus_append_tenant_record(reply, &t);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Maps a VF address to the tenant that holds the VF, for ListDevices. */
typedef struct Holder {
        char vf[PCI_ADDR_MAX];
        char tenant[TENANT_ID_MAX];
} Holder;

static int holder_cmp(const void *a, const void *b) {
        return strcmp(((const Holder *) a)->vf, ((const Holder *) b)->vf);
}

static int collect_holders(Manager *mgr, Holder **ret, size_t *ret_n) {
        size_t n = manager_n_tenants(mgr), k = 0;
        _cleanup_free_ Holder *h = calloc(n ? n : 1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                TenantInfo t;
                if (manager_tenant(mgr, i, &t) < 0 || !t.vf[0])
                        continue;
                strscpy(h[k].vf, sizeof(h[k].vf), t.vf);
                strscpy(h[k].tenant, sizeof(h[k].tenant), t.tenant);
                k++;
        }
        qsort_safe(h, k, sizeof(*h), holder_cmp);
        *ret = TAKE_PTR(h);
        *ret_n = k;
        return 0;
}

int bus_method_list_devices(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_free_ Holder *holders = NULL;
        Bus *b = userdata;
        const Inventory *inv = manager_inventory(b->manager);
        size_t n_holders = 0;
        int r;

        r = collect_holders(b->manager, &holders, &n_holders);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                r = bus_append_pf_record(reply, pf);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const Vf *vf = &pf->vfs[j];
                        Holder key = {};
                        const Holder *h;

                        strscpy(key.vf, sizeof(key.vf), vf->addr);
                        h = bsearch_safe(&key, holders, n_holders, sizeof(key), holder_cmp);
                        r = bus_append_vf_record(reply, pf, vf, h ? h->tenant : NULL);
                        if (r < 0)
                                return r;
                }
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int irq_index_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const Irq *) elem)->irq;
        return (k > e) - (k < e);
}

typedef struct IrqOwner {
        const char *addr;
        const Napi *napi;         /* the threaded NAPI it schedules */
        NapiPairing pairing;
} IrqOwner;

static void mark_owner(const Inventory *inv, IrqOwner *owner, const unsigned *irqs, size_t n, const char *addr,
                       const NetdevTune *tune) {
        for (size_t i = 0; i < n; i++) {
                const Irq *q = bsearch_safe(&irqs[i], inv->irqs, inv->n_irqs, sizeof(Irq), irq_index_cmp);
                IrqOwner *o;

                if (!q)
                        continue;
                o = &owner[q - inv->irqs];
                o->addr = addr;
                for (size_t k = 0; tune->napi_known && k < tune->napi.n_napis; k++)
                        if (tune->napi.napis[k].irq == q->irq) {
                                o->napi = &tune->napi.napis[k];
                                o->pairing = tune->napi.pairing;
                        }
        }
}

int bus_method_list_irqs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_free_ IrqOwner *owner = NULL;
        Bus *b = userdata;
        const Inventory *inv = manager_inventory(b->manager);
        size_t n = inv ? inv->n_irqs : 0;
        int r;

        owner = calloc(n ? n : 1, sizeof(*owner));
        if (!owner)
                return -ENOMEM;
        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                mark_owner(inv, owner, pf->irqs, pf->n_irqs, pf->addr, &pf->tune);
                for (size_t j = 0; j < pf->n_vfs; j++)
                        mark_owner(inv, owner, pf->vfs[j].irqs, pf->vfs[j].n_irqs, pf->vfs[j].addr, &pf->vfs[j].tune);
        }
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = bus_append_irq_record(reply, &inv->irqs[i], owner[i].addr, owner[i].napi, owner[i].pairing);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* A dry run reads all of sysfs. So callers who may not change anything share one token bucket of dry runs. */
static int plan_take_token(Bus *b, sd_bus_message *m, sd_bus_error *error) {
        uint64_t now = now_usec();
        int r;

        b->plan_tokens += (double) (now - b->plan_tokens_at) / 1e6 * BUS_PLAN_PER_SEC;
        if (b->plan_tokens > BUS_PLAN_BURST)
                b->plan_tokens = BUS_PLAN_BURST;
        b->plan_tokens_at = now;
        if (b->plan_tokens >= 1) {
                b->plan_tokens -= 1;
                return 0;
        }
        r = bus_sender_privileged(b, m);
        if (r > 0)
                return 0;
        return bus_error_setf(error, -EBUSY, "Too many dry-run plans (at most %d a second for unprivileged callers); try again shortly",
                              BUS_PLAN_PER_SEC);
}

int bus_method_plan(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        Bus *b = userdata;
        int r;

        r = plan_take_token(b, m, error);
        if (r < 0)
                return r;
        r = manager_plan_now(b->manager, &plan);
        if (r < 0)
                return bus_error_setf(error, r, "Failed to plan: %s", strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = BUS_APPEND_RECORDS(reply, plan->actions, plan->n_actions, bus_append_action_record);
        if (r >= 0)
                r = BUS_APPEND_RECORDS(reply, plan->notes, plan->n_notes, bus_append_note_record);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Runs the RT host check now. It reads a few files per RT CPU, so it shares the dry runs' token bucket. */
int bus_method_check_host(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        const HostCheck *hc;
        Bus *b = userdata;
        int r;

        r = plan_take_token(b, m, error);
        if (r < 0)
                return r;
        r = manager_check_rt_host(b->manager, &hc);
        if (r < 0)
                return bus_error_setf(error, r, "Failed to check the host: %s", strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = BUS_APPEND_RECORDS(reply, hc->findings, hc->n, bus_append_host_finding_record);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Returns the last period as the sampler made it. It has every sample, with NaN where a sample had no value. */
int bus_method_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        Bus *b = userdata;
        const MetricSnapshot *snap = manager_metrics(b->manager);
        int r;

        if (!snap)
                return bus_error_setf(error, -ENOSTR, "Monitoring is off (monitor_interval_sec = 0) or has no sample yet");
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "t", snap->period_usec);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sa{ss}d)");
        for (size_t i = 0; r >= 0 && i < snap->n_samples; i++) {
                const MetricSample *s = &snap->samples[i];

                r = sd_bus_message_open_container(reply, 'r', "sa{ss}d");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "s", s->name);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'a', "{ss}");
                for (unsigned k = 0; r >= 0 && k < s->n_labels; k++)
                        r = sd_bus_message_append(reply, "{ss}", metric_label_name_to_string(s->labels[k].name),
                                                  s->labels[k].value);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "d", s->value);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
