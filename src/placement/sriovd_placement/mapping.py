# SPDX-License-Identifier: LGPL-2.1-or-later
# mapping.py — sriovd's figures as Placement providers, and allocations as tenants: pure, no I/O.
import re
import uuid

# Fixed forever: the PF providers' UUIDs derive from it, so a restart finds its own providers.
NAMESPACE = uuid.UUID("5d0f3a52-8e0c-4b7e-9a43-6f1c2b9d7e21")

VF = "CUSTOM_SRIOVD_VF"
TAG_PREFIX = "CUSTOM_SRIOVD_C_"
CLASS_TRAIT_PREFIX = "CUSTOM_SRIOVD_CLASS_"
NUMA_TRAIT_PREFIX = "CUSTOM_SRIOVD_NUMA_"
OWNER = "placement"
# The tag inventory of a class that does not hold VFs: sriovd's tenant limit, when it gives none.
DEFAULT_MAX_TENANTS = 16384

_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def custom_name(name):
    """A class name as a Placement name part: upper case, every character outside [A-Z0-9] as _."""
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def tag_class(name):
    return TAG_PREFIX + custom_name(name)


def class_trait(name):
    return CLASS_TRAIT_PREFIX + custom_name(name)


def numa_trait(node):
    return NUMA_TRAIT_PREFIX + str(node)


def provider_name(compute_name, pf):
    return f"{compute_name}:sriovd:{pf}"


def provider_prefix(compute_name):
    return f"{compute_name}:sriovd:"


def provider_uuid(compute_uuid, pf):
    return str(uuid.uuid5(NAMESPACE, f"{compute_uuid}/{pf}"))


def is_consumer_uuid(s):
    return bool(_UUID_RE.match(s))


def desired_tenants(allocations, tag_to_class):
    """Which tenant each consumer should be, from the allocations against this host's providers.

    allocations: {pf: {consumer: {resource class: amount}}}; tag_to_class: {tag resource: class}.
    Returns ({consumer: (pf, class)}, {consumer: reason}) where the second names the consumers
    that cannot become a tenant and why.
    """
    want, bad = {}, {}
    for pf, consumers in allocations.items():
        for consumer, resources in consumers.items():
            tags = [r for r in resources if r.startswith(TAG_PREFIX)]
            if not is_consumer_uuid(consumer):
                bad[consumer] = "its consumer is not a lower-case UUID, so it names no libvirt domain"
            elif consumer in want or consumer in bad:
                bad[consumer] = "it has allocations on more than one PF of this host; one tenant has one PF"
                want.pop(consumer, None)
            elif len(tags) != 1:
                bad[consumer] = (f"it has {len(tags)} {TAG_PREFIX}* resources on PF {pf}; "
                                 "exactly one names the tenant's class")
            elif tags[0] not in tag_to_class:
                bad[consumer] = f"{tags[0]} on PF {pf} is no class sriovd knows"
            else:
                want[consumer] = (pf, tag_to_class[tags[0]])
    return want, bad


def inventories(pf, classes, consumers, tenants, max_tenants):
    """The inventories of a PF's provider.

    pf: the PF's figures (vf_usable, vf_free, vf_preemptible, class_available); classes:
    {class: vnic}; consumers: the allocations on the provider, {consumer: {rc: amount}};
    tenants: sriovd's tenants by id. A VF is counted once, here, as CUSTOM_SRIOVD_VF: the free
    capacity Placement sees is what a new sriov-required tenant could get now, less what
    Placement already granted and sriovd has not served yet. VFs held by tenants that did not
    come through Placement are reserved.
    """
    address = pf["address"]
    used = sum(r.get(VF, 0) for r in consumers.values())
    pending = sum(r.get(VF, 0) for c, r in consumers.items() if not _served(tenants.get(c), address))
    avail = max(0, pf["vf_free"] + pf["vf_preemptible"] - pending)
    inv = {}
    total = pf["vf_usable"]
    if total == 0 and used > 0:
        # An inventory in use cannot go; capacity 0 keeps its allocations and offers nothing more.
        total = used
    if total > 0:
        reserved = min(total, max(0, total - used - avail))
        inv[VF] = {"total": total, "reserved": reserved}
    for name, vnic in sorted(classes.items()):
        tag = tag_class(name)
        used_c = sum(r.get(tag, 0) for r in consumers.values())
        if vnic == "sriov-required":
            pending_c = sum(r.get(tag, 0) for c, r in consumers.items() if not _served(tenants.get(c), address))
            total = used_c + max(0, pf["class_available"].get(name, 0) - pending_c)
        else:
            total = max(max_tenants, used_c)
        if total > 0:
            inv[tag] = {"total": total, "reserved": 0}
    return inv


def _served(tenant, pf):
    """Whether sriovd holds a VF of this PF for the tenant."""
    return tenant is not None and tenant.get("kind") == "vf" and tenant.get("pf") == pf


def same_inventories(current, want):
    """Whether Placement's inventories already say what we want (only the fields we set)."""
    if set(current) != set(want):
        return False
    return all(current[rc].get(k) == v for rc, inv in want.items() for k, v in inv.items())
