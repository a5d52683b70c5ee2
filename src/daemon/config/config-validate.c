/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-validate.c — "did you mean" suggestions and the checks that need every file loaded */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* Levenshtein distance, ignoring case. Names longer than QUOTE_MAX are never valid anyway. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        size_t row[QUOTE_MAX + 1];

        if (la > QUOTE_MAX || lb > QUOTE_MAX)
                return SIZE_MAX;

        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        size_t cost = tolower((unsigned char) a[i - 1]) != tolower((unsigned char) b[j - 1]);
                        size_t best = diag + cost;
                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diag = up;
                }
        }
        return row[lb];
}

void suggestion_consider(Suggestion *s, const char *candidate) {
        size_t len = strlen(s->input), d;

        /*
         * A typo is close to the real name. An input that would have to be mostly
         * replaced is no typo: "bogus" is not a misspelt "cpus".
         */
        d = edit_distance(s->input, candidate);
        if (d <= SUGGEST_DISTANCE_MAX && 2 * d <= len && d < s->distance) {
                s->distance = d;
                s->best = candidate;
        }

        /* A name may be cut short, as in "drift_check". A completion helps only when it is unambiguous. */
        if (len >= 4 && strlen(candidate) > len && strncasecmp(s->input, candidate, len) == 0) {
                s->completion = candidate;
                s->n_completions++;
        }
}

const char *suggestion_get(const Suggestion *s) {
        if (s->best)
                return s->best;
        return s->n_completions == 1 ? s->completion : NULL;
}

void check_class_refs(Config *c, ErrorList *errors, const unsigned *lines) {
        for (size_t i = 0; i < c->n_pfs; i++) {
                const char *name = c->pfs[i].class_name;
                Suggestion s = SUGGESTION_INIT(name);
                const char *hint;
                char list[512];
                size_t k = 0;

                if (!name[0] || config_find_class(c, name))
                        continue;

                for (size_t j = 0; j < c->n_classes; j++)
                        suggestion_consider(&s, c->classes[j].name);
                hint = suggestion_get(&s);

                if (hint)
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined in %s; did you mean \"%s\"?",
                                  name, c->classes_dir, hint);
                else if (!c->classes_dir)
                        error_add(errors, 0, c->path, lines[i],
                                  "class \"%s\" is not defined; expected a class from a tenant-classes.d directory, but none is loaded",
                                  name);
                else if (c->n_classes == 0)
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined; expected a file %s/%s.ini",
                                  name, c->classes_dir, name);
                else {
                        list[0] = 0;
                        for (size_t j = 0; j < c->n_classes; j++)
                                strjoin_appendf(list, sizeof(list), &k, "%s", c->classes[j].name);
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined in %s; expected one of: %s",
                                  name, c->classes_dir, list);
                }
        }
}

void check_vf_keys(Config *c, ErrorList *errors) {
        for (size_t i = 0; i < c->n_pfs; i++) {
                const PfPolicy *pf = &c->pfs[i];

                /* The kernel takes QoS only inside the VLAN tag it belongs to. */
                if (pf->vf_qos >= 0 && pf->vf_vlan < 0)
                        error_add(errors, 0, c->path, pf->line,
                                  "vf_qos = %d without vf_vlan in this section; expected a vf_vlan for the priority to tag",
                                  pf->vf_qos);
                if (pf->vf_min_tx_rate > 0 && pf->vf_max_tx_rate > 0 && pf->vf_min_tx_rate > pf->vf_max_tx_rate)
                        error_add(errors, 0, c->path, pf->line,
                                  "vf_min_tx_rate = %d exceeds vf_max_tx_rate = %d in this section; expected min <= max",
                                  pf->vf_min_tx_rate, pf->vf_max_tx_rate);
        }
}

void check_cpus(Config *c, ErrorList *errors, const Parser *p) {
        char buf[CPUSET_LIST_MAX];
        CpuSet both;

        if (!c->have_rt_cpus || !c->have_housekeeping_cpus)
                return;

        cpuset_and(&both, &c->rt_cpus, &c->housekeeping_cpus);
        if (cpuset_is_empty(&both))
                return;

        /* The error goes at the later of the two lists, because that is where the conflict arises. */
        error_add(errors, 0, c->path, p->rt_line > p->housekeeping_line ? p->rt_line : p->housekeeping_line,
                  "rt and housekeeping CPUs overlap in %s; expected disjoint lists (a CPU is either real-time or housekeeping)",
                  cpuset_format_list(&both, buf, sizeof(buf)));
}

static bool class_prio_checked(const Config *c, const ClassInfo *info, size_t i) {
        const TenantClass *t = &c->classes[i];

        /* A rejected irq_cpus is reported already, and so is a rejected vcpu_pinning in a vcpu class.
         * A guess would mislead. */
        return info[i].prio_line > 0 && !info[i].irq_cpus_invalid &&
               !(t->irq_cpus == IRQ_CPUS_VCPU && info[i].vcpu_pinning_invalid) && t->irq_thread_priority > 0;
}

/*
 * Decides whether a class is RT for the priority order below. A class is RT when its IRQ
 * threads run on RT CPUs, whichever irq_cpus value puts them there.
 *
 * These classes are RT:
 * - irq_cpus = rt.
 * - irq_cpus = vcpu with vcpu_pinning = rt. vCPU 0 is pinned to an RT CPU, and its IRQs
 *   follow it there. This is R5's placement with R6's priority;
 *   see docs/REQUIREMENTS.md.
 * - a CPU list within [cpus] rt.
 *
 * These classes are not RT:
 * - irq_cpus = numa-local, which uses housekeeping CPUs.
 * - irq_cpus = vcpu without RT pinning, because vCPU 0 may run on any CPU.
 * - a CPU list that reaches outside [cpus] rt.
 * - any CPU list when [cpus] rt is not given. Its default, the kernel's isolated CPUs, is
 *   known only at run time.
 *
 * *why explains the verdict for a message. It is "" where the keyword says it all, as for
 * rt and numa-local.
 */
static bool class_is_rt(const Config *c, const TenantClass *t, const Parser *p, char *why, size_t size) {
        char list[CPUSET_LIST_MAX], rt[CPUSET_LIST_MAX];
        CpuSet outside;

        why[0] = 0;
        switch (t->irq_cpus) {
        case IRQ_CPUS_RT:
                return true;
        case IRQ_CPUS_VCPU:
                if (t->vcpu_pin_rt) {
                        snprintf(why, size, "; the class is RT: irq_cpus = vcpu with vcpu_pinning = rt "
                                            "puts its IRQs on vCPU 0's RT CPU");
                        return true;
                }
                snprintf(why, size, "; the class is not RT: irq_cpus = vcpu without vcpu_pinning = rt "
                                    "may put its IRQs on a housekeeping CPU");
                return false;
        case IRQ_CPUS_LIST:
                cpuset_format_list(&t->irq_cpu_list, list, sizeof(list));
                if (!c->have_rt_cpus) {
                        snprintf(why, size, "; the class is not RT: irq_cpus = %s counts as RT only within "
                                            "[cpus] rt, which %s does not set", list, c->path);
                        return false;
                }
                cpuset_andnot(&outside, &t->irq_cpu_list, &c->rt_cpus);
                cpuset_format_list(&c->rt_cpus, rt, sizeof(rt));
                if (cpuset_is_empty(&outside)) {
                        snprintf(why, size, "; the class is RT: irq_cpus = %s lies within [cpus] rt = %s (%s:%u)",
                                 list, rt, c->path, p->rt_line);
                        return true;
                }
                snprintf(why, size, "; the class is not RT: irq_cpus = %s reaches outside [cpus] rt = %s (%s:%u)",
                         list, rt[0] ? rt : "\"\"", c->path, p->rt_line);
                return false;
        default:
                return false;
        }
}

/* One priority that a class sets for its threads: irq_thread_priority, or the class's own napi_thread_priority. */
typedef struct ClassPrio {
        size_t cls;
        const char *key;
        const char *threads;            /* "IRQ" or "NAPI", for messages */
        int prio;
        unsigned line;
} ClassPrio;

/*
 * A class's own napi_thread_priority is checked like irq_thread_priority. When
 * napi_thread_priority is not set, it follows irq_thread_priority, which is checked already.
 * With napi_threads = off there are no threads to check. The class file's own check refuses a
 * priority without napi_threads = on.
 */
static size_t class_prios(const Config *c, const ClassInfo *info, size_t i, ClassPrio ret[static 2]) {
        const TenantClass *t = &c->classes[i];
        size_t n = 0;

        if (class_prio_checked(c, info, i))
                ret[n++] = (ClassPrio) { i, "irq_thread_priority", "IRQ", t->irq_thread_priority, info[i].prio_line };
        if (info[i].napi_prio_line > 0 && t->napi_thread_priority > 0 && t->napi_threads == TRISTATE_ON &&
            !info[i].irq_cpus_invalid && !(t->irq_cpus == IRQ_CPUS_VCPU && info[i].vcpu_pinning_invalid))
                ret[n++] = (ClassPrio) { i, "napi_thread_priority", "NAPI", t->napi_thread_priority,
                                         info[i].napi_prio_line };
        return n;
}

/*
 * ksoftirqd/N, ktimers/N and rcuc/N on the RT CPUs are "the rest" of R6's order for the RT
 * NIC. They must run below the softirq threshold and below every RT class's IRQ and NAPI threads.
 * Otherwise the RT NIC's receive work waits behind the softirqs of everyone else on that CPU.
 * TuneD's realtime-virtual-host profile sets ksoftirqd to 2 and rcuc to 4, and this check allows it.
 */
static void check_kthread_priorities(const Config *c, ErrorList *errors, const Parser *p, const ClassPrio *low) {
        for (size_t k = 0; k < _KTHREAD_KIND_MAX; k++) {
                int prio = c->kthread_priority[k];

                if (!kthread_priority_key(k) || prio <= 0 || p->kthread_prio_lines[k] == 0)
                        continue;
                if (c->rtnet_prio >= 0 && prio >= c->rtnet_prio)
                        error_add(errors, 0, c->path, p->kthread_prio_lines[k],
                                  "%s = %d is not below [rt] rtnet_prio = %d (%s:%u); expected the per-CPU kernel "
                                  "threads of the RT CPUs below the softirq threshold, under the RT NIC's threads",
                                  kthread_priority_key(k), prio, c->rtnet_prio, c->path, p->rtnet_prio_line);
                else if (low && prio >= low->prio)
                        error_add(errors, 0, c->path, p->kthread_prio_lines[k],
                                  "%s = %d is not below RT class \"%s\"'s %s = %d (%s:%u); expected the per-CPU "
                                  "kernel threads of the RT CPUs below every RT class's IRQ and NAPI threads",
                                  kthread_priority_key(k), prio, c->classes[low->cls].name, low->key, low->prio,
                                  c->classes[low->cls].file, low->line);
        }
}

/* What a guest thread above a per-CPU kernel thread of its CPU starves, by KthreadKind. */
static const char *kthread_starved(KthreadKind k) {
        switch (k) {
        case KTHREAD_KSOFTIRQD:
                return "the softirq work left to ksoftirqd on its CPU";
        case KTHREAD_KTIMERS:
                return "the timer softirqs of its CPU";
        case KTHREAD_RCUC:
                return "RCU callbacks on its CPU, which stalls the host";
        default:
                return "the kernel's work on its CPU";
        }
}

/*
 * Checks one guest thread priority: the RT vCPUs' vcpu_fifo_priority or the vhost workers'
 * vhost_priority. The RT order puts them last. They run below the softirq threshold and below
 * every RT class's IRQ and NAPI threads, which carry their packets. On an RT CPU they also run
 * below the per-CPU kernel threads that [rt] sets. A vCPU that spins above rcuc/N starves RCU on
 * that CPU, and with RT throttling off that stalls the host. TuneD's realtime-virtual-host runs
 * vCPUs at 1, below ksoftirqd 2 and rcuc 4. One error per key: the first rule it breaks.
 */
static void check_guest_priority(const Config *c, ErrorList *errors, const Parser *p, const ClassPrio *low,
                                 size_t i, unsigned file_idx, const char *key, const char *threads, int prio,
                                 unsigned line, bool on_rt_cpus) {
        const TenantClass *t = &c->classes[i];
        size_t worst = _KTHREAD_KIND_MAX;

        if (prio <= 0 || line == 0)
                return;
        if (c->rtnet_prio >= 0 && prio >= c->rtnet_prio) {
                error_add(errors, file_idx, t->file, line,
                          "%s = %d is not below [rt] rtnet_prio = %d (%s:%u); expected %s below the softirq "
                          "threshold, under the RT NIC's threads", key, prio, c->rtnet_prio, c->path,
                          p->rtnet_prio_line, threads);
                return;
        }
        if (low && prio >= low->prio) {
                error_add(errors, file_idx, t->file, line,
                          "%s = %d is not below RT class \"%s\"'s %s = %d (%s:%u); expected %s below every RT "
                          "class's IRQ and NAPI threads, which carry their packets", key, prio,
                          c->classes[low->cls].name, low->key, low->prio, c->classes[low->cls].file, low->line, threads);
                return;
        }
        if (!on_rt_cpus)
                return;
        for (size_t k = 0; k < _KTHREAD_KIND_MAX; k++) {
                int kprio = c->kthread_priority[k];

                if (kthread_priority_key(k) && kprio > 0 && p->kthread_prio_lines[k] > 0 && prio >= kprio &&
                    (worst == _KTHREAD_KIND_MAX || kprio < c->kthread_priority[worst]))
                        worst = k;
        }
        if (worst < _KTHREAD_KIND_MAX)
                error_add(errors, file_idx, t->file, line,
                          "%s = %d is not below [rt] %s = %d (%s:%u); expected %s on RT CPUs below the per-CPU "
                          "kernel threads there: spinning above them starves %s", key, prio,
                          kthread_priority_key(worst), c->kthread_priority[worst], c->path,
                          p->kthread_prio_lines[worst], threads, kthread_starved(worst));
}

/* The RT vCPUs and the vhost workers of every class, last in the RT order. */
static void check_guest_priorities(const Config *c, ErrorList *errors, const ClassInfo *info, const Parser *p,
                                   const ClassPrio *low) {
        for (size_t i = 0; i < c->n_classes; i++) {
                const TenantClass *t = &c->classes[i];

                if (t->vcpu_pin_rt && !info[i].vcpu_pinning_invalid)
                        check_guest_priority(c, errors, p, low, i, info[i].file_idx, "vcpu_fifo_priority",
                                             "RT vCPU threads", t->vcpu_fifo_priority, info[i].vcpu_prio_line, true);
                check_guest_priority(c, errors, p, low, i, info[i].file_idx, "vhost_priority", "vhost workers",
                                     t->vhost_priority, info[i].vhost_prio_line, t->vhost_cpus == VHOST_CPUS_RT);
        }
}

/*
 * The softirq partition works only if the priority order holds. The IRQ and NAPI threads of
 * RT classes must be at or above rtnet_prio, and those of every other class below it. Then
 * non-RT network work never runs in the RT partition, and RT work never waits on it. Without
 * rtnet_prio, the same order is required between the classes themselves.
 * class_is_rt() decides which classes are RT by where their IRQ threads run, not by the
 * irq_cpus keyword alone. An error goes at the priority line that breaks the order. Where the
 * keyword does not make it plain, the message says why the class counts as RT or not.
 * Priority 0, the kernel default, is never checked. The per-CPU kernel threads of [rt] come
 * next, below all of these, and the guests' vCPU and vhost threads last.
 */
void check_rt_priorities(const Config *c, ErrorList *errors, const ClassInfo *info, const Parser *p) {
        ClassPrio low = { .cls = SIZE_MAX };
        char why[2 * CPUSET_LIST_MAX + 256];

        for (size_t i = 0; i < c->n_classes; i++) {
                const TenantClass *t = &c->classes[i];
                ClassPrio prios[2];
                size_t n = class_prios(c, info, i, prios);
                bool rt;

                if (n == 0)
                        continue;
                rt = class_is_rt(c, t, p, why, sizeof(why));

                for (size_t j = 0; j < n; j++) {
                        const ClassPrio *e = &prios[j];

                        if (rt && (low.cls == SIZE_MAX || e->prio < low.prio))
                                low = *e;
                        if (c->rtnet_prio < 0)
                                continue;
                        if (rt && e->prio < c->rtnet_prio)
                                error_add(errors, info[i].file_idx, t->file, e->line,
                                          "%s = %d is below [rt] rtnet_prio = %d (%s:%u); "
                                          "expected an RT class's %s threads at or above the softirq threshold%s",
                                          e->key, e->prio, c->rtnet_prio, c->path, p->rtnet_prio_line, e->threads, why);
                        else if (!rt && e->prio >= c->rtnet_prio)
                                error_add(errors, info[i].file_idx, t->file, e->line,
                                          "%s = %d is not below [rt] rtnet_prio = %d (%s:%u); "
                                          "expected non-RT classes' %s threads below the softirq threshold%s",
                                          e->key, e->prio, c->rtnet_prio, c->path, p->rtnet_prio_line, e->threads, why);
                }
        }

        check_kthread_priorities(c, errors, p, low.cls == SIZE_MAX ? NULL : &low);
        check_guest_priorities(c, errors, info, p, low.cls == SIZE_MAX ? NULL : &low);

        if (c->rtnet_prio >= 0 || low.cls == SIZE_MAX)
                return;

        /* Compare with the lowest RT priority only. One error per non-RT priority is enough to fix the order. */
        for (size_t i = 0; i < c->n_classes; i++) {
                const TenantClass *t = &c->classes[i], *lt = &c->classes[low.cls];
                ClassPrio prios[2];
                size_t n = class_prios(c, info, i, prios);

                if (n == 0 || class_is_rt(c, t, p, why, sizeof(why)))
                        continue;
                for (size_t j = 0; j < n; j++) {
                        const ClassPrio *e = &prios[j];

                        if (e->prio < low.prio)
                                continue;
                        error_add(errors, info[i].file_idx, t->file, e->line,
                                  "%s = %d is not below RT class \"%s\"'s %s = %d (%s:%u); "
                                  "expected non-RT classes' %s threads below every RT class's%s",
                                  e->key, e->prio, lt->name, low.key, low.prio, lt->file, low.line, e->threads, why);
                }
        }
}

int check_alerts(Config *c, ErrorList *errors, const Parser *p) {
        AlertPolicy *all;
        size_t n = 0;

        for (size_t i = 0; i < c->n_alerts; i++) {
                AlertPolicy *a = &c->alerts[i];
                const AlertLines *l = &p->alert_lines[i];

                if (!a->builtin && !a->metric[0])
                        error_add(errors, 0, c->path, l->section,
                                  "[alert %s] has no metric key; expected metric = NAME, e.g. metric = sriovd_vf_drop_rate",
                                  a->name);
                if (!a->builtin && l->threshold == 0)
                        error_add(errors, 0, c->path, l->section,
                                  "[alert %s] has no threshold key; expected threshold = NUMBER", a->name);
                if (a->follows_target)
                        a->rule.threshold = c->vf_target_utilization / 100.0;
                /* The documented default has no hysteresis, so the alert clears at the level where it raises. */
                if (l->clear == 0 && (l->threshold > 0 || a->follows_target))
                        a->rule.clear = a->rule.threshold;
                if (alert_rule_validate(&a->rule) < 0)
                        error_add(errors, 0, c->path, l->clear ?: l->threshold ?: l->section,
                                  "[alert %s] clear = %g is on the wrong side of threshold = %g; expected clear %s threshold with direction = %s",
                                  a->name, a->rule.clear, a->rule.threshold,
                                  a->rule.direction == ALERT_ABOVE ? "<=" : ">=",
                                  alert_direction_to_string(a->rule.direction));
        }

        /* The built-in rules come first, each as its section left it, if it had one.
         * The other rules follow in file order. */
        all = calloc(alert_n_builtins + c->n_alerts, sizeof(AlertPolicy));
        if (!all)
                return -ENOMEM;
        for (size_t b = 0; b < alert_n_builtins; b++) {
                const AlertPolicy *named = NULL;

                for (size_t i = 0; i < c->n_alerts && !named; i++)
                        if (streq(c->alerts[i].name, alert_builtins[b].name))
                                named = &c->alerts[i];
                all[n] = named ? *named : alert_builtins[b];
                if (!named && all[n].follows_target)
                        all[n].rule.threshold = all[n].rule.clear = c->vf_target_utilization / 100.0;
                n++;
        }
        for (size_t i = 0; i < c->n_alerts; i++)
                if (!c->alerts[i].builtin)
                        all[n++] = c->alerts[i];
        free(c->alerts);
        c->alerts = all;
        c->n_alerts = n;
        return 0;
}
