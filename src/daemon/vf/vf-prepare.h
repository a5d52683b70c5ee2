/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-prepare.h — a VF's link settings, applied before the VF goes into a tenant's guest */
#pragma once

#include "sriovd/core/inventory.h"
#include "sriovd/core/policy.h"
#include "sriovd/shared/pci-set.h"
#include "apply/apply.h"
#include "tenants/tenants.h"

/*
 * Apply vf's link settings through k before vf goes into tenant's guest, rather than in the next
 * cycle. The settings are c's clean baseline and the tenant's own. f holds the tenant's MAC and
 * VLAN. inv is the inventory that places the tenants, and may be NULL. A PF that refuses VF
 * link settings for good is added to vf_link_unsupported, and a PF already there is planned
 * without them. Returns how many actions were applied. It returns 0 when there is nothing to
 * change, or when the netdevs are not this host's. It returns a negative errno when an action
 * failed. The failure is logged with the tenant and the VF, and the next cycle retries.
 */
int vf_prepare(Kernel *k, const Config *c, const Inventory *inv, PciSet *vf_link_unsupported, const char *tenant,
               const char *vf, const TenantNicFacts *f);
