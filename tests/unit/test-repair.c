/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-repair.c — a drift event repaired at once, without a cycle, and the cases left to the cycle */

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "manager/manager.h"
#include "test.h"

static const char *fixtures_dir;

typedef struct Scratch {
        char dir[64];
        char root[128];
        char config[128];
} Scratch;

/* A copy of the two-socket host, with the conf, the state directory and a boot id. */
static void scratch_new(Scratch *s, const char *conf) {
        char cmd[1024];
        FILE *f;

        strcpy(s->dir, "/tmp/sriovd-repair-XXXXXX");
        ASSERT(mkdtemp(s->dir));
        snprintf(s->root, sizeof(s->root), "%s/root", s->dir);
        snprintf(s->config, sizeof(s->config), "%s/sriovd.conf", s->dir);
        snprintf(cmd, sizeof(cmd),
                 "cp -a %s/fixture-two-socket %s && mkdir -p %s/proc/sys/kernel/random && "
                 "echo boot-one > %s/proc/sys/kernel/random/boot_id",
                 fixtures_dir, s->root, s->root, s->root);
        ASSERT_EQ(system(cmd), 0);
        f = fopen(s->config, "we");
        ASSERT(f);
        fprintf(f, "[daemon]\nstate_dir = %s/state\n\n%s", s->dir, conf);
        ASSERT_EQ(fclose(f), 0);
}

static void scratch_done(Scratch *s) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
        ASSERT_EQ(system(cmd), 0);
}

/* What another process writes behind sriovd's back. */
static void spill(const Scratch *s, const char *path, const char *value) {
        char full[512];
        FILE *f;

        snprintf(full, sizeof(full), "%s%s", s->root, path);
        f = fopen(full, "we");
        ASSERT(f);
        fputs(value, f);
        ASSERT_EQ(fclose(f), 0);
}

static char *slurp(const Scratch *s, const char *path, char *buf, size_t size) {
        char full[512];
        FILE *f;
        size_t n;

        snprintf(full, sizeof(full), "%s%s", s->root, path);
        f = fopen(full, "re");
        ASSERT(f);
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return buf;
}

/* stderr, where the log goes, into a file while fn runs; the text is returned. */
typedef struct Capture {
        int fd, saved;
} Capture;

static void capture_begin(Capture *c) {
        char path[] = "/tmp/test-repair-log-XXXXXX";

        c->fd = mkstemp(path);
        ASSERT(c->fd >= 0);
        ASSERT_EQ(unlink(path), 0);
        c->saved = dup(STDERR_FILENO);
        ASSERT(c->saved >= 0);
        ASSERT_EQ(dup2(c->fd, STDERR_FILENO), STDERR_FILENO);
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
}

static char *capture_end(Capture *c) {
        struct stat st;
        char *out;

        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        ASSERT_EQ(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
        close(c->saved);
        ASSERT_EQ(fstat(c->fd, &st), 0);
        out = calloc(1, (size_t) st.st_size + 1);
        ASSERT(out);
        ASSERT_EQ(pread(c->fd, out, (size_t) st.st_size, 0), st.st_size);
        close(c->fd);
        return out;
}

/* The DriftDetected signals that the bus would send. */
static char drift_seen[1024];

static void on_event(Manager *m, ManagerEvent e, const char *subject, void *userdata) {
        if (e == MANAGER_EVENT_DRIFT && strlen(drift_seen) + strlen(subject) + 2 < sizeof(drift_seen)) {
                strcat(drift_seen, subject);
                strcat(drift_seen, "\n");
        }
}

/* Places the host, and checks that it is as planned: a second cycle finds nothing to do. */
static Manager *placed(const Scratch *s) {
        Manager *m = NULL;
        CycleResult res;

        ASSERT_EQ(manager_new(s->root, s->config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        manager_set_event_fn(m, on_event, NULL);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT(res.n_done > 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        ASSERT_EQ(res.n_failed, 0);
        return m;
}

/* A VF's vector and a PF's own vector, moved from outside: put back at once, logged as drift. */
TEST(repaired_without_a_cycle) {
        _cleanup_(manager_freep) Manager *m = NULL;
        const unsigned irqs[] = { 60, 44 };
        char want60[64], want44[64], buf[64], *log;
        CycleResult res;
        Capture c;
        Scratch s;

        scratch_new(&s, "[match 15b3:101d]\nnum_vfs = 8\n");
        m = placed(&s);
        slurp(&s, "/proc/irq/60/smp_affinity_list", want60, sizeof(want60));
        slurp(&s, "/proc/irq/44/smp_affinity_list", want44, sizeof(want44));
        ASSERT(!streq(want60, "2-7") && !streq(want44, "2-7"));
        const Plan *last = manager_plan(m);
        unsigned refreshes = manager_refreshes(m);

        spill(&s, "/proc/irq/60/smp_affinity_list", "2-7");
        spill(&s, "/proc/irq/44/smp_affinity_list", "2-7");
        drift_seen[0] = 0;
        capture_begin(&c);
        int r = manager_repair_fast(m, irqs, 2, NULL, 0, &res);
        log = capture_end(&c);
        ASSERT_EQ(r, 1);
        ASSERT_EQ(res.n_done, 2);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), want60);
        ASSERT_STREQ(slurp(&s, "/proc/irq/44/smp_affinity_list", buf, sizeof(buf)), want44);
        /* The cycle's journal line and signal, with the fields that find the device. */
        char line[256];
        snprintf(line, sizeof(line), "Drift repaired: irq-affinity 0000:41:00.3 IRQ 60: 2-7 -> %s", want60);
        ASSERT_CONTAINS(log, line);
        ASSERT_CONTAINS(log, "[pf=0000:41:00.0 vf=0000:41:00.3 irq=60");
        snprintf(line, sizeof(line), "Drift repaired: irq-affinity 0000:41:00.0 IRQ 44: 2-7 -> %s", want44);
        ASSERT_CONTAINS(log, line);
        ASSERT_CONTAINS(log, "Drift events: 2 of 2 IRQs put back in ");
        ASSERT_CONTAINS(log, "without a cycle");
        ASSERT(!strstr(log, "Cycle "));
        snprintf(line, sizeof(line), "irq-affinity 0000:41:00.3 IRQ 60: 2-7 -> %s (repaired)\n", want60);
        ASSERT_CONTAINS(drift_seen, line);
        /* No cycle ran: no observe, and the last cycle's plan is still the one kept. */
        ASSERT_EQ(manager_refreshes(m), refreshes);
        ASSERT(manager_plan(m) == last);
        free(log);

        /* A second event with nothing changed writes nothing. */
        ASSERT_EQ(manager_repair_fast(m, irqs, 1, NULL, 0, &res), 1);
        ASSERT_EQ(res.n_done, 0);
        /* And the cycle agrees that the host is as planned. */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        scratch_done(&s);
}

/* What the repair at once does not know, it leaves to the cycle, and it writes nothing. */
TEST(left_to_the_cycle) {
        _cleanup_(manager_freep) Manager *m = NULL;
        const unsigned irq60 = 60, irq61 = 61, nowhere = 9999;
        const pid_t stranger = 1;
        char want60[64], buf[64], *log;
        CycleResult res;
        Capture c;
        Scratch s;

        /* The kernel refuses IRQ 61 for good (EIO): the first cycle learns it. */
        ASSERT_EQ(setenv("SRIOVD_TEST_FAIL_WRITE", "/proc/irq/61/=5", 1), 0);
        scratch_new(&s, "[match 15b3:101d]\nnum_vfs = 8\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(unsetenv("SRIOVD_TEST_FAIL_WRITE"), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 1);
        /* While the last cycle has a failure, nothing is repaired at once. */
        spill(&s, "/proc/irq/60/smp_affinity_list", "2-7");
        ASSERT_EQ(manager_repair_fast(m, &irq60, 1, NULL, 0, &res), 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), "2-7");
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT_EQ(res.n_done, 1);
        slurp(&s, "/proc/irq/60/smp_affinity_list", want60, sizeof(want60));

        /* A refused IRQ is not sriovd's to hold: its new value is the cycle's to see. */
        spill(&s, "/proc/irq/61/smp_affinity_list", "2-7");
        capture_begin(&c);
        int r = manager_repair_fast(m, &irq61, 1, NULL, 0, &res);
        log = capture_end(&c);
        ASSERT_EQ(r, 0);
        ASSERT_EQ(res.n_done, 0);
        ASSERT(!strstr(log, "Drift repaired"));
        ASSERT(!strstr(log, "without a cycle"));
        free(log);
        ASSERT_STREQ(slurp(&s, "/proc/irq/61/smp_affinity_list", buf, sizeof(buf)), "2-7");
        ASSERT_EQ(manager_repair(m, &irq61, 1, NULL, 0, &res), 0);
        ASSERT_EQ(res.n_actions, 0);

        /* An IRQ that the host does not have, and a thread that is no NIC vector's. */
        ASSERT_EQ(manager_repair_fast(m, &nowhere, 1, NULL, 0, &res), 0);
        ASSERT_EQ(manager_repair_fast(m, NULL, 0, &stranger, 1, &res), 0);
        /* One target that is not known sends the whole event to the cycle, before any write. */
        spill(&s, "/proc/irq/60/smp_affinity_list", "2-7");
        const unsigned mixed[] = { 60, 9999 };
        ASSERT_EQ(manager_repair_fast(m, mixed, 2, NULL, 0, &res), 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), "2-7");

        /* The last cycle saw IRQ 60 where it is now, not where the plan puts it. */
        ASSERT_EQ(manager_cycle(m, CYCLE_DRY_RUN, &res), 0);
        ASSERT_EQ(res.n_actions, 1);
        ASSERT_EQ(manager_repair_fast(m, &irq60, 1, NULL, 0, &res), 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), "2-7");
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), want60);

        /* The plan changed: a reload moves the PF's IRQs to other CPUs, and its cycle has not run. */
        spill(&s, "/../sriovd.conf", "[match 15b3:101d]\nnum_vfs = 8\n\n[cpus]\nhousekeeping = 0-1\n");
        ASSERT_EQ(manager_load_config(m), 0);
        spill(&s, "/proc/irq/60/smp_affinity_list", "2-7");
        ASSERT_EQ(manager_repair_fast(m, &irq60, 1, NULL, 0, &res), 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf)), "2-7");
        /* The cycle puts it where the new plan says, as sriovd's own change. */
        ASSERT_EQ(manager_repair(m, &irq60, 1, NULL, 0, &res), 0);
        ASSERT(res.n_done >= 1);
        /* Its verify reads every IRQ it wrote, not only the one the event named. */
        ASSERT_EQ(res.n_drift, 0);
        slurp(&s, "/proc/irq/60/smp_affinity_list", buf, sizeof(buf));
        ASSERT(streq(buf, "0") || streq(buf, "1"));
        scratch_done(&s);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        RUN(repaired_without_a_cycle);
        RUN(left_to_the_cycle);
        return 0;
}
