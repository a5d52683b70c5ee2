/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-xml.c — builds the device XML of a tenant's NIC, a VF interface, a hostdev or virtio-net, as a libxml2 tree */

#include <ctype.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "sriovd/shared/util.h"
#include "sriovd/virt/virt.h"

static const char *const nic_kind_names[_VIRT_NIC_KIND_MAX] = {
        [VIRT_NIC_VF_INTERFACE] = "vf-interface",
        [VIRT_NIC_VF_HOSTDEV] = "vf-hostdev",
        [VIRT_NIC_VIRTIO_NETWORK] = "virtio-network",
        [VIRT_NIC_VIRTIO_BRIDGE] = "virtio-bridge",
        [VIRT_NIC_VIRTIO_ETHERNET] = "virtio-ethernet",
};

const char *virt_nic_kind_to_string(VirtNicKind k) {
        return k >= 0 && k < _VIRT_NIC_KIND_MAX ? nic_kind_names[k] : NULL;
}

/*
 * A name may hold no control characters, not even a tab or a newline, which have no use in one.
 * libxml2 checks whether the rest is valid UTF-8 and XML, because virt_nic_xml() reads every
 * fragment back with its parser.
 */
static bool text_no_controls(const char *s) {
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c < 0x20 || *c == 0x7f)
                        return false;
        return true;
}

/* Accepts what the kernel's dev_valid_name() accepts as an interface name. */
static bool ifname_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= IF_NAMESIZE || streq(s, ".") || streq(s, ".."))
                return false;
        for (const char *c = s; *c; c++)
                if (*c == '/' || *c == ':' || isspace((unsigned char) *c) || (unsigned char) *c < 0x20)
                        return false;
        return true;
}

/*
 * libvirt keeps a user alias only when it is "ua-" followed by [A-Za-z0-9_-]. When libvirt parses
 * a domain's config, it drops any other alias without a word. The live NIC then gets a name such
 * as "hostdev0", and a detach by sriovd's alias finds nothing. Tenant ids and PCI addresses
 * contain '.', so both are spelled to fit.
 */
static bool alias_valid(const char *s) {
        if (strncmp(s, "ua-", 3) != 0 || !s[3] || strlen(s) >= VIRT_ALIAS_MAX)
                return false;
        for (const char *c = s + 3; *c; c++)
                if (!isalnum((unsigned char) *c) && *c != '_' && *c != '-')
                        return false;
        return true;
}

/*
 * Writes a tenant id into an alias. '_' becomes "__", '.' becomes "_-", and every other character
 * stays as it is. No code is a prefix of another, so the id reads back unambiguously. The suffix
 * has no '_', so the separator before it is the last '_'.
 */
static char *alias_put_tenant(char *p, const char *tenant) {
        for (const char *c = tenant; *c; c++) {
                if (*c == '_' || *c == '.') {
                        *p++ = '_';
                        *p++ = *c == '_' ? '_' : '-';
                } else
                        *p++ = *c;
        }
        return p;
}

int virt_nic_set_alias(VirtNic *nic, const char *tenant) {
        char what[32], *p;

        if (!tenant_id_valid(tenant) || nic->kind < 0 || nic->kind >= _VIRT_NIC_KIND_MAX)
                return -EINVAL;
        if (nic->kind == VIRT_NIC_VF_INTERFACE || nic->kind == VIRT_NIC_VF_HOSTDEV) {
                if (!pci_addr_valid(nic->vf))
                        return -EINVAL;
                snprintf(what, sizeof(what), "vf-%s", nic->vf);
                for (p = what; *p; p++)
                        if (*p == ':' || *p == '.')
                                *p = '-';
        } else
                strscpy(what, sizeof(what), virt_nic_kind_to_string(nic->kind));
        /* The alias fits, because the prefix, twice the longest id, '_' and the suffix stay below
         * VIRT_ALIAS_MAX. A static_assert in virt.h checks that. */
        p = stpcpy(nic->alias, VIRT_ALIAS_PREFIX);
        p = alias_put_tenant(p, tenant);
        *p++ = '_';
        strcpy(p, what);
        return 0;
}

int virt_alias_tenant(const char *alias, char ret[static TENANT_ID_MAX]) {
        const char *t, *sep;
        size_t n = 0;

        if (!alias || strncmp(alias, VIRT_ALIAS_PREFIX, strlen(VIRT_ALIAS_PREFIX)) != 0)
                return -EINVAL;
        t = alias + strlen(VIRT_ALIAS_PREFIX);
        sep = strrchr(t, '_');
        if (!sep || sep == t || !sep[1])
                return -EINVAL;
        for (const char *c = t; c < sep; c++) {
                char out = *c;
                if (*c == '_') {
                        if (c + 1 >= sep || (c[1] != '_' && c[1] != '-'))
                                return -EINVAL;
                        out = *++c == '_' ? '_' : '.';
                }
                if (n + 1 >= TENANT_ID_MAX)
                        return -EINVAL;
                ret[n++] = out;
        }
        ret[n] = 0;
        return tenant_id_valid(ret) ? 0 : -EINVAL;
}

static int nic_validate(const VirtNic *nic) {
        uint8_t mac[6];
        bool vf = nic->kind == VIRT_NIC_VF_INTERFACE || nic->kind == VIRT_NIC_VF_HOSTDEV;

        if (nic->kind < 0 || nic->kind >= _VIRT_NIC_KIND_MAX)
                return -EINVAL;
        if (vf && !pci_addr_valid(nic->vf))
                return -EINVAL;
        if (nic->mac[0] && !mac_parse(nic->mac, mac))
                return -EINVAL;
        if (nic->vlan > 4094 || nic->vlan < -1 || (nic->vlan > 0 && nic->kind != VIRT_NIC_VF_INTERFACE))
                return -EINVAL;
        if (nic->queues > VIRT_QUEUES_MAX || nic->driver < 0 || nic->driver >= _VIRT_NIC_DRIVER_MAX)
                return -EINVAL;
        /* A VF's rate is the VF's own, set over rtnetlink. libvirt refuses <bandwidth> on a hostdev. */
        if (vf && nic->outbound_average > 0)
                return -EINVAL;
        if (nic->alias[0] && !alias_valid(nic->alias))
                return -EINVAL;
        if (!text_no_controls(nic->source))
                return -EINVAL;
        switch (nic->kind) {
        case VIRT_NIC_VIRTIO_NETWORK:
                if (!nic->source[0])
                        return -EINVAL;
                break;
        case VIRT_NIC_VIRTIO_BRIDGE:
                if (!ifname_valid(nic->source))
                        return -EINVAL;
                break;
        case VIRT_NIC_VIRTIO_ETHERNET:
                if (nic->source[0] && !ifname_valid(nic->source))
                        return -EINVAL;
                break;
        default:
                break;
        }
        return 0;
}

/* ---- the tree ---- */

static inline void xml_doc_freep(xmlDocPtr *d) {
        if (*d)
                xmlFreeDoc(*d);
}

static inline void xml_buffer_freep(xmlBufferPtr *b) {
        if (*b)
                xmlBufferFree(*b);
}

/* Adds a child element to parent. Returns NULL when out of memory. */
static xmlNode *element(xmlNode *parent, const char *name) {
        return xmlNewChild(parent, NULL, (const xmlChar *) name, NULL);
}

/* Sets the attributes name=value, ..., NULL on n. n may be NULL after an earlier failed allocation.
 * Returns false when out of memory. */
__attribute__((sentinel)) static bool props(xmlNode *n, ...) {
        const char *name;
        bool ok = n != NULL;
        va_list ap;

        va_start(ap, n);
        while (ok && (name = va_arg(ap, const char *))) {
                const char *value = va_arg(ap, const char *);
                ok = xmlNewProp(n, (const xmlChar *) name, (const xmlChar *) value) != NULL;
        }
        va_end(ap);
        return ok;
}

/* Writes an address such as "0000:41:00.1" as the <address type='pci' domain= bus= slot= function=/> that libvirt wants. */
static bool pci_address_element(xmlNode *parent, const char *addr) {
        unsigned dom, bus, slot, fn;
        char d[8], b[8], s[8], f[8];

        /* pci_addr_valid() has already checked the shape. */
        if (sscanf(addr, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4)
                return false;
        snprintf(d, sizeof(d), "0x%04x", dom);
        snprintf(b, sizeof(b), "0x%02x", bus);
        snprintf(s, sizeof(s), "0x%02x", slot);
        snprintf(f, sizeof(f), "0x%x", fn);
        return props(element(element(parent, "source"), "address"),
                     "type", "pci", "domain", d, "bus", b, "slot", s, "function", f, NULL);
}

static bool alias_element(xmlNode *parent, const char *alias) {
        return !alias[0] || props(element(parent, "alias"), "name", alias, NULL);
}

static bool mac_element(xmlNode *parent, const char *mac) {
        return !mac[0] || props(element(parent, "mac"), "address", mac, NULL);
}

/* Builds the device element for nic, which is already validated. Returns false when out of memory. */
static bool nic_tree(xmlDoc *doc, const VirtNic *nic) {
        static const char *const types[] = {
                [VIRT_NIC_VIRTIO_NETWORK] = "network",
                [VIRT_NIC_VIRTIO_BRIDGE] = "bridge",
                [VIRT_NIC_VIRTIO_ETHERNET] = "ethernet",
        };
        xmlNode *root;

        switch (nic->kind) {
        case VIRT_NIC_VF_HOSTDEV:
                /* The XML has no MAC, because sriovd sets the VF's MAC and VLAN over rtnetlink on the PF. */
                root = xmlNewDocNode(doc, NULL, (const xmlChar *) "hostdev", NULL);
                xmlDocSetRootElement(doc, root);
                return props(root, "mode", "subsystem", "type", "pci", "managed", "yes", NULL) &&
                       pci_address_element(root, nic->vf) && alias_element(root, nic->alias);

        case VIRT_NIC_VF_INTERFACE:
                root = xmlNewDocNode(doc, NULL, (const xmlChar *) "interface", NULL);
                xmlDocSetRootElement(doc, root);
                if (!props(root, "type", "hostdev", "managed", "yes", NULL) || !mac_element(root, nic->mac) ||
                    !pci_address_element(root, nic->vf))
                        return false;
                if (nic->vlan > 0) {
                        char id[16];

                        snprintf(id, sizeof(id), "%d", nic->vlan);
                        if (!props(element(element(root, "vlan"), "tag"), "id", id, NULL))
                                return false;
                }
                return alias_element(root, nic->alias);

        default:
                root = xmlNewDocNode(doc, NULL, (const xmlChar *) "interface", NULL);
                xmlDocSetRootElement(doc, root);
                if (!props(root, "type", types[nic->kind], NULL) || !mac_element(root, nic->mac))
                        return false;
                if (nic->kind == VIRT_NIC_VIRTIO_NETWORK) {
                        if (!props(element(root, "source"), "network", nic->source, NULL))
                                return false;
                } else if (nic->kind == VIRT_NIC_VIRTIO_BRIDGE) {
                        if (!props(element(root, "source"), "bridge", nic->source, NULL))
                                return false;
                } else if (nic->source[0]) {
                        /* The tap already exists, and someone else created and owns it. */
                        if (!props(element(root, "target"), "dev", nic->source, "managed", "no", NULL))
                                return false;
                }
                if (!props(element(root, "model"), "type", "virtio", NULL))
                        return false;
                if (nic->driver != VIRT_NIC_DRIVER_DEFAULT || nic->queues > 1) {
                        xmlNode *d = element(root, "driver");
                        char queues[16];

                        if (!d)
                                return false;
                        if (nic->driver != VIRT_NIC_DRIVER_DEFAULT &&
                            !props(d, "name", nic->driver == VIRT_NIC_DRIVER_VHOST ? "vhost" : "qemu", NULL))
                                return false;
                        snprintf(queues, sizeof(queues), "%u", nic->queues);
                        if (nic->queues > 1 && !props(d, "queues", queues, NULL))
                                return false;
                }
                if (nic->outbound_average > 0) {
                        char average[16];

                        snprintf(average, sizeof(average), "%u", nic->outbound_average);
                        if (!props(element(element(root, "bandwidth"), "outbound"), "average", average, NULL))
                                return false;
                }
                return alias_element(root, nic->alias);
        }
}

int virt_nic_xml(const VirtNic *nic, char **ret) {
        _cleanup_(xml_doc_freep) xmlDocPtr doc = NULL, back = NULL;
        _cleanup_(xml_buffer_freep) xmlBufferPtr buf = NULL;
        char *out;
        int r, len;

        r = nic_validate(nic);
        if (r < 0)
                return r;

        doc = xmlNewDoc((const xmlChar *) "1.0");
        if (!doc)
                return -ENOMEM;
        /* The text is written as UTF-8, not as character references, so the read-back below sees the bytes as they are. */
        doc->encoding = xmlStrdup((const xmlChar *) "UTF-8");
        buf = xmlBufferCreate();
        if (!doc->encoding || !buf || !nic_tree(doc, nic))
                return -ENOMEM;
        /* The XML is indented by two spaces a level, as libvirt writes it and as a log line shows it. */
        if (xmlNodeDump(buf, doc, xmlDocGetRootElement(doc), 0, 1) < 0 || xmlBufferCCat(buf, "\n") != 0)
                return -ENOMEM;
        len = xmlBufferLength(buf);

        /*
         * The source is free text. Text that is not UTF-8, or a character that XML cannot carry,
         * makes a fragment that libxml2's parser refuses. libvirt's parser is libxml2 too. So the
         * fragment is refused here with -EINVAL, rather than by libvirt halfway through an attach.
         */
        back = xmlReadMemory((const char *) xmlBufferContent(buf), len, "device.xml", "UTF-8",
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!back)
                return -EINVAL;

        out = strndup((const char *) xmlBufferContent(buf), (size_t) len);
        if (!out)
                return -ENOMEM;
        *ret = out;
        return 0;
}
