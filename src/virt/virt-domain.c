/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-domain.c — what sriovd does to domains: lists them, attaches, detaches and swaps NICs, reads vCPUs and pins RT guests */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>

#include "virt-internal.h"

static inline void domain_freep(virDomainPtr *d) {
        if (*d)
                virDomainFree(*d);
}
#define _cleanup_domain_ _cleanup_(domain_freep)

/* A domain by UUID, for a tenant that a scheduler knows by its guest's UUID, or else by name. */
static int lookup(Virt *v, const char *name, virDomainPtr *ret, VirtError *err) {
        virConnectPtr conn;
        virDomainPtr d = NULL;
        int r;

        r = virt_conn(v, &conn, err);
        if (r < 0)
                return r;
        if (uuid_valid(name)) {
                d = virDomainLookupByUUIDString(conn, name);
                /* A domain may be named like a UUID, so a UUID that no domain has is tried as a name. */
                if (!d && virGetLastErrorCode() != VIR_ERR_NO_DOMAIN)
                        return virt_error_last(err, -EIO);
                if (d) {
                        *ret = d;
                        return 0;
                }
                virResetLastError();
        }
        d = virDomainLookupByName(conn, name);
        if (!d)
                return virt_error_last(err, -ENOENT);
        *ret = d;
        return 0;
}

static int is_active(virDomainPtr d, VirtError *err) {
        int r = virDomainIsActive(d);
        return r < 0 ? virt_error_last(err, -EIO) : r;
}

/* Gives LIVE|CONFIG for a running persistent domain, LIVE for a transient one and CONFIG for a shut off one. */
static int modify_flags(virDomainPtr d, unsigned *ret, VirtError *err) {
        int active, persistent;

        active = is_active(d, err);
        if (active < 0)
                return active;
        persistent = virDomainIsPersistent(d);
        if (persistent < 0)
                return virt_error_last(err, -EIO);
        *ret = (active ? VIR_DOMAIN_AFFECT_LIVE : 0) | (persistent || !active ? VIR_DOMAIN_AFFECT_CONFIG : 0);
        return active;
}

static int domain_info(virDomainPtr d, bool inactive, VirtDomainInfo *ret, VirtError *err) {
        _cleanup_free_ char *xml = NULL;
        int r;

        xml = virDomainGetXMLDesc(d, inactive ? VIR_DOMAIN_XML_INACTIVE : 0);
        if (!xml)
                return virt_error_last(err, -EIO);
        r = virt_domain_parse_xml(xml, ret);
        if (r < 0)
                return virt_error_set(err, r, "libvirt's XML of domain %s could not be parsed", virDomainGetName(d));
        return 0;
}

int virt_get_domain(Virt *v, const char *domain, VirtDomainInfo *ret, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return domain_info(d, false, ret, err);
}

int virt_domain_is_active(Virt *v, const char *domain, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return is_active(d, err);
}

_Static_assert(VIRT_UUID_STRING_MAX == VIR_UUID_STRING_BUFLEN, "virt.h's UUID size");

int virt_domain_uuid(Virt *v, const char *domain, char ret[static VIRT_UUID_STRING_MAX], VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        if (virDomainGetUUIDString(d, ret) < 0)
                return virt_error_last(err, -EIO);
        return 0;
}

int virt_domain_id(Virt *v, const char *domain, char ret_name[static VIRT_DOMAIN_NAME_MAX],
                   char ret_uuid[static VIRT_UUID_STRING_MAX], VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        const char *name;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        name = virDomainGetName(d);
        if (!name || virDomainGetUUIDString(d, ret_uuid) < 0)
                return virt_error_last(err, -EIO);
        strscpy(ret_name, VIRT_DOMAIN_NAME_MAX, name);
        return 0;
}

void virt_domain_list_free(VirtDomainInfo *d, size_t n) {
        for (size_t i = 0; i < n; i++)
                virt_domain_info_done(&d[i]);
        free(d);
}

int virt_list_domains(Virt *v, VirtDomainInfo **ret, size_t *ret_n, VirtError *err) {
        virDomainPtr *doms = NULL;
        VirtDomainInfo *list = NULL;
        virConnectPtr conn;
        size_t n = 0;
        int k, r;

        r = virt_conn(v, &conn, err);
        if (r < 0)
                return r;
        k = virConnectListAllDomains(conn, &doms, 0);
        if (k < 0)
                return virt_error_last(err, -EIO);

        list = calloc((size_t) k + 1, sizeof(*list));
        if (!list) {
                r = virt_error_set(err, -ENOMEM, "out of memory");
                goto finish;
        }
        for (int i = 0; i < k; i++) {
                r = domain_info(doms[i], false, &list[n], err);
                if (r == -ENOENT)
                        continue;  /* the domain was undefined after the listing, and its UNDEFINED event follows */
                if (r < 0)
                        goto finish;
                n++;
        }
        *ret = TAKE_PTR(list);
        *ret_n = n;
        r = 0;
finish:
        for (int i = 0; i < k; i++)
                virDomainFree(doms[i]);
        free(doms);
        if (list)
                virt_domain_list_free(list, n);
        return r;
}

/* ---- attach, detach, swap ---- */

static const char *nic_interface_type(VirtNicKind k) {
        switch (k) {
        case VIRT_NIC_VF_INTERFACE:
                return "hostdev";
        case VIRT_NIC_VIRTIO_NETWORK:
                return "network";
        case VIRT_NIC_VIRTIO_BRIDGE:
                return "bridge";
        case VIRT_NIC_VIRTIO_ETHERNET:
                return "ethernet";
        default:
                return NULL;
        }
}

/* Finds the NIC of d that is nic. A plain hostdev matches by its VF. An interface matches by MAC
 * and type, and a hostdev interface by its VF as well. */
static const VirtDomainNic *find_nic(const VirtDomainInfo *d, const VirtNic *nic) {
        const char *type = nic_interface_type(nic->kind);

        for (size_t i = 0; i < d->n_nics; i++) {
                const VirtDomainNic *x = &d->nics[i];

                if (nic->kind == VIRT_NIC_VF_HOSTDEV) {
                        if (x->kind == VIRT_DEV_HOSTDEV && streq(x->pci, nic->vf))
                                return x;
                        continue;
                }
                if (!streq(x->type, type))
                        continue;
                if (nic->kind == VIRT_NIC_VF_INTERFACE && !streq(x->pci, nic->vf))
                        continue;
                if (!nic->mac[0] || strcasecmp(x->mac, nic->mac) == 0)
                        return x;
        }
        return NULL;
}

/* Returns 1 when d holds nic, live or in its config, and copies the NIC's alias to ret_alias, which may be NULL. */
static int holds_now(virDomainPtr d, bool inactive, const VirtNic *nic, char *ret_alias, VirtError *err) {
        _cleanup_(virt_domain_info_done) VirtDomainInfo info = {};
        const VirtDomainNic *x;
        int r;

        r = domain_info(d, inactive, &info, err);
        if (r < 0)
                return r;
        x = find_nic(&info, nic);
        if (x && ret_alias)
                strcpy(ret_alias, x->alias);
        return !!x;
}

/* Replaces d's definition with xml, which is an edit of its inactive XML. */
static int redefine(virDomainPtr d, const char *xml, VirtError *err) {
        virDomainPtr nd = virDomainDefineXML(virDomainGetConnect(d), xml);

        if (!nd)
                return virt_error_last(err, -EIO);
        virDomainFree(nd);
        return 0;
}

/* Adds dev_xml to the <devices> of the inactive definition and defines it again, as a CONFIG attach does. */
static int define_with_device(virDomainPtr d, const char *dev_xml, VirtError *err) {
        _cleanup_free_ char *xml = NULL, *out = NULL;
        int r;

        /* Without SECURE, the definition comes without its secrets, such as VNC and SPICE passwords.
         * Defining it again would then drop them. */
        xml = virDomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml)
                return virt_error_last(err, -EIO);
        r = virt_domain_xml_add_device(xml, dev_xml, &out);
        if (r == -EINVAL)
                return virt_error_set(err, r, "domain XML without <devices>, or a device XML that does not parse");
        if (r < 0)
                return virt_error_set(err, r, "out of memory");
        r = redefine(d, out, err);
        return r < 0 ? r : 1;
}

/* Builds the NIC's device XML and the flags that the domain's state allows.
 * Returns whether the domain runs, or a negative errno. */
static int prepare(virDomainPtr d, const VirtNic *nic, char **ret_xml, unsigned *ret_flags, VirtError *err) {
        int r = virt_nic_xml(nic, ret_xml);

        if (r < 0)
                return virt_error_set(err, r, "invalid %s NIC description", virt_nic_kind_to_string(nic->kind) ?: "unknown");
        return modify_flags(d, ret_flags, err);
}

static int attach(virDomainPtr d, const VirtNic *nic, VirtError *err) {
        _cleanup_free_ char *xml = NULL;
        unsigned flags;
        int r, active;

        active = prepare(d, nic, &xml, &flags, err);
        if (active < 0)
                return active;
        /* The check looks at what the guest sees when it runs, and at the config otherwise. */
        r = holds_now(d, !active, nic, NULL, err);
        if (r != 0)
                return r < 0 ? r : 0;
        if (virDomainAttachDeviceFlags(d, xml, flags) < 0) {
                r = virt_error_last(err, -EIO);
                /* A driver without device attach, such as libvirt's test driver, still takes a new definition. */
                if (r == -EOPNOTSUPP && !active)
                        return define_with_device(d, xml, err);
                return r;
        }
        return 1;
}

static int detach(virDomainPtr d, const VirtNic *nic, VirtError *err) {
        _cleanup_free_ char *xml = NULL;
        char alias[VIRT_ALIAS_MAX] = "";
        unsigned flags;
        int r, active;

        active = prepare(d, nic, &xml, &flags, err);
        if (active < 0)
                return active;
        r = holds_now(d, !active, nic, alias, err);
        if (r <= 0)
                return r;
        /* A NIC attached only live, or only to the config, is detached only from there. */
        if (active && (flags & VIR_DOMAIN_AFFECT_CONFIG)) {
                r = holds_now(d, true, nic, NULL, err);
                if (r < 0)
                        return r;
                if (r == 0)
                        flags &= ~VIR_DOMAIN_AFFECT_CONFIG;
        }
        /*
         * The detach goes by alias where the device has an alias that is valid for every part of
         * flags. That is a user alias, or any alias for a live-only detach. A detach by alias
         * returns at once, and DEVICE_REMOVED reports its completion. A detach by XML blocks for
         * up to 5 s while it waits for the guest. The alias also picks the one device when two
         * share the MAC, as the old NIC of a pending swap does. By XML, libvirt refuses that case
         * with "multiple devices matching MAC address".
         */
        if (alias[0] && (strncmp(alias, "ua-", 3) == 0 || flags == VIR_DOMAIN_AFFECT_LIVE))
                r = virDomainDetachDeviceAlias(d, alias, flags);
        else {
                /*
                 * By XML, the alias must match too. This device does not carry sriovd's alias,
                 * because libvirt drops an alias that it does not accept. So the match goes without one.
                 */
                VirtNic bare = *nic;

                bare.alias[0] = 0;
                xml = mfree(xml);
                r = virt_nic_xml(&bare, &xml);
                if (r < 0)
                        return virt_error_set(err, r, "invalid %s NIC description", virt_nic_kind_to_string(nic->kind));
                r = virDomainDetachDeviceFlags(d, xml, flags);
        }
        if (r < 0)
                return virt_error_last(err, -EIO);
        if (!active)
                return 1;
        r = holds_now(d, false, nic, NULL, err);
        if (r < 0)
                return r;
        return r ? VIRT_DETACH_PENDING : 1;
}

/*
 * libvirt finds the interface to update by its MAC. It refuses an alias that differs from the
 * device's, so the XML carries the device's own user alias, or none.
 */
static int update(virDomainPtr d, const VirtNic *nic, VirtError *err) {
        _cleanup_free_ char *xml = NULL;
        char alias[VIRT_ALIAS_MAX] = "";
        VirtNic want = *nic;
        unsigned flags;
        int r, active;

        active = modify_flags(d, &flags, err);
        if (active < 0)
                return active;
        r = holds_now(d, !active, nic, alias, err);
        if (r < 0)
                return r;
        if (r == 0)
                return virt_error_set(err, -ENODEV, "no NIC with MAC %s", nic->mac);
        strscpy(want.alias, sizeof(want.alias), strncmp(alias, "ua-", 3) == 0 ? alias : "");
        r = virt_nic_xml(&want, &xml);
        if (r < 0)
                return virt_error_set(err, r, "invalid %s NIC description", virt_nic_kind_to_string(nic->kind) ?: "unknown");
        if (virDomainUpdateDeviceFlags(d, xml, flags) < 0)
                return virt_error_last(err, -EIO);
        return 1;
}

int virt_update(Virt *v, const char *domain, const VirtNic *nic, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return update(d, nic, err);
}

int virt_attach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return attach(d, nic, err);
}

int virt_detach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return detach(d, nic, err);
}

static const char *const swap_results[] = {
        [VIRT_SWAP_DONE] = "done",
        [VIRT_SWAP_PENDING] = "pending",
        [VIRT_SWAP_ROLLED_BACK] = "rolled-back",
        [VIRT_SWAP_OLD_KEPT] = "old-kept",
        [VIRT_SWAP_NIC_LOST] = "nic-lost",
        [VIRT_SWAP_BOTH] = "both",
};

const char *virt_swap_result_to_string(VirtSwapResult r) {
        return r >= 0 && (size_t) r < ELEMENTSOF(swap_results) ? swap_results[r] : NULL;
}

int virt_swap(Virt *v, const char *domain, const VirtNic *old_nic, const VirtNic *new_nic,
              VirtSwapResult *ret, VirtError *err, VirtError *err_rollback) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r, detached, k, active;

        r = lookup(v, domain, &d, err);
        if (r < 0) {
                *ret = VIRT_SWAP_OLD_KEPT;
                return r;
        }
        active = is_active(d, err);
        if (active < 0) {
                *ret = VIRT_SWAP_OLD_KEPT;
                return active;
        }

        if (active) {
                /*
                 * This is make before break. A live detach only asks the guest, and it completes
                 * later with DEVICE_REMOVED. After a failed attach, re-attaching the old NIC would
                 * find it still there. The unplug would then complete and leave the guest without
                 * any NIC. So the new NIC goes in first, under its own alias. The old one is
                 * detached only once the new one is in.
                 */
                r = attach(d, new_nic, err);
                if (r < 0) {
                        *ret = VIRT_SWAP_OLD_KEPT;
                        return r;
                }
                detached = detach(d, old_nic, err);
                if (detached < 0) {
                        *ret = VIRT_SWAP_BOTH;
                        return detached;
                }
                *ret = detached == VIRT_DETACH_PENDING ? VIRT_SWAP_PENDING : VIRT_SWAP_DONE;
                return 0;
        }

        /* The domain is shut off, so config edits take effect at once.
         * The old NIC is detached, the new one attached, and the old one put back on failure. */
        detached = detach(d, old_nic, err);
        if (detached < 0) {
                *ret = VIRT_SWAP_OLD_KEPT;
                return detached;
        }
        r = attach(d, new_nic, err);
        if (r >= 0) {
                *ret = VIRT_SWAP_DONE;
                return 0;
        }
        k = detached == 0 ? 0 : attach(d, old_nic, err_rollback);
        *ret = k >= 0 ? VIRT_SWAP_ROLLED_BACK : VIRT_SWAP_NIC_LOST;
        return r;
}

/* ---- vCPUs ---- */

void virt_vcpus_done(VirtVcpus *vc) {
        vc->cpu = mfree(vc->cpu);
        vc->pinned = mfree(vc->pinned);
        vc->n = 0;
}

static void map_to_cpuset(const unsigned char *map, int maplen, CpuSet *ret) {
        cpuset_clear(ret);
        for (int c = 0; c < maplen * 8 && c < CPUSET_MAX; c++)
                if (VIR_CPU_USABLE(map, maplen, 0, c))
                        cpuset_add(ret, (unsigned) c);
}

static int host_cpus(virDomainPtr d, VirtError *err) {
        int n = virNodeGetCPUMap(virDomainGetConnect(d), NULL, NULL, 0);

        if (n < 0)
                return virt_error_last(err, -EIO);
        if (n == 0 || n > CPUSET_MAX)
                return virt_error_set(err, -ERANGE, "libvirt reports %d host CPUs", n);
        return n;
}

static int get_vcpus(virDomainPtr d, VirtVcpus *ret, VirtError *err) {
        _cleanup_(virt_vcpus_done) VirtVcpus vc = {};
        _cleanup_free_ unsigned char *maps = NULL;
        _cleanup_free_ virVcpuInfoPtr info = NULL;
        int active, n, ncpus, maplen;

        active = is_active(d, err);
        if (active < 0)
                return active;
        n = virDomainGetVcpusFlags(d, active ? VIR_DOMAIN_AFFECT_LIVE : VIR_DOMAIN_AFFECT_CONFIG);
        if (n < 0)
                return virt_error_last(err, -EIO);
        if (n == 0 || n > VIRT_VCPUS_MAX)
                return virt_error_set(err, -ERANGE, "libvirt reports %d vCPUs", n);
        ncpus = host_cpus(d, err);
        if (ncpus < 0)
                return ncpus;
        maplen = VIR_CPU_MAPLEN(ncpus);

        vc.n = (unsigned) n;
        vc.cpu = calloc((size_t) n, sizeof(*vc.cpu));
        vc.pinned = calloc((size_t) n, sizeof(*vc.pinned));
        maps = calloc((size_t) n, (size_t) maplen);
        if (!vc.cpu || !vc.pinned || !maps)
                return virt_error_set(err, -ENOMEM, "out of memory");
        for (int i = 0; i < n; i++)
                vc.cpu[i] = -1;

        if (active) {
                info = calloc((size_t) n, sizeof(*info));
                if (!info)
                        return virt_error_set(err, -ENOMEM, "out of memory");
                n = virDomainGetVcpus(d, info, n, maps, maplen);
                if (n < 0)
                        return virt_error_last(err, -EIO);
                for (int i = 0; i < n && (unsigned) i < vc.n; i++)
                        if (info[i].number < vc.n)
                                vc.cpu[info[i].number] = info[i].state == VIR_VCPU_RUNNING || info[i].state == VIR_VCPU_BLOCKED ?
                                                         info[i].cpu : -1;
        } else if (virDomainGetVcpuPinInfo(d, n, maps, maplen, VIR_DOMAIN_AFFECT_CONFIG) < 0)
                return virt_error_last(err, -EIO);

        for (unsigned i = 0; i < vc.n; i++)
                map_to_cpuset(VIR_GET_CPUMAP(maps, maplen, i), maplen, &vc.pinned[i]);
        *ret = vc;
        vc = (VirtVcpus) {};
        return 0;
}

int virt_get_vcpus(Virt *v, const char *domain, VirtVcpus *ret, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        return get_vcpus(d, ret, err);
}

int virt_vcpu0_host_cpu(Virt *v, const char *domain, VirtError *err) {
        _cleanup_(virt_vcpus_done) VirtVcpus vc = {};
        int r;

        r = virt_get_vcpus(v, domain, &vc, err);
        if (r < 0)
                return r;
        if (cpuset_count(&vc.pinned[0]) == 1)
                return cpuset_nth(&vc.pinned[0], 0);
        if (vc.cpu[0] >= 0)
                return vc.cpu[0];
        return virt_error_set(err, -ENXIO, "vCPU 0 of %s is neither pinned to one CPU nor running", domain);
}

/*
 * Some drivers refuse explicit LIVE or CONFIG flags with VIR_ERR_INVALID_ARG. The test driver,
 * for example, takes only CURRENT. The call then falls back to CURRENT, which means the live
 * state of a running domain and the config of a shut off one. QEMU takes LIVE|CONFIG.
 */
typedef int (*PinFn)(virDomainPtr d, int i, unsigned char *map, int maplen, unsigned flags);

static int pin_vcpu(virDomainPtr d, int i, unsigned char *map, int maplen, unsigned flags) {
        return virDomainPinVcpuFlags(d, (unsigned) i, map, maplen, flags);
}

static int pin_emulator(virDomainPtr d, int i, unsigned char *map, int maplen, unsigned flags) {
        return virDomainPinEmulator(d, map, maplen, flags);
}

static int pin(PinFn fn, virDomainPtr d, int i, unsigned char *map, int maplen, unsigned flags, VirtError *err) {
        virErrorPtr e;

        if (fn(d, i, map, maplen, flags) >= 0)
                return 0;
        e = virGetLastError();
        if (!e || e->code != VIR_ERR_INVALID_ARG || flags == VIR_DOMAIN_AFFECT_CURRENT)
                return virt_error_last(err, -EIO);
        virResetLastError();
        if (fn(d, i, map, maplen, VIR_DOMAIN_AFFECT_CURRENT) < 0)
                return virt_error_last(err, -EIO);
        return 0;
}

static int cpu_map(const CpuSet *set, int ncpus, unsigned char **ret, int *ret_len) {
        int maplen = VIR_CPU_MAPLEN(ncpus);
        unsigned char *map = calloc(1, (size_t) maplen);

        if (!map)
                return -ENOMEM;
        for (int c = 0; c < ncpus; c++)
                if (cpuset_has(set, (unsigned) c))
                        VIR_USE_CPU(map, c);
        *ret = map;
        *ret_len = maplen;
        return 0;
}

/* Opens a domain that is about to be re-pinned. Gives its handle, the flags that its state allows,
 * the host's CPU count and its vCPUs. Returns whether the domain runs. */
static int open_for_pinning(Virt *v, const char *domain, virDomainPtr *ret_d, unsigned *ret_flags, int *ret_ncpus,
                            VirtVcpus *ret_vcpus, VirtError *err) {
        int r, active;

        r = lookup(v, domain, ret_d, err);
        if (r < 0)
                return r;
        active = modify_flags(*ret_d, ret_flags, err);
        if (active < 0)
                return active;
        *ret_ncpus = host_cpus(*ret_d, err);
        if (*ret_ncpus < 0)
                return *ret_ncpus;
        r = get_vcpus(*ret_d, ret_vcpus, err);
        return r < 0 ? r : active;
}

/* ---- one placement per guest ---- */

static int change_add(VirtPlaceChanges *c, const VirtPlaceChange *x) {
        if (GREEDY_REALLOC(c->changes, c->n_allocated, c->n + 1) < 0)
                return -ENOMEM;
        c->changes[c->n++] = *x;
        return 0;
}

void virt_place_changes_done(VirtPlaceChanges *c) {
        c->changes = mfree(c->changes);
        c->n = c->n_allocated = 0;
}

static int pin_to(PinFn fn, virDomainPtr d, int i, const CpuSet *set, int ncpus, unsigned flags, VirtError *err) {
        _cleanup_free_ unsigned char *map = NULL;
        int maplen;

        if (cpu_map(set, ncpus, &map, &maplen) < 0)
                return virt_error_set(err, -ENOMEM, "out of memory");
        return pin(fn, d, i, map, maplen, flags, err);
}

/* Records the change x from before to after and carries it out with fn on thread i.
 * Nothing is carried out when the thread is already so or when dry_run is set. */
static int pin_change(PinFn fn, virDomainPtr d, int i, const VirtPlaceChange *x, int ncpus, unsigned flags,
                      bool dry_run, VirtPlaceChanges *out, VirtError *err) {
        int r;

        if (cpuset_equal(&x->before, &x->after))
                return 0;
        if (!dry_run) {
                r = pin_to(fn, d, i, &x->after, ncpus, flags, err);
                if (r < 0)
                        return r;
        }
        return change_add(out, x) < 0 ? virt_error_set(err, -ENOMEM, "out of memory") : 0;
}

static int pin_iothread(virDomainPtr d, int i, unsigned char *map, int maplen, unsigned flags) {
        return virDomainPinIOThread(d, (unsigned) i, map, maplen, flags);
}

/* Pins each I/O thread onto set. Drivers without I/O threads have nothing to place. */
static int place_iothreads(virDomainPtr d, const CpuSet *set, int ncpus, unsigned flags, bool dry_run,
                           VirtPlaceChanges *out, VirtError *err) {
        virDomainIOThreadInfoPtr *info = NULL;
        int n, r = 0;

        n = virDomainGetIOThreadInfo(d, &info, flags & VIR_DOMAIN_AFFECT_LIVE ? VIR_DOMAIN_AFFECT_LIVE : 0);
        if (n < 0) {
                virResetLastError();
                return 0;
        }
        for (int i = 0; i < n && r >= 0; i++) {
                VirtPlaceChange x = { .kind = VIRT_PLACE_IOTHREAD_PIN, .index = info[i]->iothread_id, .after = *set };

                map_to_cpuset(info[i]->cpumap, info[i]->cpumaplen, &x.before);
                r = pin_change(pin_iothread, d, (int) info[i]->iothread_id, &x, ncpus, flags, dry_run, out, err);
        }
        for (int i = 0; i < n; i++)
                virDomainIOThreadInfoFree(info[i]);
        free(info);
        return r;
}

int virt_place_guest(Virt *v, const char *domain, const GuestPlacement *p, bool dry_run, VirtPlaceChanges *out,
                     VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        _cleanup_(virt_vcpus_done) VirtVcpus vc = {};
        _cleanup_free_ char *xml = NULL, *new_xml = NULL;
        _cleanup_free_ unsigned char *emap = NULL;
        unsigned flags;
        int r, ncpus, active, emaplen;

        active = open_for_pinning(v, domain, &d, &flags, &ncpus, &vc, err);
        if (active < 0)
                return active;
        for (unsigned i = 0; i < p->n_rt; i++)
                if (p->rt_cpus[i] >= ncpus)
                        return virt_error_set(err, -EINVAL, "CPU %u is not a host CPU (0..%d)", p->rt_cpus[i], ncpus - 1);

        for (unsigned i = 0; i < vc.n; i++) {
                VirtPlaceChange x = { .kind = VIRT_PLACE_VCPU_PIN, .index = i, .before = vc.pinned[i] };

                if (i < p->n_rt)
                        cpuset_add(&x.after, p->rt_cpus[i]);
                else
                        x.after = p->housekeeping;
                r = pin_change(pin_vcpu, d, (int) i, &x, ncpus, flags, dry_run, out, err);
                if (r < 0)
                        return r;
        }

        /* The emulator thread runs QEMU's own work, so it is kept off the RT CPUs. */
        emaplen = VIR_CPU_MAPLEN(ncpus);
        emap = calloc(1, (size_t) emaplen);
        if (!emap)
                return virt_error_set(err, -ENOMEM, "out of memory");
        if (virDomainGetEmulatorPinInfo(d, emap, emaplen, active ? VIR_DOMAIN_AFFECT_LIVE : VIR_DOMAIN_AFFECT_CONFIG) >= 0) {
                VirtPlaceChange x = { .kind = VIRT_PLACE_EMULATOR_PIN, .after = p->housekeeping };

                map_to_cpuset(emap, emaplen, &x.before);
                r = pin_change(pin_emulator, d, -1, &x, ncpus, flags, dry_run, out, err);
                if (r < 0)
                        return r;
        } else
                virResetLastError();

        r = place_iothreads(d, &p->housekeeping, ncpus, flags, dry_run, out, err);
        if (r < 0)
                return r;

        /* vcpusched and numatune live in the persistent definition, and libvirt applies them at start. */
        if (p->fifo_priority == 0 && p->memory_node < 0)
                return 0;
        xml = virDomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (!xml)
                return virt_error_last(err, -EIO);
        if (p->fifo_priority != 0) {
                VirtPlaceChange x = { .kind = VIRT_PLACE_VCPU_SCHED, .prio_before = -2,
                                      .prio_after = p->fifo_priority > 0 ? p->fifo_priority : 0 };
                _cleanup_free_ char *edited = NULL;

                /* A fifo_priority of -1 means that no RT CPU is booked, so no vCPU runs at FIFO.
                 * With one vCPU named, prio 0 removes every entry. */
                r = virt_domain_xml_set_vcpu_fifo(new_xml ?: xml, MAX(p->n_rt, 1u), x.prio_after, &edited);
                if (r < 0)
                        return virt_error_set(err, r, "domain %s: its XML could not be given a vcpusched", domain);
                if (r > 0) {
                        x.index = p->n_rt;
                        free(new_xml);
                        new_xml = TAKE_PTR(edited);
                        if (change_add(out, &x) < 0)
                                return virt_error_set(err, -ENOMEM, "out of memory");
                }
        }
        if (p->memory_node >= 0) {
                VirtPlaceChange x = { .kind = VIRT_PLACE_NUMATUNE, .node_after = p->memory_node };
                _cleanup_free_ char *edited = NULL;

                r = virt_domain_xml_set_numatune(new_xml ?: xml, p->memory_node, &x.node_before, &edited);
                if (r < 0)
                        return virt_error_set(err, r, "domain %s: its XML could not be given a numatune", domain);
                if (r > 0) {
                        free(new_xml);
                        new_xml = TAKE_PTR(edited);
                        if (change_add(out, &x) < 0)
                                return virt_error_set(err, -ENOMEM, "out of memory");
                }
        }
        if (!new_xml || dry_run)
                return 0;
        return redefine(d, new_xml, err);
}

/* ---- plain domain operations (tests and tools) ---- */

int virt_define_xml(Virt *v, const char *xml, VirtError *err) {
        virConnectPtr conn;
        virDomainPtr d;
        int r;

        r = virt_conn(v, &conn, err);
        if (r < 0)
                return r;
        d = virDomainDefineXML(conn, xml);
        if (!d)
                return virt_error_last(err, -EIO);
        virDomainFree(d);
        return 0;
}

static int domain_op(Virt *v, const char *domain, int (*op)(virDomainPtr), VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        if (op(d) < 0)
                return virt_error_last(err, -EIO);
        return 0;
}

int virt_domain_start(Virt *v, const char *domain, VirtError *err) {
        return domain_op(v, domain, virDomainCreate, err);
}

int virt_domain_destroy(Virt *v, const char *domain, VirtError *err) {
        return domain_op(v, domain, virDomainDestroy, err);
}

int virt_domain_undefine(Virt *v, const char *domain, VirtError *err) {
        return domain_op(v, domain, virDomainUndefine, err);
}

int virt_domain_xml(Virt *v, const char *domain, bool inactive, char **ret, VirtError *err) {
        _cleanup_domain_ virDomainPtr d = NULL;
        char *xml;
        int r;

        r = lookup(v, domain, &d, err);
        if (r < 0)
                return r;
        xml = virDomainGetXMLDesc(d, inactive ? VIR_DOMAIN_XML_INACTIVE : 0);
        if (!xml)
                return virt_error_last(err, -EIO);
        *ret = xml;
        return 0;
}
