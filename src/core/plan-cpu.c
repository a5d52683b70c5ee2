/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-cpu.c — the RT CPUs' deep idle states and cpufreq governor, by [rt] idle_states and cpufreq_governor */

/*
 * Both keys leave the CPUs alone by default, and --check-host then only reports. With a key on,
 * the planner writes what the host check asks for on each RT CPU. What sriovd found before its
 * first write is in the context's saved_cpu. When a key is off again, or a CPU leaves the RT set,
 * the planner puts that value back.
 */

#include <stdlib.h>
#include <string.h>

#include "sriovd/core/host-check.h"
#include "plan-internal.h"

int saved_cpu_cmp(const void *a, const void *b) {
        const SavedCpu *x = a, *y = b;

        if (x->cpu != y->cpu)
                return (x->cpu > y->cpu) - (x->cpu < y->cpu);
        return (x->idle_state > y->idle_state) - (x->idle_state < y->idle_state);
}

static const SavedCpu *find_saved(const PlanBuilder *b, unsigned cpu, int idle_state) {
        SavedCpu key = { .cpu = cpu, .idle_state = idle_state };

        return bsearch_safe(&key, b->ctx->saved_cpu, b->ctx->n_saved_cpu, sizeof(SavedCpu), saved_cpu_cmp);
}

static void plan_idle_state(PlanBuilder *b, const CpuPower *c, const HostIdleState *s, bool limit) {
        const SavedCpu *saved;
        long want;
        Action *a;

        if (limit && s->latency_us > HOST_CHECK_IDLE_LATENCY_MAX_US)
                want = 1;
        else {
                /* sriovd no longer limits this state, so it puts back what it found. */
                saved = find_saved(b, c->cpu, (int) s->index);
                if (!saved)
                        return;
                want = streq(saved->value, "1");
        }
        if (s->disabled == (want != 0))
                return;
        a = plan_add_action(b, ACTION_SET_CPU_IDLE, "", s->disabled, want);
        if (!a)
                return;
        a->cpu = c->cpu;
        a->idle_state = s->index;
        a->restore = !limit || s->latency_us <= HOST_CHECK_IDLE_LATENCY_MAX_US;
        if (a->restore)
                snprintf(a->effect, sizeof(a->effect), "%s of CPU %u back as sriovd found it", s->name, c->cpu);
        else
                snprintf(a->effect, sizeof(a->effect), "%s (%u us) off on RT CPU %u", s->name, s->latency_us, c->cpu);
}

/* Whether the space-separated list of governors has name. */
static bool governors_have(const char *list, const char *name) {
        size_t len = strlen(name);

        for (const char *p = list; (p = strstr(p, name)); p += len)
                if ((p == list || p[-1] == ' ') && (p[len] == 0 || p[len] == ' ' || p[len] == '\n'))
                        return true;
        return false;
}

static void plan_governor(PlanBuilder *b, const CpuPower *c, bool performance, CpuSet *lacking) {
        const char *want;
        const SavedCpu *saved;
        Action *a;

        if (!c->governor[0])
                return;
        if (performance) {
                want = "performance";
                if (!governors_have(c->governors, want)) {
                        if (!streq(c->governor, want))
                                cpuset_add(lacking, c->cpu);
                        return;
                }
        } else {
                saved = find_saved(b, c->cpu, -1);
                if (!saved)
                        return;
                want = saved->value;
        }
        if (streq(c->governor, want))
                return;
        a = plan_add_action(b, ACTION_SET_CPU_GOVERNOR, "", 0, 0);
        if (!a)
                return;
        a->cpu = c->cpu;
        a->restore = !performance;
        strscpy(a->governor_before, sizeof(a->governor_before), c->governor);
        strscpy(a->governor_after, sizeof(a->governor_after), want);
        if (a->restore)
                snprintf(a->effect, sizeof(a->effect), "governor of CPU %u back as sriovd found it", c->cpu);
        else
                snprintf(a->effect, sizeof(a->effect), "on RT CPU %u", c->cpu);
}

void plan_cpu_power(PlanBuilder *b) {
        char buf[CPUSET_LIST_MAX];
        CpuSet lacking = {};

        /* One pass per kind keeps the actions ordered by kind, and then by CPU. */
        for (size_t i = 0; i < b->inv->n_cpu_power; i++) {
                const CpuPower *c = &b->inv->cpu_power[i];
                bool limit = cpuset_has(&b->cpus.rt, c->cpu) && b->cfg->idle_states == IDLE_STATES_LIMIT;

                for (size_t k = 0; k < c->n_idle; k++)
                        plan_idle_state(b, c, &c->idle[k], limit);
        }
        for (size_t i = 0; i < b->inv->n_cpu_power; i++) {
                const CpuPower *c = &b->inv->cpu_power[i];

                plan_governor(b, c, cpuset_has(&b->cpus.rt, c->cpu) && b->cfg->cpufreq_governor == GOVERNOR_PERFORMANCE,
                              &lacking);
        }
        if (!cpuset_is_empty(&lacking))
                plan_add_note(b, NOTE_WARNING, "",
                              "RT CPUs %s have no performance governor in cpufreq/scaling_available_governors; "
                              "cpufreq_governor = performance not applied there",
                              cpuset_format_list(&lacking, buf, sizeof(buf)));
}
