/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-addr.c — checks the syntax of a PCI address or a UUID before it names a path or a libvirt device */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"

bool pci_addr_valid(const char *s) {
        static const char pattern[] = "xxxx:xx:xx.x";

        if (!s || strlen(s) != sizeof(pattern) - 1)
                return false;
        for (size_t i = 0; pattern[i]; i++) {
                if (pattern[i] == 'x') {
                        if (!isxdigit((unsigned char) s[i]) || isupper((unsigned char) s[i]))
                                return false;
                } else if (s[i] != pattern[i])
                        return false;
        }
        /* The device number runs from 0 to 1f and the function from 0 to 7. */
        return strtoul(s + 8, NULL, 16) <= 0x1f && s[11] <= '7';
}

int pci_addr_rid(const char *s, unsigned *ret_domain, unsigned *ret_rid) {
        if (!pci_addr_valid(s))
                return -EINVAL;
        *ret_domain = (unsigned) strtoul(s, NULL, 16);
        /* The routing ID is bus << 8 | device << 3 | function.
         * SR-IOV's First VF Offset and VF Stride count in this unit. */
        *ret_rid = (unsigned) strtoul(s + 5, NULL, 16) << 8 | (unsigned) strtoul(s + 8, NULL, 16) << 3 |
                   (unsigned) (s[11] - '0');
        return 0;
}

bool pci_addr_in(const char (*list)[PCI_ADDR_MAX], size_t n, const char *addr) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], addr) == 0)
                        return true;
        return false;
}

bool uuid_valid(const char *s) {
        if (!s || strlen(s) != UUID_STR_MAX - 1)
                return false;
        for (size_t i = 0; i < UUID_STR_MAX - 1; i++) {
                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (s[i] != '-')
                                return false;
                } else if (!isxdigit((unsigned char) s[i]) || isupper((unsigned char) s[i]))
                        return false;
        }
        return true;
}
