/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-util.c — the shared leaf utilities, linked alone: the clock, strict UTF-8, PCI address syntax */

#include <time.h>

#include "sriovd/shared/util.h"
#include "test.h"

TEST(now_usec_monotonic) {
        struct timespec ts;
        uint64_t a, b, ref;

        a = now_usec();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ref = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
        b = now_usec();
        ASSERT(a <= ref && ref <= b);
}

TEST(utf8_sequence_len) {
        static const struct {
                const char *bytes;
                size_t avail, len;
        } cases[] = {
                { "a", 1, 1 },
                { "\xc3\xa9", 2, 2 },                 /* é */
                { "\xe2\x82\xac", 3, 3 },             /* € */
                { "\xf0\x9f\x98\x80", 4, 4 },         /* U+1F600 */
                { "\xc3\xa9", 1, 0 },                 /* cut short */
                { "\xc0\xaf", 2, 0 },                 /* overlong '/' */
                { "\xe0\x80\xaf", 3, 0 },             /* overlong '/' */
                { "\xed\xa0\x80", 3, 0 },             /* surrogate U+D800 */
                { "\xf4\x90\x80\x80", 4, 0 },         /* beyond U+10FFFF */
                { "\x80", 1, 0 },                     /* lone continuation */
                { "\xc3", SIZE_MAX, 0 },              /* NUL where a continuation should be */
                { "\xff", 1, 0 },
                { "", 0, 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                ASSERT_EQ(utf8_sequence_len((const unsigned char *) cases[i].bytes, cases[i].avail), cases[i].len);
}

TEST(pci_addr_valid) {
        ASSERT(pci_addr_valid("0000:41:00.0"));
        ASSERT(pci_addr_valid("ffff:ff:1f.7"));
        ASSERT(!pci_addr_valid("0000:41:00.0/"));
        ASSERT(!pci_addr_valid("0000:41:0a.A"));
        ASSERT(!pci_addr_valid("0000-41-00.0"));
        ASSERT(!pci_addr_valid(NULL));
}

int main(void) {
        RUN(now_usec_monotonic);
        RUN(utf8_sequence_len);
        RUN(pci_addr_valid);
        return 0;
}
