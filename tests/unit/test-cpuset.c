/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-cpuset.c — CPU list and mask parsing, formatting and set algebra */

#include <errno.h>

#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "test.h"

static CpuSet list(const char *s) {
        CpuSet c;
        ASSERT_EQ(cpuset_parse_list(s, &c), 0);
        return c;
}

static const char *fmt(const CpuSet *s) {
        static char buf[CPUSET_LIST_MAX];
        return cpuset_format_list(s, buf, sizeof(buf));
}

TEST(list_valid) {
        static const struct {
                const char *in, *out;
                unsigned count;
        } cases[] = {
                { "0", "0", 1 },
                { "0-3", "0-3", 4 },
                { "0-3,8-19", "0-3,8-19", 16 },
                { "4-7,20-23\n", "4-7,20-23", 8 },
                { " 1,3,5 ", "1,3,5", 3 },
                { "2,3,4,5", "2-5", 4 },
                { "5,1-2", "1-2,5", 3 },
                { "", "", 0 },
                { "1023", "1023", 1 },
                { "0-1023", "0-1023", 1024 },
                { "3-3", "3", 1 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                CpuSet s = list(cases[i].in);
                ASSERT_STREQ(fmt(&s), cases[i].out);
                ASSERT_EQ(cpuset_count(&s), cases[i].count);
        }
}

TEST(list_invalid) {
        static const char *const bad[] = { "a", "1-", "-1", "3-1", "1,,2", "1,", ",1", "1 2",
                                           "0x1", "1-2-3", "+1", "1;2" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                CpuSet s = list("7");
                ASSERT_EQ(cpuset_parse_list(bad[i], &s), -EINVAL);
                ASSERT_STREQ(fmt(&s), "7");   /* untouched on failure */
        }
        CpuSet s;
        ASSERT_EQ(cpuset_parse_list("1024", &s), -ERANGE);
        ASSERT_EQ(cpuset_parse_list("0-99999999999999999999", &s), -ERANGE);
}

TEST(mask) {
        CpuSet s;
        ASSERT_EQ(cpuset_parse_mask("0000ffff", &s), 0);
        ASSERT_STREQ(fmt(&s), "0-15");
        ASSERT_EQ(cpuset_parse_mask("ffff0000\n", &s), 0);
        ASSERT_STREQ(fmt(&s), "16-31");
        ASSERT_EQ(cpuset_parse_mask("00000001,00000000", &s), 0);
        ASSERT_STREQ(fmt(&s), "32");
        ASSERT_EQ(cpuset_parse_mask("00fc0000,00fc", &s), 0);   /* groups need not be 8 wide */
        ASSERT_STREQ(fmt(&s), "2-7,34-39");
        ASSERT_EQ(cpuset_parse_mask("A", &s), 0);
        ASSERT_STREQ(fmt(&s), "1,3");
        ASSERT_EQ(cpuset_parse_mask("", &s), -EINVAL);
        ASSERT_EQ(cpuset_parse_mask("fg", &s), -EINVAL);
}

TEST(mask_format) {
        static const char *const lists[] = { "", "0", "0-31", "2-7,18-23", "32", "0-1,8-17,24-31,40", "1023", "0-1023" };
        char buf[512];

        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                CpuSet a = list(lists[i]), b;
                ASSERT_EQ(cpuset_parse_mask(cpuset_format_mask(&a, buf, sizeof(buf)), &b), 0);
                ASSERT(cpuset_equal(&a, &b));
        }
        CpuSet s = list("0-1,8-17,24-31");
        ASSERT_STREQ(cpuset_format_mask(&s, buf, sizeof(buf)), "ff03ff03");
        s = list("32");
        ASSERT_STREQ(cpuset_format_mask(&s, buf, sizeof(buf)), "1,00000000");
        s = list("");
        ASSERT_STREQ(cpuset_format_mask(&s, buf, sizeof(buf)), "0");
}

TEST(algebra) {
        CpuSet a = list("0-7"), b = list("4-11"), r;
        cpuset_and(&r, &a, &b);
        ASSERT_STREQ(fmt(&r), "4-7");
        cpuset_or(&r, &a, &b);
        ASSERT_STREQ(fmt(&r), "0-11");
        cpuset_andnot(&r, &a, &b);
        ASSERT_STREQ(fmt(&r), "0-3");
        ASSERT(cpuset_equal(&a, &a));
        ASSERT(!cpuset_equal(&a, &b));
        ASSERT_EQ(cpuset_nth(&b, 0), 4);
        ASSERT_EQ(cpuset_nth(&b, 7), 11);
        ASSERT_EQ(cpuset_nth(&b, 8), -1);
        cpuset_clear(&r);
        ASSERT(cpuset_is_empty(&r));
}

TEST(format_truncates_cleanly) {
        CpuSet s = list("0,2,4,6,8,10,12");
        char buf[8];
        cpuset_format_list(&s, buf, sizeof(buf));
        ASSERT_STREQ(buf, "0,2,4,6");   /* whole items only */
}

int main(void) {
        RUN(list_valid);
        RUN(list_invalid);
        RUN(mask);
        RUN(mask_format);
        RUN(algebra);
        RUN(format_truncates_cleanly);
        return 0;
}
