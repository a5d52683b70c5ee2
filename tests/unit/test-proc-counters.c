/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-proc-counters.c — /proc/interrupts, /proc/softirqs, softnet_stat, /proc/stat and thread times: real formats, hostile ones, this kernel */

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "sriovd/kernel/proc-counters.h"
#include "test.h"

/* 6.18 (this machine), cut: the 6.12+ "PCI-MSIX-ADDR N-edge" form, named rows, ERR and MIS totals. */
static const char interrupts_618[] =
        "           CPU0       CPU1       \n"
        "  24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
        "  36:          0    6057413 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
        "  38:          0      15551 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
        "NMI:          0          0   Non-maskable interrupts\n"
        "LOC:    8198624    8094870   Local timer interrupts\n"
        "RES:    3453659    2992247   Rescheduling interrupts\n"
        "ERR:          0\n"
        "MIS:          0\n"
        "PIW:          0          0   Posted-interrupt wakeup event\n";

/* 6.1 with interrupt remapping: "IR-PCI-MSI HWIRQ-edge", a mlx5 completion vector; CPU 1 offline. */
static const char interrupts_61[] =
        "            CPU0       CPU2       CPU3       \n"
        "   0:         38          0          0   IO-APIC    2-edge      timer\n"
        " 162:     123456          7 4294967295  IR-PCI-MSI 34603009-edge      mlx5_comp0@pci:0000:41:00.0\n"
        " 163:          0          0          0  IR-PCI-MSI 34603010-edge      mlx5_comp1@pci:0000:41:00.0\n"
        "LOC:    1000000    2000000    3000000   Local timer interrupts\n";

TEST(interrupts_formats) {
        _cleanup_(counter_table_done) CounterTable t = {}, u = {};
        CounterRow loc = { .irq = COUNTER_NAMED, .name = "LOC" }, err = { .irq = COUNTER_NAMED, .name = "ERR" };
        ssize_t i;

        ASSERT_EQ(proc_interrupts_parse(interrupts_618, &t), 0);
        ASSERT_EQ(t.n_cpus, 2);
        ASSERT_EQ(t.cpus[1], 1);
        /* 3 numbered, then NMI LOC PIW RES by name; ERR and MIS are totals, not per CPU. */
        ASSERT_EQ(t.n_rows, 7);
        ASSERT_EQ(t.rows[0].irq, 24);
        ASSERT_EQ(t.rows[1].irq, 36);
        ASSERT_EQ(counter_table_value(&t, 1, 1), 6057413);
        ASSERT_STREQ(t.rows[3].name, "LOC");
        ASSERT_STREQ(t.rows[4].name, "NMI");
        ASSERT_STREQ(t.rows[6].name, "RES");
        i = counter_table_find(&t, &loc);
        ASSERT_EQ(i, 3);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 0), 8198624);
        ASSERT_EQ(counter_table_find(&t, &err), -1);

        ASSERT_EQ(proc_interrupts_parse(interrupts_61, &u), 0);
        ASSERT_EQ(u.n_cpus, 3);
        ASSERT_EQ(u.cpus[0], 0);
        ASSERT_EQ(u.cpus[1], 2);
        ASSERT_EQ(u.cpus[2], 3);
        ASSERT_EQ(u.rows[1].irq, 162);
        ASSERT_EQ(counter_table_value(&u, 1, 0), 123456);
        ASSERT_EQ(counter_table_value(&u, 1, 2), 4294967295);
        ASSERT_EQ(counter_table_find_cpu(&u, 3), 2);
        ASSERT_EQ(counter_table_find_cpu(&u, 1), -1);
}

/* Each hostile file fails with the error given and leaves *ret alone. */
static void interrupts_fail(const char *text, int error) {
        CounterTable t = { .n_rows = 4242 };
        int r = proc_interrupts_parse(text, &t);

        if (r != error)
                fprintf(stderr, "for: %s\n", text);
        ASSERT_EQ(r, error);
        ASSERT_EQ(t.n_rows, 4242);
        ASSERT(!t.rows && !t.cpus && !t.values);
}

TEST(interrupts_hostile) {
        _cleanup_(counter_table_done) CounterTable t = {};

        interrupts_fail("", -EBADMSG);
        interrupts_fail("\n", -EBADMSG);
        interrupts_fail("  24: 1 0 IO-APIC\n", -EBADMSG);                 /* no header */
        interrupts_fail("  CPU0 CPU1\n  24: 1", -EBADMSG);                /* truncated line */
        interrupts_fail("  CPU0 CPU1\n  24: 1 IO-APIC 5-edge x\n", -EBADMSG);   /* a missing column */
        interrupts_fail("  CPU0 CPU1\n  24:", -EBADMSG);
        interrupts_fail("  CPU0 CPU1\n  24 1 2\n", -EBADMSG);             /* no colon */
        interrupts_fail("  CPU0 CPU1\n  24: 1 -2\n", -EBADMSG);
        interrupts_fail("  CPU0 CPU1\n  24: 1 2x\n", -EBADMSG);
        interrupts_fail("  CPU0 CPU1\n  2x: 1 2\n", -EBADMSG);
        interrupts_fail("  CPU0 CPU1\n  24: 1 2\n  24: 3 4\n", -EBADMSG); /* twice */
        interrupts_fail("  CPU0 CPU1\nLOC: 1 2\nLOC: 3 4\n", -EBADMSG);
        interrupts_fail("  CPU1 CPU0\n  24: 1 2\n", -EBADMSG);             /* out of order */
        interrupts_fail("  CPU0 CPU0\n  24: 1 2\n", -EBADMSG);
        interrupts_fail("  CPU0 CPUx\n", -EBADMSG);
        interrupts_fail("  CPU0 GPU1\n", -EBADMSG);
        interrupts_fail("  CPU\n", -EBADMSG);
        interrupts_fail("  CPU0 CPU1024\n", -ERANGE);
        interrupts_fail("  CPU0 CPU99999999999999999999999\n", -ERANGE);
        interrupts_fail("  CPU0 CPU1\n  24: 1 18446744073709551616\n", -ERANGE);
        interrupts_fail("  CPU0 CPU1\n  24: 1 99999999999999999999999999999999\n", -ERANGE);
        interrupts_fail("  CPU0 CPU1\n  4294967295: 1 2\n", -ERANGE);
        interrupts_fail("  CPU0 CPU1\n  99999999999999999999999: 1 2\n", -ERANGE);

        /* Within bounds: the largest count, a header alone, blank lines, rows we do not know. */
        ASSERT_EQ(proc_interrupts_parse("  CPU0 CPU1\n  24: 1 18446744073709551615 chip\n\n   \n"
                                        "Err: 5\nTHIS_NAME_IS_TOO_LONG: 1 2\nI-P: 1 2\n", &t), 0);
        ASSERT_EQ(t.n_rows, 1);
        ASSERT_EQ(counter_table_value(&t, 0, 1), UINT64_MAX);
        counter_table_done(&t);
        ASSERT_EQ(proc_interrupts_parse("  CPU0\n", &t), 0);
        ASSERT_EQ(t.n_rows, 0);
        counter_table_done(&t);
        /* A chip whose name starts with a digit, and tabs. */
        ASSERT_EQ(proc_interrupts_parse("\tCPU0\tCPU1\n  0:\t5\t6\t8259A-edge timer\n", &t), 0);
        ASSERT_EQ(counter_table_value(&t, 0, 1), 6);
}

TEST(softirqs) {
        _cleanup_(counter_table_done) CounterTable t = {};
        CounterRow net_rx = { .irq = COUNTER_NAMED, .name = "NET_RX" };
        ssize_t i;

        ASSERT_EQ(proc_softirqs_parse("                    CPU0       CPU1       \n"
                                      "          HI:          0          0\n"
                                      "       TIMER:    1099386     956897\n"
                                      "      NET_TX:        754        787\n"
                                      "      NET_RX:      11191      15151\n"
                                      "       BLOCK:          0    6056729\n"
                                      "    IRQ_POLL:          0          0\n"
                                      "     TASKLET:         10          1\n"
                                      "       SCHED:    1445779    1421569\n"
                                      "     HRTIMER:          0          1\n"
                                      "         RCU:   17918745   18376050\n", &t), 0);
        ASSERT_EQ(t.n_rows, 10);
        ASSERT_EQ(t.n_cpus, 2);
        i = counter_table_find(&t, &net_rx);
        ASSERT(i >= 0);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 0), 11191);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 1), 15151);

        CounterTable keep = { .n_rows = 7 };
        ASSERT_EQ(proc_softirqs_parse("", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  NET_RX: 1\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  NET_RX: 1 2 3\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  NET_RX: 1 2\n  NET_RX: 1 2\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  net rx: 1 2\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  : 1 2\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  NET_RX 1 2\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_softirqs_parse("  CPU0 CPU1\n  NET_RX: 1 99999999999999999999\n", &keep), -ERANGE);
        ASSERT_EQ(keep.n_rows, 7);
}

/* 6.18 (this machine, two CPUs): 15 columns, the CPU's number 13th, then the input and process queue lengths. */
static const char softnet_618[] =
        "0032eb21 00000000 00000004 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
        "00329bc7 00000000 00000006 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000\n";

/* 5.10 to 6.x before the queue lengths: 13 columns, the backlog length then the CPU's number. CPU 1 is offline. */
static const char softnet_510[] =
        "0001e240 00000000 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
        "000003e8 00000011 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002 00000002\n"
        "ffffffff 00000001 000000ff 00000000 00000000 00000000 00000000 00000000 00000000 00000007 00000000 00000000 00000003\n";

/* 3.11 to 5.9: 11 columns, up to flow_limit_count, and no CPU number. */
static const char softnet_419[] =
        "0001e240 00000000 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
        "000003e8 00000011 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
        "ffffffff 00000001 000000ff 00000000 00000000 00000000 00000000 00000000 00000000 00000007 00000000\n";

/* 2.6.35 to 3.10: 10 columns, up to received_rps. */
static const char softnet_2635[] =
        "0001e240 00000000 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";

static uint64_t softnet_value(const CounterTable *t, const char *field, unsigned cpu) {
        CounterRow key = { .irq = COUNTER_NAMED };
        ssize_t i, k;

        strscpy(key.name, sizeof(key.name), field);
        i = counter_table_find(t, &key);
        k = counter_table_find_cpu(t, cpu);
        ASSERT(i >= 0 && k >= 0);
        return counter_table_value(t, (size_t) i, (size_t) k);
}

TEST(softnet) {
        _cleanup_(counter_table_done) CounterTable t = {};
        CpuSet online, all4, two;

        ASSERT_EQ(cpuset_parse_list("0,2-3", &online), 0);
        ASSERT_EQ(cpuset_parse_list("0-3", &all4), 0);
        ASSERT_EQ(cpuset_parse_list("0-1", &two), 0);

        /* With the CPU's number, the online CPUs are not needed, and are ignored when given. */
        ASSERT_EQ(proc_softnet_parse(softnet_618, NULL, &t), 0);
        ASSERT_EQ(t.n_rows, PROC_SOFTNET_FIELDS);
        ASSERT_EQ(t.n_cpus, 2);
        ASSERT_EQ(softnet_value(&t, "processed", 0), 0x32eb21);
        ASSERT_EQ(softnet_value(&t, "time_squeeze", 1), 6);
        ASSERT_EQ(softnet_value(&t, "dropped", 1), 0);
        counter_table_done(&t);

        /* An offline CPU has no line: the numbers say which CPU each line is. */
        ASSERT_EQ(proc_softnet_parse(softnet_510, &all4, &t), 0);
        ASSERT_EQ(t.n_cpus, 3);
        ASSERT_EQ(t.cpus[0], 0);
        ASSERT_EQ(t.cpus[1], 2);
        ASSERT_EQ(t.cpus[2], 3);
        ASSERT_EQ(softnet_value(&t, "processed", 0), 123456);
        ASSERT_EQ(softnet_value(&t, "dropped", 2), 0x11);
        ASSERT_EQ(softnet_value(&t, "processed", 3), 0xffffffffu);
        ASSERT_EQ(softnet_value(&t, "time_squeeze", 3), 255);
        counter_table_done(&t);

        /* Before 5.10 the same counts need the online CPUs, and give the same table. */
        ASSERT_EQ(proc_softnet_parse(softnet_419, NULL, &t), -ENODATA);
        ASSERT_EQ(proc_softnet_parse(softnet_419, &online, &t), 0);
        ASSERT_EQ(t.n_cpus, 3);
        ASSERT_EQ(t.cpus[1], 2);
        ASSERT_EQ(softnet_value(&t, "dropped", 2), 0x11);
        ASSERT_EQ(softnet_value(&t, "time_squeeze", 3), 255);
        counter_table_done(&t);
        /* A CPU went on- or offline between the two reads. */
        ASSERT_EQ(proc_softnet_parse(softnet_419, &all4, &t), -ESTALE);
        ASSERT_EQ(proc_softnet_parse(softnet_419, &two, &t), -ESTALE);
        ASSERT_EQ(proc_softnet_parse(softnet_2635, &online, &t), -ESTALE);
        ASSERT_EQ(cpuset_parse_list("5", &online), 0);
        ASSERT_EQ(proc_softnet_parse(softnet_2635, &online, &t), 0);
        ASSERT_EQ(t.cpus[0], 5);
        ASSERT_EQ(softnet_value(&t, "time_squeeze", 5), 3);
        counter_table_done(&t);

        /* What the kernel would not print. The table is untouched. */
        CounterTable keep = { .n_rows = 7 };
        ASSERT_EQ(proc_softnet_parse("", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("\n\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("00000001 00000002 00000003\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("0000000g 0 0 0 0 0 0 0 0 0 0 0 0\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("-1 0 0 0 0 0 0 0 0 0 0 0 0\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("0x1 0 0 0 0 0 0 0 0 0 0 0 0\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("1ffffffffffffffff 0 0 0 0 0 0 0 0 0 0 0 0\n", &all4, &keep), -ERANGE);
        /* CPU numbers out of order, twice, or beyond CPUSET_MAX. */
        ASSERT_EQ(proc_softnet_parse("1 0 0 0 0 0 0 0 0 0 0 0 2\n1 0 0 0 0 0 0 0 0 0 0 0 1\n", NULL, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("1 0 0 0 0 0 0 0 0 0 0 0 2\n1 0 0 0 0 0 0 0 0 0 0 0 2\n", NULL, &keep), -EBADMSG);
        ASSERT_EQ(proc_softnet_parse("1 0 0 0 0 0 0 0 0 0 0 0 400\n", NULL, &keep), -ERANGE);
        /* Lines of two formats in one file. */
        ASSERT_EQ(proc_softnet_parse("1 0 0 0 0 0 0 0 0 0 0 0 0\n1 0 0 0 0 0 0 0 0 0 0\n", &all4, &keep), -EBADMSG);
        ASSERT_EQ(keep.n_rows, 7);

        /* Tabs, a line without its newline, and more columns than any kernel has yet. */
        ASSERT_EQ(proc_softnet_parse("a\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t1\t0\t0\t0\t9", NULL, &t), 0);
        ASSERT_EQ(t.cpus[0], 1);
        ASSERT_EQ(softnet_value(&t, "processed", 1), 10);
}

TEST(cpu_times) {
        _cleanup_(counter_table_done) CounterTable t = {};
        CounterRow irq = { .irq = COUNTER_NAMED, .name = "irq" }, softirq = { .irq = COUNTER_NAMED, .name = "softirq" };
        ssize_t i;

        ASSERT_EQ(proc_cpu_times_parse("cpu  1852575 53922 1446903 1470590 11785 0 5553 2131 0 0\n"
                                       "cpu0 912955 28096 688630 783771 3986 17 632 1036 0 0\n"
                                       "cpu3 939619 25826 758273 686819 7798 4 4920 1095 0 0\n"
                                       "intr 58441508 0 0 0\n"
                                       "ctxt 151988444\n"
                                       "softirq 61258218 1 2 3\n", &t), 0);
        ASSERT_EQ(t.n_cpus, 2);
        ASSERT_EQ(t.cpus[1], 3);
        ASSERT_EQ(t.n_rows, PROC_CPU_TIME_FIELDS);
        i = counter_table_find(&t, &irq);
        ASSERT(i >= 0);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 0), 17);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 1), 4);
        i = counter_table_find(&t, &softirq);
        ASSERT(i >= 0);
        ASSERT_EQ(counter_table_value(&t, (size_t) i, 1), 4920);

        CounterTable keep = { .n_rows = 7 };
        ASSERT_EQ(proc_cpu_times_parse("", &keep), -EBADMSG);
        ASSERT_EQ(proc_cpu_times_parse("cpu  1 2 3 4 5 6 7 8\nintr 5\n", &keep), -EBADMSG);   /* no CPU */
        ASSERT_EQ(proc_cpu_times_parse("cpu0 1 2 3 4 5 6 7\n", &keep), -EBADMSG);            /* no steal */
        ASSERT_EQ(proc_cpu_times_parse("cpu0 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_cpu_times_parse("cpu1 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_cpu_times_parse("cpu0 1 2 3 4 x 6 7 8\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_cpu_times_parse("cpu0x 1 2 3 4 5 6 7 8\n", &keep), -EBADMSG);
        ASSERT_EQ(proc_cpu_times_parse("cpu0 1 2 3 4 5 6 7 99999999999999999999\n", &keep), -ERANGE);
        ASSERT_EQ(proc_cpu_times_parse("cpu4096 1 2 3 4 5 6 7 8\n", &keep), -ERANGE);
        ASSERT_EQ(keep.n_rows, 7);
}

/* Parsed and compared as the sampler will: CPU 1 goes offline between the samples, IRQ 38 goes, 39 comes. */
TEST(two_samples) {
        _cleanup_(counter_table_done) CounterTable a = {}, b = {};
        _cleanup_(counter_rates_done) CounterRates r = {};

        ASSERT_EQ(proc_interrupts_parse("  CPU0 CPU1 CPU2\n 36: 100 200 300 x\n 38: 5 5 5 x\nLOC: 10 10 10 t\n", &a), 0);
        ASSERT_EQ(proc_interrupts_parse("  CPU0 CPU2\n 36: 600 1300 x\n 39: 50 0 x\nLOC: 20 5010 t\n", &b), 0);
        ASSERT_EQ(counter_table_rates(&a, &b, 5000000, &r), 0);
        ASSERT_EQ(r.n_cpus, 2);
        ASSERT_EQ(r.n_rows, 3);
        ASSERT_EQ(r.rows[0].irq, 36);
        ASSERT_EQ((long long) counter_rates_value(&r, 0, 0), 100);
        ASSERT_EQ((long long) counter_rates_value(&r, 0, 1), 200);
        ASSERT_EQ(r.rows[1].irq, 39);
        ASSERT(r.reset[1]);
        ASSERT_EQ((long long) counter_rates_value(&r, 1, 0), 10);
        ASSERT_STREQ(r.rows[2].name, "LOC");
        ASSERT_EQ((long long) counter_rates_value(&r, 2, 1), 1000);
}

/* A large host's file (64 CPUs, 4,224 IRQs): parsed whole, every count in its place. */
TEST(large) {
        _cleanup_(counter_table_done) CounterTable t = {};
        size_t size = 5u << 20, n = 0;
        _cleanup_free_ char *buf = malloc(size);

        ASSERT(buf);
        n += (size_t) snprintf(buf + n, size - n, "      ");
        for (unsigned c = 0; c < 64; c++)
                n += (size_t) snprintf(buf + n, size - n, "CPU%-8u", c);
        n += (size_t) snprintf(buf + n, size - n, "\n");
        for (unsigned irq = 100; irq < 100 + 4224; irq++) {
                n += (size_t) snprintf(buf + n, size - n, "%5u:", irq);
                for (unsigned c = 0; c < 64; c++)
                        n += (size_t) snprintf(buf + n, size - n, " %10u", irq * 64 + c);
                n += (size_t) snprintf(buf + n, size - n, "  IR-PCI-MSIX-0000:41:00.0 %u-edge mlx5_comp%u\n", irq, irq);
                ASSERT(n < size - 1024);
        }
        ASSERT_EQ(proc_interrupts_parse(buf, &t), 0);
        ASSERT_EQ(t.n_rows, 4224);
        ASSERT_EQ(t.n_cpus, 64);
        for (size_t i = 0; i < t.n_rows; i++)
                for (size_t c = 0; c < 64; c++)
                        ASSERT_EQ(counter_table_value(&t, i, c), (100 + i) * 64 + c);
}

static volatile unsigned long burn_sink;

/* A thread that says its TID on fds[0] and exits once fds[1] has something. */
static void *tid_then_wait(void *userdata) {
        const int *fds = userdata;
        pid_t tid = (pid_t) syscall(SYS_gettid);
        char c;

        if (write(fds[0], &tid, sizeof(tid)) != (ssize_t) sizeof(tid) || read(fds[1], &c, 1) != 1)
                abort();
        return NULL;
}

/* The readers on a fixture root, and on this machine's own /proc (read only). */
TEST(schedstat) {
        ThreadSchedstat a, b;
        uint64_t wait, slices;

        ASSERT_EQ(proc_schedstat_parse("123 456 7\n", &a), 0);
        ASSERT(a.run_ns == 123 && a.wait_ns == 456 && a.timeslices == 7);
        ASSERT_EQ(proc_schedstat_parse("18446744073709551615 0 0", &b), 0);
        ASSERT_EQ(b.run_ns, UINT64_MAX);
        ASSERT_EQ(proc_schedstat_parse("", &b), -EBADMSG);
        ASSERT_EQ(proc_schedstat_parse("1 2", &b), -EBADMSG);
        ASSERT_EQ(proc_schedstat_parse("1 2 3 4", &b), -EBADMSG);
        ASSERT_EQ(proc_schedstat_parse("1 -2 3", &b), -EBADMSG);
        ASSERT_EQ(proc_schedstat_parse("1 2 x", &b), -EBADMSG);
        ASSERT_EQ(proc_schedstat_parse("1 2 18446744073709551616", &b), -EBADMSG);

        /* 3 ms waited over 3 timeslices: 1 ms each. */
        ASSERT_EQ(proc_schedstat_parse("2000 3000456 10", &b), 0);
        ASSERT_EQ(thread_schedstat_delta(&a, &b, &wait, &slices), 0);
        ASSERT(wait == 3000000 && slices == 3);
        /* A counter that went down is another thread under the same TID. */
        ASSERT_EQ(thread_schedstat_delta(&b, &a, &wait, &slices), -ERANGE);
}

TEST(readers) {
        char dir[] = "/tmp/sriovd-proc-XXXXXX", path[512];
        _cleanup_(rootfs_freep) RootFs *fixture = NULL, *real = NULL;
        _cleanup_(counter_table_done) CounterTable a = {}, b = {}, c = {}, d = {};
        ThreadTimes before, after;
        pid_t tid = (pid_t) syscall(SYS_gettid);

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/proc", dir);
        ASSERT_EQ(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/proc/interrupts", dir);
        test_write_file(path, interrupts_61);
        snprintf(path, sizeof(path), "%s/proc/softirqs", dir);
        test_write_file(path, "  CPU0\n NET_RX: 9\n");
        snprintf(path, sizeof(path), "%s/proc/stat", dir);
        test_write_file(path, "cpu0 1 2 3 4 5 6 7 8 9 10\n");
        snprintf(path, sizeof(path), "mkdir -p %s/proc/net %s/sys/devices/system/cpu", dir, dir);
        ASSERT_EQ(system(path), 0);
        snprintf(path, sizeof(path), "%s/proc/net/softnet_stat", dir);
        test_write_file(path, softnet_419);
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", dir);
        test_write_file(path, "0,2-3\n");
        ASSERT_EQ(rootfs_new(dir, NULL, &fixture), 0);
        ASSERT_EQ(proc_interrupts_read(fixture, &a), 0);
        ASSERT_EQ(a.n_cpus, 3);
        ASSERT_EQ(proc_softirqs_read(fixture, &b), 0);
        ASSERT_EQ(counter_table_value(&b, 0, 0), 9);
        ASSERT_EQ(proc_cpu_times_read(fixture, &c), 0);
        ASSERT_EQ(c.cpus[0], 0);
        counter_table_done(&c);
        /* Before 5.10: the reader places the lines on the online CPUs. */
        ASSERT_EQ(proc_softnet_read(fixture, &c), 0);
        ASSERT_EQ(c.n_cpus, 3);
        ASSERT_EQ(c.cpus[2], 3);
        counter_table_done(&c);
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", dir);
        test_write_file(path, "0-1\n");
        ASSERT_EQ(proc_softnet_read(fixture, &c), -ESTALE);
        snprintf(path, sizeof(path), "%s/proc/net/softnet_stat", dir);
        test_write_file(path, softnet_510);
        ASSERT_EQ(proc_softnet_read(fixture, &c), 0);
        ASSERT_EQ(c.n_cpus, 3);
        ASSERT_EQ(proc_thread_times_read(fixture, 1, 1, &before), -ENOENT);
        counter_table_done(&a);
        counter_table_done(&b);
        counter_table_done(&c);

        /* A thread file that names another thread. */
        snprintf(path, sizeof(path), "mkdir -p %s/proc/5/task/6", dir);
        ASSERT_EQ(system(path), 0);
        snprintf(path, sizeof(path), "%s/proc/5/task/6/stat", dir);
        test_write_file(path, "7 (x) S 1 1 1 0 -1 4194304 0 0 0 0 3 4 0 0 20 0 1 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
        ASSERT_EQ(proc_thread_times_read(fixture, 5, 6, &before), -EBADMSG);
        test_write_file(path, "6 (x) S 1 1 1 0 -1 4194304 0 0 0 0 3 4 0 0 20 0 1 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
        ASSERT_EQ(proc_thread_times_read(fixture, 5, 6, &before), 0);
        ASSERT_EQ(before.utime, 3);
        ASSERT_EQ(before.stime, 4);
        ASSERT_EQ(before.start_time, 99);
        test_write_file(path, "6 (x) S 1 1 1 0 -1 4194304 0 0 0 0 3 4\n");
        ASSERT_EQ(proc_thread_times_read(fixture, 5, 6, &before), -EBADMSG);
        ASSERT_EQ(proc_thread_times_read(fixture, 0, 6, &before), -EINVAL);

        /* Kept open and read again: the file as it is now (the kernel's is rewritten in place). */
        test_write_file(path, "6 (x) S 1 1 1 0 -1 4194304 0 0 0 0 3 4 0 0 20 0 1 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
        int fd = proc_thread_times_open(fixture, 5, 6);
        ASSERT(fd >= 0);
        ASSERT_EQ(proc_thread_times_reread(fd, 5, 6, &before), 0);
        ASSERT_EQ(before.utime, 3);
        test_write_file(path, "6 (x) S 1 1 1 0 -1 4194304 0 0 0 0 30 40 0 0 20 0 1 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
        ASSERT_EQ(proc_thread_times_reread(fd, 5, 6, &before), 0);
        ASSERT_EQ(before.utime, 30);
        ASSERT_EQ(before.stime, 40);
        ASSERT_EQ(proc_thread_times_reread(fd, 5, 7, &before), -EBADMSG);
        close(fd);
        ASSERT_EQ(proc_thread_times_open(fixture, 5, 8), -ENOENT);
        sh("mkdir -p %s/proc/9/task/9 && mkfifo %s/proc/9/task/9/stat", dir, dir);
        ASSERT_EQ(proc_thread_times_open(fixture, 9, 9), -EBADF);
        sh("rm -rf %s", dir);

        /* This kernel's files parse (whatever its version prints), and this thread's time grows. */
        ASSERT_EQ(rootfs_new("/", NULL, &real), 0);
        ASSERT_EQ(proc_interrupts_read(real, &a), 0);
        ASSERT(a.n_cpus >= 1 && a.n_rows >= 1);
        ASSERT_EQ(proc_softirqs_read(real, &b), 0);
        ASSERT(counter_table_find(&b, &(CounterRow) { .irq = COUNTER_NAMED, .name = "NET_RX" }) >= 0);
        ASSERT_EQ(proc_cpu_times_read(real, &c), 0);
        ASSERT(c.n_cpus >= 1);
        {
                _cleanup_(counter_table_done) CounterTable sn = {};
                int r = proc_softnet_read(real, &sn);

                /* A kernel without CONFIG_PROC_FS for net has no file; otherwise it parses. */
                ASSERT(r == 0 || r == -ENOENT);
                ASSERT(r < 0 || (sn.n_cpus >= 1 && sn.n_cpus <= c.n_cpus));
        }

        ASSERT_EQ(proc_thread_times_read(real, getpid(), tid, &before), 0);
        /* Burn 300 ms of CPU in this thread: at USER_HZ 100 that is about 30 ticks. */
        struct timespec t0, t1;
        ASSERT_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0), 0);
        do {
                for (unsigned k = 0; k < 100000; k++)
                        burn_sink += k;
                ASSERT_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1), 0);
        } while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 300000000L);
        ASSERT_EQ(proc_thread_times_read(real, getpid(), tid, &after), 0);
        ASSERT_EQ(after.start_time, before.start_time);
        fprintf(stderr, "this thread: %llu -> %llu ticks\n", (unsigned long long) (before.utime + before.stime),
                (unsigned long long) (after.utime + after.stime));
        ASSERT(after.utime + after.stime >= before.utime + before.stime + 15);

        /* Held open: the same figures, and -ESRCH once the thread has gone (its TID may be reused). */
        fd = proc_thread_times_open(real, getpid(), tid);
        ThreadTimes held;
        ASSERT(fd >= 0);
        ASSERT_EQ(proc_thread_times_reread(fd, getpid(), tid, &held), 0);
        ASSERT(held.utime + held.stime >= after.utime + after.stime);
        ASSERT_EQ(held.start_time, after.start_time);
        close(fd);
        {
                int to_main[2], to_thread[2], fds[2];
                pthread_t th;
                pid_t other;

                ASSERT_EQ(pipe(to_main), 0);
                ASSERT_EQ(pipe(to_thread), 0);
                fds[0] = to_main[1];
                fds[1] = to_thread[0];
                ASSERT_EQ(pthread_create(&th, NULL, tid_then_wait, fds), 0);
                ASSERT_EQ(read(to_main[0], &other, sizeof(other)), (ssize_t) sizeof(other));
                fd = proc_thread_times_open(real, getpid(), other);
                ASSERT(fd >= 0);
                ASSERT_EQ(proc_thread_times_reread(fd, getpid(), other, &held), 0);
                ASSERT_EQ(write(to_thread[1], "x", 1), 1);
                ASSERT_EQ(pthread_join(th, NULL), 0);
                /* pthread_join() returns when the kernel clears the thread's TID, which is before
                 * it releases the task: /proc may answer for a moment longer (CI saw it once
                 * under ASan). The read must turn to -ESRCH, and stay a real error, within 5 s. */
                int gone;
                for (unsigned k = 0; (gone = proc_thread_times_reread(fd, getpid(), other, &held)) == 0 && k < 500; k++)
                        usleep(10000);
                ASSERT_EQ(gone, -ESRCH);
                close(fd);
                close(to_main[0]);
                close(to_main[1]);
                close(to_thread[0]);
                close(to_thread[1]);
        }

        /* Two samples of the real file a moment apart give rates, none negative. */
        _cleanup_(counter_rates_done) CounterRates r = {};
        ASSERT_EQ(proc_interrupts_read(real, &d), 0);
        ASSERT_EQ(counter_table_rates(&a, &d, 300000, &r), 0);
        for (size_t i = 0; i < r.n_entries; i++)
                ASSERT(r.rates[i] > 0);
}

int main(void) {
        RUN(interrupts_formats);
        RUN(interrupts_hostile);
        RUN(softirqs);
        RUN(softnet);
        RUN(cpu_times);
        RUN(two_samples);
        RUN(large);
        RUN(schedstat);
        RUN(readers);
        return 0;
}
