/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* utf8.c — strict UTF-8 sequence lengths, for every writer that must not pass on invalid text */

#include <stdint.h>

#include "sriovd/shared/util.h"

size_t utf8_sequence_len(const unsigned char *s, size_t avail) {
        size_t len;
        uint32_t cp;

        if (avail == 0)
                return 0;
        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xe0) == 0xc0) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if ((s[0] & 0xf0) == 0xe0) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if ((s[0] & 0xf8) == 0xf0) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (len > avail)
                return 0;
        /* In a NUL-terminated string, the NUL fails the continuation test, so the loop never reads past it. */
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* The check is strict: it rejects overlong forms, surrogates and anything beyond U+10FFFF. */
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
                return 0;
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}
