/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-virt.c — NIC XML checked by libvirt's own parser, domain XML, reconcile rules, events and vCPUs on the test driver */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <libxml/entities.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/virt/virt.h"
#include "test.h"

/* ---- pure: builders, escaping, errors ---- */

static VirtNic nic_vf(VirtNicKind k, const char *vf, const char *mac, int vlan) {
        VirtNic n = VIRT_NIC_INIT;
        n.kind = k;
        strscpy(n.vf, sizeof(n.vf), vf);
        strscpy(n.mac, sizeof(n.mac), mac);
        n.vlan = vlan;
        return n;
}

static VirtNic nic_virtio(VirtNicKind k, const char *source, const char *mac, unsigned queues, VirtNicDriver drv) {
        VirtNic n = VIRT_NIC_INIT;
        n.kind = k;
        strscpy(n.source, sizeof(n.source), source);
        strscpy(n.mac, sizeof(n.mac), mac);
        n.queues = queues;
        n.driver = drv;
        return n;
}

static VirtNic nic_capped(VirtNic n, unsigned outbound_average) {
        n.outbound_average = outbound_average;
        return n;
}

/* libxml2 escapes what needs it; what is no UTF-8, or no character XML carries, or a control character, is refused. */
TEST(escape) {
        const char *const bad[] = {
                "a\nb", "a\x01", "a\x7f",                 /* control characters: no use in a name */
                "\xc3\x28",                                 /* not UTF-8 */
                "x\xc0\xaf", "\xe0\x80\xaf",                /* overlong '/' */
                "\xed\xa0\x80",                             /* a surrogate */
                "\xef\xbf\xbe",                             /* U+FFFE: UTF-8, but no XML character */
                "\xf4\x90\x80\x80",                         /* beyond U+10FFFF */
                "\xe2\x82", "\x80x", "x\xff",                /* cut short, a lone continuation, 0xff */
        };
        _cleanup_free_ char *s = NULL;
        VirtNic n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "a&b<c>'d\"e", "", 0, 0);

        ASSERT_EQ(virt_nic_xml(&n, &s), 0);
        ASSERT_CONTAINS(s, "<source network=\"a&amp;b&lt;c&gt;'d&quot;e\"/>");
        s = mfree(s);
        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "br-äö", "", 0, 0);      /* UTF-8 passes, as it is */
        ASSERT_EQ(virt_nic_xml(&n, &s), 0);
        ASSERT_CONTAINS(s, "<source network=\"br-äö\"/>");
        s = mfree(s);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fprintf(stderr, "   bad source %zu\n", i);
                n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, bad[i], "", 0, 0);
                ASSERT_EQ(virt_nic_xml(&n, &s), -EINVAL);
                /* An interface name may hold any byte but these: the XML still may not. */
                n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, bad[i], "", 0, 0);
                ASSERT_EQ(virt_nic_xml(&n, &s), -EINVAL);
                n = nic_virtio(VIRT_NIC_VIRTIO_ETHERNET, bad[i], "", 0, 0);
                ASSERT_EQ(virt_nic_xml(&n, &s), -EINVAL);
        }
        ASSERT(!s);
}

TEST(builders) {
        _cleanup_free_ char *x = NULL;
        VirtNic n;

        n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "52:54:00:00:00:01", 42);
        ASSERT_EQ(virt_nic_set_alias(&n, "t1"), 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_STREQ(x,
                     "<interface type=\"hostdev\" managed=\"yes\">\n"
                     "  <mac address=\"52:54:00:00:00:01\"/>\n"
                     "  <source>\n"
                     "    <address type=\"pci\" domain=\"0x0000\" bus=\"0x41\" slot=\"0x00\" function=\"0x2\"/>\n"
                     "  </source>\n"
                     "  <vlan>\n    <tag id=\"42\"/>\n  </vlan>\n"
                     "  <alias name=\"ua-sriovd-t1_vf-0000-41-00-2\"/>\n"
                     "</interface>\n");
        x = mfree(x);

        n = nic_vf(VIRT_NIC_VF_HOSTDEV, "0000:c1:1f.7", "", -1);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_STREQ(x,
                     "<hostdev mode=\"subsystem\" type=\"pci\" managed=\"yes\">\n"
                     "  <source>\n"
                     "    <address type=\"pci\" domain=\"0x0000\" bus=\"0xc1\" slot=\"0x1f\" function=\"0x7\"/>\n"
                     "  </source>\n"
                     "</hostdev>\n");
        x = mfree(x);

        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "net'<&>\"", "52:54:00:00:00:02", 4, VIRT_NIC_DRIVER_VHOST);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_STREQ(x,
                     "<interface type=\"network\">\n"
                     "  <mac address=\"52:54:00:00:00:02\"/>\n"
                     "  <source network=\"net'&lt;&amp;&gt;&quot;\"/>\n"
                     "  <model type=\"virtio\"/>\n"
                     "  <driver name=\"vhost\" queues=\"4\"/>\n"
                     "</interface>\n");
        x = mfree(x);

        n = nic_capped(nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0", "", 0, VIRT_NIC_DRIVER_DEFAULT), 12500);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_STREQ(x, "<interface type=\"bridge\">\n  <source bridge=\"br0\"/>\n  <model type=\"virtio\"/>\n"
                        "  <bandwidth>\n    <outbound average=\"12500\"/>\n  </bandwidth>\n</interface>\n");
        x = mfree(x);

        n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0", "", 0, VIRT_NIC_DRIVER_DEFAULT);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_STREQ(x, "<interface type=\"bridge\">\n  <source bridge=\"br0\"/>\n  <model type=\"virtio\"/>\n</interface>\n");
        x = mfree(x);

        n = nic_virtio(VIRT_NIC_VIRTIO_ETHERNET, "tap0", "", 1, VIRT_NIC_DRIVER_QEMU);
        ASSERT_EQ(virt_nic_xml(&n, &x), 0);
        ASSERT_CONTAINS(x, "<target dev=\"tap0\" managed=\"no\"/>");
        ASSERT_CONTAINS(x, "<driver name=\"qemu\"/>");
        x = mfree(x);
}

TEST(builders_invalid) {
        char *x = NULL;
        VirtNic n;

        n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00", "", -1);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "52:54:00:00:00", -1);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "", 4095);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_vf(VIRT_NIC_VF_HOSTDEV, "0000:41:00.2", "", 5);          /* no VLAN in a plain hostdev */
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_capped(nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "", -1), 125);   /* a VF's rate is the VF's */
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0/x", "", 0, 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "a-very-long-bridge", "", 0, 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "", "", 0, 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "x\ty", "", 0, 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "default", "", VIRT_QUEUES_MAX + 1, 0);
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "default", "", 0, 0);
        strcpy(n.alias, "sriovd-x");                                     /* not a user alias */
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        strcpy(n.alias, "ua-a'b");
        ASSERT_EQ(virt_nic_xml(&n, &x), -EINVAL);
        ASSERT(!x);
        ASSERT_EQ(virt_nic_set_alias(&n, "../x"), -EINVAL);
}

TEST(aliases) {
        VirtNic n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0", "", 0, 0);
        char t[TENANT_ID_MAX];

        ASSERT_EQ(virt_nic_set_alias(&n, "a_b.c-9"), 0);
        ASSERT_STREQ(n.alias, "ua-sriovd-a__b_-c-9_virtio-bridge");
        ASSERT_EQ(virt_alias_tenant(n.alias, t), 0);
        ASSERT_STREQ(t, "a_b.c-9");
        n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "", -1);
        ASSERT_EQ(virt_nic_set_alias(&n, "t1"), 0);
        ASSERT_STREQ(n.alias, "ua-sriovd-t1_vf-0000-41-00-2");
        ASSERT_EQ(virt_alias_tenant(n.alias, t), 0);
        ASSERT_STREQ(t, "t1");
        /* Every id reads back as itself, the longest included ('_' and '.' at either end). */
        {
                const char *ids[] = { "_", "__", ".x", "x.", "a_", "_-", "a_-b", "-_.", "t-vf" };
                char longest[TENANT_ID_MAX];
                memset(longest, '.', sizeof(longest) - 1);
                longest[0] = 'a';
                longest[sizeof(longest) - 1] = 0;
                for (size_t i = 0; i <= ELEMENTSOF(ids); i++) {
                        const char *id = i < ELEMENTSOF(ids) ? ids[i] : longest;
                        ASSERT_EQ(virt_nic_set_alias(&n, id), 0);
                        ASSERT_EQ(strspn(n.alias + 3, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"),
                                  strlen(n.alias + 3));
                        ASSERT_EQ(virt_alias_tenant(n.alias, t), 0);
                        ASSERT_STREQ(t, id);
                }
        }
        ASSERT_EQ(virt_alias_tenant("ua-sriovd-a_b_virtio-bridge", t), -EINVAL);   /* "_b": no such escape */
        ASSERT_EQ(virt_alias_tenant("net0", t), -EINVAL);
        ASSERT_EQ(virt_alias_tenant("ua-sriovd-t1", t), -EINVAL);
        ASSERT_EQ(virt_alias_tenant("ua-sriovd-_x", t), -EINVAL);
        ASSERT_EQ(virt_alias_tenant("ua-sriovd-..", t), -EINVAL);
}

TEST(errno_table) {
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_OK, 0), 0);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_NO_DOMAIN, 0), -ENOENT);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_CONFIG_UNSUPPORTED, 0), -EOPNOTSUPP);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_OPERATION_INVALID, 0), -EBUSY);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_XML_ERROR, 0), -EINVAL);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_SYSTEM_ERROR, EADDRINUSE), -EADDRINUSE);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_SYSTEM_ERROR, 0), -EIO);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_NO_CONNECT, 0), -ENOTCONN);
        ASSERT_EQ(virt_errno_from_code(VIR_ERR_INTERNAL_ERROR, 0), -EIO);
        ASSERT_EQ(virt_errno_from_code(100000, 0), -EIO);
}

/* ---- pure: domain XML ---- */

static const char domain_xml[] =
        "<domain type='kvm' id='7'><name>g&amp;1</name><devices>"
        "<interface type='hostdev' managed='yes'><mac address='52:54:00:AA:00:01'/>"
        "<source><address type='pci' domain='0x0000' bus='0x41' slot='0x00' function='0x2'/></source>"
        "<alias name='ua-sriovd-t1'/></interface>"
        "<interface type='network'><mac address='52:54:00:aa:00:02'/><source network='default'/><model type='virtio'/>"
        "<bandwidth><inbound average='7'/><outbound average='1250' peak='2500'/></bandwidth></interface>"
        "<hostdev mode='subsystem' type='pci' managed='yes'><source><address bus='0x41' slot='0x00' function='0x3'/></source></hostdev>"
        "<hostdev mode='subsystem' type='usb'><source><vendor id='0x1'/></source></hostdev>"
        "<interface type='hostdev'><source><address type='usb' bus='1' device='2'/></source></interface>"
        "</devices></domain>";

TEST(parse_domain) {
        _cleanup_(virt_domain_info_done) VirtDomainInfo d = {};

        ASSERT_EQ(virt_domain_parse_xml(domain_xml, &d), 0);
        ASSERT_STREQ(d.name, "g&1");
        ASSERT(d.active);
        ASSERT_EQ(d.n_nics, 3);
        ASSERT_EQ(d.nics[0].kind, VIRT_DEV_INTERFACE_HOSTDEV);
        ASSERT_STREQ(d.nics[0].pci, "0000:41:00.2");
        ASSERT_STREQ(d.nics[0].mac, "52:54:00:aa:00:01");
        ASSERT_STREQ(d.nics[0].alias, "ua-sriovd-t1");   /* as written in the XML */
        ASSERT_STREQ(d.nics[0].domain, "g&1");
        ASSERT_EQ(d.nics[1].kind, VIRT_DEV_INTERFACE);
        ASSERT_STREQ(d.nics[1].type, "network");
        ASSERT_STREQ(d.nics[1].pci, "");
        ASSERT_EQ(d.nics[1].outbound_average, 1250u);
        ASSERT_EQ(d.nics[0].outbound_average, 0u);
        ASSERT_EQ(d.nics[2].kind, VIRT_DEV_HOSTDEV);
        ASSERT_STREQ(d.nics[2].pci, "0000:41:00.3");
        ASSERT_STREQ(d.nics[2].mac, "");

        ASSERT_EQ(virt_domain_parse_xml("<network/>", &d), -EINVAL);
        ASSERT_EQ(virt_domain_parse_xml("<domain", &d), -EINVAL);
        /* No entity expansion, no external DTD. */
        {
                _cleanup_(virt_domain_info_done) VirtDomainInfo x = {};
                if (virt_domain_parse_xml("<!DOCTYPE d [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
                                          "<domain><name>&x;</name></domain>", &x) == 0)
                        ASSERT(!strstr(x.name, "root:"));
        }
}

TEST(vcpu_fifo_xml) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
        const char *xml = "<domain type='qemu'><name>x</name><cputune><vcpupin vcpu='0' cpuset='2'/>"
                          "<vcpusched vcpus='0' scheduler='rr' priority='3'/></cputune></domain>";

        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo(xml, 2, 50, &a), 1);
        ASSERT_CONTAINS(a, "<vcpupin vcpu=\"0\" cpuset=\"2\"/>");
        ASSERT_CONTAINS(a, "<vcpusched vcpus=\"0-1\" scheduler=\"fifo\" priority=\"50\"/>");
        ASSERT(!strstr(a, "rr"));
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo(a, 2, 50, &b), 0);       /* already so */
        ASSERT(!b);
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo("<domain><cputune><vcpusched vcpus='0' scheduler='fifo' priority='50'/>"
                                                "<vcpusched vcpus='1' scheduler='fifo' priority='50'/></cputune></domain>",
                                                2, 50, &b), 0);                  /* libvirt's form of it */
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo("<domain><cputune><vcpusched vcpus='0' scheduler='fifo' priority='50'/>"
                                                "</cputune></domain>", 2, 50, &b), 1);   /* vCPU 1 not covered */
        b = mfree(b);
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo(a, 2, 0, &b), 1);        /* removed */
        ASSERT(!strstr(b, "vcpusched"));
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo("<domain><name>y</name></domain>", 1, 99, &c), 1);
        ASSERT_CONTAINS(c, "<cputune><vcpusched vcpus=\"0\" scheduler=\"fifo\" priority=\"99\"/></cputune>");
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo(xml, 0, 50, &c), -EINVAL);
        ASSERT_EQ(virt_domain_xml_set_vcpu_fifo(xml, 1, 100, &c), -EINVAL);
}

TEST(add_device_xml) {
        _cleanup_free_ char *dev = NULL, *out = NULL;
        _cleanup_(virt_domain_info_done) VirtDomainInfo d = {};
        VirtNic n = nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.4", "52:54:00:00:00:0b", 7);
        char *none = NULL;

        ASSERT_EQ(virt_nic_set_alias(&n, "t.1"), 0);
        ASSERT_EQ(virt_nic_xml(&n, &dev), 0);
        ASSERT_EQ(virt_domain_xml_add_device(domain_xml, dev, &out), 0);
        ASSERT_EQ(virt_domain_parse_xml(out, &d), 0);
        ASSERT_STREQ(d.name, "g&1");
        ASSERT_EQ(d.n_nics, 4);                 /* the three it had, then ours, last */
        ASSERT_STREQ(d.nics[3].pci, "0000:41:00.4");
        ASSERT_STREQ(d.nics[3].mac, "52:54:00:00:00:0b");
        ASSERT_STREQ(d.nics[3].alias, n.alias);
        ASSERT_CONTAINS(out, "<tag id=\"7\"/>");
        /* "</devices>" in a value is no place to splice at. */
        ASSERT_EQ(virt_domain_xml_add_device("<domain><name>&lt;/devices&gt;</name><devices/></domain>", dev, &none), 0);
        ASSERT(strstr(none, "<devices><interface"));
        none = mfree(none);
        ASSERT_EQ(virt_domain_xml_add_device("<domain><name>x</name></domain>", dev, &none), -EINVAL);
        ASSERT_EQ(virt_domain_xml_add_device("<network><devices/></network>", dev, &none), -EINVAL);
        ASSERT_EQ(virt_domain_xml_add_device(domain_xml, "<interface", &none), -EINVAL);
        ASSERT(!none);
}

/* ---- pure: reconcile ---- */

static VirtDomainNic dnic(const char *dom, const char *pci, const char *mac) {
        VirtDomainNic n = { .kind = pci[0] ? VIRT_DEV_INTERFACE_HOSTDEV : VIRT_DEV_INTERFACE };
        strscpy(n.domain, sizeof(n.domain), dom);
        strscpy(n.pci, sizeof(n.pci), pci);
        strscpy(n.mac, sizeof(n.mac), mac);
        strcpy(n.type, pci[0] ? "hostdev" : "network");
        return n;
}

static const VirtReconcileItem *find_item(const VirtReconcileItem *it, size_t n, const char *tenant, const char *domain) {
        for (size_t i = 0; i < n; i++)
                if (streq(it[i].tenant, tenant) && streq(it[i].domain, domain))
                        return &it[i];
        return NULL;
}

TEST(reconcile) {
        VirtDomainNic a[] = { dnic("a", "0000:41:00.2", "02:00:00:00:00:01"), dnic("a", "", "02:00:00:00:00:09"),
                              dnic("a", "", "02:00:00:00:00:0b"), dnic("a", "", "02:00:00:00:00:0c") };
        VirtDomainNic b[] = { dnic("b", "0000:41:00.3", "02:00:00:00:00:02"), dnic("b", "0000:41:00.4", "02:00:00:00:00:ff") };
        VirtDomainNic c[] = { dnic("c", "0000:41:00.3", "02:00:00:00:00:02"), dnic("c", "0000:41:00.5", ""),
                              dnic("c", "0000:81:00.0", "") };
        VirtDomainNic e[] = { dnic("e", "0000:41:00.6", "") };
        a[2].outbound_average = 12500;
        a[3].outbound_average = 250;
        VirtDomainInfo doms[] = {
                { .name = "a", .nics = a, .n_nics = ELEMENTSOF(a) },
                { .name = "b", .nics = b, .n_nics = ELEMENTSOF(b) },
                { .name = "c", .nics = c, .n_nics = ELEMENTSOF(c) },
                { .name = "d" },
                { .name = "e", .nics = e, .n_nics = ELEMENTSOF(e) },
        };
        VirtExpected ex[] = {
                { "t1", "0000:41:00.2", "02:00:00:00:00:01", "a", false, 0 },   /* ok */
                { "t2", "0000:41:00.3", "02:00:00:00:00:02", "b", false, 0 },   /* in b and c: duplicate */
                { "t3", "0000:41:00.4", "02:00:00:00:00:03", "b", false, 0 },   /* other MAC */
                { "t4", "0000:41:00.7", NULL, "d", false, 0 },                  /* missing */
                { "t5", "0000:41:01.0", NULL, "gone", false, 0 },               /* domain gone */
                { "t6", "0000:41:00.6", NULL, "d", false, 0 },                  /* found in e */
                { "t7", NULL, "02:00:00:00:00:09", "a", false, 0 },             /* virtio ok */
                { "t8", NULL, "02:00:00:00:00:0a", "a", false, 0 },             /* virtio missing */
                { "t9", NULL, NULL, "gone", false, 0 },                         /* virtio, domain gone */
                { "t10", "0000:41:01.1", NULL, "", false, 0 },                  /* no domain: not checked */
                { "t11", NULL, "02:00:00:00:00:0b", "a", true, 12500 },     /* virtio, capped as expected */
                { "t12", NULL, "02:00:00:00:00:0c", "a", true, 125 },     /* virtio, capped otherwise */
                { "t13", NULL, "02:00:00:00:00:0c", "a", false, 0 },      /* virtio, its cap left to the operator */
        };
        const char scope[][PCI_ADDR_MAX] = { "0000:41:00.2", "0000:41:00.3", "0000:41:00.4", "0000:41:00.5",
                                             "0000:41:00.6", "0000:41:00.7", "0000:41:01.0", "0000:41:01.1" };
        _cleanup_free_ VirtReconcileItem *it = NULL;
        const VirtReconcileItem *x;
        size_t n = 0;

        ASSERT_EQ(virt_reconcile(doms, ELEMENTSOF(doms), ex, ELEMENTSOF(ex), scope, ELEMENTSOF(scope), &it, &n), 0);
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "   %s %s %s %s (expected %s)\n", virt_finding_to_string(it[i].finding),
                        it[i].tenant, it[i].vf, it[i].domain, it[i].expected_domain);
        ASSERT_EQ(n, 14);
        ASSERT_EQ(find_item(it, n, "t1", "a")->finding, VIRT_FINDING_OK);
        ASSERT_EQ(find_item(it, n, "t2", "b")->finding, VIRT_FINDING_DUPLICATE);
        ASSERT_EQ(find_item(it, n, "t2", "c")->finding, VIRT_FINDING_DUPLICATE);
        x = find_item(it, n, "t3", "b");
        ASSERT_EQ(x->finding, VIRT_FINDING_MAC_MISMATCH);
        ASSERT_STREQ(x->mac, "02:00:00:00:00:ff");
        ASSERT_EQ(find_item(it, n, "t4", "")->finding, VIRT_FINDING_MISSING);
        ASSERT_EQ(find_item(it, n, "t5", "")->finding, VIRT_FINDING_DOMAIN_GONE);
        x = find_item(it, n, "t6", "e");
        ASSERT_EQ(x->finding, VIRT_FINDING_ELSEWHERE);
        ASSERT_STREQ(x->expected_domain, "d");
        ASSERT_EQ(find_item(it, n, "t7", "a")->finding, VIRT_FINDING_OK);
        ASSERT_EQ(find_item(it, n, "t8", "")->finding, VIRT_FINDING_MISSING);
        ASSERT_EQ(find_item(it, n, "t9", "")->finding, VIRT_FINDING_DOMAIN_GONE);
        ASSERT_EQ(find_item(it, n, "t11", "a")->finding, VIRT_FINDING_OK);
        ASSERT_EQ(find_item(it, n, "t12", "a")->finding, VIRT_FINDING_RATE_MISMATCH);
        ASSERT_EQ(find_item(it, n, "t13", "a")->finding, VIRT_FINDING_OK);
        /* 0000:41:00.5 in c is held by nobody: foreign; 0000:81:00.0 is out of scope. */
        x = find_item(it, n, "", "c");
        ASSERT_EQ(x->finding, VIRT_FINDING_FOREIGN);
        ASSERT_STREQ(x->vf, "0000:41:00.5");
        it = mfree(it);

        /* No scope: every PCI hostdev nobody holds is foreign. */
        ASSERT_EQ(virt_reconcile(doms, ELEMENTSOF(doms), NULL, 0, NULL, 0, &it, &n), 0);
        ASSERT_EQ(n, 7);
        for (size_t i = 0; i < n; i++)
                ASSERT_EQ(it[i].finding, VIRT_FINDING_FOREIGN);
}

/* ---- libvirt: the test driver, in process ---- */

typedef struct Recorder {
        char lines[64][128];
        char uuids[64][VIRT_UUID_STRING_MAX];   /* each event's domain UUID, "" for none */
        size_t n;
} Recorder;

static const char *const kind_names[] = {
        "defined", "undefined", "started", "stopped", "suspended", "resumed",
        "device-added", "device-removed", "device-removal-failed", "disconnected", "reconnected", "tunable",
        "connected", "connect-failed",
};
_Static_assert(ELEMENTSOF(kind_names) == _VIRT_EVENT_KIND_MAX, "a name per event kind");

static void record(const VirtEvent *ev, void *userdata) {
        Recorder *r = userdata;

        if (r->n < ELEMENTSOF(r->lines)) {
                strscpy(r->uuids[r->n], sizeof(r->uuids[0]), ev->uuid ?: "");
                snprintf(r->lines[r->n++], sizeof(r->lines[0]), "%s %s %s", kind_names[ev->kind],
                         ev->domain ?: "-", ev->device ?: ev->detail_str);
        }
}

/* Dispatch sd-event until line shows up (the only way events arrive: through the bridge). */
static void wait_for(sd_event *e, Recorder *r, const char *line) {
        uint64_t deadline = now_usec() + 5 * 1000000u;

        for (;;) {
                for (size_t i = 0; i < r->n; i++)
                        if (streq(r->lines[i], line))
                                return;
                if (now_usec() > deadline) {
                        for (size_t i = 0; i < r->n; i++)
                                fprintf(stderr, "   seen: %s\n", r->lines[i]);
                        fprintf(stderr, "   missing event: %s\n", line);
                        abort();
                }
                ASSERT(sd_event_run(e, 100 * 1000) >= 0);
        }
}

static char *domain_with(const char *name, const char *devices) {
        char *x = NULL;
        ASSERT(asprintf(&x, "<domain type='test'><name>%s</name><memory>65536</memory><vcpu>2</vcpu>"
                            "<os><type>hvm</type></os><devices>%s</devices></domain>", name, devices) > 0);
        return x;
}

/* Every fragment through libvirt's parser: defined on test:///default, read back, found as built. */
TEST(libvirt_parses_fragments) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(virt_freep) Virt *v = NULL;
        VirtError err = {};
        struct {
                VirtNic nic;
                const char *expect[4];
        } cases[] = {
                { nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:00.2", "52:54:00:00:00:01", 42),
                  { "<tag id='42'/>", "type='hostdev' managed='yes'", NULL } },
                { nic_vf(VIRT_NIC_VF_INTERFACE, "0000:41:01.7", "52:54:00:00:00:03", -1),
                  { "<address type='pci' domain='0x0000' bus='0x41' slot='0x01' function='0x7'/>", NULL } },
                { nic_vf(VIRT_NIC_VF_HOSTDEV, "0000:c1:00.4", "", -1),
                  { "<hostdev mode='subsystem' type='pci' managed='yes'>", NULL } },
                { nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "default", "52:54:00:00:00:04", 4, VIRT_NIC_DRIVER_VHOST),
                  { "<source network='default'/>", "<model type='virtio'/>", "<driver name='vhost' queues='4'/>", NULL } },
                { nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "n&'<x>\"", "52:54:00:00:00:05", 0, VIRT_NIC_DRIVER_DEFAULT),
                  { "<source network='n&amp;&apos;&lt;x&gt;&quot;'/>", NULL } },
                { nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0", "52:54:00:00:00:06", 2, VIRT_NIC_DRIVER_QEMU),
                  { "<source bridge='br0'/>", "<driver name='qemu' queues='2'/>", NULL } },
                { nic_virtio(VIRT_NIC_VIRTIO_ETHERNET, "tap0", "52:54:00:00:00:07", 0, VIRT_NIC_DRIVER_DEFAULT),
                  { "<target dev='tap0' managed='no'/>", "<interface type='ethernet'>", NULL } },
                { nic_capped(nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "default", "52:54:00:00:00:08", 0, 0), 12500),
                  { "<bandwidth>", "<outbound average='12500'/>", NULL } },
        };

        ASSERT(sd_event_new(&e) >= 0);
        ASSERT_EQ(virt_new(e, "test:///default", NULL, NULL, &v, &err), 0);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *frag = NULL, *dom = NULL, *back = NULL;
                _cleanup_(virt_domain_info_done) VirtDomainInfo info = {};
                VirtNic *n = &cases[i].nic;
                char name[32];

                /* '.' and '_' in the tenant: the alias must still be one libvirt keeps. */
                snprintf(name, sizeof(name), "t.frag_%zu", i);
                ASSERT_EQ(virt_nic_set_alias(n, name), 0);
                ASSERT_EQ(virt_nic_xml(n, &frag), 0);
                dom = domain_with(name, frag);
                if (virt_define_xml(v, dom, &err) < 0) {
                        fprintf(stderr, "   %s: %s\n", virt_nic_kind_to_string(n->kind), err.message);
                        abort();
                }
                ASSERT_EQ(virt_domain_xml(v, name, true, &back, &err), 0);
                ASSERT_EQ(virt_domain_parse_xml(back, &info), 0);
                ASSERT_STREQ(info.name, name);
                ASSERT_EQ(info.n_nics, 1);
                if (n->kind == VIRT_NIC_VF_INTERFACE || n->kind == VIRT_NIC_VF_HOSTDEV)
                        ASSERT_STREQ(info.nics[0].pci, n->vf);
                ASSERT_STREQ(info.nics[0].mac, n->mac);
                for (size_t k = 0; k < ELEMENTSOF(cases[i].expect) && cases[i].expect[k]; k++)
                        ASSERT_CONTAINS(back, cases[i].expect[k]);
                /* libvirt drops an alias it does not like without an error: then no detach finds the NIC. */
                ASSERT_STREQ(info.nics[0].alias, n->alias);
                ASSERT_EQ(virt_domain_undefine(v, name, &err), 0);
        }

        /* A domain name that needs escaping, escaped by libxml2, read back by libvirt and by us. */
        {
                _cleanup_free_ char *dom = NULL;
                _cleanup_(virt_domain_info_done) VirtDomainInfo info = {};
                const char *name = "we<i>rd&'n\"ame";
                xmlChar *esc = xmlEncodeSpecialChars(NULL, (const xmlChar *) name);

                ASSERT(esc);
                dom = domain_with((const char *) esc, "");
                xmlFree(esc);
                ASSERT_EQ(virt_define_xml(v, dom, &err), 0);
                ASSERT_EQ(virt_get_domain(v, name, &info, &err), 0);
                ASSERT_STREQ(info.name, name);
                ASSERT_EQ(virt_domain_undefine(v, name, &err), 0);
        }

        /* libvirt's errors arrive as errno + message. */
        ASSERT_EQ(virt_domain_start(v, "no-such-domain", &err), -ENOENT);
        ASSERT_EQ(err.code, VIR_ERR_NO_DOMAIN);
        ASSERT_CONTAINS(err.message, "not found");
        ASSERT_EQ(virt_define_xml(v, "<domain type='test'><name>x</name>", &err), -EINVAL);
        fprintf(stderr, "   bad XML: %s\n", err.message);
        /* A shut-off domain: the test driver has no device attach, so the NIC goes into a new definition. */
        {
                /* A VNC password: a new definition made from a definition read without its secrets loses it. */
                _cleanup_free_ char *dom = domain_with("cold", "<graphics type='vnc' passwd='s3cret'/>"), *back = NULL;
                _cleanup_(virt_domain_info_done) VirtDomainInfo info = {};
                VirtNic n = nic_virtio(VIRT_NIC_VIRTIO_BRIDGE, "br0", "52:54:00:00:00:98", 2, VIRT_NIC_DRIVER_QEMU);

                ASSERT_EQ(virt_nic_set_alias(&n, "t.cold"), 0);
                ASSERT_EQ(virt_define_xml(v, dom, &err), 0);
                ASSERT_EQ(virt_attach(v, "cold", &n, &err), 1);
                ASSERT_EQ(virt_attach(v, "cold", &n, &err), 0);          /* there already */
                ASSERT_EQ(virt_get_domain(v, "cold", &info, &err), 0);
                ASSERT_EQ(info.n_nics, 1);
                ASSERT_STREQ(info.nics[0].mac, n.mac);
                ASSERT_STREQ(info.nics[0].alias, n.alias);
                ASSERT_EQ(virt_domain_xml(v, "cold", true, &back, &err), 0);
                ASSERT_CONTAINS(back, "<source bridge='br0'/>");
                {
                        /* test:///default is one driver per process: a second connection sees "cold". */
                        virConnectPtr c = virConnectOpen("test:///default");
                        virDomainPtr d;
                        char *secure;

                        ASSERT(c);
                        d = virDomainLookupByName(c, "cold");
                        ASSERT(d);
                        secure = virDomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
                        ASSERT(secure);
                        ASSERT_CONTAINS(secure, "passwd='s3cret'");
                        free(secure);
                        virDomainFree(d);
                        virConnectClose(c);
                }
                ASSERT_EQ(virt_domain_undefine(v, "cold", &err), 0);
        }

        /* The test driver has no device hot-plug: reported, not crashed on. */
        {
                VirtNic n = nic_virtio(VIRT_NIC_VIRTIO_NETWORK, "default", "52:54:00:00:00:99", 0, 0);
                int r = virt_attach(v, "test", &n, &err);
                fprintf(stderr, "   attach on the test driver: %d %s\n", r, err.message);
                ASSERT(r == -EOPNOTSUPP);
        }
}

static const char node_xml_fmt[] =
        "<node>\n"
        "  <cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>1</threads>"
        "<active>4</active><mhz>2000</mhz><model>x86_64</model></cpu>\n"
        "  <domain type='test'>\n"
        "    <name>holder</name><uuid>6695eb01-f6a4-8304-79aa-97f2502e193f</uuid>\n"
        "    <memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os>\n"
        "    <devices>\n"
        "      <interface type='hostdev' managed='yes'><mac address='52:54:00:10:00:01'/>\n"
        "        <source><address type='pci' domain='0x0000' bus='0x41' slot='0x00' function='0x2'/></source></interface>\n"
        "      <hostdev mode='subsystem' type='pci' managed='yes'>\n"
        "        <source><address domain='0x0000' bus='0x41' slot='0x00' function='0x5'/></source></hostdev>\n"
        "    </devices>\n"
        "  </domain>\n"
        "</node>\n";

static const char *write_node_xml(char *path, size_t size) {
        FILE *f;
        int fd;

        snprintf(path, size, "/tmp/test-virt-node-XXXXXX.xml");
        fd = mkstemps(path, 4);
        ASSERT(fd >= 0);
        f = fdopen(fd, "w");
        ASSERT(f);
        fputs(node_xml_fmt, f);
        fclose(f);
        return path;
}

#define HOLDER_UUID "6695eb01-f6a4-8304-79aa-97f2502e193f"

/* A custom test:///path.xml: a running domain holding a VF is recognised; lifecycle events through sd-event. */
TEST(test_driver_events_and_reconcile) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(virt_freep) Virt *v = NULL;
        _cleanup_free_ char *uri = NULL, *dom = NULL, *xml = NULL;
        VirtDomainInfo *doms = NULL;
        _cleanup_free_ VirtReconcileItem *items = NULL;
        _cleanup_(virt_vcpus_done) VirtVcpus vc = {};
        size_t n_doms = 0, n_items = 0;
        VirtError err = {};
        Recorder rec = {};
        char path[64];
        int r;

        write_node_xml(path, sizeof(path));
        ASSERT(asprintf(&uri, "test://%s", path) > 0);
        ASSERT(sd_event_new(&e) >= 0);
        r = virt_new(e, uri, record, &rec, &v, &err);
        if (r < 0)
                fprintf(stderr, "   %s: %s\n", uri, err.message);
        ASSERT_EQ(r, 0);
        unlink(path);
        ASSERT(virt_is_connected(v));
        ASSERT(virt_event_n_sources() > 0);

        /* Reconcile: the domain that already holds VFs at start. */
        ASSERT_EQ(virt_list_domains(v, &doms, &n_doms, &err), 0);
        ASSERT_EQ(n_doms, 1);
        ASSERT_STREQ(doms[0].name, "holder");
        ASSERT(doms[0].active);
        {
                VirtExpected ex[] = {
                        { "t1", "0000:41:00.2", "52:54:00:10:00:01", "holder", false, 0 },
                        { "t2", "0000:41:00.3", NULL, "gone", false, 0 },
                };
                const char scope[][PCI_ADDR_MAX] = { "0000:41:00.2", "0000:41:00.3", "0000:41:00.5" };

                ASSERT_EQ(virt_reconcile(doms, n_doms, ex, ELEMENTSOF(ex), scope, ELEMENTSOF(scope), &items, &n_items), 0);
                ASSERT_EQ(n_items, 3);
                ASSERT_EQ(items[0].finding, VIRT_FINDING_OK);
                ASSERT_STREQ(items[0].domain, "holder");
                ASSERT_STREQ(items[0].mac, "52:54:00:10:00:01");
                ASSERT_EQ(items[1].finding, VIRT_FINDING_DOMAIN_GONE);
                ASSERT_EQ(items[2].finding, VIRT_FINDING_FOREIGN);
                ASSERT_STREQ(items[2].vf, "0000:41:00.5");
        }
        /* A tenant that names its domain by UUID, as a scheduler that knows the guest's UUID does. */
        ASSERT_STREQ(doms[0].uuid, HOLDER_UUID);
        {
                VirtExpected ex[] = { { "t1", "0000:41:00.2", "52:54:00:10:00:01", HOLDER_UUID, false, 0 } };
                const char scope[][PCI_ADDR_MAX] = { "0000:41:00.2", "0000:41:00.5" };

                items = mfree(items);
                ASSERT_EQ(virt_reconcile(doms, n_doms, ex, 1, scope, ELEMENTSOF(scope), &items, &n_items), 0);
                ASSERT_EQ(n_items, 2);
                ASSERT_EQ(items[0].finding, VIRT_FINDING_OK);
                ASSERT_STREQ(items[0].domain, "holder");
        }
        virt_domain_list_free(doms, n_doms);
        {
                char name[VIRT_DOMAIN_NAME_MAX], uuid[VIRT_UUID_STRING_MAX];

                ASSERT_EQ(virt_domain_id(v, HOLDER_UUID, name, uuid, &err), 0);
                ASSERT_STREQ(name, "holder");
                ASSERT_STREQ(uuid, HOLDER_UUID);
                ASSERT_EQ(virt_domain_id(v, "holder", name, uuid, &err), 0);
                ASSERT_STREQ(uuid, HOLDER_UUID);
                ASSERT_EQ(virt_domain_is_active(v, HOLDER_UUID, &err), 1);
                ASSERT_EQ(virt_domain_is_active(v, "00000000-0000-4000-8000-000000000000", &err), -ENOENT);
                ASSERT(virt_domain_ref_is(HOLDER_UUID, "holder", HOLDER_UUID));
                ASSERT(virt_domain_ref_is("holder", "holder", NULL));
                ASSERT(!virt_domain_ref_is("", "", ""));
                ASSERT(!virt_domain_ref_is("00000000-0000-4000-8000-000000000000", "holder", HOLDER_UUID));
        }

        /* vCPUs: a placement built as the daemon builds it (guest_placement() from the class and
         * the booking, src/daemon/guests/guests.c): vCPU 0 on its RT CPU, vCPU 1 and the emulator on the
         * housekeeping CPUs, SCHED_FIFO for vCPU 0 in the persistent XML. */
        ASSERT_EQ(virt_get_vcpus(v, "holder", &vc, &err), 0);
        ASSERT_EQ(vc.n, 2);
        {
                _cleanup_(config_freep) Config *cfg = NULL;
                _cleanup_(virt_place_changes_done) VirtPlaceChanges done = {}, again = {};
                CpuSet node0 = {};
                Inventory inv = { .topo = { .n_nodes = 1, .node_cpus = &node0 } };
                static const uint16_t booked[] = { 3 };
                TenantClass cls;
                GuestPlacement p;
                bool saw_sched = false;

                for (unsigned c = 0; c < 6; c++) {
                        cpuset_add(&inv.topo.online, c);
                        cpuset_add(&node0, c);
                }
                ASSERT_EQ(config_new("/x.conf", "/x.d", &cfg), 0);
                cfg->have_rt_cpus = cfg->have_housekeeping_cpus = true;
                cpuset_add(&cfg->rt_cpus, 3);
                cpuset_add(&cfg->rt_cpus, 5);
                for (unsigned c = 0; c < 3; c++)
                        cpuset_add(&cfg->housekeeping_cpus, c);
                tenant_class_init(&cls);
                cls.vcpu_pin_rt = 1;
                cls.vcpu_fifo_priority = 20;
                ASSERT_EQ(guest_placement(&inv, cfg, &cls, booked, 1, &p), 0);
                r = virt_place_guest(v, "holder", &p, false, &done, &err);
                if (r < 0)
                        fprintf(stderr, "   placement on the test driver: %d %s\n", r, err.message);
                ASSERT_EQ(r, 0);
                ASSERT(done.n >= 2);
                for (size_t i = 0; i < done.n; i++)
                        saw_sched |= done.changes[i].kind == VIRT_PLACE_VCPU_SCHED && done.changes[i].prio_after == 20;
                ASSERT(saw_sched);
                ASSERT_EQ(virt_vcpu0_host_cpu(v, "holder", &err), 3);
                /* No tunable event to check here: libvirt's test driver (9.0) sends none for a vcpupin, the
                 * QEMU driver does; tests/virt/test-virt-live.py checks it against libvirtd. */
                /* The test driver pins the running domain only (CURRENT); the XML of what runs shows it. */
                ASSERT_EQ(virt_domain_xml(v, "holder", false, &xml, &err), 0);
                ASSERT_CONTAINS(xml, "<vcpupin vcpu='0' cpuset='3'/>");
                ASSERT_CONTAINS(xml, "<vcpupin vcpu='1' cpuset='0-2'/>");
                ASSERT_CONTAINS(xml, "<emulatorpin cpuset='0-2'/>");
                xml = mfree(xml);
                ASSERT_EQ(virt_domain_xml(v, "holder", true, &xml, &err), 0);
                /* The persistent config is where vcpusched lives: the RT vCPU only. */
                ASSERT_CONTAINS(xml, "<vcpusched vcpus='0' scheduler='fifo' priority='20'/>");
                ASSERT(!strstr(xml, "<vcpusched vcpus='1'"));
                xml = mfree(xml);
                /* Read-modify-write: placed, nothing differs. */
                ASSERT_EQ(virt_place_guest(v, "holder", &p, false, &again, &err), 0);
                ASSERT_EQ(again.n, 0);
        }

        /* One placement per guest: vCPU 0 alone on its RT CPU at FIFO, vCPU 1 and the emulator on
         * housekeeping CPUs, memory on the node; a dry run first changes nothing. */
        {
                GuestPlacement p = { .n_rt = 1, .rt_cpus = { 5 }, .fifo_priority = 30, .memory_node = 0, .node = 0 };
                _cleanup_(virt_place_changes_done) VirtPlaceChanges dry = {}, done = {}, again = {};
                bool saw_pin0 = false, saw_pin1 = false, saw_sched = false, saw_numa = false;

                cpuset_add(&p.housekeeping, 0);
                cpuset_add(&p.housekeeping, 1);
                ASSERT_EQ(virt_place_guest(v, "holder", &p, true, &dry, &err), 0);
                ASSERT_EQ(virt_vcpu0_host_cpu(v, "holder", &err), 3);   /* dry: nothing moved */
                ASSERT_EQ(virt_place_guest(v, "holder", &p, false, &done, &err), 0);
                ASSERT_EQ(dry.n, done.n);
                for (size_t i = 0; i < done.n; i++) {
                        const VirtPlaceChange *c = &done.changes[i];
                        if (c->kind == VIRT_PLACE_VCPU_PIN && c->index == 0) {
                                ASSERT(cpuset_has(&c->before, 3) && cpuset_has(&c->after, 5) && cpuset_count(&c->after) == 1);
                                saw_pin0 = true;
                        }
                        if (c->kind == VIRT_PLACE_VCPU_PIN && c->index == 1) {
                                ASSERT(cpuset_equal(&c->after, &p.housekeeping));
                                saw_pin1 = true;
                        }
                        saw_sched |= c->kind == VIRT_PLACE_VCPU_SCHED && c->prio_after == 30 && c->index == 1;
                        saw_numa |= c->kind == VIRT_PLACE_NUMATUNE && c->node_after == 0 && c->node_before == -1;
                }
                ASSERT(saw_pin0 && saw_pin1 && saw_sched && saw_numa);
                ASSERT_EQ(virt_vcpu0_host_cpu(v, "holder", &err), 5);
                xml = mfree(xml);
                ASSERT_EQ(virt_domain_xml(v, "holder", true, &xml, &err), 0);
                /* FIFO on the RT vCPU only: the old all-vCPU entries are gone. */
                ASSERT_CONTAINS(xml, "<vcpusched vcpus='0' scheduler='fifo' priority='30'/>");
                ASSERT(!strstr(xml, "<vcpusched vcpus='1'"));
                ASSERT_CONTAINS(xml, "<memory mode='strict' nodeset='0'/>");
                /* Read-modify-write: placed, nothing differs. */
                ASSERT_EQ(virt_place_guest(v, "holder", &p, false, &again, &err), 0);
                ASSERT_EQ(again.n, 0);
        }

        /* Lifecycle through the bridge. */
        dom = domain_with("ev1", "");
        ASSERT_EQ(virt_define_xml(v, dom, &err), 0);
        wait_for(e, &rec, "defined ev1 added");
        ASSERT_EQ(virt_domain_is_active(v, "ev1", &err), 0);
        ASSERT_EQ(virt_domain_start(v, "ev1", &err), 0);
        wait_for(e, &rec, "started ev1 booted");
        /* Each event carries the domain's UUID, so that a tenant that knows it by UUID is found. */
        {
                char uuid[VIRT_UUID_STRING_MAX];
                ASSERT_EQ(virt_domain_uuid(v, "ev1", uuid, &err), 0);
                ASSERT_STREQ(rec.uuids[rec.n - 1], uuid);
        }
        ASSERT_EQ(virt_domain_is_active(v, "ev1", &err), 1);
        ASSERT_EQ(virt_domain_destroy(v, "ev1", &err), 0);
        wait_for(e, &rec, "stopped ev1 destroyed");
        ASSERT_EQ(virt_domain_undefine(v, "ev1", &err), 0);
        wait_for(e, &rec, "undefined ev1 removed");
        ASSERT_EQ(virt_domain_is_active(v, "ev1", &err), -ENOENT);
        /* A domain named like a UUID that no domain has is found by its name. */
        dom = mfree(dom);
        dom = domain_with("11111111-2222-4333-8444-555555555555", "");
        ASSERT_EQ(virt_define_xml(v, dom, &err), 0);
        ASSERT_EQ(virt_domain_is_active(v, "11111111-2222-4333-8444-555555555555", &err), 0);
        ASSERT_EQ(virt_domain_undefine(v, "11111111-2222-4333-8444-555555555555", &err), 0);

        v = virt_free(v);
        ASSERT_EQ(virt_event_n_sources(), 0);
}

/* ---- libvirt that accepts and never answers ---- */

typedef struct Silent {
        int listen_fd;
        int held[16];
        unsigned n_held;              /* atomic */
} Silent;

static void *silent_accept(void *userdata) {
        Silent *sv = userdata;

        for (;;) {
                int fd = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                unsigned n;

                if (fd < 0)
                        return NULL;
                n = __atomic_load_n(&sv->n_held, __ATOMIC_ACQUIRE);
                if (n >= ELEMENTSOF(sv->held)) {
                        close(fd);
                        continue;
                }
                sv->held[n] = fd;
                __atomic_store_n(&sv->n_held, n + 1, __ATOMIC_RELEASE);
        }
}

typedef struct Ticks {
        uint64_t last, max_gap;
} Ticks;

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Ticks *t = userdata;
        uint64_t now = now_usec();

        if (t->last)
                t->max_gap = MAX(t->max_gap, now - t->last);
        t->last = now;
        return sd_event_source_set_time_relative(s, 10 * 1000);
}

static size_t count_prefix(const Recorder *r, const char *prefix) {
        size_t n = 0;

        for (size_t i = 0; i < r->n; i++)
                n += strncmp(r->lines[i], prefix, strlen(prefix)) == 0;
        return n;
}

/*
 * Each attempt is given up after its bound while the loop keeps running; at most four attempts
 * wait at once; a given-up attempt cleans up once the server lets go; freeing returns at once.
 */
TEST(silent_libvirt) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(sd_event_source_unrefp) sd_event_source *tick = NULL;
        _cleanup_free_ char *uri = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char dir[] = "/tmp/sriovd-test-virt-XXXXXX";
        Silent sv = {};
        Ticks ticks = {};
        Recorder rec = {};
        VirtError err = {};
        pthread_t t;
        Virt *v = NULL;
        uint64_t deadline, t0;

        ASSERT(mkdtemp(dir));
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
        sv.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT(sv.listen_fd >= 0);
        ASSERT(bind(sv.listen_fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        ASSERT(listen(sv.listen_fd, 16) == 0);
        ASSERT(pthread_create(&t, NULL, silent_accept, &sv) == 0);
        ASSERT(asprintf(&uri, "qemu+unix:///system?socket=%s", sa.sun_path) > 0);

        ASSERT(sd_event_new(&e) >= 0);
        ASSERT(sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, 10 * 1000, 1, on_tick, &ticks) >= 0);
        ASSERT(sd_event_source_set_enabled(tick, SD_EVENT_ON) >= 0);
        ASSERT_EQ(virt_start(e, uri, record, &rec, &v, &err), 0);
        virt_set_open_timeout(v, 200 * 1000);
        virt_set_backoff(v, 50 * 1000, 50 * 1000);
        ASSERT(!virt_is_connected(v));

        /* Four attempts held and given up, then a fifth that finds four threads still waiting. */
        deadline = now_usec() + 10 * 1000000u;
        while (count_prefix(&rec, "connect-failed - earlier attempts") == 0 && now_usec() < deadline)
                ASSERT(sd_event_run(e, 100 * 1000) >= 0);
        for (size_t i = 0; i < rec.n; i++)
                fprintf(stderr, "   %s\n", rec.lines[i]);
        ASSERT_EQ(count_prefix(&rec, "connect-failed - libvirt at "), 4);
        ASSERT(strstr(rec.lines[0], "did not answer"));
        ASSERT_EQ(__atomic_load_n(&sv.n_held, __ATOMIC_ACQUIRE), 4);
        ASSERT(!virt_is_connected(v));
        /* The loop ran all along: its 10 ms timer was never held up for long (a loaded machine
         * delays it some; an attempt on the loop would have held it for good). */
        fprintf(stderr, "   longest gap of a 10 ms timer: %.1f ms\n", ticks.max_gap / 1e3);
        ASSERT(ticks.max_gap < 1000 * 1000);

        t0 = now_usec();
        v = virt_free(v);
        ASSERT(now_usec() - t0 < 50 * 1000);

        /* The server lets go: the abandoned threads return, and libvirt removes what they added. */
        for (unsigned i = 0; i < sv.n_held; i++)
                close(sv.held[i]);
        deadline = now_usec() + 10 * 1000000u;
        while (virt_event_n_sources() > 0 && now_usec() < deadline)
                ASSERT(sd_event_run(e, 50 * 1000) >= 0);
        ASSERT_EQ(virt_event_n_sources(), 0);

        shutdown(sv.listen_fd, SHUT_RDWR);
        close(sv.listen_fd);
        ASSERT(pthread_join(t, NULL) == 0);
        unlink(sa.sun_path);
        rmdir(dir);
}

int main(void) {
        RUN(escape);
        RUN(builders);
        RUN(builders_invalid);
        RUN(aliases);
        RUN(errno_table);
        RUN(parse_domain);
        RUN(vcpu_fifo_xml);
        RUN(add_device_xml);
        RUN(reconcile);
        RUN(libvirt_parses_fragments);
        RUN(test_driver_events_and_reconcile);
        RUN(silent_libvirt);
        return 0;
}
