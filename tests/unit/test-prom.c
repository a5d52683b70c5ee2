/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-prom.c — the Prometheus text format: escaping, names, one declaration per family; the file replaced atomically */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sriovd/core/prom.h"
#include "monitor/metrics-file.h"
#include "test.h"

static char *finish(PromWriter *w) {
        char *page = NULL;
        size_t size;

        ASSERT_EQ(prom_writer_finish(w, &page, &size), 0);
        ASSERT_EQ(size, strlen(page));
        return page;
}

TEST(page) {
        PromWriter w = {};
        _cleanup_free_ char *page = NULL;

        ASSERT_EQ(prom_family(&w, "sriovd_irq_interrupts_total", PROM_COUNTER,
                              "Interrupts per IRQ and CPU, from /proc/interrupts."), 0);
        ASSERT_EQ(prom_sample_u64(&w, (PromLabel[]) { { "irq", "36" }, { "cpu", "1" } }, 2, 6057413), 0);
        ASSERT_EQ(prom_sample_u64(&w, (PromLabel[]) { { "irq", "37" }, { "cpu", "0" } }, 2, UINT64_MAX), 0);
        ASSERT_EQ(prom_family(&w, "sriovd_vf_rx_packets_per_second", PROM_GAUGE, "Packets a second a VF received."), 0);
        ASSERT_EQ(prom_sample(&w, (PromLabel[]) { { "pf", "0000:41:00.0" }, { "vf", "3" }, { "tenant", "t1" } }, 3, 0.1), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, 12500000), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, 1.0 / 3), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, 1e21), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, -2.5), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, NAN), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, INFINITY), 0);
        ASSERT_EQ(prom_sample(&w, NULL, 0, -INFINITY), 0);
        page = finish(&w);
        ASSERT_STREQ(page,
                "# HELP sriovd_irq_interrupts_total Interrupts per IRQ and CPU, from /proc/interrupts.\n"
                "# TYPE sriovd_irq_interrupts_total counter\n"
                "sriovd_irq_interrupts_total{irq=\"36\",cpu=\"1\"} 6057413\n"
                "sriovd_irq_interrupts_total{irq=\"37\",cpu=\"0\"} 18446744073709551615\n"
                "# HELP sriovd_vf_rx_packets_per_second Packets a second a VF received.\n"
                "# TYPE sriovd_vf_rx_packets_per_second gauge\n"
                "sriovd_vf_rx_packets_per_second{pf=\"0000:41:00.0\",vf=\"3\",tenant=\"t1\"} 0.1\n"
                "sriovd_vf_rx_packets_per_second 12500000\n"
                "sriovd_vf_rx_packets_per_second 0.33333333333333331\n"
                "sriovd_vf_rx_packets_per_second 1e+21\n"
                "sriovd_vf_rx_packets_per_second -2.5\n"
                "sriovd_vf_rx_packets_per_second NaN\n"
                "sriovd_vf_rx_packets_per_second +Inf\n"
                "sriovd_vf_rx_packets_per_second -Inf\n");
}

TEST(histogram) {
        PromWriter w = {};
        _cleanup_free_ char *page = NULL;

        ASSERT_EQ(prom_family(&w, "sriovd_thread_latency_seconds", PROM_HISTOGRAM, "Latency."), 0);
        ASSERT_EQ(prom_histogram_sample(&w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", "vcpu" }, { "le", "0.5" } },
                                        2, 3), 0);
        ASSERT_EQ(prom_histogram_sample(&w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", "vcpu" }, { "le", "+Inf" } },
                                        2, 4), 0);
        ASSERT_EQ(prom_histogram_sample(&w, PROM_HISTOGRAM_SUM, (PromLabel[]) { { "kind", "vcpu" } }, 1, 1.25), 0);
        ASSERT_EQ(prom_histogram_sample(&w, PROM_HISTOGRAM_COUNT, (PromLabel[]) { { "kind", "vcpu" } }, 1, 4), 0);
        page = finish(&w);
        ASSERT_STREQ(page,
                "# HELP sriovd_thread_latency_seconds Latency.\n"
                "# TYPE sriovd_thread_latency_seconds histogram\n"
                "sriovd_thread_latency_seconds_bucket{kind=\"vcpu\",le=\"0.5\"} 3\n"
                "sriovd_thread_latency_seconds_bucket{kind=\"vcpu\",le=\"+Inf\"} 4\n"
                "sriovd_thread_latency_seconds_sum{kind=\"vcpu\"} 1.25\n"
                "sriovd_thread_latency_seconds_count{kind=\"vcpu\"} 4\n");
}

TEST(escaping) {
        PromWriter w = {};
        _cleanup_free_ char *page = NULL;

        /* HELP escapes backslash and newline; a label value a double quote too; UTF-8 passes. */
        ASSERT_EQ(prom_family(&w, "a:b_c", PROM_GAUGE, "back\\slash \"quoted\"\nnext line"), 0);
        ASSERT_EQ(prom_sample(&w, (PromLabel[]) { { "tenant", "a\\b\"c\nd" }, { "class", "ünï" }, { "_x", "" } }, 3, 1), 0);
        page = finish(&w);
        ASSERT_STREQ(page,
                "# HELP a:b_c back\\\\slash \"quoted\"\\nnext line\n"
                "# TYPE a:b_c gauge\n"
                "a:b_c{tenant=\"a\\\\b\\\"c\\nd\",class=\"ünï\",_x=\"\"} 1\n");
}

TEST(names) {
        ASSERT(prom_metric_name_valid("sriovd_x_total"));
        ASSERT(prom_metric_name_valid(":a1"));
        ASSERT(!prom_metric_name_valid("1a"));
        ASSERT(!prom_metric_name_valid("a-b"));
        ASSERT(!prom_metric_name_valid("a b"));
        ASSERT(!prom_metric_name_valid(""));
        ASSERT(!prom_metric_name_valid(NULL));
        ASSERT(prom_label_name_valid("cpu"));
        ASSERT(prom_label_name_valid("_cpu"));
        ASSERT(!prom_label_name_valid("__name__"));
        ASSERT(!prom_label_name_valid("a:b"));
        ASSERT(!prom_label_name_valid("0"));
        ASSERT(!prom_label_name_valid(""));
}

/* Each rule, and that the first error sticks to the writer and to its page. */
static void expect_error(int (*build)(PromWriter *w), int error) {
        PromWriter w = {};
        char *page = NULL;

        ASSERT_EQ(build(&w), error);
        ASSERT_EQ(prom_family(&w, "ok", PROM_GAUGE, "fine"), error);
        ASSERT_EQ(prom_writer_finish(&w, &page, NULL), error);
        ASSERT(!page);
}

static int counter_without_total(PromWriter *w) {
        return prom_family(w, "sriovd_irqs", PROM_COUNTER, "x");
}
static int gauge_with_total(PromWriter *w) {
        return prom_family(w, "sriovd_irqs_total", PROM_GAUGE, "x");
}
static int declared_twice(PromWriter *w) {
        prom_family(w, "a", PROM_GAUGE, "x");
        prom_family(w, "b", PROM_GAUGE, "x");
        return prom_family(w, "a", PROM_GAUGE, "x");
}
static int sample_without_family(PromWriter *w) {
        return prom_sample(w, NULL, 0, 1);
}
static int bad_label_name(PromWriter *w) {
        prom_family(w, "a", PROM_GAUGE, "x");
        return prom_sample(w, (PromLabel[]) { { "__reserved", "v" } }, 1, 1);
}
static int repeated_label(PromWriter *w) {
        prom_family(w, "a", PROM_GAUGE, "x");
        return prom_sample(w, (PromLabel[]) { { "cpu", "1" }, { "cpu", "2" } }, 2, 1);
}
static int label_not_utf8(PromWriter *w) {
        prom_family(w, "a", PROM_GAUGE, "x");
        return prom_sample(w, (PromLabel[]) { { "tenant", "\xc3\x28" } }, 1, 1);
}
static int help_not_utf8(PromWriter *w) {
        return prom_family(w, "a", PROM_GAUGE, "\xff");
}
static int negative_counter(PromWriter *w) {
        prom_family(w, "a_total", PROM_COUNTER, "x");
        return prom_sample(w, NULL, 0, -1);
}
static int nan_counter(PromWriter *w) {
        prom_family(w, "a_total", PROM_COUNTER, "x");
        return prom_sample(w, NULL, 0, NAN);
}
static int histogram_named_bucket(PromWriter *w) {
        return prom_family(w, "lat_seconds_bucket", PROM_HISTOGRAM, "x");
}
static int histogram_plain_sample(PromWriter *w) {
        prom_family(w, "lat_seconds", PROM_HISTOGRAM, "x");
        return prom_sample(w, NULL, 0, 1);
}
static int bucket_without_le(PromWriter *w) {
        prom_family(w, "lat_seconds", PROM_HISTOGRAM, "x");
        return prom_histogram_sample(w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", "vcpu" } }, 1, 1);
}
static int count_with_le(PromWriter *w) {
        prom_family(w, "lat_seconds", PROM_HISTOGRAM, "x");
        return prom_histogram_sample(w, PROM_HISTOGRAM_COUNT, (PromLabel[]) { { "le", "+Inf" } }, 1, 1);
}
static int histogram_line_of_gauge(PromWriter *w) {
        prom_family(w, "lat_seconds", PROM_GAUGE, "x");
        return prom_histogram_sample(w, PROM_HISTOGRAM_SUM, NULL, 0, 1);
}
static int too_many_families(PromWriter *w) {
        char name[32];
        int r = 0;

        for (unsigned i = 0; i <= PROM_FAMILIES_MAX && r == 0; i++) {
                snprintf(name, sizeof(name), "f%u", i);
                r = prom_family(w, name, PROM_GAUGE, "x");
        }
        return r;
}

TEST(rules) {
        expect_error(counter_without_total, -EINVAL);
        expect_error(gauge_with_total, -EINVAL);
        expect_error(declared_twice, -EEXIST);
        expect_error(sample_without_family, -EINVAL);
        expect_error(bad_label_name, -EINVAL);
        expect_error(repeated_label, -EINVAL);
        expect_error(label_not_utf8, -EINVAL);
        expect_error(help_not_utf8, -EINVAL);
        expect_error(negative_counter, -EINVAL);
        expect_error(nan_counter, -EINVAL);
        expect_error(too_many_families, -E2BIG);
        expect_error(histogram_named_bucket, -EINVAL);
        expect_error(histogram_plain_sample, -EINVAL);
        expect_error(bucket_without_le, -EINVAL);
        expect_error(count_with_le, -EINVAL);
        expect_error(histogram_line_of_gauge, -EINVAL);

        /* An empty page is a page. */
        PromWriter w = {};
        _cleanup_free_ char *page = finish(&w);
        ASSERT_STREQ(page, "");
}

static char *slurp(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *buf = calloc(1, 65536);

        ASSERT(f && buf);
        buf[fread(buf, 1, 65535, f)] = 0;
        return buf;
}

TEST(file_replaced_atomically) {
        char dir[] = "/tmp/sriovd-prom-XXXXXX", path[256], bad[300];
        _cleanup_free_ char *first = NULL, *second = NULL;
        struct stat st1, st2;
        int old_fd;
        char buf[64] = {};

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/sriovd.prom", dir);

        /* A daemon's umask 077 must not hide the file from node_exporter. */
        mode_t saved = umask(077);
        ASSERT_EQ(metrics_file_write(path, "a 1\n", 4), 0);
        umask(saved);
        ASSERT_EQ(stat(path, &st1), 0);
        ASSERT_EQ(st1.st_mode & 07777, 0644);
        first = slurp(path);
        ASSERT_STREQ(first, "a 1\n");

        /* Replaced, not rewritten: a reader that opened the old file reads the old page whole. */
        old_fd = open(path, O_RDONLY | O_CLOEXEC);
        ASSERT(old_fd >= 0);
        ASSERT_EQ(metrics_file_write(path, "a 2\nb 3\n", 8), 0);
        ASSERT_EQ(stat(path, &st2), 0);
        ASSERT(st1.st_ino != st2.st_ino);
        ASSERT_EQ(read(old_fd, buf, sizeof(buf) - 1), 4);
        ASSERT_STREQ(buf, "a 1\n");
        close(old_fd);
        second = slurp(path);
        ASSERT_STREQ(second, "a 2\nb 3\n");

        /* Nothing but the file is left in the directory (no temporary file). */
        snprintf(bad, sizeof(bad), "test \"$(ls -A %s)\" = sriovd.prom", dir);
        ASSERT_EQ(system(bad), 0);

        ASSERT_EQ(metrics_file_write("relative.prom", "", 0), -EINVAL);
        snprintf(bad, sizeof(bad), "%s/", dir);
        ASSERT_EQ(metrics_file_write(bad, "", 0), -EINVAL);
        snprintf(bad, sizeof(bad), "%s/.hidden", dir);
        ASSERT_EQ(metrics_file_write(bad, "", 0), -EINVAL);
        snprintf(bad, sizeof(bad), "%s/missing/x.prom", dir);
        ASSERT_EQ(metrics_file_write(bad, "", 0), -ENOENT);

        sh("rm -rf %s", dir);
}

/* A page as the sampler will write it, checked by Prometheus' own parser and linter. */
static int promtool_check(void) {
        char dir[] = "/tmp/sriovd-promtool-XXXXXX", path[256], cmd[512];
        _cleanup_free_ char *page = NULL;
        PromWriter w = {};
        size_t size;
        int r;

        if (system("command -v promtool >/dev/null 2>&1") != 0) {
                fprintf(stderr, "promtool is not installed (Debian package prometheus): nothing to check the page with\n");
                return EXIT_TEST_SKIP;
        }
        prom_family(&w, "sriovd_irq_interrupts_total", PROM_COUNTER, "Interrupts per IRQ and CPU.");
        for (unsigned irq = 36; irq < 40; irq++)
                for (unsigned cpu = 0; cpu < 4; cpu++) {
                        char i[16], c[16];
                        snprintf(i, sizeof(i), "%u", irq);
                        snprintf(c, sizeof(c), "%u", cpu);
                        prom_sample_u64(&w, (PromLabel[]) { { "irq", i }, { "cpu", c }, { "pf", "0000:41:00.0" } }, 3,
                                        irq * 1000 + cpu);
                }
        prom_family(&w, "sriovd_softirq_net_rx_per_second", PROM_GAUGE, "NET_RX softirqs a second per CPU.");
        prom_sample(&w, (PromLabel[]) { { "cpu", "0" } }, 1, 1234.5);
        prom_family(&w, "sriovd_thread_latency_seconds", PROM_HISTOGRAM, "Wakeup-to-run latency.");
        for (unsigned k = 0; k < 2; k++) {
                const char *kind = k ? "vcpu" : "irq";

                prom_histogram_sample(&w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", kind }, { "le", "0.000001024" } }, 2, 1);
                prom_histogram_sample(&w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", kind }, { "le", "8.589934592" } }, 2, 5);
                prom_histogram_sample(&w, PROM_HISTOGRAM_BUCKET, (PromLabel[]) { { "kind", kind }, { "le", "+Inf" } }, 2, 5);
                prom_histogram_sample(&w, PROM_HISTOGRAM_SUM, (PromLabel[]) { { "kind", kind } }, 1, 0.003);
                prom_histogram_sample(&w, PROM_HISTOGRAM_COUNT, (PromLabel[]) { { "kind", kind } }, 1, 5);
        }
        prom_family(&w, "sriovd_tenant_info", PROM_GAUGE, "A tenant and its class; tricky \\ characters\nin help.");
        prom_sample(&w, (PromLabel[]) { { "tenant", "we\"ird\\name\n" }, { "class", "latency-critical" } }, 2, 1);
        r = prom_writer_finish(&w, &page, &size);
        ASSERT_EQ(r, 0);

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/sriovd.prom", dir);
        ASSERT_EQ(metrics_file_write(path, page, size), 0);
        snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
        r = system(cmd);
        sh("rm -rf %s", dir);
        ASSERT(WIFEXITED(r));
        ASSERT_EQ(WEXITSTATUS(r), 0);
        return 0;
}

int main(int argc, char **argv) {
        if (argc > 1 && streq(argv[1], "promtool"))
                return promtool_check();
        RUN(page);
        RUN(histogram);
        RUN(escaping);
        RUN(names);
        RUN(rules);
        RUN(file_replaced_atomically);
        return 0;
}
