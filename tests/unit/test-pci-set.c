/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-pci-set.c — the PCI address set, linked with the shared utilities alone */

#include <errno.h>
#include <stdint.h>

#include "sriovd/shared/pci-set.h"
#include "test.h"

TEST(add_contains_remove) {
        PciSet s = {};

        ASSERT_EQ(pci_set_size(&s), 0);
        ASSERT(!pci_set_contains(&s, "0000:41:00.0"));
        ASSERT(!pci_set_remove(&s, "0000:41:00.0"));

        ASSERT_EQ(pci_set_add(&s, "0000:41:00.0"), 1);
        ASSERT_EQ(pci_set_add(&s, "0000:41:00.1"), 1);
        ASSERT_EQ(pci_set_add(&s, "0000:41:00.0"), 0);   /* a repeat adds nothing */
        ASSERT_EQ(pci_set_add(&s, "0000:41:00.2"), 1);
        ASSERT_EQ(pci_set_size(&s), 3);
        ASSERT(pci_set_contains(&s, "0000:41:00.1"));
        ASSERT(!pci_set_contains(&s, "0000:41:00.3"));

        /* The addresses keep the order they came in. */
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.0");
        ASSERT_STREQ(pci_set_get(&s, 1), "0000:41:00.1");
        ASSERT_STREQ(pci_set_get(&s, 2), "0000:41:00.2");
        ASSERT_STREQ(pci_set_array(&s)[1], "0000:41:00.1");

        /* The last address takes the place of the one removed. */
        ASSERT(pci_set_remove(&s, "0000:41:00.0"));
        ASSERT(!pci_set_remove(&s, "0000:41:00.0"));
        ASSERT_EQ(pci_set_size(&s), 2);
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.2");
        ASSERT_STREQ(pci_set_get(&s, 1), "0000:41:00.1");
        ASSERT(pci_set_remove(&s, "0000:41:00.1"));
        ASSERT_EQ(pci_set_size(&s), 1);
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.2");

        pci_set_done(&s);
        ASSERT_EQ(pci_set_size(&s), 0);
        ASSERT(!s.addrs);
        pci_set_done(&s);   /* twice is harmless */
}

TEST(clear_keeps_memory) {
        PciSet s = {};

        for (unsigned i = 0; i < 8; i++) {
                char addr[PCI_ADDR_MAX];
                snprintf(addr, sizeof(addr), "0000:41:00.%u", i);
                ASSERT_EQ(pci_set_add(&s, addr), 1);
        }
        size_t allocated = s.allocated;
        pci_set_clear(&s);
        ASSERT_EQ(pci_set_size(&s), 0);
        ASSERT_EQ(s.allocated, allocated);
        ASSERT(!pci_set_contains(&s, "0000:41:00.0"));
        ASSERT_EQ(pci_set_add(&s, "0000:41:00.7"), 1);
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.7");
        pci_set_done(&s);
}

TEST(errors_leave_the_set) {
        PciSet s = {};

        ASSERT_EQ(pci_set_add(&s, "0000:41:00.0"), 1);
        /* An address that does not fit is refused, never cut. */
        ASSERT_EQ(pci_set_add(&s, "0000:41:00.0000000000"), -EINVAL);
        /* A reservation that cannot be met fails whole. */
        ASSERT_EQ(pci_set_reserve(&s, SIZE_MAX), -ENOMEM);
        ASSERT_EQ(pci_set_reserve(&s, SIZE_MAX / 4), -ENOMEM);
        ASSERT_EQ(pci_set_size(&s), 1);
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.0");

        /* After a reservation, that many adds cannot fail for lack of memory. */
        ASSERT_EQ(pci_set_reserve(&s, 3), 0);
        ASSERT(s.allocated >= 4);
        pci_set_done(&s);
}

TEST(copy_from) {
        static const char list[][PCI_ADDR_MAX] = { "0000:41:00.1", "0000:41:00.2", "0000:41:00.1" };
        PciSet s = {};

        ASSERT_EQ(pci_set_add(&s, "0000:99:00.0"), 1);
        ASSERT_EQ(pci_set_copy_from(&s, list, 3), 0);
        ASSERT_EQ(pci_set_size(&s), 2);   /* the repeat counts once */
        ASSERT(!pci_set_contains(&s, "0000:99:00.0"));
        ASSERT_STREQ(pci_set_get(&s, 0), "0000:41:00.1");
        ASSERT_STREQ(pci_set_get(&s, 1), "0000:41:00.2");
        ASSERT_EQ(pci_set_copy_from(&s, NULL, 0), 0);
        ASSERT_EQ(pci_set_size(&s), 0);
        pci_set_done(&s);
}

int main(void) {
        RUN(add_contains_remove);
        RUN(clear_keeps_memory);
        RUN(errors_leave_the_set);
        RUN(copy_from);
        return 0;
}
