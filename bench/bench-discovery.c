/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-discovery.c — discovery + dry-run plan on a large host, against a bare open/read floor */

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <pci/pci.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/discover.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/kernel/sriov.h"
#include "config/config.h"
#include "kernel/pci.h"
#include "bench-util.h"

static const char bench_config[] =
        "[match 15b3:101d]\n"
        "num_vfs = 64\n"
        "[rt]\n"
        "rtnet_prio = 50\n";

typedef BenchOptions Options;

/* What one floor walk touched. */
typedef struct FloorCount {
        unsigned files, links, dirs, stats;
        unsigned pci_functions, irqs, pids;
        uint64_t bytes;
} FloorCount;

/* The measured workloads; each iteration runs all of them in a rotating order. */
typedef enum Kind {
        KIND_DISCOVERY,
        KIND_FLOOR,
        KIND_PCI_SCAN,
        KIND_THREAD_SCAN,
        KIND_PCI_IDS,
        _KIND_MAX,
} Kind;

static const char *const kind_label[_KIND_MAX] = {
        [KIND_DISCOVERY] = "discovery + plan",
        [KIND_FLOOR] = "floor (bare open/read)",
        [KIND_PCI_SCAN] = "  part: pci_scan (sysfs, names)",
        [KIND_THREAD_SCAN] = "  part: /proc thread scan",
        [KIND_PCI_IDS] = "  part: libpci pci.ids load",
};

typedef struct Bench {
        const char *root;
        int root_fd;
        const Config *config;
} Bench;

/* ---- the floor: the same files discovery reads, plain syscalls, no parsing ---- */

static void floor_consume(int fd, FloorCount *c) {
        char buf[4096];
        ssize_t k;

        while ((k = read(fd, buf, sizeof(buf))) > 0)
                c->bytes += (uint64_t) k;
}

/* Open, read to EOF, optionally fstat, close. Returns whether the file existed. */
_printf_(4, 5) static bool floor_read(int root_fd, FloorCount *c, bool do_stat, const char *fmt, ...) {
        char path[PATH_MAX];
        struct stat st;
        va_list ap;
        int fd;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);

        fd = openat(root_fd, path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return false;
        c->files++;
        floor_consume(fd, c);
        if (do_stat && fstat(fd, &st) >= 0)
                c->stats++;
        close(fd);
        return true;
}

_printf_(3, 4) static void floor_readlink(int root_fd, FloorCount *c, const char *fmt, ...) {
        char path[PATH_MAX], target[PATH_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);

        if (readlinkat(root_fd, path, target, sizeof(target)) >= 0)
                c->links++;
}

_printf_(3, 4) static DIR *floor_opendir(int root_fd, FloorCount *c, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        DIR *d;
        int fd;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);

        fd = openat(root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return NULL;
        }
        c->dirs++;
        return d;
}

_printf_(3, 4) static void floor_list(int root_fd, FloorCount *c, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        DIR *d;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);

        d = floor_opendir(root_fd, c, "%s", path);
        if (!d)
                return;
        while (readdir(d))
                ;
        closedir(d);
}

static void floor_function(int root_fd, FloorCount *c, const char *addr) {
        static const char *const attrs[] = { "vendor", "device", "class", "numa_node" };
        DIR *d;
        struct dirent *de;

        c->pci_functions++;
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++)
                floor_read(root_fd, c, false, "sys/bus/pci/devices/%s/%s", addr, attrs[i]);
        floor_readlink(root_fd, c, "sys/bus/pci/devices/%s/driver", addr);
        floor_readlink(root_fd, c, "sys/bus/pci/devices/%s/iommu_group", addr);
        floor_list(root_fd, c, "sys/bus/pci/devices/%s/net", addr);

        d = floor_opendir(root_fd, c, "sys/bus/pci/devices/%s/msi_irqs", addr);
        if (d) {
                while ((de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        c->irqs++;
                        floor_read(root_fd, c, true, "proc/irq/%s/smp_affinity_list", de->d_name);
                        floor_read(root_fd, c, false, "proc/irq/%s/effective_affinity_list", de->d_name);
                }
                closedir(d);
        }

        /* Only SR-IOV PFs have these; a VF answers ENOENT, as it does to discovery. */
        if (!floor_read(root_fd, c, false, "sys/bus/pci/devices/%s/sriov_totalvfs", addr))
                return;
        floor_read(root_fd, c, false, "sys/bus/pci/devices/%s/sriov_numvfs", addr);
        floor_read(root_fd, c, false, "sys/bus/pci/devices/%s/sriov_drivers_autoprobe", addr);
        floor_read(root_fd, c, false, "sys/bus/pci/devices/%s/local_cpulist", addr);
        d = floor_opendir(root_fd, c, "sys/bus/pci/devices/%s", addr);
        if (!d)
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "virtfn", 6) == 0)
                        floor_readlink(root_fd, c, "sys/bus/pci/devices/%s/%s", addr, de->d_name);
        closedir(d);
}

static void floor_walk(int root_fd, FloorCount *ret) {
        static const char *const host_files[] = {
                "sys/devices/system/cpu/online",
                "sys/devices/system/cpu/isolated",
                "sys/devices/system/cpu/nohz_full",
                "sys/devices/system/node/online",
                "sys/kernel/realtime",
                "proc/sys/net/core/rtnet_prio",
        };
        FloorCount c = {};
        struct dirent *de;
        DIR *d;

        for (size_t i = 0; i < ELEMENTSOF(host_files); i++)
                floor_read(root_fd, &c, false, "%s", host_files[i]);
        d = floor_opendir(root_fd, &c, "sys/devices/system/node");
        if (d) {
                while ((de = readdir(d)))
                        if (strncmp(de->d_name, "node", 4) == 0 && isdigit((unsigned char) de->d_name[4]))
                                floor_read(root_fd, &c, false, "sys/devices/system/node/%s/cpulist",
                                           de->d_name);
                closedir(d);
        }
        /* Discovery only asks whether any IOMMU group exists: one entry is enough. */
        d = floor_opendir(root_fd, &c, "sys/kernel/iommu_groups");
        if (d) {
                (void) readdir(d);
                closedir(d);
        }

        d = floor_opendir(root_fd, &c, "proc");
        if (d) {
                while ((de = readdir(d)))
                        if (isdigit((unsigned char) de->d_name[0])) {
                                c.pids++;
                                floor_read(root_fd, &c, false, "proc/%s/stat", de->d_name);
                        }
                closedir(d);
        }

        d = floor_opendir(root_fd, &c, "sys/bus/pci/devices");
        if (d) {
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                floor_function(root_fd, &c, de->d_name);
                closedir(d);
        }
        *ret = c;
}

/* ---- the measured workloads ---- */

/* libpci's default error handler calls exit(); a benchmark may simply stop. */
_printf_(1, 2) __attribute__((noreturn)) static void pci_error_abort(char *msg, ...) {
        abort();
}

_printf_(1, 2) static void pci_quiet(char *msg, ...) {
}

/*
 * The part of pci_scan() that does not depend on the tree: the first name
 * lookup loads and hashes the whole pci.ids database, on every scan.
 */
static int pci_ids_load(void) {
        struct pci_access *a = pci_alloc();
        char name[PCI_NAME_MAX];

        if (!a)
                return -ENOMEM;
        /* As pci_scan() does: no access method, names only. */
        a->error = pci_error_abort;
        a->warning = pci_quiet;
        a->debug = pci_quiet;
        pci_lookup_name(a, name, sizeof(name), PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE, 0x15b3, 0x101d);
        pci_cleanup(a);
        return 0;
}

/* One daemon cycle without apply: what manager_observe() does. */
static int discovery_run(const Bench *b, Inventory **ret_inv, Plan **ret_plan) {
        _cleanup_(rootfs_freep) RootFs *root = NULL;
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        Scope scope;
        int r;

        r = rootfs_new(b->root, NULL, &root);
        if (r < 0)
                return r;
        config_scope(b->config, &scope);
        r = inventory_read(root, &scope, &inv);
        if (r < 0)
                return r;
        r = plan_build(inv, b->config, NULL, ret_plan);
        if (r < 0)
                return r;
        *ret_inv = TAKE_PTR(inv);
        return 0;
}

static int run_kind(const Bench *b, Kind k) {
        _cleanup_(rootfs_freep) RootFs *root = NULL;
        int r;

        switch (k) {
        case KIND_DISCOVERY: {
                Inventory *inv = NULL;
                Plan *plan = NULL;

                r = discovery_run(b, &inv, &plan);
                if (r < 0)
                        return r;
                plan_free(plan);
                inventory_free(inv);
                return 0;
        }
        case KIND_FLOOR: {
                FloorCount c;

                floor_walk(b->root_fd, &c);
                return c.files > 0 ? 0 : -ENOENT;
        }
        case KIND_PCI_SCAN: {
                _cleanup_free_ PciFunction *fns = NULL;
                HostProblems problems = {};
                size_t n;

                r = rootfs_new(b->root, NULL, &root);
                if (r < 0)
                        return r;
                r = pci_scan(root, &problems, &fns, &n);
                host_problems_done(&problems);
                return r;
        }
        case KIND_THREAD_SCAN: {
                _cleanup_free_ IrqThread *threads = NULL;
                _cleanup_free_ Kthread *kthreads = NULL;
                size_t n, n_k;
                bool irqbalance;

                r = rootfs_new(b->root, NULL, &root);
                if (r < 0)
                        return r;
                return irq_threads_scan(root, &threads, &n, &kthreads, &n_k, &irqbalance);
        }
        case KIND_PCI_IDS:
                return pci_ids_load();
        default:
                return -EINVAL;
        }
}

/* ---- process counters ---- */

static size_t heap_in_use(void) {
        struct mallinfo2 mi = mallinfo2();
        return mi.uordblks + mi.hblkhd;
}

/* ---- main ---- */

static void help(void) {
        printf("Usage: bench-discovery [OPTIONS] MKHOST\n\n"
               "Time discovery + dry-run plan on the 'large' fixture host (%u PFs x %u VFs,\n"
               "%u IRQs per VF) against a bare walk that opens and reads the same files.\n\n"
               "  -n, --iterations N  measured iterations (default 20, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  -w, --warmup N      unmeasured warm-up iterations (default 2)\n"
               "  --python PATH       interpreter for MKHOST (default python3)\n"
               "  --root DIR          use this existing tree instead of generating one\n",
               BENCH_HOST_PFS, BENCH_HOST_VFS, BENCH_HOST_VF_IRQS);
}

static int parse_argv(int argc, char **argv, Options *o) {
        return bench_parse_argv(argc, argv, "bench-discovery", 2, help, o);
}

/* ---- measuring ---- */

/* Every workload, o->iterations times, in an order rotated each iteration. */
static int measure_times(const Bench *b, const Options *o, Stats ret[_KIND_MAX]) {
        _cleanup_free_ double *samples = calloc((size_t) o->iterations * _KIND_MAX, sizeof(double));
        int r;

        if (!samples)
                return -ENOMEM;

        /* Warm the dentry and page caches for every workload first. */
        for (unsigned i = 0; i < o->warmup; i++)
                for (Kind k = 0; k < _KIND_MAX; k++) {
                        r = run_kind(b, k);
                        if (r < 0)
                                return r;
                }

        for (unsigned i = 0; i < o->iterations; i++)
                for (unsigned j = 0; j < _KIND_MAX; j++) {
                        Kind k = (Kind) ((i + j) % _KIND_MAX);
                        double t0 = bench_now_ms();

                        r = run_kind(b, k);
                        samples[(size_t) k * o->iterations + i] = bench_now_ms() - t0;
                        if (r < 0)
                                return r;
                }

        for (Kind k = 0; k < _KIND_MAX; k++)
                ret[k] = bench_stats(samples + (size_t) k * o->iterations, o->iterations);
        return 0;
}

typedef struct Memory {
        long hwm_run, maxrss;                 /* KiB, whole run */
        long base_floor, hwm_floor;           /* KiB, -1 = unknown */
        long base_disc, hwm_disc;
        size_t heap_held;                     /* bytes the inventory + plan keep allocated */
        uint64_t reads_floor, rchar_floor;    /* read() calls and bytes of one walk; 0 = unknown */
        uint64_t reads_disc, rchar_disc;
} Memory;

/* One floor walk and one discovery, alone, each with its own peak RSS and read counters. */
static int measure_alone(const Bench *b, Memory *m) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        BenchIo io0, io1;
        struct rusage ru;
        FloorCount fc;
        size_t heap0;
        bool io;
        int r;

        /* The whole-run peak first: resetting the high-water mark below loses it. */
        getrusage(RUSAGE_SELF, &ru);
        m->maxrss = ru.ru_maxrss;
        m->hwm_run = bench_status_kib("VmHWM");
        m->hwm_floor = m->hwm_disc = -1;

        malloc_trim(0);
        io = bench_io(&io0);
        m->base_floor = bench_status_kib("VmRSS");
        if (bench_hwm_reset()) {
                floor_walk(b->root_fd, &fc);
                m->hwm_floor = bench_status_kib("VmHWM");
        } else
                floor_walk(b->root_fd, &fc);
        if (io && bench_io(&io1)) {
                m->reads_floor = io1.syscr - io0.syscr;
                m->rchar_floor = io1.rchar - io0.rchar;
        }

        malloc_trim(0);
        heap0 = heap_in_use();
        io = bench_io(&io0);
        m->base_disc = bench_status_kib("VmRSS");
        if (bench_hwm_reset()) {
                r = discovery_run(b, &inv, &plan);
                m->hwm_disc = bench_status_kib("VmHWM");
        } else
                r = discovery_run(b, &inv, &plan);
        if (r < 0)
                return r;
        if (io && bench_io(&io1)) {
                m->reads_disc = io1.syscr - io0.syscr;
                m->rchar_disc = io1.rchar - io0.rchar;
        }
        m->heap_held = heap_in_use() - heap0;
        return 0;
}

/* ---- report ---- */

/* Describe the tree; both sides must agree on it. */
static int print_tree(const Bench *b, double gen_ms, const char *tmp) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        unsigned vfs = 0, threads = 0;
        FloorCount fc;
        int r;

        r = discovery_run(b, &inv, &plan);
        if (r < 0)
                return r;
        floor_walk(b->root_fd, &fc);
        for (size_t i = 0; i < inv->n_pfs; i++)
                vfs += (unsigned) inv->pfs[i].n_vfs;
        for (size_t i = 0; i < inv->n_irqs; i++)
                threads += inv->irqs[i].thread != 0;

        printf("sriovd discovery benchmark: 'large' host, %u PFs x %u VFs, %u MSI-X IRQs per VF\n",
               BENCH_HOST_PFS, BENCH_HOST_VFS, BENCH_HOST_VF_IRQS);
        printf("tree: %u PCI functions (%zu PFs in scope, %u VFs), %zu IRQs (floor: %u), "
               "%u IRQ threads of %u /proc PIDs; plan: %zu action(s)\n",
               fc.pci_functions, inv->n_pfs, vfs, inv->n_irqs, fc.irqs, threads, fc.pids,
               plan->n_actions);
        if (gen_ms >= 0)
                printf("      generated by mkhost.py in %.1f s under %s\n", gen_ms / 1e3, tmp);
        printf("floor per walk: %u files read (%u also fstat), %u readlink, %u dirs listed, %.1f KiB\n",
               fc.files, fc.stats, fc.links, fc.dirs, (double) fc.bytes / 1024);
        return 0;
}

static void print_mib_row(const char *label, long kib, long base_kib) {
        if (kib < 0) {
                printf("  %-40s %10s\n", label, "n/a");
                return;
        }
        printf("  %-40s %7.1f MiB", label, (double) kib / 1024);
        if (base_kib >= 0)
                printf("   (%+.1f MiB over %.1f MiB before)", (double) (kib - base_kib) / 1024,
                       (double) base_kib / 1024);
        printf("\n");
}

static void print_report(const Options *o, const Stats st[_KIND_MAX], const Memory *m) {
        const Stats *d = &st[KIND_DISCOVERY], *f = &st[KIND_FLOOR];

        printf("\n%u iterations after %u warm-up, interleaved (order rotated every iteration)\n\n",
               o->iterations, o->warmup);
        printf("  %-28s %10s %10s %10s %9s\n", "workload", "median", "min", "max", "x floor");
        for (Kind k = 0; k < _KIND_MAX; k++)
                printf("  %-28s %7.2f ms %7.2f ms %7.2f ms %8.2fx\n", kind_label[k], st[k].median,
                       st[k].min, st[k].max, st[k].median / f->median);
        printf("\n  discovery/floor = %.2fx (median), %.2fx (min)\n", d->median / f->median,
               d->min / f->min);

        if (m->reads_disc && m->reads_floor)
                printf("  read() calls per iteration: discovery %" PRIu64 " (%.1f KiB), floor %" PRIu64
                       " (%.1f KiB) = %.2fx\n", m->reads_disc, (double) m->rchar_disc / 1024,
                       m->reads_floor, (double) m->rchar_floor / 1024,
                       (double) m->reads_disc / (double) m->reads_floor);

        printf("\n  memory\n");
        print_mib_row("peak RSS, whole run (VmHWM)", m->hwm_run, -1);
        print_mib_row("peak RSS during one floor walk", m->hwm_floor, m->base_floor);
        print_mib_row("peak RSS during one discovery + plan", m->hwm_disc, m->base_disc);
        printf("  %-40s %7.1f KiB\n", "heap held by inventory + plan", (double) m->heap_held / 1024);
        if (m->hwm_floor > 0 && m->hwm_disc > 0)
                printf("\n  discovery/floor peak RSS = %.2fx\n", (double) m->hwm_disc / (double) m->hwm_floor);
        /* exec() keeps the forking parent's peak in ru_maxrss: under meson that is meson's own. */
        if (m->maxrss > m->hwm_run + 1024)
                printf("  (ru_maxrss says %.1f MiB: the peak of the process that exec'd us, not ours)\n",
                       (double) m->maxrss / 1024);
}

int main(int argc, char **argv) {
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_free_ char *errors = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        char tmp[PATH_MAX] = "", root[PATH_MAX];
        Options o = {};
        Stats st[_KIND_MAX];
        Memory mem = {};
        double gen_ms = -1;
        Bench b;
        int r, ret = EXIT_FAILURE;

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        r = config_load_string("bench.conf", bench_config, NULL, &config, &errors);
        if (r < 0) {
                fprintf(stderr, "bench-discovery: built-in config rejected: %s\n", errors ?: strerror(-r));
                return EXIT_FAILURE;
        }

        if (o.root)
                strscpy(root, sizeof(root), o.root);
        else {
                r = bench_mkdtemp(tmp, sizeof(tmp));
                if (r >= 0 && snprintf(root, sizeof(root), "%s/root", tmp) >= (int) sizeof(root))
                        r = -ENAMETOOLONG;
                if (r >= 0)
                        r = bench_mkhost_large(o.python, o.mkhost, root, &gen_ms);
                if (r < 0) {
                        fprintf(stderr, "bench-discovery: %s %s large failed: %s\n", o.python, o.mkhost,
                                strerror(-r));
                        goto finish;
                }
        }

        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0) {
                fprintf(stderr, "bench-discovery: cannot open %s: %m\n", root);
                goto finish;
        }
        b = (Bench) { .root = root, .root_fd = root_fd, .config = config };

        r = print_tree(&b, gen_ms, tmp);
        if (r >= 0)
                r = measure_times(&b, &o, st);
        if (r >= 0)
                r = measure_alone(&b, &mem);
        if (r < 0) {
                fprintf(stderr, "bench-discovery: discovery on %s failed: %s\n", root, strerror(-r));
                goto finish;
        }
        print_report(&o, st, &mem);
        ret = EXIT_SUCCESS;

finish:
        if (tmp[0]) {
                r = bench_tree_remove(tmp);
                if (r < 0)
                        fprintf(stderr, "bench-discovery: failed to remove %s: %s\n", tmp, strerror(-r));
        }
        return ret;
}
