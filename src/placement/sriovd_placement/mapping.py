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


def drop_colliding(kinds):
    """The classes of kinds ({class: vnic}) whose Placement names no other class has.

    Two classes with one resource class would share a tag, so an allocation could not say which
    class it is for: every class of such a set is dropped. Returns (the kept {class: vnic}, the
    dropped sets, each a sorted list).
    """
    by_custom = {}
    for n in kinds:
        by_custom.setdefault(custom_name(n), []).append(n)
    clashes = sorted(sorted(g) for g in by_custom.values() if len(g) > 1)
    dropped = {n for g in clashes for n in g}
    return {n: k for n, k in kinds.items() if n not in dropped}, clashes


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


def rt_bound(records):
    """The classes whose guests book RT CPUs and are refused when none is free, from Classes."""
    return {n for n, r in (records or {}).items() if r.get("rt_cpus", 0) > 0 and not r.get("rt_fallback", False)}


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


def inventories(pf, classes, consumers, tenants, max_tenants, rt_bound=()):
    """The inventories of one PF's provider, as if it were the host's only PF."""
    return host_inventories({pf["address"]: pf}, classes, {pf["address"]: consumers}, tenants, max_tenants,
                            rt_bound)[pf["address"]]


def host_inventories(pfs, classes, allocations, tenants, max_tenants, rt_bound=()):
    """The inventories of every PF's provider, computed together.

    pfs: {address: the PF's figures (numa_node, vf_usable, vf_free, vf_preemptible,
    class_available)}; classes: {class: vnic}; allocations: {address: {consumer: {rc: amount}}};
    tenants: sriovd's tenants by id; rt_bound: the classes that book RT CPUs and do not fall back.
    Returns {address: {rc: inventory}}.

    A VF is counted once, per PF, as CUSTOM_SRIOVD_VF: the free capacity Placement sees is what a
    new sriov-required tenant could get now, less what Placement already granted and sriovd has
    not served yet. VFs held by tenants that did not come through Placement are reserved.

    A sriov-required class's ClassAvailable holds rooms that several PFs share: the free RT CPUs
    of the PF's node, and the tenant limit of the host. Every PF reports such a room in full, so
    each room is shared out once, in PF address order.
    """
    out = {}
    for address in sorted(pfs):
        out[address] = _vf_inventory(pfs[address], allocations.get(address, {}), tenants)
    # The host's tenant limit: Placement's consumers that sriovd has no tenant for yet take a place too.
    waiting = {c for consumers in allocations.values() for c in consumers if c not in tenants}
    tenant_room = max(0, max_tenants - len(tenants) - len(waiting))
    for name, vnic in sorted(classes.items()):
        tag = tag_class(name)
        used = {a: sum(r.get(tag, 0) for r in allocations.get(a, {}).values()) for a in pfs}
        if vnic != "sriov-required":
            for a in pfs:
                total = max(max_tenants, used[a])
                if total > 0:
                    out[a][tag] = {"total": total, "reserved": 0}
            continue
        pending = {a: sum(r.get(tag, 0) for c, r in allocations.get(a, {}).items()
                          if not _served(tenants.get(c), a)) for a in pfs}
        avail = {a: pfs[a]["class_available"].get(name, 0) for a in pfs}
        # Each room: [its PFs, what is left of it]. The tenant limit is the host's.
        rooms = [[set(pfs), tenant_room]]
        if name in rt_bound:
            rooms += _rt_rooms(pfs, avail, pending)
        for a in sorted(pfs):
            free = max(0, avail[a] - pending[a])
            for room in rooms:
                if a in room[0]:
                    free = min(free, room[1])
            for room in rooms:
                if a in room[0]:
                    room[1] -= free
            total = used[a] + free
            if total > 0:
                out[a][tag] = {"total": total, "reserved": 0}
    return out


def _rt_rooms(pfs, avail, pending):
    """The RT CPU rooms of a class: one per NUMA node, each PF's ClassAvailable bounded by it.

    A PF of unknown node books on the node with the most bookable RT CPUs, which may be any
    node's, so then the host is one room.
    """
    if any(pfs[a].get("numa_node", -1) < 0 for a in pfs):
        groups = [set(pfs)]
    else:
        by_node = {}
        for a in pfs:
            by_node.setdefault(pfs[a]["numa_node"], set()).add(a)
        groups = list(by_node.values())
    # Every PF of a node reports the node's room: the largest report is the room, less the
    # claims granted on any of its PFs that have not booked their RT CPUs yet.
    return [[g, max(0, max(avail[a] for a in g) - sum(pending[a] for a in g))] for g in groups]


def _vf_inventory(pf, consumers, tenants):
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
    return inv


def _served(tenant, pf):
    """Whether sriovd holds a VF of this PF for the tenant."""
    return tenant is not None and tenant.get("kind") == "vf" and tenant.get("pf") == pf


def same_inventories(current, want):
    """Whether Placement's inventories already say what we want (only the fields we set)."""
    if set(current) != set(want):
        return False
    return all(current[rc].get(k) == v for rc, inv in want.items() for k, v in inv.items())
