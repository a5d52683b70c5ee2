/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-placement.c — where an RT guest's threads and memory go, from its booked RT CPUs, without I/O */

#include <string.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/core/plan.h"

static int cpu_node(const Inventory *inv, unsigned cpu) {
        for (unsigned n = 0; inv && n < inv->topo.n_nodes; n++)
                if (cpuset_has(&inv->topo.node_cpus[n], cpu))
                        return (int) n;
        return -1;
}

/* The housekeeping CPUs of node. All of them are used if the node has none, or if the node is unknown. */
static CpuSet node_housekeeping(const Inventory *inv, const HostCpus *hc, int node) {
        CpuSet local;

        if (node < 0 || (unsigned) node >= inv->topo.n_nodes)
                return hc->housekeeping;
        cpuset_and(&local, &hc->housekeeping, &inv->topo.node_cpus[node]);
        return cpuset_is_empty(&local) ? hc->housekeeping : local;
}

int guest_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                    unsigned n_rt, GuestPlacement *ret) {
        GuestPlacement p = { .memory_node = -1, .node = -1 };
        HostCpus hc;

        if (!inv || !cfg || !cls || !ret || !cls->vcpu_pin_rt || n_rt > ALLOC_RT_CPUS_MAX || (n_rt > 0 && !rt))
                return -EINVAL;
        host_cpus(inv, cfg, &hc);
        p.n_rt = n_rt;
        memcpy_safe(p.rt_cpus, rt, n_rt * sizeof(uint16_t));
        p.node = n_rt > 0 ? cpu_node(inv, rt[0]) : -1;

        /* The housekeeping work stays beside the RT vCPU, on the same node but on other cores. */
        p.housekeeping = node_housekeeping(inv, &hc, p.node);
        if (cpuset_is_empty(&p.housekeeping))
                return -EINVAL;

        /* Only vCPUs that own an RT CPU run at FIFO, because a spinning FIFO vCPU starves a shared core. */
        if (cls->vcpu_fifo_priority > 0)
                p.fifo_priority = n_rt > 0 ? cls->vcpu_fifo_priority : -1;
        /* Binding the memory to one node matters only on a host with more than one node. */

        if (p.node >= 0 && inv->topo.n_nodes > 1)
                p.memory_node = p.node;
        *ret = p;
        return 0;
}

int guest_placement_vcpu_cpu(const GuestPlacement *p, unsigned i) {
        return i < p->n_rt ? p->rt_cpus[i] : -1;
}

bool vhost_placement(const Inventory *inv, const Config *cfg, const TenantClass *cls, const uint16_t *rt,
                     unsigned n_rt, int numa_node, VhostPlacement *ret) {
        VhostPlacement p = { .fifo_priority = cls ? cls->vhost_priority : 0 };
        HostCpus hc;

        if (!inv || !cfg || !cls || (cls->vhost_cpus == VHOST_CPUS_LEAVE && cls->vhost_priority == 0))
                return false;
        if (cls->vhost_cpus == VHOST_CPUS_RT && n_rt > 0 && rt) {
                for (unsigned i = 0; i < n_rt; i++)
                        cpuset_add(&p.cpus, rt[i]);
                p.pin = true;
        } else if (cls->vhost_cpus != VHOST_CPUS_LEAVE) {
                host_cpus(inv, cfg, &hc);
                p.cpus = node_housekeeping(inv, &hc, n_rt > 0 && rt ? cpu_node(inv, rt[0]) : numa_node);
                p.pin = !cpuset_is_empty(&p.cpus);
        }
        *ret = p;
        return true;
}
