/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-cpu.c — [rt] idle_states and cpufreq_governor planned on a hand-built host, and saved-cpu */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/core/host-check.h"
#include "sriovd/core/plan.h"
#include "apply/saved-cpu.h"
#include "test-fixture.h"

/*
 * A host of 8 CPUs, 4-7 RT (given in each config). Each CPU has POLL (0 us), C1 (1 us), C1E
 * (12 us) and C6 (290 us), all enabled, and the powersave governor. CPU 7 has no performance
 * governor to take.
 */
#define N_CPUS 8
static CpuPower cpus[N_CPUS];
static Inventory host;

static void host_reset(void) {
        static const HostIdleState states[] = {
                { "POLL", 0, 0, false }, { "C1", 1, 1, false }, { "C1E", 2, 12, false }, { "C6", 3, 290, false },
        };

        for (unsigned c = 0; c < N_CPUS; c++) {
                cpus[c] = (CpuPower) { .cpu = c, .n_idle = ELEMENTSOF(states) };
                memcpy(cpus[c].idle, states, sizeof(states));
                strcpy(cpus[c].governor, "powersave");
                strcpy(cpus[c].governors, c == 7 ? "powersave schedutil" : "performance powersave");
        }
        host = (Inventory) { .cpu_power = cpus, .n_cpu_power = N_CPUS };
        ASSERT_EQ(cpuset_parse_list("0-7", &host.topo.online), 0);
}

static const Action *find(const Plan *p, ActionKind kind, unsigned cpu, unsigned state) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind && p->actions[i].cpu == cpu &&
                    (kind != ACTION_SET_CPU_IDLE || p->actions[i].idle_state == state))
                        return &p->actions[i];
        return NULL;
}

static size_t count_kind(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static size_t count_notes(const Plan *p, NoteLevel level, const char *needle) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_notes; i++)
                n += p->notes[i].level == level && strstr(p->notes[i].text, needle);
        return n;
}

TEST(leave_by_default) {
        _cleanup_(config_freep) Config *c = test_config("[cpus]\nrt = 4-7\n", NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        host_reset();
        ASSERT_EQ(c->idle_states, IDLE_STATES_LEAVE);
        ASSERT_EQ(c->cpufreq_governor, GOVERNOR_LEAVE);
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_IDLE), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_GOVERNOR), 0);
}

TEST(limit_and_performance) {
        _cleanup_(config_freep) Config *c =
                test_config("[cpus]\nrt = 4-7\n[rt]\nidle_states = limit\ncpufreq_governor = performance\n", NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;
        char buf[64];

        host_reset();
        /* CPU 6 has C6 off already: only C1E is left to disable there. */
        cpus[6].idle[3].disabled = true;
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        /* C1E and C6 on CPUs 4, 5 and 7, C1E on 6; the bound is the host check's 10 us. */
        ASSERT_EQ(HOST_CHECK_IDLE_LATENCY_MAX_US, 10);
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_IDLE), 2 * 3 + 1);
        for (unsigned cpu = 0; cpu < 4; cpu++)
                ASSERT(!find(p, ACTION_SET_CPU_IDLE, cpu, 3) && !find(p, ACTION_SET_CPU_GOVERNOR, cpu, 0));
        ASSERT(!find(p, ACTION_SET_CPU_IDLE, 5, 1));
        ASSERT(!find(p, ACTION_SET_CPU_IDLE, 6, 3));
        a = find(p, ACTION_SET_CPU_IDLE, 5, 3);
        ASSERT(a);
        ASSERT_STREQ(a->target, "");
        ASSERT_EQ(a->before, 0);
        ASSERT_EQ(a->after, 1);
        ASSERT(!a->restore);
        ASSERT_STREQ(a->effect, "C6 (290 us) off on RT CPU 5");
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "enabled");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "disabled");
        ASSERT_STREQ(action_kind_to_string(a->kind), "cpu-idle");

        /* The governor on 4-6; CPU 7 has no performance governor, which is a warning, not a write. */
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_GOVERNOR), 3);
        a = find(p, ACTION_SET_CPU_GOVERNOR, 4, 0);
        ASSERT(a);
        ASSERT_STREQ(a->governor_before, "powersave");
        ASSERT_STREQ(a->governor_after, "performance");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "performance");
        ASSERT(!find(p, ACTION_SET_CPU_GOVERNOR, 7, 0));
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "RT CPUs 7 have no performance governor"), 1);

        /* Ordered by kind, then by CPU. */
        for (size_t i = 1; i < p->n_actions; i++) {
                const Action *x = &p->actions[i - 1], *y = &p->actions[i];
                if (x->kind == y->kind && x->kind == ACTION_SET_CPU_IDLE)
                        ASSERT(x->cpu < y->cpu || (x->cpu == y->cpu && x->idle_state < y->idle_state));
                if (y->kind == ACTION_SET_CPU_IDLE)
                        ASSERT(x->kind != ACTION_SET_CPU_GOVERNOR);
        }
}

TEST(already_done) {
        _cleanup_(config_freep) Config *c =
                test_config("[cpus]\nrt = 4-7\n[rt]\nidle_states = limit\ncpufreq_governor = performance\n", NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        host_reset();
        for (unsigned cpu = 4; cpu < 8; cpu++) {
                cpus[cpu].idle[2].disabled = cpus[cpu].idle[3].disabled = true;
                strcpy(cpus[cpu].governor, "performance");
        }
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_IDLE), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_CPU_GOVERNOR), 0);
        /* CPU 7 runs performance already, so its missing entry in the available list does not matter. */
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "no performance governor"), 0);
}

TEST(restore_when_the_key_goes) {
        _cleanup_(config_freep) Config *leave = test_config("[cpus]\nrt = 4-7\n", NULL);
        _cleanup_(config_freep) Config *fewer =
                test_config("[cpus]\nrt = 5-7\n[rt]\nidle_states = limit\ncpufreq_governor = performance\n", NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        /* sriovd disabled C6 on CPUs 4 and 5 and set CPU 4's governor, sorted by saved_cpu_cmp(). */
        SavedCpu saved[] = {
                { 4, -1, "schedutil" }, { 4, 3, "0" }, { 5, 3, "0" },
        };
        PlanContext ctx = { .saved_cpu = saved, .n_saved_cpu = ELEMENTSOF(saved) };
        const Action *a;

        for (size_t i = 1; i < ELEMENTSOF(saved); i++)
                ASSERT(saved_cpu_cmp(&saved[i - 1], &saved[i]) < 0);
        host_reset();
        cpus[4].idle[3].disabled = cpus[5].idle[3].disabled = true;
        strcpy(cpus[4].governor, "performance");

        /* Both keys off: the three files go back, and nothing else is touched. */
        ASSERT_EQ(plan_build(&host, leave, &ctx, &p), 0);
        ASSERT_EQ(p->n_actions, 3u);
        a = find(p, ACTION_SET_CPU_IDLE, 4, 3);
        ASSERT(a && a->restore && a->before == 1 && a->after == 0);
        ASSERT_STREQ(a->effect, "C6 of CPU 4 back as sriovd found it");
        ASSERT(find(p, ACTION_SET_CPU_IDLE, 5, 3) && find(p, ACTION_SET_CPU_IDLE, 5, 3)->restore);
        a = find(p, ACTION_SET_CPU_GOVERNOR, 4, 0);
        ASSERT(a && a->restore);
        ASSERT_STREQ(a->governor_after, "schedutil");

        /* CPU 4 left the RT set: only its files go back; CPU 5 stays limited. */
        ASSERT_EQ(plan_build(&host, fewer, &ctx, &q), 0);
        ASSERT(find(q, ACTION_SET_CPU_IDLE, 4, 3) && find(q, ACTION_SET_CPU_IDLE, 4, 3)->restore);
        ASSERT(find(q, ACTION_SET_CPU_GOVERNOR, 4, 0) && find(q, ACTION_SET_CPU_GOVERNOR, 4, 0)->restore);
        ASSERT(!find(q, ACTION_SET_CPU_IDLE, 5, 3));
        a = find(q, ACTION_SET_CPU_IDLE, 5, 2);
        ASSERT(a && !a->restore && a->after == 1);
}

TEST(saved_cpu_file) {
        static const char text[] = "4 governor schedutil\n4 idle 3 0\n5 idle 2 1\n";
        _cleanup_free_ SavedCpu *s = NULL;
        _cleanup_free_ char *out = NULL;
        size_t n = 0, len = 0;
        FILE *f;

        ASSERT_EQ(saved_cpu_parse("5 idle 2 1\n4 idle 3 0\n4 governor schedutil\n", &s, &n), 0);
        ASSERT_EQ(n, 3u);
        ASSERT_EQ(s[0].idle_state, -1);
        ASSERT_STREQ(s[0].value, "schedutil");
        f = open_memstream(&out, &len);
        ASSERT(f);
        saved_cpu_format(f, s, n);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(out, text);

        static const char *const bad[] = {
                "4 idle 3 2\n", "4 idle -1 0\n", "4 idle 16 0\n", "4 idle 3 0", "4 governor\n",
                "4 governor a/b\n", "4 governor x y\n", "x idle 3 0\n", "4 nap 3 0\n", "4 idle 3 0 extra\n",
                "99999 governor performance\n", "4 idle 3 0\n4 idle 3 1\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                SavedCpu *t = NULL;
                size_t m = 0;
                int r = saved_cpu_parse(bad[i], &t, &m);
                if (r != -EBADMSG)
                        fprintf(stderr, "accepted: %s", bad[i]);
                ASSERT_EQ(r, -EBADMSG);
        }
}

TEST(config_errors) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;

        ASSERT(config_load_string("test.conf", "[rt]\nidle_states = limit\ncpufreq_governor = ondemand\n", NULL, &c,
                                  &errors) < 0);
        ASSERT(strstr(errors, "test.conf:3: "));
        ASSERT(strstr(errors, "cpufreq_governor = \"ondemand\" is not valid; expected"));
        errors = mfree(errors);
        ASSERT(config_load_string("test.conf", "[rt]\n\nidle_states = limt\n", NULL, &c, &errors) < 0);
        ASSERT(strstr(errors, "test.conf:3: "));
        ASSERT(strstr(errors, "did you mean \"limit\"?"));
}

int main(void) {
        RUN(leave_by_default);
        RUN(limit_and_performance);
        RUN(already_done);
        RUN(restore_when_the_key_goes);
        RUN(saved_cpu_file);
        RUN(config_errors);
        return 0;
}
