/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-domain-xml.c — reads a domain's NICs from its XML and writes its vCPU scheduler and new devices into it with libxml2 */

#include <ctype.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/virt/virt.h"

static inline void xml_doc_freep(xmlDocPtr *d) {
        if (*d)
                xmlFreeDoc(*d);
}

static inline void xml_freep(xmlChar **p) {
        if (*p)
                xmlFree(*p);
}
#define _cleanup_xml_ _cleanup_(xml_freep)

/* The parser uses no network, no entity expansion and no DTD, because a domain XML needs none of them. */
static xmlDocPtr parse(const char *xml) {
        size_t len = strlen(xml);

        if (len > INT32_MAX)
                return NULL;
        return xmlReadMemory(xml, (int) len, "domain.xml", NULL,
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

/* Returns the whole document as a new string, which the caller frees, or -ENOMEM. */
static int dump(xmlDoc *doc, char **ret) {
        xmlChar *out = NULL;
        int size = 0;

        xmlDocDumpFormatMemory(doc, &out, &size, 0);
        if (!out)
                return -ENOMEM;
        *ret = strdup((const char *) out);
        xmlFree(out);
        return *ret ? 0 : -ENOMEM;
}

static bool is(const xmlNode *n, const char *name) {
        return n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, (const xmlChar *) name);
}

static xmlNode *child(const xmlNode *n, const char *name) {
        for (xmlNode *c = n->children; c; c = c->next)
                if (is(c, name))
                        return c;
        return NULL;
}

/* Parses a domain document into the doc and its <domain> root. Returns -EINVAL for any other document. */
static int parse_domain(const char *xml, xmlDocPtr *ret_doc, xmlNode **ret_root) {
        xmlDocPtr doc = parse(xml);
        xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;

        if (!root || !is(root, "domain")) {
                if (doc)
                        xmlFreeDoc(doc);
                return -EINVAL;
        }
        *ret_doc = doc;
        *ret_root = root;
        return 0;
}

/* Copies an attribute's value into buf. Returns false when the attribute is missing or too long. */
static bool attr(const xmlNode *n, const char *name, char *buf, size_t size) {
        _cleanup_xml_ xmlChar *v = NULL;

        if (!n)
                return false;
        v = xmlGetProp(n, (const xmlChar *) name);
        if (!v || strlen((const char *) v) >= size)
                return false;
        strcpy(buf, (const char *) v);
        return true;
}

static bool hex_attr(const xmlNode *n, const char *name, unsigned max, unsigned *ret) {
        char buf[16], *end;
        unsigned long v;

        if (!attr(n, name, buf, sizeof(buf)) || !buf[0])
                return false;
        errno = 0;
        v = strtoul(buf, &end, 0);
        if (errno != 0 || *end || v > max)
                return false;
        *ret = (unsigned) v;
        return true;
}

/* Reads <source><address type='pci' domain= bus= slot= function=/></source> as "DDDD:BB:SS.F". */
static bool source_pci(const xmlNode *dev, char ret[static PCI_ADDR_MAX]) {
        xmlNode *src = child(dev, "source"), *a = src ? child(src, "address") : NULL;
        unsigned dom = 0, bus, slot, fn;
        char type[8];

        if (!a || (attr(a, "type", type, sizeof(type)) && !streq(type, "pci")))
                return false;
        if (!hex_attr(a, "bus", 0xff, &bus) || !hex_attr(a, "slot", 0x1f, &slot) ||
            !hex_attr(a, "function", 7, &fn))
                return false;
        /* The domain attribute may be left out, and it is then 0. */
        if (xmlHasProp(a, (const xmlChar *) "domain") && !hex_attr(a, "domain", 0xffff, &dom))
                return false;
        snprintf(ret, PCI_ADDR_MAX, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
        return true;
}

static int add_nic(VirtDomainInfo *d, size_t *allocated, const VirtDomainNic *nic) {
        if (GREEDY_REALLOC(d->nics, *allocated, d->n_nics + 1) < 0)
                return -ENOMEM;
        d->nics[d->n_nics++] = *nic;
        return 0;
}

void virt_domain_info_done(VirtDomainInfo *d) {
        d->nics = mfree(d->nics);
        d->n_nics = 0;
}

int virt_domain_parse_xml(const char *xml, VirtDomainInfo *ret) {
        _cleanup_(xml_doc_freep) xmlDocPtr doc = NULL;
        _cleanup_(virt_domain_info_done) VirtDomainInfo d = {};
        xmlNode *root, *name, *devices;
        size_t allocated = 0;
        int r;

        if (parse_domain(xml, &doc, &root) < 0)
                return -EINVAL;
        name = child(root, "name");
        if (name) {
                _cleanup_xml_ xmlChar *s = xmlNodeGetContent(name);
                if (!s || strlen((const char *) s) >= sizeof(d.name))
                        return -EINVAL;
                strcpy(d.name, (const char *) s);
        }
        name = child(root, "uuid");
        if (name) {
                _cleanup_xml_ xmlChar *s = xmlNodeGetContent(name);
                /* libvirt prints it in lower case. Another spelling is kept out, and the domain is then known by name only. */
                if (s && uuid_valid((const char *) s))
                        strcpy(d.uuid, (const char *) s);
        }
        /* An active domain carries <domain id='N'>, and the inactive config has no id. */
        {
                char id[16];
                d.active = attr(root, "id", id, sizeof(id)) && !streq(id, "-1");
        }

        devices = child(root, "devices");
        for (xmlNode *n = devices ? devices->children : NULL; n; n = n->next) {
                VirtDomainNic nic = {};
                char mode[16] = "";
                xmlNode *c;

                if (is(n, "interface")) {
                        if (!attr(n, "type", nic.type, sizeof(nic.type)))
                                continue;
                        if (streq(nic.type, "hostdev")) {
                                if (!source_pci(n, nic.pci))
                                        continue;  /* a USB or unreadable source is not sriovd's */
                                nic.kind = VIRT_DEV_INTERFACE_HOSTDEV;
                        } else
                                nic.kind = VIRT_DEV_INTERFACE;
                        c = child(n, "mac");
                        if (c && attr(c, "address", nic.mac, sizeof(nic.mac)))
                                for (char *p = nic.mac; *p; p++)
                                        *p = (char) tolower((unsigned char) *p);
                        c = child(n, "bandwidth");
                        c = c ? child(c, "outbound") : NULL;
                        if (c && !hex_attr(c, "average", UINT_MAX, &nic.outbound_average))
                                nic.outbound_average = 0;
                } else if (is(n, "hostdev")) {
                        char type[16] = "";
                        if (!attr(n, "mode", mode, sizeof(mode)) || !streq(mode, "subsystem") ||
                            !attr(n, "type", type, sizeof(type)) || !streq(type, "pci") ||
                            !source_pci(n, nic.pci))
                                continue;
                        nic.kind = VIRT_DEV_HOSTDEV;
                        strcpy(nic.type, "hostdev");
                } else
                        continue;

                c = child(n, "alias");
                if (c && !attr(c, "name", nic.alias, sizeof(nic.alias)))
                        nic.alias[0] = 0;
                strcpy(nic.domain, d.name);
                r = add_nic(&d, &allocated, &nic);
                if (r < 0)
                        return r;
        }

        *ret = d;
        d = (VirtDomainInfo) {};
        return 0;
}

int virt_domain_xml_set_vcpu_fifo(const char *xml, unsigned n_vcpus, int prio, char **ret) {
        _cleanup_(xml_doc_freep) xmlDocPtr doc = NULL;
        xmlNode *root, *cputune, *next;
        char vcpus[32], priority[8];

        if (n_vcpus == 0 || n_vcpus > VIRT_VCPUS_MAX || prio < 0 || prio > 99)
                return -EINVAL;
        if (parse_domain(xml, &doc, &root) < 0)
                return -EINVAL;

        if (n_vcpus == 1)
                snprintf(vcpus, sizeof(vcpus), "0");
        else
                snprintf(vcpus, sizeof(vcpus), "0-%u", n_vcpus - 1);
        snprintf(priority, sizeof(priority), "%d", prio);

        cputune = child(root, "cputune");
        /*
         * The XML may already be as wanted. That is when the vcpusched entries are all fifo at
         * prio and cover vCPUs 0 to n-1, or when there are none and prio is 0. libvirt writes
         * one entry per vCPU back.
         */
        {
                CpuSet covered = {}, want = {};
                bool same = true, any = false;

                for (unsigned i = 0; i < n_vcpus; i++)
                        cpuset_add(&want, i);
                for (xmlNode *n = cputune ? cputune->children : NULL; n; n = n->next)
                        if (is(n, "vcpusched")) {
                                char v[CPUSET_LIST_MAX], sch[16], pr[8];
                                CpuSet set;

                                any = true;
                                if (!attr(n, "vcpus", v, sizeof(v)) || cpuset_parse_list(v, &set) < 0 ||
                                    !attr(n, "scheduler", sch, sizeof(sch)) || !streq(sch, "fifo") ||
                                    !attr(n, "priority", pr, sizeof(pr)) || !streq(pr, priority))
                                        same = false;
                                else
                                        cpuset_or(&covered, &covered, &set);
                        }
                if (prio == 0 ? !any : same && cpuset_equal(&covered, &want))
                        return 0;
        }
        if (!cputune && prio > 0) {
                cputune = xmlNewChild(root, NULL, (const xmlChar *) "cputune", NULL);
                if (!cputune)
                        return -ENOMEM;
        }
        for (xmlNode *n = cputune ? cputune->children : NULL; n; n = next) {
                next = n->next;
                if (is(n, "vcpusched")) {
                        xmlUnlinkNode(n);
                        xmlFreeNode(n);
                }
        }
        if (prio > 0) {
                xmlNode *s = xmlNewChild(cputune, NULL, (const xmlChar *) "vcpusched", NULL);
                if (!s)
                        return -ENOMEM;
                if (!xmlNewProp(s, (const xmlChar *) "vcpus", (const xmlChar *) vcpus) ||
                    !xmlNewProp(s, (const xmlChar *) "scheduler", (const xmlChar *) "fifo") ||
                    !xmlNewProp(s, (const xmlChar *) "priority", (const xmlChar *) priority))
                        return -ENOMEM;
        }

        return dump(doc, ret) < 0 ? -ENOMEM : 1;
}

int virt_domain_xml_set_numatune(const char *xml, int node, int *ret_before, char **ret) {
        _cleanup_(xml_doc_freep) xmlDocPtr doc = NULL;
        xmlNode *root, *numatune, *memory;
        char mode[16], nodeset[32], want[16];
        unsigned before;
        int end;

        if (node < 0 || node > 1023)
                return -EINVAL;
        if (parse_domain(xml, &doc, &root) < 0)
                return -EINVAL;
        snprintf(want, sizeof(want), "%d", node);
        numatune = child(root, "numatune");
        memory = numatune ? child(numatune, "memory") : NULL;
        *ret_before = -1;
        if (memory && attr(memory, "nodeset", nodeset, sizeof(nodeset)) && sscanf(nodeset, "%u%n", &before, &end) == 1 &&
            nodeset[end] == 0)
                *ret_before = (int) before;
        if (memory && attr(memory, "mode", mode, sizeof(mode)) && streq(mode, "strict") && *ret_before == node)
                return 0;
        if (!numatune) {
                numatune = xmlNewChild(root, NULL, (const xmlChar *) "numatune", NULL);
                if (!numatune)
                        return -ENOMEM;
        }
        if (memory) {
                xmlUnlinkNode(memory);
                xmlFreeNode(memory);
        }
        /* A placement of "auto" by numad is replaced too, because the VF's node is known. */
        memory = xmlNewChild(numatune, NULL, (const xmlChar *) "memory", NULL);
        if (!memory || !xmlNewProp(memory, (const xmlChar *) "mode", (const xmlChar *) "strict") ||
            !xmlNewProp(memory, (const xmlChar *) "nodeset", (const xmlChar *) want))
                return -ENOMEM;
        return dump(doc, ret) < 0 ? -ENOMEM : 1;
}

int virt_domain_xml_add_device(const char *xml, const char *device_xml, char **ret) {
        _cleanup_(xml_doc_freep) xmlDocPtr doc = NULL, dev = NULL;
        xmlNode *root, *devices, *copy;

        if (parse_domain(xml, &doc, &root) < 0)
                return -EINVAL;
        dev = parse(device_xml);
        if (!dev)
                return -EINVAL;
        devices = child(root, "devices");
        if (!devices || !xmlDocGetRootElement(dev))
                return -EINVAL;
        /* The device goes in as a deep copy that doc owns, with doc's dictionary and document pointers.
         * A node of another tree would not do. */
        copy = xmlDocCopyNode(xmlDocGetRootElement(dev), doc, 1);
        if (!copy)
                return -ENOMEM;
        if (!xmlAddChild(devices, copy)) {
                xmlFreeNode(copy);
                return -ENOMEM;
        }
        return dump(doc, ret);
}
