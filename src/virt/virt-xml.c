/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-xml.c — the device XML of a tenant's NIC: VF interface or hostdev, virtio-net; every value escaped */

#include <ctype.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/allocator.h"
#include "sriovd/util.h"
#include "sriovd/virt.h"

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

/* Strict UTF-8 and none of the control characters XML 1.0 cannot carry (nor tab/newline: no use in a name). */
static bool xml_text_valid(const char *s) {
        size_t len = strlen(s);

        for (size_t i = 0; i < len;) {
                unsigned char c = (unsigned char) s[i];
                size_t n;

                if (c < 0x20 || c == 0x7f)
                        return false;
                n = utf8_sequence_len((const unsigned char *) s + i, len - i);
                if (n == 0)
                        return false;
                i += n;
        }
        return true;
}

int virt_xml_escape(const char *s, char **ret) {
        size_t len = 0;
        char *out, *p;

        if (!xml_text_valid(s))
                return -EINVAL;
        for (const char *c = s; *c; c++)
                len += *c == '&' ? 5 : *c == '<' || *c == '>' ? 4 : *c == '\'' || *c == '"' ? 6 : 1;
        out = p = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        for (const char *c = s; *c; c++) {
                const char *e = *c == '&' ? "&amp;" : *c == '<' ? "&lt;" : *c == '>' ? "&gt;" :
                                *c == '\'' ? "&apos;" : *c == '"' ? "&quot;" : NULL;
                if (e)
                        p = stpcpy(p, e);
                else
                        *p++ = *c;
        }
        *p = 0;
        *ret = out;
        return 0;
}

/* What the kernel accepts as an interface name (dev_valid_name()). */
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
 * libvirt keeps a user alias only when it is "ua-" and then [A-Za-z0-9_-]: any other alias is dropped
 * without a word when it parses a domain's config (so the live NIC gets "hostdev0" and a detach by
 * our alias finds nothing). Tenant ids and PCI addresses have '.', so both are spelled to fit.
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
 * A tenant id in an alias: '_' as "__" and '.' as "_-", everything else as it is. Prefix-free, so it
 * reads back unambiguously, and the separator before the suffix (which has no '_') is the last '_'.
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
        /* Fits: prefix + twice the longest id + '_' + what < VIRT_ALIAS_MAX (static_assert in virt.h). */
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

/* "0000:41:00.1" as the <address domain= bus= slot= function=/> libvirt wants. */
static void pci_address_element(FILE *f, const char *indent, const char *addr) {
        unsigned dom, bus, slot, fn;

        /* pci_addr_valid() checked the shape already. */
        if (sscanf(addr, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4)
                return;
        fprintf(f, "%s<address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n",
                indent, dom, bus, slot, fn);
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
        if (nic->alias[0] && !alias_valid(nic->alias))
                return -EINVAL;
        switch (nic->kind) {
        case VIRT_NIC_VIRTIO_NETWORK:
                if (!nic->source[0] || !xml_text_valid(nic->source))
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

int virt_nic_xml(const VirtNic *nic, char **ret) {
        _cleanup_free_ char *source = NULL, *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        static const char *const types[] = {
                [VIRT_NIC_VIRTIO_NETWORK] = "network",
                [VIRT_NIC_VIRTIO_BRIDGE] = "bridge",
                [VIRT_NIC_VIRTIO_ETHERNET] = "ethernet",
        };
        size_t size = 0;
        int r;

        r = nic_validate(nic);
        if (r < 0)
                return r;
        /* Only the source is free text; everything else was checked to be plain ASCII of a known shape. */
        r = virt_xml_escape(nic->source, &source);
        if (r < 0)
                return r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        switch (nic->kind) {
        case VIRT_NIC_VF_HOSTDEV:
                /* No MAC here: the VF's MAC and VLAN are set by sriovd over rtnetlink on the PF. */
                fputs("<hostdev mode='subsystem' type='pci' managed='yes'>\n  <source>\n", f);
                pci_address_element(f, "    ", nic->vf);
                fputs("  </source>\n", f);
                if (nic->alias[0])
                        fprintf(f, "  <alias name='%s'/>\n", nic->alias);
                fputs("</hostdev>\n", f);
                break;

        case VIRT_NIC_VF_INTERFACE:
                fputs("<interface type='hostdev' managed='yes'>\n", f);
                if (nic->mac[0])
                        fprintf(f, "  <mac address='%s'/>\n", nic->mac);
                fputs("  <source>\n", f);
                pci_address_element(f, "    ", nic->vf);
                fputs("  </source>\n", f);
                if (nic->vlan > 0)
                        fprintf(f, "  <vlan>\n    <tag id='%d'/>\n  </vlan>\n", nic->vlan);
                if (nic->alias[0])
                        fprintf(f, "  <alias name='%s'/>\n", nic->alias);
                fputs("</interface>\n", f);
                break;

        default:
                fprintf(f, "<interface type='%s'>\n", types[nic->kind]);
                if (nic->mac[0])
                        fprintf(f, "  <mac address='%s'/>\n", nic->mac);
                if (nic->kind == VIRT_NIC_VIRTIO_NETWORK)
                        fprintf(f, "  <source network='%s'/>\n", source);
                else if (nic->kind == VIRT_NIC_VIRTIO_BRIDGE)
                        fprintf(f, "  <source bridge='%s'/>\n", source);
                else if (nic->source[0])
                        /* An existing tap, created and owned by someone else. */
                        fprintf(f, "  <target dev='%s' managed='no'/>\n", source);
                fputs("  <model type='virtio'/>\n", f);
                if (nic->driver != VIRT_NIC_DRIVER_DEFAULT || nic->queues > 1) {
                        fputs("  <driver", f);
                        if (nic->driver != VIRT_NIC_DRIVER_DEFAULT)
                                fprintf(f, " name='%s'", nic->driver == VIRT_NIC_DRIVER_VHOST ? "vhost" : "qemu");
                        if (nic->queues > 1)
                                fprintf(f, " queues='%u'", nic->queues);
                        fputs("/>\n", f);
                }
                if (nic->alias[0])
                        fprintf(f, "  <alias name='%s'/>\n", nic->alias);
                fputs("</interface>\n", f);
                break;
        }

        if (fflush(f) != 0 || ferror(f))
                return -ENOMEM;
        fclose(TAKE_PTR(f));
        *ret = TAKE_PTR(buf);
        return 0;
}
