/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-alert.c — alerts raise after exactly N periods over the threshold and clear after N back past the clear level */

#include <errno.h>
#include <math.h>

#include "sriovd/core/alert.h"
#include "sriovd/shared/macro.h"
#include "test.h"

/* Feed values in turn; the transitions, one letter a period: '.' none, 'R' raised, 'C' cleared. */
static void feed(const AlertRule *rule, AlertState *s, const double *v, size_t n, char *out) {
        for (size_t i = 0; i < n; i++) {
                AlertTransition t = alert_feed(rule, s, v[i]);
                out[i] = t == ALERT_RAISED ? 'R' : t == ALERT_CLEARED ? 'C' : '.';
        }
        out[n] = 0;
}
#define FEED(rule, s, out, ...)                                                  \
        do {                                                                     \
                const double _v[] = { __VA_ARGS__ };                             \
                feed((rule), (s), _v, ELEMENTSOF(_v), (out));                    \
        } while (0)

TEST(raise_after_exactly_n) {
        AlertRule rule = alert_rule_simple(10, ALERT_ABOVE, 3);
        AlertState s = {};
        char out[64];

        ASSERT_EQ(alert_rule_validate(&rule), 0);
        /* The third consecutive period over raises, not the second, and only once. */
        FEED(&rule, &s, out, 11, 11, 11, 11, 50);
        ASSERT_STREQ(out, "..R..");
        ASSERT(s.active);

        /* A period not over starts the count again. */
        s = (AlertState) {};
        FEED(&rule, &s, out, 11, 11, 9, 11, 11, 11);
        ASSERT_STREQ(out, ".....R");

        /* At the threshold is not over it. */
        s = (AlertState) {};
        FEED(&rule, &s, out, 10, 10, 10, 10);
        ASSERT_STREQ(out, "....");
        ASSERT(!s.active);
}

TEST(clear_with_hysteresis) {
        AlertRule rule = { .threshold = 10, .clear = 5, .direction = ALERT_ABOVE, .periods = 3 };
        AlertState s = {};
        char out[64];

        ASSERT_EQ(alert_rule_validate(&rule), 0);
        FEED(&rule, &s, out, 20, 20, 20);
        ASSERT_STREQ(out, "..R");
        /* Between clear and threshold: still active, however long. */
        FEED(&rule, &s, out, 7, 7, 7, 7, 7, 8);
        ASSERT_STREQ(out, "......");
        ASSERT(s.active);
        /* Back at or under the clear level for 3 periods, the third clears; an interruption restarts it. */
        FEED(&rule, &s, out, 4, 5, 6, 4, 4, 3, 1);
        ASSERT_STREQ(out, ".....C.");
        ASSERT(!s.active);
        /* Inactive again: values between the levels are not over the threshold. */
        FEED(&rule, &s, out, 7, 7, 7, 11, 11, 11);
        ASSERT_STREQ(out, ".....R");
}

TEST(default_and_one_period) {
        AlertRule rule = alert_rule_simple(0, ALERT_ABOVE, 0);
        AlertState s = {};
        char out[64];

        /* periods 0: the default, 3 (R12). */
        FEED(&rule, &s, out, 1, 1, 1, 0, 0, 0);
        ASSERT_STREQ(out, "..R..C");

        rule.periods = 1;
        s = (AlertState) {};
        FEED(&rule, &s, out, 1, 0, 1, 1, 0);
        ASSERT_STREQ(out, "RCR.C");
}

TEST(below) {
        /* VF pool utilization under 85%, cleared at 90%. */
        AlertRule rule = { .threshold = 0.85, .clear = 0.90, .direction = ALERT_BELOW, .periods = 2 };
        AlertState s = {};
        char out[64];

        ASSERT_EQ(alert_rule_validate(&rule), 0);
        FEED(&rule, &s, out, 0.9, 0.85, 0.8, 0.7, 0.86, 0.89, 0.9, 0.95);
        ASSERT_STREQ(out, "...R...C");
}

TEST(missing_periods) {
        AlertRule rule = alert_rule_simple(10, ALERT_ABOVE, 3);
        AlertState s = {};
        char out[64];

        /* No value (the IRQ was gone) breaks a run and leaves the alert as it was. */
        FEED(&rule, &s, out, 11, 11, NAN, 11, 11, 11);
        ASSERT_STREQ(out, ".....R");
        FEED(&rule, &s, out, NAN, NAN, NAN, NAN, 1, 1, NAN, 1, 1, 1);
        ASSERT_STREQ(out, ".........C");
        /* Infinity is a value: over an ABOVE threshold. */
        FEED(&rule, &s, out, INFINITY, INFINITY, INFINITY);
        ASSERT_STREQ(out, "..R");
}

TEST(validate) {
        AlertRule rule = { .threshold = 10, .clear = 11, .direction = ALERT_ABOVE };

        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);   /* would clear above where it raises */
        rule.direction = ALERT_BELOW;
        ASSERT_EQ(alert_rule_validate(&rule), 0);
        rule.clear = 9;
        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);
        rule = alert_rule_simple(NAN, ALERT_ABOVE, 3);
        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);
        rule = alert_rule_simple(INFINITY, ALERT_ABOVE, 3);
        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);
        rule = alert_rule_simple(1, ALERT_ABOVE, ALERT_PERIODS_MAX + 1);
        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);
        rule = alert_rule_simple(1, (AlertDirection) 7, 3);
        ASSERT_EQ(alert_rule_validate(&rule), -EINVAL);
}

/* Against a model that keeps the whole history: a transition happens exactly when the last N
 * values all qualify, and none of them was already counted towards the previous transition. */
TEST(random_against_history) {
        uint64_t seed = 18;

        for (unsigned round = 0; round < 2000; round++) {
                unsigned n = 1 + test_rng(&seed, 5);
                AlertRule rule = { .threshold = 50, .clear = (double) (30 + test_rng(&seed, 21)),
                                   .direction = ALERT_ABOVE, .periods = n };
                AlertState s = {};
                double v[64];
                bool active = false;
                size_t since = 0;   /* first period that may count towards the next transition */

                for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                        bool expect = false;
                        AlertTransition t;

                        v[i] = test_rng(&seed, 10) == 0 ? NAN : (double) test_rng(&seed, 100);
                        t = alert_feed(&rule, &s, v[i]);
                        if (i + 1 >= n && i + 1 - n >= since) {
                                expect = true;
                                for (size_t k = i + 1 - n; k <= i; k++)
                                        if (isnan(v[k]) || (active ? !(v[k] <= rule.clear) : !(v[k] > rule.threshold)))
                                                expect = false;
                        }
                        ASSERT_EQ(t, expect ? (active ? ALERT_CLEARED : ALERT_RAISED) : ALERT_NONE);
                        if (expect) {
                                active = !active;
                                since = i + 1;
                        }
                        ASSERT_EQ(s.active, active);
                }
        }
}

int main(void) {
        RUN(raise_after_exactly_n);
        RUN(clear_with_hysteresis);
        RUN(default_and_one_period);
        RUN(below);
        RUN(missing_periods);
        RUN(validate);
        RUN(random_against_history);
        return 0;
}
