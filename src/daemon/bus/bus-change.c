/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-change.c — the methods that change state: each checks the caller first, then every argument */

#include <errno.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

int bus_method_allocate(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *tenant, *class_name, *domain;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char reason[256] = "", mac[MAC_STR_MAX], done[192];
        TenantOptions opts;
        TenantInfo t;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "sss", &tenant, &class_name, &domain);
        if (r < 0)
                return r;
        r = bus_check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        if (!bus_class_name_valid(class_name))
                return bus_error_setf(error, -EINVAL, "Invalid class name \"%.64s\"; expected [a-z0-9][a-z0-9_-]{0,62}",
                                      class_name);
        if (!bus_domain_valid(domain))
                return bus_error_setf(error, -EINVAL,
                                      "Invalid domain name; expected at most %d of the characters A-Za-z0-9._+:@-",
                                      BUS_DOMAIN_MAX);
        r = bus_read_allocate_options(m, &opts, error);
        if (r < 0)
                return r;
        if (opts.pin_pf[0] && !(manager_inventory(b->manager) && inventory_find_pf(manager_inventory(b->manager), opts.pin_pf)))
                return bus_error_setf(error, -ENODEV, "Option pf: %s is not a PF that sriovd manages", opts.pin_pf);

        r = manager_get_tenant(b->manager, tenant, &t);
        /* A new tenant may not go beyond the configured limit, but an existing tenant may still change. */
        if (r == -ENOENT && manager_n_tenants(b->manager) >= manager_config(b->manager)->max_tenants)
                return bus_error_setf(error, -EUSERS, "Tenant limit of %u reached", manager_config(b->manager)->max_tenants);
        /* Controllers retry. The same request again gets the same answer, without a save or a cycle. */
        if (r >= 0 && streq(t.class_name, class_name) && streq(t.domain, domain) && t.numa_node == opts.numa_node &&
            t.vlan == opts.vlan && (!opts.have_mac || streq(t.mac, mac_format(opts.mac, mac))) &&
            streq(t.pin_pf, opts.pin_pf) && streq(t.domain_uuid, opts.domain_uuid) && streq(t.owner, opts.owner) &&
            tx_rates_equal(&t.tx_rates, &opts.tx_rates) &&
            streq(t.state, "allocated")) {
                /* The tenant may be part of the group that is not written yet. So the reply waits for that write. */
                r = bus_tenant_record_reply(m, &t, &reply);
                if (r < 0)
                        return r;
                return bus_reply_when_saved(b, m, reply, NULL, NULL, "Allocation not saved, nothing changed", NULL);
        }

        r = manager_allocate(b->manager, tenant, class_name, domain, &opts, &t, reason, sizeof(reason));
        switch (r) {
        case 0:
                break;
        case -ENOENT:
                return bus_error_setf(error, -ENOENT, "No tenant class \"%s\"", class_name);
        case -ENOSPC:
                return bus_error_setf(error, -ENOSPC, "%s", reason[0] ? reason : "no NIC available");
        case -EXFULL:
                return bus_error_setf(error, -EXFULL, "%s", reason[0] ? reason : "no RT CPU free");
        case -EINVAL:
                return bus_error_setf(error, -EINVAL, "Invalid tenant, domain, NUMA node, MAC, VLAN, pf, domain_uuid or owner");
        case -EUSERS:
                return bus_error_setf(error, -EUSERS, "Too many tenants");
        case -EAGAIN:
                return bus_error_setf(error, -EAGAIN, "Tenants are not placed yet; try again shortly");
        default:
                return bus_error_setf(error, -EIO, "Allocation not saved, nothing changed: %s", strerror(-r));
        }
        r = bus_tenant_record_reply(m, &t, &reply);
        if (r < 0)
                return r;
        snprintf(done, sizeof(done), "D-Bus: allocated %s to tenant %s (class %s)", t.vf[0] ? t.vf : t.kind, tenant,
                 class_name);
        /* A new domain or MAC is not an allocator decision, so no event marks the tenant.
         * Passing the tenant here marks it in any case. */
        return bus_reply_when_saved(b, m, reply, tenant, t.vf, "Allocation not saved, nothing changed", done);
}

int bus_method_release(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char failed[128], done[128];
        const char *tenant;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "s", &tenant);
        if (r < 0)
                return r;
        r = bus_check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        r = manager_release(b->manager, tenant);
        if (r == -ENOENT)
                return bus_error_setf(error, -ESRCH, "No tenant \"%s\"", tenant);
        if (r < 0)
                return bus_error_setf(error, -EIO, "Release of %s not saved: %s", tenant, strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        snprintf(failed, sizeof(failed), "Release of %s not saved", tenant);
        snprintf(done, sizeof(done), "D-Bus: released tenant %s", tenant);
        return bus_reply_when_saved(b, m, reply, tenant, NULL, failed, done);
}

int bus_method_set_coalesce(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char failed[128];
        const char *tenant;
        uint32_t rx, tx;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "suu", &tenant, &rx, &tx);
        if (r < 0)
                return r;
        r = bus_check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        r = manager_set_coalesce(b->manager, tenant, rx, tx);
        if (r == -ENOENT)
                return bus_error_setf(error, -ESRCH, "No tenant \"%s\"", tenant);
        if (r == -EINVAL)
                return bus_error_setf(error, -EINVAL, "Coalescing %u/%u us out of range 0..100000", rx, tx);
        if (r == -EMEDIUMTYPE)
                return bus_error_setf(error, -EMEDIUMTYPE,
                                      "Tenant %s is on virtio-net, not a VF: coalescing is set on a VF's netdev, "
                                      "and the virtio-net host side has no interrupt coalescing sriovd manages; "
                                      "nothing changed (an override it had on a VF is kept for its next VF)",
                                      tenant);
        if (r < 0)
                return bus_error_setf(error, -EIO, "Coalescing of %s not saved: %s", tenant, strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        snprintf(failed, sizeof(failed), "Coalescing of %s not saved", tenant);
        return bus_reply_when_saved(b, m, reply, tenant, NULL, failed, NULL);
}

int bus_method_force_num_vfs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *pf;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "s", &pf);
        if (r < 0)
                return r;
        if (!pci_addr_valid(pf))
                return bus_error_setf(error, -EINVAL, "Invalid PCI address \"%.16s\"; expected e.g. 0000:41:00.0", pf);
        r = manager_force_num_vfs(b->manager, pf);
        if (r == -ENODEV)
                return bus_error_setf(error, -ENODEV, "No managed PF %s", pf);
        if (r < 0)
                return bus_error_setf(error, r, "Failed to force the VF count of %s: %s", pf, strerror(-r));
        log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.pf = pf), "D-Bus: VF count change of %s forced", pf);
        return sd_bus_reply_method_return(m, NULL);
}

/* Runs a cycle now. Whatever the cycle finds different is drift, whether it was repaired or is still there. */
int bus_method_verify(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        Bus *b = userdata;
        CycleResult res = {};
        const Plan *plan;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = manager_run_cycle_now(b->manager, &res);
        if (r < 0)
                return bus_error_setf(error, -EIO, "The host could not be observed: %s", strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                /* An action skipped on purpose is not drift. Fixture threads and a missing netlink are such cases. */
                r = sd_bus_message_append(reply, "uuuu", res.n_actions - res.n_skipped, res.n_done, res.n_failed,
                                          res.n_drift);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        plan = manager_plan(b->manager);
        for (size_t i = 0; r >= 0 && plan && i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                bool irq = a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD;
                char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], what[KTHREAD_NAME_MAX + 16], line[CPUSET_LIST_MAX * 2 + 176];

                if (a->skipped)
                        continue;
                if (irq)
                        snprintf(what, sizeof(what), " IRQ %u", a->irq);
                else if (a->thread_name[0])
                        snprintf(what, sizeof(what), " %s", a->thread_name);
                else
                        what[0] = 0;
                snprintf(line, sizeof(line), "%s %s%s: %s -> %s (%s)", action_kind_to_string(a->kind),
                         a->target[0] ? a->target : "host", what,
                         action_format_value(a, false, before, sizeof(before)),
                         action_format_value(a, true, after, sizeof(after)),
                         a->result > 0 ? "repaired" : a->result < 0 ? strerror(-a->result) : "already so");
                r = sd_bus_message_append(reply, "s", line);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* A reply carries at most this many bytes of the FILE:LINE list. The journal has all of it. */
#define RELOAD_ERRORS_MAX 8192

/*
 * Reload is synchronous. The reply comes after the new policy is loaded and a cycle has applied
 * it. On errors, the reply is Failed and lists every FILE:LINE: mistake. So `sriovctl reload`,
 * which ExecReload= runs, can show the mistakes and fail the reload. The operator does not have
 * to dig in the journal.
 */
int bus_method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *errors = NULL;
        Bus *b = userdata;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        log_info("D-Bus: reload requested by %s", sd_bus_message_get_sender(m) ?: "?");
        r = manager_reload(b->manager, &errors);
        if (r < 0) {
                size_t n = errors ? strlen(errors) : 0;
                if (n == 0)
                        return bus_error_setf(error, -EIO, "The configuration could not be loaded (%s); "
                                              "the running one stays", strerror(-r));
                return bus_error_setf(error, -EIO, "The configuration has errors; the running one stays:\n%.*s%s",
                                      (int) MIN(n, (size_t) RELOAD_ERRORS_MAX), errors,
                                      n > RELOAD_ERRORS_MAX ? "\n... (the rest in the journal)" : "");
        }
        /*
         * The new policy can change what each PF offers, for example when [cpus] rt changes.
         * So its signals go first, as for any change, and a client that reads after the reply is
         * never ahead of them. The Manager's properties, Classes among them, are announced
         * even when the cycle could not run.
         */
        bus_announce_properties(b);
        bus_flush_now(b);
        return sd_bus_reply_method_return(m, NULL);
}
