/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* saved-sched.c — the table of thread scheduling that sriovd changed: track, prune, restore, load, save */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "base/log.h"
#include "base/runtime.h"
#include "saved-sched.h"

/*
 * Remembers the first scheduling attributes that sriovd found on a thread, and forgets them once
 * they are restored. An IRQ thread is known by its IRQ. A NAPI or per-CPU kernel thread is known
 * by its name, with irq 0. An entry under the same PID with another IRQ or name belongs to a
 * thread that is gone, so the entry is replaced.
 */
int saved_sched_table_track(SavedSchedTable *t, const Action *a) {
        SavedSched key = { .pid = a->pid };
        SavedSched *s = bsearch_safe(&key, t->items, t->n, sizeof(key), saved_sched_cmp);
        unsigned irq = a->kind == ACTION_SET_IRQ_THREAD ? a->irq : 0;
        const char *name = a->kind == ACTION_SET_IRQ_THREAD ? "" : a->thread_name;
        bool same = s && s->irq == irq && streq(s->name, name);

        t->dirty = true;
        if (a->restore) {
                if (s) {
                        memmove(s, s + 1, (size_t) (t->items + t->n - (s + 1)) * sizeof(*s));
                        t->n--;
                }
                return 0;
        }
        if (same)
                return 0;
        if (!s) {
                if (GREEDY_REALLOC(t->items, t->allocated, t->n + 1) < 0)
                        return -ENOMEM;
                s = &t->items[t->n++];
        }
        *s = (SavedSched) {
                .pid = a->pid,
                .irq = irq,
                .policy = a->policy_before,
                .priority = (int) a->before,
        };
        strscpy(s->name, sizeof(s->name), name);
        qsort_safe(t->items, t->n, sizeof(*t->items), saved_sched_cmp);
        return 0;
}

/*
 * A NAPI or per-CPU thread can go away with a channel change, a driver reload or threaded NAPI
 * turned off. Then there is nothing left to put back, and its PID may go to any new process.
 * So its entry is dropped. IRQ threads' entries stay, because a restore checks them again and
 * they are few.
 */
void saved_sched_table_prune(SavedSchedTable *t, const Inventory *inv) {
        for (size_t i = 0; i < t->n;) {
                const SavedSched *s = &t->items[i];
                bool alive = !s->name[0];

                for (size_t k = 0; !alive && k < inv->n_kthreads; k++)
                        alive = inv->kthreads[k].pid == s->pid && streq(inv->kthreads[k].name, s->name);
                if (alive) {
                        i++;
                        continue;
                }
                memmove(&t->items[i], &t->items[i + 1], (t->n - i - 1) * sizeof(SavedSched));
                t->n--;
                t->dirty = true;
        }
}

/* Puts one NAPI or per-CPU kernel thread back, only if the PID still belongs to that thread. */
static int restore_kthread(RootFs *root, const SavedSched *s) {
        char field[sizeof("SRIOVD_THREAD=") + KTHREAD_NAME_MAX];
        const char *const extra[] = { field, NULL };
        int r;

        snprintf(field, sizeof(field), "SRIOVD_THREAD=%s", s->name);
        r = sched_kthread_set(root, s->pid, s->name, NULL, s->policy, s->priority);
        if (r < 0 && r != -ESRCH)
                return log_full_errno(LOG_WARNING, r, LOG_FIELDS(.extra = extra),
                                      "Failed to restore thread %s (%d) to %s/%d: %m", s->name, (int) s->pid,
                                      sched_policy_to_string(s->policy), s->priority);
        if (r > 0)
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.extra = extra), "Restored thread %s (%d) to %s/%d",
                               s->name, (int) s->pid, sched_policy_to_string(s->policy), s->priority);
        return r;
}

static int restore_irq_thread(RootFs *root, const SavedSched *s) {
        int r;

        r = sched_thread_set(root, s->pid, s->irq, s->policy, s->priority);
        if (r < 0 && r != -ESRCH)
                return log_full_errno(LOG_WARNING, r, LOG_FIELDS(.irq = (int) s->irq),
                                      "Failed to restore IRQ %u thread %d to %s/%d: %m", s->irq, (int) s->pid,
                                      sched_policy_to_string(s->policy), s->priority);
        if (r > 0)
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.irq = (int) s->irq), "Restored IRQ %u thread %d to %s/%d",
                               s->irq, (int) s->pid, sched_policy_to_string(s->policy), s->priority);
        return r;
}

int saved_sched_table_restore(SavedSchedTable *t, RootFs *root) {
        int r, ret = 0, n_changed = 0;

        /* Put every thread back as sriovd found it, newest knowledge first. */
        while (t->n > 0) {
                const SavedSched *s = &t->items[t->n - 1];

                r = s->name[0] ? restore_kthread(root, s) : restore_irq_thread(root, s);
                if (r < 0 && r != -ESRCH)
                        ret = r;
                else if (r > 0)
                        n_changed++;
                t->n--;
        }
        t->dirty = true;
        return ret < 0 ? ret : n_changed;
}

int saved_sched_table_load(SavedSchedTable *t) {
        _cleanup_free_ char *text = NULL;
        SavedSched *saved = NULL;
        size_t n = 0;
        int r;

        r = runtime_file_read("saved-sched", &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = saved_sched_parse(text, &saved, &n);
        if (r < 0)
                return r;
        free(t->items);
        t->items = saved;
        t->n = t->allocated = n;
        return 0;
}

static void fill_saved_sched(FILE *f, const void *userdata) {
        const SavedSchedTable *t = userdata;
        saved_sched_format(f, t->items, t->n);
}

/* The file is kept in /run, so that a restart after a crash can still put the threads back as sriovd found them. */
int saved_sched_table_save(SavedSchedTable *t) {
        int r;

        r = runtime_file_write("saved-sched", 0600, fill_saved_sched, t);
        if (r < 0)
                return r;
        t->dirty = false;
        return 0;
}

void saved_sched_table_done(SavedSchedTable *t) {
        t->items = mfree(t->items);
        t->n = t->allocated = 0;
}
