/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-values.c — the syntax of the values that keys take: PCI IDs, names, paths, numbers and booleans */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

static unsigned hex_value(char c) {
        return c >= '0' && c <= '9' ? (unsigned) (c - '0') : (unsigned) (tolower((unsigned char) c) - 'a' + 10);
}

bool pci_id_parse(const char *s, PciId *ret) {
        if (strlen(s) != 9 || s[4] != ':')
                return false;
        for (size_t i = 0; i < 9; i++)
                if (i != 4 && !isxdigit((unsigned char) s[i]))
                        return false;

        *ret = (PciId) {
                .vendor = (uint16_t) (hex_value(s[0]) << 12 | hex_value(s[1]) << 8 | hex_value(s[2]) << 4 | hex_value(s[3])),
                .device = (uint16_t) (hex_value(s[5]) << 12 | hex_value(s[6]) << 8 | hex_value(s[7]) << 4 | hex_value(s[8])),
        };
        return true;
}

bool class_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= CLASS_NAME_MAX)
                return false;
        if (!(islower((unsigned char) s[0]) || isdigit((unsigned char) s[0])))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(islower((unsigned char) s[i]) || isdigit((unsigned char) s[i]) || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

/* A group name must be in the portable subset that useradd accepts: [a-z_][a-z0-9_-]*, at most 32 characters. */
bool group_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 32)
                return false;
        if (!(islower((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(islower((unsigned char) s[i]) || isdigit((unsigned char) s[i]) || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* A path must be absolute with no ".." component, because sriovd creates and writes the state directory as root. */
bool absolute_path_valid(const char *s) {
        if (s[0] != '/' || strlen(s) >= PATH_MAX || has_control_chars(s))
                return false;
        for (const char *p = s; (p = strstr(p, "..")); p += 2)
                if (p[-1] == '/' && (p[2] == '/' || p[2] == 0))
                        return false;
        return true;
}

/* Accepts decimal only. Values such as "0x10", "1e3", " 5" or "5s" are mistakes, not numbers. */
int parse_long_strict(const char *s, long *ret) {
        char *end;
        long l;

        if (!(isdigit((unsigned char) s[0]) || (s[0] == '-' && isdigit((unsigned char) s[1]))))
                return -EINVAL;
        errno = 0;
        l = strtol(s, &end, 10);
        if (*end)
                return -EINVAL;
        if (errno == ERANGE)
                return -ERANGE;
        *ret = l;
        return 0;
}

int parse_boolean(const char *s) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}
