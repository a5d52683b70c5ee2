/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-tune.c — the RSS channels, coalescing and offloads of every netdev the host sees, per tenant class */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan-internal.h"

static const char *const offload_names[_OFFLOAD_MAX] = { "tso", "gso", "gro", "lro" };

/* What the class, and the tenant's own override, want. Returns false when they want nothing. */
static bool coalesce_want(const TenantClass *cls, const PlanAllocation *alloc, CoalesceChange *ret) {
        *ret = COALESCE_CHANGE_NONE;
        if (!cls)
                return false;
        ret->rx_usecs = alloc && alloc->have_coalesce ? alloc->rx_usecs : cls->coalesce_rx_usecs;
        ret->tx_usecs = alloc && alloc->have_coalesce ? alloc->tx_usecs : cls->coalesce_tx_usecs;
        ret->rx_frames = cls->coalesce_rx_frames;
        ret->tx_frames = cls->coalesce_tx_frames;
        ret->adaptive_rx = cls->adaptive_rx;
        ret->adaptive_tx = cls->adaptive_tx;
        return true;
}

static bool offloads_want(const TenantClass *cls, int ret[_OFFLOAD_MAX]) {
        const Tristate t[_OFFLOAD_MAX] = {
                cls ? cls->offload_tso : TRISTATE_LEAVE, cls ? cls->offload_gso : TRISTATE_LEAVE,
                cls ? cls->offload_gro : TRISTATE_LEAVE, cls ? cls->offload_lro : TRISTATE_LEAVE,
        };
        bool any = false;

        for (size_t o = 0; o < _OFFLOAD_MAX; o++) {
                ret[o] = t[o];
                any = any || t[o] != TRISTATE_LEAVE;
        }
        return any;
}

static void plan_coalesce(PlanBuilder *b, const char *addr, int ifindex, const NetdevTune *tune,
                          const TenantClass *cls, const PlanAllocation *alloc) {
        CoalesceChange want;
        Action *a;

        if (!coalesce_want(cls, alloc, &want))
                return;
        if (pci_addr_in(b->ctx->coalesce_unsupported, b->ctx->n_coalesce_unsupported, addr)) {
                plan_add_note(b, NOTE_WARNING, addr, "the driver refused coalescing changes; not tried again "
                              "until reload or the device is re-added");
                return;
        }
        if (tune->known && tune->coalesce_error == -EOPNOTSUPP) {
                /* The driver has no coalescing, so this is a note once per cycle, never a retried write. */
                plan_add_note(b, NOTE_WARNING, addr, "coalescing not supported by the driver (EOPNOTSUPP); "
                              "class %s's %lu/%lu us window not applied", cls->name, want.rx_usecs, want.tx_usecs);
                return;
        }
        if (tune->known && tune->coalesce_error < 0) {
                plan_add_note(b, NOTE_WARNING, addr, "coalescing could not be read (%s); retried next cycle",
                              strerror(-tune->coalesce_error));
                return;
        }
        if (tune->known) {
                /*
                 * A parameter that the driver lacks, and so did not report, would make the kernel
                 * refuse the whole request.
                 */
                char lacks[96] = "";
                size_t k = 0;

                for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                        if (coalesce_field_get(&want, i) < 0 || coalesce_field_get(&tune->coalesce, i) >= 0)
                                continue;
                        coalesce_field_set(&want, i, -1);
                        strjoin_appendf(lacks, sizeof(lacks), &k, "%s", coalesce_field_names[i]);
                }
                if (k > 0)
                        plan_add_note(b, NOTE_INFO, addr, "the driver has no %s: left out of class %s's window",
                                      lacks, cls->name);
                if (coalesce_diff(&tune->coalesce, &want, &want) == 0)
                        return;
        }

        a = plan_add_action(b, ACTION_SET_COALESCE, addr, 0, 0);
        if (!a)
                return;
        a->netdev_ifindex = ifindex;
        a->tune_before_known = tune->known;
        a->coalesce_before = tune->coalesce;
        a->coalesce_after = want;
        snprintf(a->effect, sizeof(a->effect), "class %.24s%s%.40s%s", cls->name, alloc ? ", tenant " : "",
                 alloc ? alloc->tenant : "", alloc && alloc->have_coalesce ? " (own window)" : "");
}

static void plan_offloads(PlanBuilder *b, const char *addr, int ifindex, const NetdevTune *tune,
                          const TenantClass *cls) {
        int want[_OFFLOAD_MAX];
        bool any = false;
        Action *a;

        if (!offloads_want(cls, want))
                return;
        if (pci_addr_in(b->ctx->offloads_unsupported, b->ctx->n_offloads_unsupported, addr)) {
                plan_add_note(b, NOTE_WARNING, addr, "the driver refused offload changes; not tried again "
                              "until reload or the device is re-added");
                return;
        }
        if (tune->known && tune->features_error < 0) {
                plan_add_note(b, NOTE_WARNING, addr, "offloads could not be read (%s)", strerror(-tune->features_error));
                return;
        }
        for (size_t o = 0; o < _OFFLOAD_MAX; o++) {
                const Features *f = &tune->features;

                if (want[o] < 0 || !tune->known) {
                        any = any || want[o] >= 0;
                        continue;
                }
                if (f->active[o] == want[o] || (f->active[o] < 0 && want[o] == 0)) {
                        want[o] = -1;   /* It is already so. A device without the offload is already "off". */
                        continue;
                }
                if (f->active[o] < 0 || !f->changeable[o]) {
                        plan_add_note(b, NOTE_WARNING, addr, "class %s wants %s %s, but the device %s it",
                                      cls->name, offload_names[o], want[o] ? "on" : "off",
                                      f->active[o] < 0 ? "does not have" : "cannot change");
                        want[o] = -1;
                        continue;
                }
                any = true;
        }
        if (!any)
                return;

        a = plan_add_action(b, ACTION_SET_OFFLOADS, addr, 0, 0);
        if (!a)
                return;
        a->netdev_ifindex = ifindex;
        a->tune_before_known = tune->known;
        a->features_before = tune->features;
        memcpy(a->offloads_after, want, sizeof(want));
        snprintf(a->effect, sizeof(a->effect), "class %s", cls->name);
}

/*
 * R9 in docs/REQUIREMENTS.md: an RT NIC keeps few queues, the others spread over the
 * housekeeping CPUs. The driver answers a change by requesting its IRQs anew. Once the change is
 * done, manager_apply() drops what the pass planned for the old IRQs, and the cycle's next pass
 * pins the new ones. If the change fails, the old IRQs are pinned as planned.
 */
static void plan_channels(PlanBuilder *b, const PlanNetdev *nd) {
        const NetdevTune *tune = nd->tune;
        const Channels *c = &tune->channels;
        static const char *const names[] = { "rx", "tx", "combined" };
        ChannelsChange want;
        long *w[3] = { &want.rx, &want.tx, &want.combined };
        const long cur[3] = { c->rx, c->tx, c->combined }, max[3] = { c->max_rx, c->max_tx, c->max_combined };
        bool any = false;
        Action *a;

        if (!tenant_class_wants_channels(nd->cls))
                return;
        want = nd->cls->channels;
        if (tune->known && tune->channels_error == -EOPNOTSUPP) {
                plan_add_note(b, NOTE_INFO, nd->addr, "the driver has no channel counts (EOPNOTSUPP); class %s's "
                              "channels not applied", nd->cls->name);
                return;
        }
        if (tune->known && tune->channels_error < 0) {
                plan_add_note(b, NOTE_WARNING, nd->addr, "channels could not be read (%s); retried next cycle",
                              strerror(-tune->channels_error));
                return;
        }
        if (!tune->known)
                return;   /* Not read, as on a fixture root, so there is nothing to compare with or send. */
        if (pci_addr_in(b->ctx->channels_unsupported, b->ctx->n_channels_unsupported, nd->addr)) {
                plan_add_note(b, NOTE_WARNING, nd->addr, "the driver refused channel changes; not tried again "
                              "until reload or the device is re-added");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(w); i++) {
                if (*w[i] < 0)
                        continue;
                if (max[i] <= 0 || *w[i] > max[i]) {
                        /* Asking anyway would make the kernel refuse the whole request, the other counts too. */
                        plan_add_note(b, NOTE_ERROR, nd->addr, "class %s wants %ld %s channels; %s has %s%ld",
                                      nd->cls->name, *w[i], names[i], nd->name, max[i] <= 0 ? "none" : "at most ",
                                      max[i] <= 0 ? 0 : max[i]);
                        *w[i] = -1;
                        continue;
                }
                if (cur[i] == *w[i]) {
                        *w[i] = -1;
                        continue;
                }
                any = true;
        }
        if (!any)
                return;
        a = plan_add_action(b, ACTION_SET_CHANNELS, nd->addr, 0, 0);
        if (!a)
                return;
        a->netdev_ifindex = nd->ifindex;
        strscpy(a->netdev, sizeof(a->netdev), nd->name);
        a->tune_before_known = tune->known;
        a->channels_before = *c;
        a->channels_after = want;
        snprintf(a->effect, sizeof(a->effect), "class %.32s; its new IRQs pinned next pass",
                 nd->cls->name);
}

typedef enum TunePass {
        TUNE_CHANNELS,
        TUNE_COALESCE,
        TUNE_OFFLOADS,
        _TUNE_PASS_MAX,
} TunePass;

static void tune_netdev(PlanBuilder *b, const PlanNetdev *nd, void *userdata) {
        TunePass pass = *(const TunePass *) userdata;

        if (nd->ifindex <= 0) {
                if (nd->alloc && pass == TUNE_COALESCE && nd->cls)
                        plan_add_note(b, NOTE_INFO, nd->addr,
                                      "tenant %s: coalescing not enforceable from the host: the VF has no host "
                                      "netdev (passed through); the guest's driver decides",
                                      nd->alloc->tenant);
                return;
        }
        switch (pass) {
        case TUNE_CHANNELS:
                plan_channels(b, nd);
                break;
        case TUNE_COALESCE:
                plan_coalesce(b, nd->addr, nd->ifindex, nd->tune, nd->cls, nd->alloc);
                break;
        case TUNE_OFFLOADS:
                plan_offloads(b, nd->addr, nd->ifindex, nd->tune, nd->cls);
                break;
        case _TUNE_PASS_MAX:
                break;
        }
}

void plan_tune(PlanBuilder *b) {
        /* One pass per kind keeps the plan ordered by kind, with channels before anything that names the IRQs. */

        for (TunePass pass = 0; pass < _TUNE_PASS_MAX; pass++)
                plan_for_each_netdev(b, tune_netdev, &pass);
}

char *tune_format(const Action *a, bool after, char *buf, size_t size) {
        size_t k = 0;

        buf[0] = 0;
        if (!after && !a->tune_before_known) {
                snprintf(buf, size, "?");
                return buf;
        }
        if (a->kind == ACTION_SET_CHANNELS) {
                const ChannelsChange *c = &a->channels_after;
                const Channels *was = &a->channels_before;

                if (c->rx >= 0)
                        strjoin_appendf(buf, size, &k, "rx %ld", after ? c->rx : was->rx);
                if (c->tx >= 0)
                        strjoin_appendf(buf, size, &k, "tx %ld", after ? c->tx : was->tx);
                if (c->combined >= 0)
                        strjoin_appendf(buf, size, &k, "combined %ld", after ? c->combined : was->combined);
                return buf;
        }
        if (a->kind == ACTION_SET_NAPI_PARAMS)
                return napi_params_format(after ? &a->napi_after : &a->napi_before, &a->napi_after, buf, size);
        if (a->kind == ACTION_SET_COALESCE) {
                for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                        long want = coalesce_field_get(&a->coalesce_after, i);
                        long v = after ? want : coalesce_field_get(&a->coalesce_before, i);
                        const char *name = coalesce_field_names[i];

                        if (want < 0)
                                continue;
                        if (v < 0)
                                strjoin_appendf(buf, size, &k, "%s n/a", name);
                        else if (coalesce_field_is_flag(i))
                                strjoin_appendf(buf, size, &k, "%s %s", name, v ? "on" : "off");
                        else
                                strjoin_appendf(buf, size, &k, "%s %ld", name, v);
                }
                return buf;
        }
        for (size_t o = 0; o < _OFFLOAD_MAX; o++) {
                int v;

                if (a->offloads_after[o] < 0)
                        continue;
                v = after ? a->offloads_after[o] : a->features_before.active[o];
                strjoin_appendf(buf, size, &k, "%s %s", offload_names[o], v > 0 ? "on" : v == 0 ? "off" : "absent");
        }
        return buf;
}
