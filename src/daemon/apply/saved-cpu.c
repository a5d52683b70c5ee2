/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* saved-cpu.c — the table of CPU idle states and governors that sriovd changed: track, restore, load, save */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/cpu-power.h"
#include "base/log.h"
#include "base/runtime.h"
#include "saved-cpu.h"

#define SAVED_CPU_FILE "saved-cpu"

int saved_cpu_table_track(SavedCpuTable *t, const Action *a) {
        SavedCpu key = {
                .cpu = a->cpu,
                .idle_state = a->kind == ACTION_SET_CPU_IDLE ? (int) a->idle_state : -1,
        };
        SavedCpu *s = bsearch_safe(&key, t->items, t->n, sizeof(key), saved_cpu_cmp);

        if (a->restore) {
                if (s) {
                        memmove(s, s + 1, (size_t) (t->items + t->n - (s + 1)) * sizeof(*s));
                        t->n--;
                        t->dirty = true;
                }
                return 0;
        }
        /* Only the value before sriovd's first write counts. A repaired drift keeps it. */
        if (s)
                return 0;
        if (GREEDY_REALLOC(t->items, t->allocated, t->n + 1) < 0)
                return -ENOMEM;
        if (a->kind == ACTION_SET_CPU_IDLE)
                snprintf(key.value, sizeof(key.value), "%d", a->before != 0);
        else
                strscpy(key.value, sizeof(key.value), a->governor_before);
        t->items[t->n++] = key;
        qsort_safe(t->items, t->n, sizeof(*t->items), saved_cpu_cmp);
        t->dirty = true;
        return 0;
}

int saved_cpu_observe(RootFs *root, const Config *cfg, const SavedCpuTable *t, Inventory *inv) {
        CpuSet cpus = {};
        HostCpus hc;

        inv->cpu_power = mfree(inv->cpu_power);
        inv->n_cpu_power = 0;
        if (cfg->idle_states != IDLE_STATES_LEAVE || cfg->cpufreq_governor != GOVERNOR_LEAVE) {
                host_cpus(inv, cfg, &hc);
                cpus = hc.rt;
        }
        for (size_t i = 0; i < t->n; i++)
                if (t->items[i].cpu < CPUSET_MAX)
                        cpuset_add(&cpus, t->items[i].cpu);
        if (cpuset_is_empty(&cpus))
                return 0;
        return cpu_power_read(root, &cpus, &inv->cpu_power, &inv->n_cpu_power);
}

static int restore_one(RootFs *root, const SavedCpu *s) {
        char what[64];
        int r;

        if (s->idle_state >= 0) {
                snprintf(what, sizeof(what), "CPU %u idle state %d", s->cpu, s->idle_state);
                r = cpu_idle_set_disable(root, s->cpu, (unsigned) s->idle_state, streq(s->value, "1"));
        } else {
                snprintf(what, sizeof(what), "CPU %u governor", s->cpu);
                r = cpu_governor_set(root, s->cpu, s->value);
        }
        /* A CPU that is offline has no cpuidle or cpufreq files, and comes back with the kernel's defaults. */
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to restore %s to %s: %m", what, s->idle_state >= 0 ?
                                         (streq(s->value, "1") ? "disabled" : "enabled") : s->value);
        if (r > 0)
                log_info("Restored %s to %s", what,
                         s->idle_state >= 0 ? (streq(s->value, "1") ? "disabled" : "enabled") : s->value);
        return r;
}

int saved_cpu_table_restore(SavedCpuTable *t, RootFs *root) {
        int r, ret = 0, n_changed = 0;

        for (size_t i = 0; i < t->n; i++) {
                r = restore_one(root, &t->items[i]);
                if (r < 0)
                        ret = r;
                else
                        n_changed += r;
        }
        t->n = 0;
        t->dirty = true;
        return ret < 0 ? ret : n_changed;
}

void saved_cpu_format(FILE *f, const SavedCpu *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (s[i].idle_state >= 0)
                        fprintf(f, "%u idle %d %s\n", s[i].cpu, s[i].idle_state, s[i].value);
                else
                        fprintf(f, "%u governor %s\n", s[i].cpu, s[i].value);
        }
}

/* A governor's name as the kernel spells them: letters, digits, '_' and '-'. */
static bool governor_name_valid(const char *s) {
        size_t n = strlen(s);

        return n > 0 && n < HOST_NAME_MAX_LEN &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static int parse_line(char *line, SavedCpu *ret) {
        char kind[16], value[HOST_NAME_MAX_LEN + 1], extra;
        unsigned cpu;
        int state, n;

        *ret = (SavedCpu) {};
        n = sscanf(line, "%u %15s %d %32s %c", &cpu, kind, &state, value, &extra);
        if (n == 4 && streq(kind, "idle") && state >= 0 && state < HOST_IDLE_STATES_MAX &&
            (streq(value, "0") || streq(value, "1"))) {
                *ret = (SavedCpu) { .cpu = cpu, .idle_state = state };
                strscpy(ret->value, sizeof(ret->value), value);
                return cpu < CPUSET_MAX ? 0 : -EBADMSG;
        }
        n = sscanf(line, "%u %15s %32s %c", &cpu, kind, value, &extra);
        if (n == 3 && streq(kind, "governor") && governor_name_valid(value) && cpu < CPUSET_MAX) {
                *ret = (SavedCpu) { .cpu = cpu, .idle_state = -1 };
                strscpy(ret->value, sizeof(ret->value), value);
                return 0;
        }
        return -EBADMSG;
}

int saved_cpu_parse(const char *text, SavedCpu **ret, size_t *ret_n) {
        _cleanup_free_ SavedCpu *s = NULL;
        size_t n = 0, allocated = 0;

        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                char line[128];
                int r;

                if (!nl || (size_t) (nl - p) >= sizeof(line))
                        return -EBADMSG;
                memcpy(line, p, (size_t) (nl - p));
                line[nl - p] = 0;
                p = nl + 1;
                if (GREEDY_REALLOC(s, allocated, n + 1) < 0)
                        return -ENOMEM;
                r = parse_line(line, &s[n]);
                if (r < 0)
                        return r;
                n++;
        }
        qsort_safe(s, n, sizeof(*s), saved_cpu_cmp);
        /* Two lines for one file would leave it unclear which value sriovd found. */
        for (size_t i = 1; i < n; i++)
                if (saved_cpu_cmp(&s[i - 1], &s[i]) == 0)
                        return -EBADMSG;
        *ret = TAKE_PTR(s);
        *ret_n = n;
        return 0;
}

int saved_cpu_table_load(SavedCpuTable *t) {
        _cleanup_free_ char *text = NULL;
        SavedCpu *saved = NULL;
        size_t n = 0;
        int r;

        r = runtime_file_read(SAVED_CPU_FILE, &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = saved_cpu_parse(text, &saved, &n);
        if (r < 0)
                return r;
        free(t->items);
        t->items = saved;
        t->n = t->allocated = n;
        return 0;
}

static void fill_saved_cpu(FILE *f, const void *userdata) {
        const SavedCpuTable *t = userdata;
        saved_cpu_format(f, t->items, t->n);
}

int saved_cpu_table_save(SavedCpuTable *t) {
        int r;

        r = runtime_file_write(SAVED_CPU_FILE, 0600, fill_saved_cpu, t);
        if (r < 0)
                return r;
        t->dirty = false;
        return 0;
}

void saved_cpu_table_done(SavedCpuTable *t) {
        t->items = mfree(t->items);
        t->n = t->allocated = 0;
}
