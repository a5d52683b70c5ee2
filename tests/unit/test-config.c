/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-config.c — the shipped config loads as documented; every kind of mistake is reported where it is */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "test.h"

static const char *shipped_conf;

/* ---- helpers ----------------------------------------------------------- */

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) type;
        (void) ftw;
        return remove(path);
}

static void tmpdir_freep(char **dir) {
        if (!*dir)
                return;
        ASSERT(nftw(*dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
        free(*dir);
}

static char *tmpdir_new(void) {
        char *dir = strdup("/tmp/test-config-XXXXXX");

        ASSERT(dir);
        ASSERT(mkdtemp(dir));
        return dir;
}

/* Writes dir/name (size bytes of text, so NULs can be written), creating tenant-classes.d/ on demand. */
static void write_file_n(const char *dir, const char *name, const char *text, size_t size) {
        _cleanup_free_ char *path = NULL, *sub = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *slash = strchr(name, '/');

        if (slash) {
                ASSERT(asprintf(&sub, "%s/%.*s", dir, (int) (slash - name), name) > 0);
                ASSERT(mkdir(sub, 0755) == 0 || errno == EEXIST);
        }
        ASSERT(asprintf(&path, "%s/%s", dir, name) > 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT(fd >= 0);
        ASSERT(write(fd, text, size) == (ssize_t) size);
}

static void write_file(const char *dir, const char *name, const char *text) {
        write_file_n(dir, name, text, strlen(text));
}

/* Loads dir/sriovd.conf, expecting failure with r; returns the errors (never NULL). */
static char *load_fail(const char *dir, int expect_r) {
        _cleanup_free_ char *path = NULL;
        Config *c = NULL;
        char *errors = NULL;
        int r;

        ASSERT(asprintf(&path, "%s/sriovd.conf", dir) > 0);
        r = config_load(path, &c, &errors);
        if (r != expect_r)
                fprintf(stderr, "errors:\n%s\n", errors ?: "(none)");
        ASSERT_EQ(r, expect_r);
        ASSERT(!c);
        ASSERT(errors);
        fprintf(stderr, "%s\n", errors);
        return errors;
}

static Config *load_ok(const char *dir) {
        _cleanup_free_ char *path = NULL;
        Config *c = NULL;
        char *errors = NULL;
        int r;

        ASSERT(asprintf(&path, "%s/sriovd.conf", dir) > 0);
        r = config_load(path, &c, &errors);
        if (r < 0)
                fprintf(stderr, "errors:\n%s\n", errors ?: "(none)");
        ASSERT_EQ(r, 0);
        ASSERT(!errors);
        ASSERT(c);
        return c;
}

static size_t count_lines(const char *s) {
        size_t n = 1;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/*
 * Asserts that one line of errors starts with exactly "DIR/WHERE: " and
 * contains phrase. where is "FILE:LINE" or just "FILE".
 */
static void assert_error(const char *errors, const char *dir, const char *where, const char *phrase) {
        _cleanup_free_ char *prefix = NULL;
        const char *line = errors;

        ASSERT(asprintf(&prefix, "%s/%s: ", dir, where) > 0);
        for (;;) {
                const char *end = strchr(line, '\n');
                size_t n = end ? (size_t) (end - line) : strlen(line);

                if (strncmp(line, prefix, strlen(prefix)) == 0) {
                        _cleanup_free_ char *copy = strndup(line, n);
                        ASSERT(copy);
                        ASSERT_CONTAINS(copy, phrase);
                        return;
                }
                if (!end)
                        break;
                line = end + 1;
        }
        fprintf(stderr, "no error starting with \"%s\" in:\n%s\n", prefix, errors);
        ASSERT(false);
}

/* The common case: one config, one mistake, exactly one error. */
static void expect_one_error(const char *conf, const char *where, const char *phrase) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        write_file(dir, "sriovd.conf", conf);
        errors = load_fail(dir, -EINVAL);
        assert_error(errors, dir, where, phrase);
        ASSERT_EQ(count_lines(errors), 1);
}

static void expect_class_error(const char *class_text, const char *where, const char *phrase) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        write_file(dir, "sriovd.conf", "[daemon]\n");
        write_file(dir, "tenant-classes.d/gold.ini", class_text);
        errors = load_fail(dir, -EINVAL);
        assert_error(errors, dir, where, phrase);
        ASSERT_EQ(count_lines(errors), 1);
}

/* ---- the shipped files ----------------------------------------------------- */

TEST(shipped) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;
        const TenantClass *t;
        const PfPolicy *pf;
        Scope scope;

        /* meson always passes it: without it this test would pass having checked nothing. */
        ASSERT(shipped_conf);

        ASSERT_EQ(config_load(shipped_conf, &c, &errors), 0);
        ASSERT(!errors);

        ASSERT_STREQ(c->path, shipped_conf);
        ASSERT_CONTAINS(c->classes_dir, "/tenant-classes.d");
        ASSERT_STREQ(c->state_dir, "/var/lib/sriovd");
        ASSERT_EQ(c->drift_check_sec, 5);
        ASSERT_STREQ(c->access_group, "sriovd");
        ASSERT_STREQ(c->libvirt_uri, "qemu:///system");
        ASSERT(!c->have_rt_cpus);
        ASSERT(!c->have_housekeeping_cpus);
        ASSERT_EQ(c->rtnet_prio, -1);

        ASSERT_EQ(c->n_pfs, 1);
        pf = &c->pfs[0];
        ASSERT(!pf->by_addr);
        ASSERT_EQ(pf->id.vendor, 0x15b3);
        ASSERT_EQ(pf->id.device, 0x101d);
        ASSERT_EQ(pf->num_vfs, 8);
        ASSERT_EQ(pf->drivers_autoprobe, -1);
        ASSERT_STREQ(pf->class_name, "throughput");
        ASSERT(pf->line > 0);

        ASSERT(config_pf_policy(c, "0000:41:00.0", 0x15b3, 0x101d) == pf);
        ASSERT(config_pf_policy(c, NULL, 0x15b3, 0x101d) == pf);
        ASSERT(!config_pf_policy(c, "0000:41:00.0", 0x15b3, 0x101f));

        /* 15b3:101d is a default ID already: no duplicate in the scope. */
        config_scope(c, &scope);
        ASSERT_EQ(scope.n_ids, scope_default_n_ids);
        ASSERT_EQ(scope.n_addrs, 0);
        for (size_t i = 0; i < scope.n_ids; i++)
                ASSERT(scope.ids[i].vendor == scope_default_ids[i].vendor &&
                       scope.ids[i].device == scope_default_ids[i].device);

        ASSERT_EQ(c->n_classes, 4);
        ASSERT_STREQ(c->classes[0].name, "best-effort");
        ASSERT_STREQ(c->classes[1].name, "latency-critical");
        ASSERT_STREQ(c->classes[2].name, "rt-vcpu");
        ASSERT_STREQ(c->classes[3].name, "throughput");

        t = config_find_class(c, "latency-critical");
        ASSERT(t == &c->classes[1]);
        ASSERT_CONTAINS(t->file, "tenant-classes.d/latency-critical.ini");
        ASSERT_EQ(t->vnic, VNIC_SRIOV_REQUIRED);
        ASSERT_EQ(t->rank, 100);
        ASSERT_EQ(t->coalesce_rx_usecs, 0);
        ASSERT_EQ(t->coalesce_tx_usecs, 0);
        ASSERT_EQ(t->coalesce_rx_frames, -1);
        ASSERT_EQ(t->coalesce_tx_frames, -1);
        ASSERT_EQ(t->adaptive_rx, TRISTATE_OFF);
        ASSERT_EQ(t->adaptive_tx, TRISTATE_OFF);
        ASSERT_EQ(t->irq_cpus, IRQ_CPUS_RT);
        ASSERT_EQ(t->irq_spread, IRQ_SPREAD_SINGLE);
        ASSERT_EQ(t->irq_thread_priority, 99);
        ASSERT_EQ(t->offload_lro, TRISTATE_OFF);
        ASSERT_EQ(t->offload_gro, TRISTATE_LEAVE);
        ASSERT_EQ(t->offload_tso, TRISTATE_LEAVE);
        ASSERT_EQ(t->offload_gso, TRISTATE_LEAVE);

        /* R5 and R6 together: vCPU 0's CPU, an RT one by the pinning, so an RT priority is accepted. */
        t = config_find_class(c, "rt-vcpu");
        ASSERT(t);
        ASSERT_EQ(t->vnic, VNIC_SRIOV_REQUIRED);
        ASSERT_EQ(t->rank, 90);
        ASSERT_EQ(t->coalesce_rx_usecs, 0);
        ASSERT_EQ(t->coalesce_tx_usecs, 0);
        ASSERT_EQ(t->adaptive_rx, TRISTATE_OFF);
        ASSERT_EQ(t->adaptive_tx, TRISTATE_OFF);
        ASSERT_EQ(t->irq_cpus, IRQ_CPUS_VCPU);
        ASSERT_EQ(t->irq_spread, IRQ_SPREAD_SINGLE);
        ASSERT_EQ(t->irq_thread_priority, 99);
        ASSERT_EQ(t->offload_lro, TRISTATE_OFF);
        ASSERT_EQ(t->vcpu_pin_rt, 1);
        ASSERT_EQ(t->vcpu_fifo_priority, 1);

        t = config_find_class(c, "throughput");
        ASSERT(t);
        ASSERT_EQ(t->vnic, VNIC_SRIOV_PREFERRED);
        ASSERT_EQ(t->rank, 50);
        ASSERT_EQ(t->coalesce_rx_usecs, COALESCE_DEFAULT_USECS);
        ASSERT_EQ(t->coalesce_tx_usecs, COALESCE_DEFAULT_USECS);
        ASSERT_EQ(t->coalesce_rx_frames, -1);
        ASSERT_EQ(t->adaptive_rx, TRISTATE_ON);
        ASSERT_EQ(t->adaptive_tx, TRISTATE_LEAVE);
        ASSERT_EQ(t->irq_cpus, IRQ_CPUS_NUMA_LOCAL);
        ASSERT_EQ(t->irq_spread, IRQ_SPREAD_SPREAD);
        ASSERT_EQ(t->irq_thread_priority, 0);
        ASSERT_EQ(t->offload_tso, TRISTATE_ON);
        ASSERT_EQ(t->offload_gso, TRISTATE_ON);
        ASSERT_EQ(t->offload_gro, TRISTATE_ON);
        ASSERT_EQ(t->offload_lro, TRISTATE_OFF);

        t = config_find_class(c, "best-effort");
        ASSERT(t);
        ASSERT_EQ(t->vnic, VNIC_VIRTIO);
        ASSERT_EQ(t->rank, 0);
        ASSERT_EQ(t->coalesce_rx_usecs, COALESCE_DEFAULT_USECS);
        ASSERT_EQ(t->adaptive_rx, TRISTATE_LEAVE);
        ASSERT_EQ(t->irq_cpus, IRQ_CPUS_NUMA_LOCAL);
        ASSERT_EQ(t->irq_spread, IRQ_SPREAD_SPREAD);
        ASSERT_EQ(t->irq_thread_priority, 0);
        ASSERT_EQ(t->offload_lro, TRISTATE_OFF);

        ASSERT(!config_find_class(c, "gold"));
        ASSERT(!config_find_class(c, NULL));
}

TEST(to_string) {
        ASSERT_STREQ(vnic_kind_to_string(VNIC_SRIOV_REQUIRED), "sriov-required");
        ASSERT_STREQ(vnic_kind_to_string(VNIC_SRIOV_PREFERRED), "sriov-preferred");
        ASSERT_STREQ(vnic_kind_to_string(VNIC_VIRTIO), "virtio");
        ASSERT(!vnic_kind_to_string((VnicKind) 42));
        ASSERT_STREQ(irq_cpu_policy_to_string(IRQ_CPUS_NUMA_LOCAL), "numa-local");
        ASSERT_STREQ(irq_cpu_policy_to_string(IRQ_CPUS_RT), "rt");
        ASSERT_STREQ(irq_cpu_policy_to_string(IRQ_CPUS_VCPU), "vcpu");
        ASSERT_STREQ(irq_cpu_policy_to_string(IRQ_CPUS_LIST), "list");
        ASSERT_STREQ(irq_spread_to_string(IRQ_SPREAD_SPREAD), "spread");
        ASSERT_STREQ(irq_spread_to_string(IRQ_SPREAD_SINGLE), "single");
        ASSERT_STREQ(tristate_to_string(TRISTATE_LEAVE), "leave");
        ASSERT_STREQ(tristate_to_string(TRISTATE_OFF), "off");
        ASSERT_STREQ(tristate_to_string(TRISTATE_ON), "on");
}

/* Every key set away from its default, in every accepted spelling. */
TEST(all_keys) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;
        const TenantClass *t;
        const PfPolicy *pf;
        Scope scope;

        write_file(dir, "sriovd.conf",
                   "\xef\xbb\xbf# a BOM, CRLF line ends, indentation and inline comments are all fine\r\n"
                   "[daemon]\r\n"
                   "  state_dir = /srv/sriovd ; inline comment\n"
                   "\tdrift_check_sec = 0\n"
                   "access_group = _sriov-ops9\n"
                   "libvirt_uri: qemu+ssh://host/system\n"
                   "[ cpus ]\n"
                   "rt = 4-7,20-23\n"
                   "housekeeping = 0-3,8-19\n"
                   "[rt]\n"
                   "rtnet_prio = 50\n"
                   "[match 15B3:101D]\n"
                   "num_vfs = 16\n"
                   "drivers_autoprobe = Off\n"
                   "[match 8086:1592]\n"
                   "num_vfs = 0\n"
                   "class = gold\n"
                   "[pf 0000:41:00.0]\n"
                   "num_vfs = 4096\n"
                   "drivers_autoprobe = 1\n"
                   "class = gold\n"
                   "[pf 0000:c1:1f.7]\n");
        write_file(dir, "tenant-classes.d/gold.ini",
                   "[class]\n"
                   "vnic = sriov-required\n"
                   "rank = -5\n"
                   "coalesce_rx_usecs = 100000\n"
                   "coalesce_tx_usecs = 7\n"
                   "coalesce_rx_frames = 0\n"
                   "coalesce_tx_frames = 65535\n"
                   "adaptive_rx = yes\n"
                   "adaptive_tx = leave\n"
                   "irq_cpus = 1,3,5-6\n"
                   "irq_spread = single\n"
                   "irq_thread_priority = 1\n"
                   "offload_tso = off\n"
                   "offload_gso = true\n"
                   "offload_gro = 0\n"
                   "offload_lro = on\n");
        write_file(dir, "tenant-classes.d/a.ini", "[class]\nvnic = virtio\nirq_cpus = vcpu\n");
        write_file(dir, "tenant-classes.d/a-b.ini", "[class]\nvnic = virtio\n");
        write_file(dir, "tenant-classes.d/README", "not a class\n");
        write_file(dir, "tenant-classes.d/.hidden.ini", "not a class either\n");
        write_file(dir, "tenant-classes.d/gold.ini~", "an editor backup\n");

        c = load_ok(dir);

        ASSERT_STREQ(c->state_dir, "/srv/sriovd");
        ASSERT_EQ(c->drift_check_sec, 0);
        ASSERT_STREQ(c->access_group, "_sriov-ops9");
        ASSERT_STREQ(c->libvirt_uri, "qemu+ssh://host/system");
        ASSERT(c->have_rt_cpus);
        ASSERT(c->have_housekeeping_cpus);
        ASSERT_EQ(cpuset_count(&c->rt_cpus), 8);
        ASSERT(cpuset_has(&c->rt_cpus, 20));
        ASSERT_EQ(cpuset_count(&c->housekeeping_cpus), 16);
        ASSERT_EQ(c->rtnet_prio, 50);

        ASSERT_EQ(c->n_pfs, 4);
        ASSERT_EQ(c->pfs[0].id.vendor, 0x15b3);
        ASSERT_EQ(c->pfs[0].id.device, 0x101d);
        ASSERT_EQ(c->pfs[0].num_vfs, 16);
        ASSERT_EQ(c->pfs[0].drivers_autoprobe, 0);
        ASSERT_EQ(c->pfs[0].line, 12);
        ASSERT_STREQ(c->pfs[0].class_name, "");
        ASSERT_EQ(c->pfs[1].num_vfs, 0);
        ASSERT_STREQ(c->pfs[2].addr, "0000:41:00.0");
        ASSERT(c->pfs[2].by_addr);
        ASSERT_EQ(c->pfs[2].num_vfs, 4096);
        ASSERT_EQ(c->pfs[2].drivers_autoprobe, 1);
        ASSERT_STREQ(c->pfs[2].class_name, "gold");
        /* A section without keys still puts the PF in scope, leaving it as found. */
        ASSERT_STREQ(c->pfs[3].addr, "0000:c1:1f.7");
        ASSERT_EQ(c->pfs[3].num_vfs, -1);
        ASSERT_EQ(c->pfs[3].drivers_autoprobe, -1);

        /* [pf] beats [match]; [match] applies to other addresses. */
        pf = config_pf_policy(c, "0000:41:00.0", 0x15b3, 0x101d);
        ASSERT(pf == &c->pfs[2]);
        pf = config_pf_policy(c, "0000:42:00.0", 0x15b3, 0x101d);
        ASSERT(pf == &c->pfs[0]);
        ASSERT(!config_pf_policy(c, "0000:42:00.0", 0x15b3, 0x1021));

        config_scope(c, &scope);
        ASSERT_EQ(scope.n_ids, scope_default_n_ids + 1);
        ASSERT_EQ(scope.ids[scope.n_ids - 1].vendor, 0x8086);
        ASSERT_EQ(scope.ids[scope.n_ids - 1].device, 0x1592);
        ASSERT_EQ(scope.n_addrs, 2);
        ASSERT_STREQ(scope.addrs[0], "0000:41:00.0");
        ASSERT_STREQ(scope.addrs[1], "0000:c1:1f.7");

        /* Sorted by class name, not by file name ("a" < "a-b", though "a-b.ini" < "a.ini"). */
        ASSERT_EQ(c->n_classes, 3);
        ASSERT_STREQ(c->classes[0].name, "a");
        ASSERT_STREQ(c->classes[1].name, "a-b");
        ASSERT_STREQ(c->classes[2].name, "gold");
        ASSERT_EQ(config_find_class(c, "a")->irq_cpus, IRQ_CPUS_VCPU);
        ASSERT(config_find_class(c, "a-b"));

        t = config_find_class(c, "gold");
        ASSERT(t);
        ASSERT_EQ(t->vnic, VNIC_SRIOV_REQUIRED);
        ASSERT_EQ(t->rank, -5);
        ASSERT_EQ(t->coalesce_rx_usecs, 100000);
        ASSERT_EQ(t->coalesce_tx_usecs, 7);
        ASSERT_EQ(t->coalesce_rx_frames, 0);
        ASSERT_EQ(t->coalesce_tx_frames, 65535);
        ASSERT_EQ(t->adaptive_rx, TRISTATE_ON);
        ASSERT_EQ(t->adaptive_tx, TRISTATE_LEAVE);
        ASSERT_EQ(t->irq_cpus, IRQ_CPUS_LIST);
        ASSERT_EQ(cpuset_count(&t->irq_cpu_list), 4);
        ASSERT(cpuset_has(&t->irq_cpu_list, 6));
        ASSERT_EQ(t->irq_spread, IRQ_SPREAD_SINGLE);
        ASSERT_EQ(t->irq_thread_priority, 1);
        ASSERT_EQ(t->offload_tso, TRISTATE_OFF);
        ASSERT_EQ(t->offload_gso, TRISTATE_ON);
        ASSERT_EQ(t->offload_gro, TRISTATE_OFF);
        ASSERT_EQ(t->offload_lro, TRISTATE_ON);
}

TEST(defaults) {
        _cleanup_(config_freep) Config *c = NULL;
        char *errors = (char *) "untouched";
        Scope scope;

        /* An empty config is valid: every default, no classes (no directory). */
        ASSERT_EQ(config_load_string("empty.conf", "", NULL, &c, &errors), 0);
        ASSERT(!errors);
        ASSERT_STREQ(c->path, "empty.conf");
        ASSERT(!c->classes_dir);
        ASSERT_STREQ(c->state_dir, "/var/lib/sriovd");
        ASSERT_EQ(c->drift_check_sec, 5);
        ASSERT_STREQ(c->access_group, "sriovd");
        ASSERT_STREQ(c->libvirt_uri, "qemu:///system");
        ASSERT_EQ(c->rtnet_prio, -1);
        ASSERT_EQ(c->n_pfs, 0);
        ASSERT_EQ(c->n_classes, 0);
        config_scope(c, &scope);
        ASSERT_EQ(scope.n_ids, scope_default_n_ids);
        ASSERT_EQ(scope.n_addrs, 0);

        /* An explicitly empty rt list means "no RT CPUs", unlike a missing key. */
        c = config_free(c);
        ASSERT_EQ(config_load_string("x.conf", "[cpus]\nrt =\n", NULL, &c, NULL), 0);
        ASSERT(c->have_rt_cpus);
        ASSERT(cpuset_is_empty(&c->rt_cpus));
        ASSERT_EQ(c->restore_on_stop, 0);   /* by default a stop keeps the host tuned */
        ASSERT_EQ(c->access_group_line, 0);

        /* The lines --check-config reports the host's objections at. */
        c = config_free(c);
        ASSERT_EQ(config_load_string("stop.conf", "[daemon]\nrestore_on_stop = yes\naccess_group = ops\n"
                                     "[pf 0000:41:00.0]\n\nnum_vfs = 4\n", NULL, &c, NULL), 0);
        ASSERT_EQ(c->restore_on_stop, 1);
        ASSERT_EQ(c->access_group_line, 3);
        ASSERT_EQ(c->pfs[0].num_vfs_line, 6);
}

/* ---- one test per kind of mistake ------------------------------------------ */

TEST(syntax_error) {
        expect_one_error("[daemon]\nstate_dir\n", "sriovd.conf:2",
                         "syntax error: expected \"[section]\" or \"key = value\"");
        /* An unterminated header; its keys are not taken for the previous section's. */
        expect_one_error("[daemon]\n[cpus\nrt = x\n", "sriovd.conf:2",
                         "syntax error: expected \"[section]\" or \"key = value\"");
        /* inih would silently drop a key written after the header. */
        expect_one_error("[pf 0000:41:00.0] num_vfs = 8\n", "sriovd.conf:1",
                         "syntax error: unexpected \"num_vfs = 8\" after \"]\"");
        expect_one_error("drift_check_sec = 5\n", "sriovd.conf:1",
                         "key \"drift_check_sec\" is outside any section; expected a section header such as [daemon] above it");
}

TEST(syntax_errors_all_reported) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        /* inih itself returns only the first; every one is listed. */
        write_file(dir, "sriovd.conf", "[daemon]\nfoo\n\nbar\n[rt\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 3);
        assert_error(errors, dir, "sriovd.conf:2", "syntax error");
        assert_error(errors, dir, "sriovd.conf:4", "syntax error");
        assert_error(errors, dir, "sriovd.conf:5", "syntax error");
}

TEST(unknown_section) {
        expect_one_error("[deamon]\nstate_dir = /x\n", "sriovd.conf:1",
                         "unknown section [deamon]; did you mean [daemon]?");
        expect_one_error("# comment\n[mtach 15b3:101d]\nnum_vfs = 2\n", "sriovd.conf:2",
                         "unknown section [mtach 15b3:101d]; did you mean [match 15b3:101d]?");
        expect_one_error("[network]\n", "sriovd.conf:1",
                         "unknown section [network]; expected [daemon], [cpus], [rt], [match VVVV:DDDD], [pf DDDD:BB:DD.F] or [alert NAME]");
        expect_one_error("[daemon main]\n", "sriovd.conf:1", "section [daemon] takes no argument; expected [daemon]");
        expect_one_error("[pf]\n", "sriovd.conf:1", "section [pf] needs an argument; expected [pf DDDD:BB:DD.F]");
}

TEST(unknown_key) {
        expect_one_error("[pf 0000:41:00.0]\nnum_vf = 8\n", "sriovd.conf:2",
                         "unknown key \"num_vf\" in [pf 0000:41:00.0]; did you mean \"num_vfs\"?");
        expect_one_error("[daemon]\ndrift_check = 5\n", "sriovd.conf:2",
                         "unknown key \"drift_check\" in [daemon]; did you mean \"drift_check_sec\"?");
        expect_one_error("[daemon]\nnum_vfs = 8\n", "sriovd.conf:2",
                         "unknown key \"num_vfs\" in [daemon]; it belongs in [match VVVV:DDDD] or [pf DDDD:BB:DD.F]");
        expect_one_error("[daemon]\nfoo = 1\n", "sriovd.conf:2",
                         "unknown key \"foo\" in [daemon]; expected one of: state_dir, drift_check_sec, vf_timeout_sec, vf_headroom, vf_target_utilization, release_on_stop, restore_on_stop, access_group, max_tenants, libvirt_uri");
        expect_class_error("[class]\nvnic = virtio\ncoalesce_rx_usec = 0\n", "tenant-classes.d/gold.ini:3",
                           "unknown key \"coalesce_rx_usec\" in [class]; did you mean \"coalesce_rx_usecs\"?");
}

TEST(bad_integer) {
        expect_one_error("[daemon]\ndrift_check_sec = 5s\n", "sriovd.conf:2",
                         "drift_check_sec = \"5s\" is not an integer; expected an integer from 0 to 86400");
        expect_one_error("[match 15b3:101d]\nnum_vfs = 0x10\n", "sriovd.conf:2",
                         "num_vfs = \"0x10\" is not an integer; expected an integer from 0 to 4096");
        expect_one_error("[match 15b3:101d]\nnum_vfs =\n", "sriovd.conf:2",
                         "num_vfs = \"\" is not an integer");
}

TEST(out_of_range) {
        expect_one_error("[match 15b3:101d]\nnum_vfs = 4097\n", "sriovd.conf:2",
                         "num_vfs = 4097 is out of range; expected an integer from 0 to 4096");
        expect_one_error("[rt]\nrtnet_prio = -1\n", "sriovd.conf:2",
                         "rtnet_prio = -1 is out of range; expected an integer from 0 to 99");
        expect_one_error("[daemon]\ndrift_check_sec = 99999999999999999999999\n", "sriovd.conf:2",
                         "drift_check_sec = 99999999999999999999999 is out of range; expected an integer from 0 to 86400");
        expect_class_error("[class]\nvnic = virtio\nirq_thread_priority = 100\n", "tenant-classes.d/gold.ini:3",
                           "irq_thread_priority = 100 is out of range; expected an integer from 0 to 99");
        expect_class_error("[class]\nvnic = virtio\ncoalesce_tx_frames = 65536\n", "tenant-classes.d/gold.ini:3",
                           "coalesce_tx_frames = 65536 is out of range; expected an integer from 0 to 65535");
        expect_class_error("[class]\nvnic = virtio\nvhost_priority = 100\n", "tenant-classes.d/gold.ini:3",
                           "vhost_priority = 100 is out of range; expected an integer from 0 to 99");
        expect_class_error("[class]\nvnic = virtio\nvhost_cpus = isolated\n", "tenant-classes.d/gold.ini:3",
                           "vhost_cpus = \"isolated\" is not valid; expected leave, housekeeping or rt");
}

/* vhost_cpus = rt puts the vhost workers on the guest's own RT CPUs: only a class that books them may. */
TEST(vhost_cpus_rt) {
        expect_class_error("[class]\nvnic = virtio\n\nvhost_cpus = rt\nvhost_priority = 10\n", "tenant-classes.d/gold.ini:4",
                           "vhost_cpus = rt needs the guest's own RT CPUs; expected vcpu_pinning = rt in this class, "
                           "or vhost_cpus = housekeeping");
        /* The booking may come later in the file. */
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;
        char dir[] = "/tmp/sriovd-vhost-conf-XXXXXX", path[512];

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/gold.ini", dir);
        test_write_file(path, "[class]\nvnic = virtio\nvhost_cpus = rt\nvcpu_pinning = rt\n");
        ASSERT_EQ(config_load_string("test.conf", "", dir, &c, &errors), 0);
        ASSERT_EQ(c->classes[0].vhost_cpus, VHOST_CPUS_RT);
        sh("rm -rf %s", dir);
}

/* l3_cache_mask: a hex mask of one run of ways, for a class whose guests have RT vCPUs. */
TEST(l3_cache_mask) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;
        char dir[] = "/tmp/sriovd-l3-conf-XXXXXX", path[512];

        expect_class_error("[class]\nvnic = virtio\nvcpu_pinning = rt\nl3_cache_mask = f0f\n", "tenant-classes.d/gold.ini:4",
                           "l3_cache_mask = \"f0f\" is not valid; expected a hex mask of one run of set bits, such as ff000");
        expect_class_error("[class]\nvnic = virtio\nvcpu_pinning = rt\nl3_cache_mask = 0\n", "tenant-classes.d/gold.ini:4",
                           "l3_cache_mask = \"0\" is not valid");
        expect_class_error("[class]\nvnic = virtio\nvcpu_pinning = rt\nl3_cache_mask = 0x\n", "tenant-classes.d/gold.ini:4",
                           "l3_cache_mask = \"0x\" is not valid");
        expect_class_error("[class]\nvnic = virtio\nvcpu_pinning = rt\nl3_cache_mask = 1ffffffffffffffff\n",
                           "tenant-classes.d/gold.ini:4", "is not valid");
        expect_class_error("[class]\nvnic = virtio\nvcpu_pinning = rt\nl3_cache_mask = -ff\n", "tenant-classes.d/gold.ini:4",
                           "is not valid");
        expect_class_error("[class]\nvnic = virtio\n\nl3_cache_mask = ff000\n", "tenant-classes.d/gold.ini:4",
                           "l3_cache_mask needs RT vCPU threads to put in the cache group; expected vcpu_pinning = rt in this class");

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/gold.ini", dir);
        test_write_file(path, "[class]\nvnic = virtio\nl3_cache_mask = 0xFF000\nvcpu_pinning = rt\n");
        ASSERT_EQ(config_load_string("test.conf", "", dir, &c, &errors), 0);
        ASSERT_EQ(c->classes[0].l3_cache_mask, 0xff000);
        sh("rm -rf %s", dir);
}

TEST(bad_bool) {
        expect_one_error("[pf 0000:41:00.0]\ndrivers_autoprobe = maybe\n", "sriovd.conf:2",
                         "drivers_autoprobe = \"maybe\" is not a boolean; expected yes/no, true/false, on/off or 1/0");
        expect_class_error("[class]\nvnic = virtio\noffload_lro = disabled\n", "tenant-classes.d/gold.ini:3",
                           "offload_lro = \"disabled\" is not valid; expected on, off or leave");
}

TEST(bad_strings) {
        expect_one_error("[daemon]\nstate_dir = var/lib/sriovd\n", "sriovd.conf:2",
                         "state_dir = \"var/lib/sriovd\" is not a valid absolute path");
        expect_one_error("[daemon]\nstate_dir = /var/lib/../../etc\n", "sriovd.conf:2",
                         "is not a valid absolute path; expected a path starting with \"/\", without \"..\"");
        expect_one_error("[daemon]\naccess_group = Wheel\n", "sriovd.conf:2",
                         "access_group = \"Wheel\" is not a valid group name; expected [a-z_][a-z0-9_-]*, at most 32 characters");
        expect_one_error("[daemon]\naccess_group = abcdefghijklmnopqrstuvwxyz0123456\n", "sriovd.conf:2",
                         "is not a valid group name");
        expect_one_error("[daemon]\nlibvirt_uri =\n", "sriovd.conf:2",
                         "libvirt_uri = \"\" is not a valid URI; expected a libvirt URI such as qemu:///system");
}

TEST(bad_cpu_list) {
        expect_one_error("[cpus]\nrt = 4-x\n", "sriovd.conf:2",
                         "rt = \"4-x\" is not a valid CPU list; expected a list such as 4-7,20-23");
        expect_one_error("[cpus]\nhousekeeping = 7-3\n", "sriovd.conf:2",
                         "housekeeping = \"7-3\" is not a valid CPU list");
        expect_one_error("[cpus]\nrt = 4096\n", "sriovd.conf:2",
                         "rt = \"4096\" names a CPU beyond 1023; expected CPUs 0 to 1023");
        expect_one_error("[cpus]\nhousekeeping =\n", "sriovd.conf:2",
                         "housekeeping = \"\" is empty; expected at least one CPU");
}

TEST(cpu_overlap) {
        /* Reported at the second of the two keys, naming the overlap. */
        expect_one_error("[cpus]\nrt = 4-7\nhousekeeping = 0-5,7\n", "sriovd.conf:3",
                         "rt and housekeeping CPUs overlap in 4-5,7; expected disjoint lists");
        expect_one_error("[cpus]\nhousekeeping = 0-3\n\n[cpus]\nrt = 5\n", "sriovd.conf:4",
                         "duplicate section [cpus], first at line 1");
}

TEST(bad_pci_address) {
        expect_one_error("[pf 0000:41:00]\nnum_vfs = 2\n", "sriovd.conf:1",
                         "invalid PCI address \"0000:41:00\"; expected DDDD:BB:DD.F in lowercase hex (device 00-1f, function 0-7), e.g. [pf 0000:41:00.0]");
        expect_one_error("[pf 0000:41:20.0]\n", "sriovd.conf:1", "invalid PCI address \"0000:41:20.0\"");
        expect_one_error("[pf 0000:41:00.8]\n", "sriovd.conf:1", "invalid PCI address \"0000:41:00.8\"");
        expect_one_error("[pf ../../../etc]\n", "sriovd.conf:1", "invalid PCI address \"../../../etc\"");
        expect_one_error("[pf 0000:4A:00.0]\n", "sriovd.conf:1",
                         "invalid PCI address \"0000:4A:00.0\"; expected lowercase hex; did you mean [pf 0000:4a:00.0]?");
}

TEST(bad_header_keys_checked) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        /* The keys of a section with a bad or repeated header are still checked, not applied. */
        write_file(dir, "sriovd.conf",
                   "[pf 0000:41:00.0]\n[pf 0000:41:00]\nnum_vfs = many\n"
                   "[pf 0000:41:00.0]\nnum_vf = 1\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 4);
        assert_error(errors, dir, "sriovd.conf:2", "invalid PCI address \"0000:41:00\"");
        assert_error(errors, dir, "sriovd.conf:3", "num_vfs = \"many\" is not an integer");
        assert_error(errors, dir, "sriovd.conf:4", "duplicate section [pf 0000:41:00.0], first at line 1");
        assert_error(errors, dir, "sriovd.conf:5", "did you mean \"num_vfs\"?");
}

TEST(bad_match_id) {
        expect_one_error("[match 15b3:10]\n", "sriovd.conf:1",
                         "invalid [match] ID \"15b3:10\"; expected VVVV:DDDD (vendor:device, 4 hex digits each), e.g. [match 15b3:101d]");
        expect_one_error("[match 15b3-101d]\n", "sriovd.conf:1", "invalid [match] ID \"15b3-101d\"");
        expect_one_error("[match g5b3:101d]\n", "sriovd.conf:1", "invalid [match] ID \"g5b3:101d\"");
}

TEST(duplicate_section) {
        expect_one_error("[pf 0000:41:00.0]\nnum_vfs = 1\n[pf 0000:41:00.0]\nnum_vfs = 2\n", "sriovd.conf:3",
                         "duplicate section [pf 0000:41:00.0], first at line 1; expected each section once");
        /* The same ID in another case is the same section. */
        expect_one_error("[match 15b3:101d]\n[match 15B3:101D]\n", "sriovd.conf:2",
                         "duplicate section [match 15B3:101D], first at line 1");
        expect_class_error("[class]\nvnic = virtio\n[class]\nrank = 1\n", "tenant-classes.d/gold.ini:3",
                           "duplicate section [class], first at line 1");
}

TEST(duplicate_key) {
        expect_one_error("[match 15b3:101d]\nnum_vfs = 8\nnum_vfs = 16\n", "sriovd.conf:3",
                         "duplicate key \"num_vfs\" in [match 15b3:101d], first at line 2; expected each key once per section");
        expect_class_error("[class]\nvnic = virtio\nrank = 1\n\nrank = 2\n", "tenant-classes.d/gold.ini:5",
                           "duplicate key \"rank\" in [class], first at line 3");
}

TEST(unknown_class) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL, *phrase = NULL;

        write_file(dir, "sriovd.conf",
                   "[match 15b3:101d]\nnum_vfs = 8\nclass = thruput\n"
                   "[pf 0000:41:00.0]\nclass = gold\n"
                   "[pf 0000:42:00.0]\nclass = ../etc\n");
        write_file(dir, "tenant-classes.d/throughput.ini", "[class]\nvnic = sriov-preferred\n");
        write_file(dir, "tenant-classes.d/best-effort.ini", "[class]\nvnic = virtio\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 3);

        ASSERT(asprintf(&phrase, "class \"thruput\" is not defined in %s/tenant-classes.d; did you mean \"throughput\"?", dir) > 0);
        assert_error(errors, dir, "sriovd.conf:3", phrase);
        free(phrase);
        ASSERT(asprintf(&phrase, "class \"gold\" is not defined in %s/tenant-classes.d; expected one of: best-effort, throughput", dir) > 0);
        assert_error(errors, dir, "sriovd.conf:5", phrase);
        assert_error(errors, dir, "sriovd.conf:7",
                     "class = \"../etc\" is not a valid class name; expected [a-z0-9][a-z0-9_-]*, at most 63 characters");
}

TEST(unknown_class_no_dir) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL, *phrase = NULL;
        char *errs = NULL;
        Config *c = NULL;

        /* No tenant-classes.d at all is fine, until a class is named. */
        write_file(dir, "sriovd.conf", "[match 15b3:101d]\nclass = gold\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT(asprintf(&phrase, "class \"gold\" is not defined; expected a file %s/tenant-classes.d/gold.ini", dir) > 0);
        assert_error(errors, dir, "sriovd.conf:2", phrase);

        ASSERT_EQ(config_load_string("mem.conf", "[pf 0000:41:00.0]\nclass = gold\n", NULL, &c, &errs), -EINVAL);
        ASSERT(!c);
        ASSERT_STREQ(errs, "mem.conf:2: class \"gold\" is not defined; expected a class from a tenant-classes.d directory, but none is loaded");
        free(errs);
}

TEST(bad_class_file_name) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        write_file(dir, "sriovd.conf", "[daemon]\n");
        write_file(dir, "tenant-classes.d/Gold.ini", "[class]\nvnic = virtio\n");
        write_file(dir, "tenant-classes.d/gold plus.ini", "[class]\nvnic = virtio\n");
        write_file(dir, "tenant-classes.d/-x.ini", "[class]\nvnic = virtio\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 3);
        assert_error(errors, dir, "tenant-classes.d/Gold.ini",
                     "invalid class name \"Gold\"; expected a file named NAME.ini, NAME matching [a-z0-9][a-z0-9_-]* and at most 63 characters");
        assert_error(errors, dir, "tenant-classes.d/gold plus.ini", "invalid class name \"gold plus\"");
        assert_error(errors, dir, "tenant-classes.d/-x.ini", "invalid class name \"-x\"");
}

TEST(bad_class_content) {
        expect_class_error("[class]\nvnic = sriov\n", "tenant-classes.d/gold.ini:2",
                           "vnic = \"sriov\" is not valid; expected sriov-required, sriov-preferred or virtio");
        expect_class_error("[class]\nvnic = sriov-require\n", "tenant-classes.d/gold.ini:2",
                           "vnic = \"sriov-require\" is not valid; expected sriov-required, sriov-preferred or virtio; did you mean \"sriov-required\"?");
        expect_class_error("\n[class]\nrank = 5\n", "tenant-classes.d/gold.ini:2",
                           "[class] has no vnic key; expected vnic = sriov-required, sriov-preferred or virtio");
        expect_class_error("; nothing\n", "tenant-classes.d/gold.ini",
                           "no [class] section; expected a [class] section with at least a vnic key");
        expect_class_error("[klass]\nvnic = virtio\n", "tenant-classes.d/gold.ini:1",
                           "unknown section [klass]; did you mean [class]?");
        expect_class_error("[class]\nvnic = virtio\nirq_spread = even\n", "tenant-classes.d/gold.ini:3",
                           "irq_spread = \"even\" is not valid; expected spread or single");
}

TEST(bad_irq_cpus) {
        expect_class_error("[class]\nvnic = virtio\nirq_cpus = housekeeping\n", "tenant-classes.d/gold.ini:3",
                           "irq_cpus = \"housekeeping\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8");
        expect_class_error("[class]\nvnic = virtio\nirq_cpus = numa-locl\n", "tenant-classes.d/gold.ini:3",
                           "irq_cpus = \"numa-locl\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8; did you mean \"numa-local\"?");
        expect_class_error("[class]\nvnic = virtio\nirq_cpus = 0-3,x\n", "tenant-classes.d/gold.ini:3",
                           "irq_cpus = \"0-3,x\" is not a valid CPU list; expected a list such as 0-3,8");
        expect_class_error("[class]\nvnic = virtio\nirq_cpus = 5000\n", "tenant-classes.d/gold.ini:3",
                           "irq_cpus = \"5000\" names a CPU beyond 1023");
}

/* ---- RT priority ordering across files ---------------------------------------- */

/* Asserts an error at DIR/tenant-classes.d/CLASS.ini:LINE whose text is exactly expected (after DIR is put in). */
_printf_(5, 6) static void assert_class_error_exact(const char *errors, const char *dir, const char *class,
                                                    unsigned line, const char *fmt, ...) {
        _cleanup_free_ char *where = NULL, *phrase = NULL;
        va_list ap;

        ASSERT(asprintf(&where, "tenant-classes.d/%s.ini:%u", class, line) > 0);
        va_start(ap, fmt);
        ASSERT(vasprintf(&phrase, fmt, ap) > 0);
        va_end(ap);
        assert_error(errors, dir, where, phrase);
}

TEST(rt_priority_vs_rtnet_prio) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        write_file(dir, "sriovd.conf", "[daemon]\n\n[rt]\nrtnet_prio = 50\n");         /* rtnet_prio at 4 */
        /* An RT class below the threshold, reported at its irq_thread_priority line. */
        write_file(dir, "tenant-classes.d/latency-critical.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_spread = single\nirq_thread_priority = 40\n");
        /* Non-RT classes at or above it, whatever their irq_cpus. */
        write_file(dir, "tenant-classes.d/throughput.ini",
                   "[class]\nirq_thread_priority = 60\nvnic = sriov-preferred\nirq_cpus = numa-local\n");
        write_file(dir, "tenant-classes.d/pinned.ini",
                   "[class]\nvnic = virtio\nirq_cpus = 0-3\n\nirq_thread_priority = 50\n");
        write_file(dir, "tenant-classes.d/guest.ini", "[class]\nvnic = virtio\nirq_cpus = vcpu\nirq_thread_priority = 51\n");
        /* Below the threshold, and the default irq_cpus: fine. */
        write_file(dir, "tenant-classes.d/default.ini", "[class]\nvnic = virtio\nirq_thread_priority = 49\n");
        errors = load_fail(dir, -EINVAL);

        ASSERT_EQ(count_lines(errors), 4);
        assert_class_error_exact(errors, dir, "latency-critical", 5,
                                 "irq_thread_priority = 40 is below [rt] rtnet_prio = 50 (%s/sriovd.conf:4); "
                                 "expected an RT class's IRQ threads at or above the softirq threshold", dir);
        assert_class_error_exact(errors, dir, "throughput", 2,
                                 "irq_thread_priority = 60 is not below [rt] rtnet_prio = 50 (%s/sriovd.conf:4); "
                                 "expected non-RT classes' IRQ threads below the softirq threshold", dir);
        assert_class_error_exact(errors, dir, "pinned", 5,
                                 "irq_thread_priority = 50 is not below [rt] rtnet_prio = 50 (%s/sriovd.conf:4)", dir);
        assert_class_error_exact(errors, dir, "guest", 4, "irq_thread_priority = 51 is not below [rt] rtnet_prio = 50");

        /* Listed with the class files' other errors, in file order (guest < latency-critical < pinned < throughput). */
        ASSERT(strstr(errors, "guest.ini:4:") < strstr(errors, "latency-critical.ini:5:"));
        ASSERT(strstr(errors, "pinned.ini:5:") < strstr(errors, "throughput.ini:2:"));
}

TEST(rt_priority_between_classes) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        /* Without rtnet_prio every RT class must outrank every non-RT one, compared with the lowest RT class. */
        write_file(dir, "sriovd.conf", "[daemon]\n");
        write_file(dir, "tenant-classes.d/latency-critical.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 70\n");
        write_file(dir, "tenant-classes.d/trading.ini",
                   "[class]\nvnic = sriov-required\nirq_thread_priority = 55\nirq_cpus = rt\n");
        write_file(dir, "tenant-classes.d/throughput.ini",
                   "[class]\nvnic = sriov-preferred\nirq_cpus = numa-local\n\n\nirq_thread_priority = 60\n");
        write_file(dir, "tenant-classes.d/best-effort.ini", "[class]\nvnic = virtio\nirq_thread_priority = 55\n");
        write_file(dir, "tenant-classes.d/bulk.ini", "[class]\nvnic = virtio\nirq_thread_priority = 54\n");
        errors = load_fail(dir, -EINVAL);

        ASSERT_EQ(count_lines(errors), 2);
        assert_class_error_exact(errors, dir, "throughput", 6,
                                 "irq_thread_priority = 60 is not below RT class \"trading\"'s irq_thread_priority = 55 "
                                 "(%s/tenant-classes.d/trading.ini:3); expected non-RT classes' IRQ threads below every RT class's",
                                 dir);
        assert_class_error_exact(errors, dir, "best-effort", 3,
                                 "irq_thread_priority = 55 is not below RT class \"trading\"'s irq_thread_priority = 55");
}

TEST(rt_priority_ok) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;

        /* At the threshold is fine for RT; 0 (the kernel default) and an unset key are never checked. */
        write_file(dir, "sriovd.conf", "[rt]\nrtnet_prio = 50\n");
        write_file(dir, "tenant-classes.d/rt-at.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 50\n");
        write_file(dir, "tenant-classes.d/rt-zero.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 0\n");
        write_file(dir, "tenant-classes.d/rt-unset.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\n");
        write_file(dir, "tenant-classes.d/other.ini", "[class]\nvnic = virtio\nirq_cpus = 1-2\nirq_thread_priority = 49\n");
        write_file(dir, "tenant-classes.d/other-zero.ini", "[class]\nvnic = virtio\nirq_thread_priority = 0\n");
        c = load_ok(dir);
        ASSERT_EQ(config_find_class(c, "rt-at")->irq_thread_priority, 50);
        ASSERT_EQ(config_find_class(c, "other")->irq_thread_priority, 49);
        c = config_free(c);

        /* Without rtnet_prio: strictly above every non-RT class is fine. */
        write_file(dir, "sriovd.conf", "[daemon]\n");
        write_file(dir, "tenant-classes.d/rt-at.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 99\n");
        write_file(dir, "tenant-classes.d/other.ini", "[class]\nvnic = virtio\nirq_cpus = vcpu\nirq_thread_priority = 98\n");
        c = load_ok(dir);
        c = config_free(c);

        /* Without any RT class, non-RT priorities are not compared with anything. */
        write_file(dir, "tenant-classes.d/rt-at.ini", "[class]\nvnic = sriov-required\n");
        write_file(dir, "tenant-classes.d/rt-zero.ini", "[class]\nvnic = sriov-required\n");
        write_file(dir, "tenant-classes.d/rt-unset.ini", "[class]\nvnic = sriov-required\n");
        write_file(dir, "tenant-classes.d/other-zero.ini", "[class]\nvnic = virtio\nirq_thread_priority = 99\n");
        c = load_ok(dir);
}

TEST(rt_priority_after_other_errors) {
        /* A rejected irq_cpus is reported once, not also compared as if it were the default. */
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;

        write_file(dir, "sriovd.conf", "[rt]\nrtnet_prio = 50\n");
        write_file(dir, "tenant-classes.d/gold.ini", "[class]\nvnic = sriov-required\nirq_cpus = rtt\nirq_thread_priority = 99\n");
        /* Neither is an out-of-range priority. */
        write_file(dir, "tenant-classes.d/silver.ini", "[class]\nvnic = virtio\nirq_cpus = rt\nirq_thread_priority = 100\n");
        /* A repeated [class] is checked into scratch: the class's own priority line is the one reported. */
        write_file(dir, "tenant-classes.d/bronze.ini",
                   "[class]\nvnic = virtio\nirq_cpus = rt\nirq_thread_priority = 40\n[class]\nirq_thread_priority = 60\n");
        errors = load_fail(dir, -EINVAL);

        ASSERT_EQ(count_lines(errors), 4);
        assert_error(errors, dir, "tenant-classes.d/gold.ini:3", "irq_cpus = \"rtt\" is not valid");
        assert_error(errors, dir, "tenant-classes.d/silver.ini:4", "irq_thread_priority = 100 is out of range");
        assert_error(errors, dir, "tenant-classes.d/bronze.ini:4", "irq_thread_priority = 40 is below [rt] rtnet_prio = 50");
        assert_error(errors, dir, "tenant-classes.d/bronze.ini:5", "duplicate section [class]");
}

/* s with every "@D@" replaced by dir. */
static char *with_dir(const char *s, const char *dir) {
        size_t n = 0;
        char *out, *o;

        for (const char *q = s; (q = strstr(q, "@D@")); q += 3)
                n++;
        out = malloc(strlen(s) + n * strlen(dir) + 1);
        ASSERT(out);
        for (o = out; *s;)
                if (strncmp(s, "@D@", 3) == 0) {
                        o = stpcpy(o, dir);
                        s += 3;
                } else
                        *o++ = *s++;
        *o = 0;
        return out;
}

/*
 * A class is RT by where its IRQ threads run, not by the irq_cpus keyword: R5's
 * irq_cpus = vcpu with R6's priority is RT when vcpu_pinning = rt puts vCPU 0 on an RT CPU,
 * and a CPU list is RT when it lies within [cpus] rt. Each combination, accepted or rejected with
 * exactly this one error (the whole line, @D@ standing for the directory).
 */
TEST(rt_class_by_placement) {
#define RTNET "[rt]\nrtnet_prio = 50\n"                                   /* rtnet_prio at line 2 */
#define CPUS "[cpus]\nrt = 4-7\nhousekeeping = 0-3\n\n"                    /* rt at line 2, rtnet_prio at 6 */
#define CLS(irq_cpus, prio, more) "[class]\nvnic = sriov-required\nirq_cpus = " irq_cpus \
                                  "\nirq_thread_priority = " prio "\n" more   /* the priority at line 4 */
        static const struct {
                const char *conf, *probe, *other;   /* sriovd.conf, tenant-classes.d/{probe,other}.ini */
                const char *error;                  /* NULL = accepted */
        } cases[] = {
                /* vcpu with RT pinning: RT, at or above the threshold. */
                { RTNET, CLS("vcpu", "99", "vcpu_pinning = rt\n"), NULL, NULL },
                { RTNET, CLS("vcpu", "50", "vcpu_pinning = rt\n"), NULL, NULL },
                { RTNET, CLS("vcpu", "40", "vcpu_pinning = rt\n"), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 40 is below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:2); expected an RT class's IRQ threads at or above the softirq threshold; "
                  "the class is RT: irq_cpus = vcpu with vcpu_pinning = rt puts its IRQs on vCPU 0's RT CPU" },
                /* vcpu without it: vCPU 0 may be anywhere, so below the threshold. */
                { RTNET, CLS("vcpu", "49", ""), NULL, NULL },
                { RTNET, CLS("vcpu", "49", "vcpu_pinning = none\n"), NULL, NULL },
                { RTNET, CLS("vcpu", "99", "vcpu_pinning = none\n"), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:2); expected non-RT classes' IRQ threads below the softirq threshold; "
                  "the class is not RT: irq_cpus = vcpu without vcpu_pinning = rt may put its IRQs on a housekeeping CPU" },
                /* RT pinning does not make another irq_cpus RT: numa-local stays on housekeeping CPUs. */
                { RTNET, CLS("numa-local", "99", "vcpu_pinning = rt\n"), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:2); expected non-RT classes' IRQ threads below the softirq threshold" },
                /* The keyword: no reason needed. */
                { RTNET, CLS("rt", "99", ""), NULL, NULL },
                { RTNET, CLS("rt", "40", ""), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 40 is below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:2); expected an RT class's IRQ threads at or above the softirq threshold" },
                /* A CPU list: RT within [cpus] rt, not RT reaching outside it or without it. */
                { CPUS RTNET, CLS("4-5", "99", ""), NULL, NULL },
                { CPUS RTNET, CLS("4-5", "40", ""), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 40 is below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:6); expected an RT class's IRQ threads at or above the softirq threshold; "
                  "the class is RT: irq_cpus = 4-5 lies within [cpus] rt = 4-7 (@D@/sriovd.conf:2)" },
                { CPUS RTNET, CLS("3-5", "49", ""), NULL, NULL },
                { CPUS RTNET, CLS("3-5", "99", ""), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:6); expected non-RT classes' IRQ threads below the softirq threshold; "
                  "the class is not RT: irq_cpus = 3-5 reaches outside [cpus] rt = 4-7 (@D@/sriovd.conf:2)" },
                { "[cpus]\nrt =\n\n" RTNET, CLS("4-5", "99", ""), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:5); expected non-RT classes' IRQ threads below the softirq threshold; "
                  "the class is not RT: irq_cpus = 4-5 reaches outside [cpus] rt = \"\" (@D@/sriovd.conf:2)" },
                { RTNET, CLS("4-5", "99", ""), NULL,
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below [rt] rtnet_prio = 50 "
                  "(@D@/sriovd.conf:2); expected non-RT classes' IRQ threads below the softirq threshold; "
                  "the class is not RT: irq_cpus = 4-5 counts as RT only within [cpus] rt, which @D@/sriovd.conf "
                  "does not set" },
                /* A rejected vcpu_pinning is reported once: no guess at whether the class is RT. */
                { RTNET, CLS("vcpu", "99", "vcpu_pinning = rtt\n"), NULL,
                  "@D@/tenant-classes.d/probe.ini:5: vcpu_pinning = \"rtt\" is not valid; expected none or rt; "
                  "did you mean \"rt\"?" },
                /* Without rtnet_prio, between classes: the vcpu class with RT pinning is the RT one now. */
                { "[daemon]\n", CLS("vcpu", "70", "vcpu_pinning = rt\n"), CLS("numa-local", "69", ""), NULL },
                { "[daemon]\n", CLS("vcpu", "70", "vcpu_pinning = rt\n"), CLS("numa-local", "80", ""),
                  "@D@/tenant-classes.d/other.ini:4: irq_thread_priority = 80 is not below RT class \"probe\"'s "
                  "irq_thread_priority = 70 (@D@/tenant-classes.d/probe.ini:4); expected non-RT classes' IRQ "
                  "threads below every RT class's" },
                { "[daemon]\n", CLS("vcpu", "99", ""), CLS("rt", "99", ""),
                  "@D@/tenant-classes.d/probe.ini:4: irq_thread_priority = 99 is not below RT class \"other\"'s "
                  "irq_thread_priority = 99 (@D@/tenant-classes.d/other.ini:4); expected non-RT classes' IRQ "
                  "threads below every RT class's; the class is not RT: irq_cpus = vcpu without vcpu_pinning = rt "
                  "may put its IRQs on a housekeeping CPU" },
                { "[daemon]\n", CLS("vcpu", "98", "vcpu_pinning = rt\n"), CLS("rt", "99", ""), NULL },
        };
#undef RTNET
#undef CPUS
#undef CLS

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
                _cleanup_free_ char *errors = NULL, *want = NULL;

                fprintf(stderr, "   case %zu\n", i);
                write_file(dir, "sriovd.conf", cases[i].conf);
                write_file(dir, "tenant-classes.d/probe.ini", cases[i].probe);
                if (cases[i].other)
                        write_file(dir, "tenant-classes.d/other.ini", cases[i].other);
                if (!cases[i].error) {
                        config_free(load_ok(dir));
                        continue;
                }
                errors = load_fail(dir, -EINVAL);
                want = with_dir(cases[i].error, dir);
                ASSERT_STREQ(errors, want);
        }
}

TEST(multiple_errors) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;
        const char *p;

        write_file(dir, "sriovd.conf",
                   "[daemon]\n"
                   "drift_check_sec = often\n"          /* 2 */
                   "state_dir = relative\n"             /* 3 */
                   "[cpus]\n"
                   "housekeeping = 0-7\n"               /* 5 */
                   "rt = 6-9\n"                         /* 6: overlap */
                   "[match 15b3:101d]\n"
                   "num_vfs = 9000\n"                   /* 8 */
                   "class = platinum\n"                 /* 9: checked last, listed in place */
                   "[bogus]\n"                          /* 10 */
                   "whatever = 1\n");                   /* ignored: its section is already wrong */
        write_file(dir, "tenant-classes.d/b.ini", "[class]\nvnic = virtio\nrank = high\n");
        write_file(dir, "tenant-classes.d/a.ini", "[class]\nvnic = virtio\nirq_spread = wide\n");
        errors = load_fail(dir, -EINVAL);

        ASSERT_EQ(count_lines(errors), 8);
        assert_error(errors, dir, "sriovd.conf:2", "drift_check_sec = \"often\" is not an integer");
        assert_error(errors, dir, "sriovd.conf:3", "state_dir = \"relative\" is not a valid absolute path");
        assert_error(errors, dir, "sriovd.conf:6", "rt and housekeeping CPUs overlap in 6-7");
        assert_error(errors, dir, "sriovd.conf:8", "num_vfs = 9000 is out of range");
        assert_error(errors, dir, "sriovd.conf:9", "class \"platinum\" is not defined");
        assert_error(errors, dir, "sriovd.conf:10", "unknown section [bogus]");
        assert_error(errors, dir, "tenant-classes.d/a.ini:3", "irq_spread = \"wide\" is not valid");
        assert_error(errors, dir, "tenant-classes.d/b.ini:3", "rank = \"high\" is not an integer; expected an integer from -1000 to 1000");

        /* In file order, then line order. */
        p = strstr(errors, "sriovd.conf:2:");
        ASSERT(p == errors + strlen(dir) + 1);
        ASSERT(strstr(errors, "sriovd.conf:10:") < strstr(errors, "a.ini:3:"));
        ASSERT(strstr(errors, "a.ini:3:") < strstr(errors, "b.ini:3:"));
        ASSERT(strstr(errors, "sriovd.conf:8:") < strstr(errors, "sriovd.conf:9:"));
        ASSERT(errors[strlen(errors) - 1] != '\n');
}

TEST(too_many_errors) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL;
        FILE *f;
        char *text = NULL;
        size_t size = 0;

        f = open_memstream(&text, &size);
        ASSERT(f);
        for (int i = 0; i < 500; i++)
                fprintf(f, "junk %d\n", i);
        ASSERT(fclose(f) == 0);
        write_file(dir, "sriovd.conf", text);
        free(text);

        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 101);
        assert_error(errors, dir, "sriovd.conf:1", "syntax error");
        assert_error(errors, dir, "sriovd.conf:100", "syntax error");
        assert_error(errors, dir, "sriovd.conf", "400 more errors not shown");
}

TEST(missing_file) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *path = NULL;
        Config *c = NULL;
        char *errors = NULL;

        ASSERT(asprintf(&path, "%s/nope.conf", dir) > 0);
        ASSERT_EQ(config_load(path, &c, &errors), -ENOENT);
        ASSERT(!c);
        ASSERT(errors);
        ASSERT_CONTAINS(errors, path);
        assert_error(errors, dir, "nope.conf", "cannot read: No such file or directory");
        free(errors);

        /* Callers that only want the errno may pass no error string. */
        ASSERT_EQ(config_load(path, &c, NULL), -ENOENT);

        /* A directory is not a config file. */
        ASSERT_EQ(config_load(dir, &c, &errors), -EISDIR);
        ASSERT_CONTAINS(errors, "cannot read: Is a directory");
        free(errors);
}

TEST(unreadable_class_file) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL, *sub = NULL;

        /* A directory named like a class: its errno is what the load returns. */
        write_file(dir, "sriovd.conf", "[daemon]\n");
        ASSERT(asprintf(&sub, "%s/tenant-classes.d", dir) > 0);
        ASSERT(mkdir(sub, 0755) == 0);
        free(sub);
        ASSERT(asprintf(&sub, "%s/tenant-classes.d/odd.ini", dir) > 0);
        ASSERT(mkdir(sub, 0755) == 0);
        errors = load_fail(dir, -EISDIR);
        assert_error(errors, dir, "tenant-classes.d/odd.ini", "cannot read: Is a directory");
}

TEST(long_lines_and_nul) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *errors = NULL, *text = NULL;
        static const char with_nul[] = "[daemon]\nstate_dir = /a\0b\n[rt]\nrtnet_prio = 5\n";
        size_t n = 5000;

        _cleanup_free_ char *run = malloc(n + 1);

        /* A long comment is harmless; a long value is an error, not a silent cut. */
        ASSERT(run);
        memset(run, 'x', n);
        run[n] = 0;
        ASSERT(asprintf(&text, "# %s\n[daemon]\nlibvirt_uri = %s\n", run, run) > 0);
        write_file(dir, "sriovd.conf", text);
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "sriovd.conf:3", "line is too long (5014 characters); expected at most");
        free(errors);

        write_file_n(dir, "sriovd.conf", with_nul, sizeof(with_nul) - 1);
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "sriovd.conf:2", "line contains a NUL byte; expected text");
}

/* ---- robustness ---------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15;

static uint64_t rng(void) {
        /* xorshift64: deterministic, so a failure reproduces. */
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static void load_garbage(const char *text, const char *classes_dir) {
        Config *c = NULL;
        char *errors = NULL;
        int r;

        r = config_load_string("garbage.conf", text, classes_dir, &c, &errors);
        ASSERT(r == 0 || r == -EINVAL);
        if (r == 0) {
                Scope scope;

                ASSERT(c && !errors);
                config_scope(c, &scope);
                ASSERT(scope.n_ids >= scope_default_n_ids);
        } else {
                ASSERT(!c && errors);
                /* Every line names the file it is about. */
                for (const char *l = errors; l; ) {
                        const char *nl = strchr(l, '\n');

                        ASSERT(strncmp(l, "garbage.conf", strlen("garbage.conf")) == 0 ||
                               (classes_dir && strncmp(l, classes_dir, strlen(classes_dir)) == 0));
                        l = nl ? nl + 1 : NULL;
                }
        }
        config_free(c);
        free(errors);
}

TEST(garbage) {
        static const char alphabet[] = "[]=:;# \t\r\n\\\"'abcdefpmrtx0123456789.,-_/\xef\xbb\xbf\x01\xff";
        static const char *const pieces[] = {
                "[daemon]", "[cpus]", "[rt]", "[match 15b3:101d]", "[pf 0000:41:00.0]", "[class]", "[", "]",
                "num_vfs = ", "class = ", "rt = ", "housekeeping = ", "state_dir = ", "=", ":", ";", "#",
                "\n", "\r\n", " ", "\t", "0-3", "4-7", "99999999999999999999", "-1", "yes", "throughput", "x",
        };
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *classes = NULL, *shipped = NULL;
        char buf[4096];

        /* Class files for the classes_dir variants to chew on as well. */
        write_file(dir, "tenant-classes.d/throughput.ini", "[class]\nvnic = virtio\n");
        write_file(dir, "tenant-classes.d/broken.ini", "[class\nvnic = what\n\xff\n");
        ASSERT(asprintf(&classes, "%s/tenant-classes.d", dir) > 0);

        /* Random bytes. */
        for (int i = 0; i < 2000; i++) {
                size_t n = rng() % (sizeof(buf) - 1);

                for (size_t j = 0; j < n; j++) {
                        char ch = (char) (rng() & 0xff);
                        buf[j] = ch ? ch : '\n';
                }
                buf[n] = 0;
                load_garbage(buf, i % 2 ? classes : NULL);
        }

        /* Bytes from the characters that matter to the parser. */
        for (int i = 0; i < 2000; i++) {
                size_t n = rng() % 600;

                for (size_t j = 0; j < n; j++)
                        buf[j] = alphabet[rng() % (sizeof(alphabet) - 1)];
                buf[n] = 0;
                load_garbage(buf, i % 2 ? classes : NULL);
        }

        /* Plausible pieces in random order. */
        for (int i = 0; i < 3000; i++) {
                size_t n = 0, count = rng() % 40;

                buf[0] = 0;
                for (size_t j = 0; j < count; j++) {
                        const char *piece = pieces[rng() % ELEMENTSOF(pieces)];
                        if (n + strlen(piece) + 1 >= sizeof(buf))
                                break;
                        strcpy(buf + n, piece);
                        n += strlen(piece);
                }
                load_garbage(buf, i % 2 ? classes : NULL);
        }

        /* The shipped config with random bytes flipped. */
        if (shipped_conf) {
                FILE *f = fopen(shipped_conf, "re");
                size_t n;

                ASSERT(f);
                n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[n] = 0;
                shipped = strdup(buf);
                ASSERT(shipped);
                for (int i = 0; i < 3000; i++) {
                        strcpy(buf, shipped);
                        for (int k = 0, m = 1 + (int) (rng() % 8); k < m && n > 0; k++) {
                                char ch = (char) (rng() & 0xff);
                                buf[rng() % n] = ch ? ch : ' ';
                        }
                        load_garbage(buf, i % 2 ? classes : NULL);
                }
        }

        /* Very long lines of every kind. */
        {
                size_t n = 100000;
                char *big = malloc(n + 1);
                static const char *const starts[] = { "", "[", "[pf ", "# ", "key = ", "=", " \t" };

                ASSERT(big);
                for (size_t s = 0; s < ELEMENTSOF(starts); s++) {
                        memset(big, s % 2 ? ']' : 'a', n);
                        memcpy(big, starts[s], strlen(starts[s]));
                        big[n] = 0;
                        load_garbage(big, NULL);
                }
                free(big);
        }

        /* NULs inside a file, which config_load() reads with its size. */
        {
                static const char nuls[] = "\0\0[daemon\0]\n\0=\0\n[rt]\nrtnet_prio = 1\0\n\0";
                Config *c = NULL;
                char *errors = NULL;
                _cleanup_free_ char *path = NULL;

                write_file_n(dir, "nul.conf", nuls, sizeof(nuls) - 1);
                ASSERT(asprintf(&path, "%s/nul.conf", dir) > 0);
                ASSERT_EQ(config_load(path, &c, &errors), -EINVAL);
                ASSERT(!c);
                ASSERT_CONTAINS(errors, "NUL byte");
                free(errors);
        }
}

/* ---- channels, threaded NAPI, per-CPU kernel threads ------------------------------------ */

TEST(napi_and_kthread_keys) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;
        const TenantClass *t;

        write_file(dir, "sriovd.conf",
                   "[rt]\nrtnet_prio = 50\nksoftirqd_priority = 2\nktimers_priority = 3\nrcuc_priority = 4\n");
        write_file(dir, "tenant-classes.d/gold.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 99\n"
                   "channels_combined = 4096\nchannels_rx = leave\nchannels_tx = 1\n"
                   "napi_threads = on\nnapi_thread_priority = 60\n"
                   "napi_defer_hard_irqs = 2147483647\nnapi_gro_flush_timeout_ns = 4294967295\n"
                   "napi_irq_suspend_timeout_ns = 0\n");
        /* Per-NAPI settings need no threads; the defaults are all "leave". */
        write_file(dir, "tenant-classes.d/bulk.ini",
                   "[class]\nvnic = virtio\nnapi_threads = off\nnapi_defer_hard_irqs = 2\nnapi_thread_priority = 0\n");
        write_file(dir, "tenant-classes.d/plain.ini", "[class]\nvnic = virtio\n");
        c = load_ok(dir);

        ASSERT_EQ(c->kthread_priority[KTHREAD_KSOFTIRQD], 2);
        ASSERT_EQ(c->kthread_priority[KTHREAD_KTIMERS], 3);
        ASSERT_EQ(c->kthread_priority[KTHREAD_RCUC], 4);
        ASSERT_EQ(c->kthread_priority[KTHREAD_NAPI], 0);
        t = config_find_class(c, "gold");
        ASSERT_EQ(t->channels.combined, 4096);
        ASSERT_EQ(t->channels.rx, -1);
        ASSERT_EQ(t->channels.tx, 1);
        ASSERT_EQ(t->napi_threads, TRISTATE_ON);
        ASSERT_EQ(t->napi_thread_priority, 60);
        ASSERT_EQ(tenant_class_napi_priority(t), 60);
        ASSERT_EQ(t->napi_params.defer_hard_irqs, 2147483647L);
        ASSERT_EQ(t->napi_params.gro_flush_timeout, 4294967295L);
        ASSERT_EQ(t->napi_params.irq_suspend_timeout, 0);
        t = config_find_class(c, "bulk");
        ASSERT_EQ(t->napi_threads, TRISTATE_OFF);
        ASSERT_EQ(t->napi_params.defer_hard_irqs, 2);
        ASSERT_EQ(tenant_class_napi_priority(t), 0);
        t = config_find_class(c, "plain");
        ASSERT_EQ(t->channels.combined, -1);
        ASSERT_EQ(t->channels.rx, -1);
        ASSERT_EQ(t->channels.tx, -1);
        ASSERT_EQ(t->napi_threads, TRISTATE_LEAVE);
        ASSERT_EQ(t->napi_thread_priority, -1);
        ASSERT_EQ(t->napi_params.defer_hard_irqs, -1);
        ASSERT_EQ(t->napi_params.gro_flush_timeout, -1);
        ASSERT_EQ(t->napi_params.irq_suspend_timeout, -1);
        c = config_free(c);

        /* The [rt] keys default to 0: leave. */
        ASSERT_EQ(config_load_string("empty.conf", "", NULL, &c, NULL), 0);
        for (size_t k = 0; k < _KTHREAD_KIND_MAX; k++)
                ASSERT_EQ(c->kthread_priority[k], 0);
}

TEST(napi_and_kthread_keys_out_of_range) {
        expect_class_error("[class]\nvnic = virtio\nchannels_combined = 0\n", "tenant-classes.d/gold.ini:3",
                           "channels_combined = 0 is out of range; expected an integer from 1 to 4096, or leave");
        expect_class_error("[class]\nvnic = virtio\nchannels_rx = 4097\n", "tenant-classes.d/gold.ini:3",
                           "channels_rx = 4097 is out of range");
        expect_class_error("[class]\nvnic = virtio\nchannels_tx = some\n", "tenant-classes.d/gold.ini:3",
                           "channels_tx = \"some\" is not valid; expected an integer from 1 to 4096, or leave");
        expect_class_error("[class]\nvnic = virtio\nnapi_defer_hard_irqs = 2147483648\n", "tenant-classes.d/gold.ini:3",
                           "napi_defer_hard_irqs = 2147483648 is out of range; expected an integer from 0 to 2147483647");
        expect_class_error("[class]\nvnic = virtio\nnapi_gro_flush_timeout_ns = -1\n", "tenant-classes.d/gold.ini:3",
                           "napi_gro_flush_timeout_ns = -1 is out of range");
        expect_class_error("[class]\nvnic = virtio\nnapi_irq_suspend_timeout_ns = 4294967296\n",
                           "tenant-classes.d/gold.ini:3", "napi_irq_suspend_timeout_ns = 4294967296 is out of range");
        expect_class_error("[class]\nvnic = virtio\nnapi_threads = maybe\n", "tenant-classes.d/gold.ini:3",
                           "napi_threads = \"maybe\" is not valid; expected on, off or leave");
        expect_class_error("[class]\nvnic = virtio\nnapi_threads = on\nnapi_thread_priority = 100\n",
                           "tenant-classes.d/gold.ini:4", "napi_thread_priority = 100 is out of range");
        expect_one_error("[rt]\nksoftirqd_priority = 100\n", "sriovd.conf:2",
                         "ksoftirqd_priority = 100 is out of range; expected an integer from 0 to 99");
        expect_one_error("[rt]\n\nrcuc_priority = -1\n", "sriovd.conf:3", "rcuc_priority = -1 is out of range");
        expect_one_error("[rt]\nktimers_priority = x\n", "sriovd.conf:2", "ktimers_priority = \"x\" is not an integer");
}

TEST(napi_priority_needs_threads) {
        /* Refused at the priority's line, naming the napi_threads line that contradicts it. */
        expect_class_error("[class]\nvnic = virtio\nnapi_threads = off\n\nnapi_thread_priority = 10\n",
                           "tenant-classes.d/gold.ini:5",
                           "napi_thread_priority = 10 needs NAPI threads, but napi_threads = off (");
        expect_class_error("[class]\nvnic = virtio\nnapi_threads = off\n\nnapi_thread_priority = 10\n",
                           "tenant-classes.d/gold.ini:5", "tenant-classes.d/gold.ini:3); expected napi_threads = on");
        expect_class_error("[class]\nvnic = virtio\nnapi_thread_priority = 10\n", "tenant-classes.d/gold.ini:3",
                           "napi_thread_priority = 10 needs NAPI threads, but napi_threads is not set (leave)");
        expect_class_error("[class]\nvnic = virtio\nnapi_thread_priority = 10\nnapi_threads = leave\n",
                           "tenant-classes.d/gold.ini:3", "but napi_threads = leave (");
}

TEST(napi_priority_order) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;

        /* An RT class's NAPI threads follow its IRQ threads' rule, at their own line. */
        write_file(dir, "sriovd.conf", "[rt]\nrtnet_prio = 50\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\nnapi_threads = on\n"
                   "napi_thread_priority = 40\n");
        write_file(dir, "tenant-classes.d/bulk.ini",
                   "[class]\nvnic = virtio\nirq_thread_priority = 10\nnapi_threads = on\nnapi_thread_priority = 50\n");
        /* Threads off and a priority that follows irq_thread_priority: nothing more to check. */
        write_file(dir, "tenant-classes.d/quiet.ini",
                   "[class]\nvnic = virtio\nirq_thread_priority = 10\nnapi_threads = off\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 2);
        assert_class_error_exact(errors, dir, "rt", 6,
                                 "napi_thread_priority = 40 is below [rt] rtnet_prio = 50 (%s/sriovd.conf:2); "
                                 "expected an RT class's NAPI threads at or above the softirq threshold", dir);
        assert_class_error_exact(errors, dir, "bulk", 5,
                                 "napi_thread_priority = 50 is not below [rt] rtnet_prio = 50 (%s/sriovd.conf:2); "
                                 "expected non-RT classes' NAPI threads below the softirq threshold", dir);
        free(errors);
        errors = NULL;

        /* Without rtnet_prio: the lowest RT priority may be a NAPI one, and non-RT classes stay below it. */
        write_file(dir, "sriovd.conf", "[daemon]\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\nnapi_threads = on\n"
                   "napi_thread_priority = 55\n");
        write_file(dir, "tenant-classes.d/bulk.ini", "[class]\nvnic = virtio\nirq_thread_priority = 60\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_class_error_exact(errors, dir, "bulk", 3,
                                 "irq_thread_priority = 60 is not below RT class \"rt\"'s napi_thread_priority = 55 "
                                 "(%s/tenant-classes.d/rt.ini:6); expected non-RT classes' IRQ threads below every RT class's",
                                 dir);

        /* In order, it loads. */
        write_file(dir, "tenant-classes.d/bulk.ini",
                   "[class]\nvnic = virtio\nirq_thread_priority = 54\nnapi_threads = on\nnapi_thread_priority = 54\n");
        c = load_ok(dir);
}

TEST(kthread_priority_order) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;

        /* With rtnet_prio: each kthread key below it, reported at the key, naming rtnet_prio's line. */
        write_file(dir, "sriovd.conf",
                   "[rt]\nrtnet_prio = 50\nksoftirqd_priority = 50\nktimers_priority = 49\nrcuc_priority = 99\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 2);
        assert_error(errors, dir, "sriovd.conf:3",
                     "ksoftirqd_priority = 50 is not below [rt] rtnet_prio = 50 (");
        assert_error(errors, dir, "sriovd.conf:3", "/sriovd.conf:2); expected the per-CPU kernel threads of the RT CPUs "
                                                   "below the softirq threshold");
        assert_error(errors, dir, "sriovd.conf:5", "rcuc_priority = 99 is not below [rt] rtnet_prio = 50");
        free(errors);
        errors = NULL;

        /* Without rtnet_prio: below the lowest RT class's IRQ or NAPI threads; non-RT classes do not count. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 2\nktimers_priority = 60\nrcuc_priority = 61\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\nnapi_threads = on\n"
                   "napi_thread_priority = 61\n");
        write_file(dir, "tenant-classes.d/bulk.ini", "[class]\nvnic = virtio\nirq_thread_priority = 1\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "sriovd.conf:4",
                     "rcuc_priority = 61 is not below RT class \"rt\"'s napi_thread_priority = 61 (");
        assert_error(errors, dir, "sriovd.conf:4", "/tenant-classes.d/rt.ini:6); expected the per-CPU kernel threads "
                                                   "of the RT CPUs below every RT class's IRQ and NAPI threads");
        free(errors);
        errors = NULL;

        /* With rtnet_prio, an RT class below it (its own error) still bounds the kthreads. */
        write_file(dir, "sriovd.conf", "[rt]\nrtnet_prio = 50\nksoftirqd_priority = 40\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 30\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 2);
        assert_class_error_exact(errors, dir, "rt", 4, "irq_thread_priority = 30 is below [rt] rtnet_prio = 50");
        assert_error(errors, dir, "sriovd.conf:3",
                     "ksoftirqd_priority = 40 is not below RT class \"rt\"'s irq_thread_priority = 30");

        /* No RT class and no rtnet_prio: nothing to be below; 0 is never checked. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 99\nrcuc_priority = 0\n");
        write_file(dir, "tenant-classes.d/rt.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\n");
        c = load_ok(dir);
        ASSERT_EQ(c->kthread_priority[KTHREAD_KSOFTIRQD], 99);
}

/* The RT vCPUs and vhost workers come last: below rtnet_prio, the RT classes' threads, and on RT CPUs the kthreads. */
TEST(guest_priority_order) {
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;

        /* A vCPU above rcuc is refused at its line, naming rcuc's line and what it would starve. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 2\nrcuc_priority = 4\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\nvcpu_pinning = rt\n"
                   "vcpu_fifo_priority = 4\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_class_error_exact(errors, dir, "rt", 6, "vcpu_fifo_priority = 4 is not below [rt] ksoftirqd_priority = 2");
        free(errors);
        errors = NULL;

        /* Between ksoftirqd and rcuc, the lower one it is not below is named. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 5\nrcuc_priority = 4\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "tenant-classes.d/rt.ini:6", "vcpu_fifo_priority = 4 is not below [rt] rcuc_priority = 4 (");
        assert_error(errors, dir, "tenant-classes.d/rt.ini:6", "/sriovd.conf:3); expected RT vCPU threads on RT CPUs below "
                                                              "the per-CPU kernel threads there: spinning above them starves "
                                                              "RCU callbacks on its CPU, which stalls the host");
        free(errors);
        errors = NULL;

        /* Above the RT class's IRQ threads, and at rtnet_prio: each its own reason. */
        write_file(dir, "sriovd.conf", "[rt]\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 40\nvcpu_pinning = rt\n"
                   "vcpu_fifo_priority = 40\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "tenant-classes.d/rt.ini:6",
                     "vcpu_fifo_priority = 40 is not below RT class \"rt\"'s irq_thread_priority = 40 (");
        free(errors);
        errors = NULL;
        write_file(dir, "sriovd.conf", "[rt]\nrtnet_prio = 30\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 40\nvcpu_pinning = rt\n"
                   "vcpu_fifo_priority = 30\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "tenant-classes.d/rt.ini:6", "vcpu_fifo_priority = 30 is not below [rt] rtnet_prio = 30 (");
        free(errors);
        errors = NULL;

        /* vhost workers on RT CPUs obey the kthreads; on housekeeping CPUs only the RT NIC's threads. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 2\nrcuc_priority = 4\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\n");
        write_file(dir, "tenant-classes.d/web.ini",
                   "[class]\nvnic = virtio\nvcpu_pinning = rt\nvhost_cpus = rt\nvhost_priority = 3\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "tenant-classes.d/web.ini:5", "vhost_priority = 3 is not below [rt] ksoftirqd_priority = 2");
        free(errors);
        errors = NULL;
        write_file(dir, "tenant-classes.d/web.ini", "[class]\nvnic = virtio\nvhost_cpus = housekeeping\nvhost_priority = 90\n");
        errors = load_fail(dir, -EINVAL);
        ASSERT_EQ(count_lines(errors), 1);
        assert_error(errors, dir, "tenant-classes.d/web.ini:4",
                     "vhost_priority = 90 is not below RT class \"rt\"'s irq_thread_priority = 90");
        free(errors);
        errors = NULL;

        /* In order, or with nothing to compare with, they load; vCPUs off RT CPUs are not RT vCPUs. */
        write_file(dir, "tenant-classes.d/web.ini", "[class]\nvnic = virtio\nvhost_cpus = housekeeping\nvhost_priority = 3\n");
        write_file(dir, "tenant-classes.d/rt.ini",
                   "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\nvcpu_pinning = rt\n"
                   "vcpu_fifo_priority = 1\n");
        c = load_ok(dir);
        ASSERT_EQ(c->n_classes, 2u);
        c = config_free(c);
        write_file(dir, "sriovd.conf", "[rt]\n");
        write_file(dir, "tenant-classes.d/rt.ini", "[class]\nvnic = sriov-required\nvcpu_pinning = rt\nvcpu_fifo_priority = 50\n");
        c = load_ok(dir);
        ASSERT_EQ(c->classes[0].vcpu_fifo_priority, 50);
}

/* TuneD's realtime-virtual-host values (ksoftirqd FIFO 2, rcuc FIFO 4) fit the shipped classes. */
TEST(kthread_priority_tuned_with_shipped_classes) {
        static const char *const names[] = { "best-effort", "latency-critical", "rt-vcpu", "throughput" };
        _cleanup_(tmpdir_freep) char *dir = tmpdir_new();
        _cleanup_free_ char *classes = NULL;
        _cleanup_(config_freep) Config *c = NULL;

        ASSERT(shipped_conf);
        ASSERT(asprintf(&classes, "%.*s/tenant-classes.d", (int) (strrchr(shipped_conf, '/') - shipped_conf),
                        shipped_conf) > 0);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *from = NULL, *to = NULL, *text = NULL;
                size_t size = 0;
                FILE *f;

                ASSERT(asprintf(&from, "%s/%s.ini", classes, names[i]) > 0);
                ASSERT(asprintf(&to, "tenant-classes.d/%s.ini", names[i]) > 0);
                f = fopen(from, "re");
                ASSERT(f);
                text = calloc(1, 65536);
                ASSERT(text);
                size = fread(text, 1, 65535, f);
                fclose(f);
                ASSERT(size > 0);
                write_file(dir, to, text);
        }
        write_file(dir, "sriovd.conf", "[cpus]\nrt = 4-7\n[rt]\nrtnet_prio = 50\nksoftirqd_priority = 2\nrcuc_priority = 4\n"
                                       "ktimers_priority = 3\n");
        c = load_ok(dir);
        ASSERT_EQ(c->n_classes, ELEMENTSOF(names));
        c = config_free(c);
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 2\nrcuc_priority = 4\n");
        c = load_ok(dir);
}

int main(int argc, char *argv[]) {
        if (argc > 1)
                shipped_conf = argv[1];

        RUN(shipped);
        RUN(to_string);
        RUN(all_keys);
        RUN(defaults);
        RUN(syntax_error);
        RUN(syntax_errors_all_reported);
        RUN(unknown_section);
        RUN(unknown_key);
        RUN(bad_integer);
        RUN(out_of_range);
        RUN(bad_bool);
        RUN(vhost_cpus_rt);
        RUN(l3_cache_mask);
        RUN(bad_strings);
        RUN(bad_cpu_list);
        RUN(cpu_overlap);
        RUN(bad_pci_address);
        RUN(bad_header_keys_checked);
        RUN(bad_match_id);
        RUN(duplicate_section);
        RUN(duplicate_key);
        RUN(unknown_class);
        RUN(unknown_class_no_dir);
        RUN(bad_class_file_name);
        RUN(bad_class_content);
        RUN(bad_irq_cpus);
        RUN(rt_priority_vs_rtnet_prio);
        RUN(rt_priority_between_classes);
        RUN(rt_priority_ok);
        RUN(rt_priority_after_other_errors);
        RUN(rt_class_by_placement);
        RUN(napi_and_kthread_keys);
        RUN(napi_and_kthread_keys_out_of_range);
        RUN(napi_priority_needs_threads);
        RUN(napi_priority_order);
        RUN(kthread_priority_order);
        RUN(guest_priority_order);
        RUN(kthread_priority_tuned_with_shipped_classes);
        RUN(multiple_errors);
        RUN(too_many_errors);
        RUN(missing_file);
        RUN(unreadable_class_file);
        RUN(long_lines_and_nul);
        RUN(garbage);

        fprintf(stderr, "all config tests passed\n");
        return 0;
}
