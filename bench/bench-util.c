/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-util.c — what the C benchmarks share: clocks, statistics, process counters, the fixture tree */

#include <getopt.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

extern char **environ;

double bench_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static double timeval_ms(const struct timeval *tv) {
        return (double) tv->tv_sec * 1e3 + (double) tv->tv_usec / 1e3;
}

void bench_cpu_ms(double *ret_user, double *ret_sys) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        *ret_user = timeval_ms(&ru.ru_utime);
        *ret_sys = timeval_ms(&ru.ru_stime);
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

Stats bench_stats(const double *v, size_t n) {
        _cleanup_free_ double *s = n > 0 ? malloc(n * sizeof(*s)) : NULL;
        Stats st = {};

        if (!s)
                return st;
        memcpy(s, v, n * sizeof(*s));
        qsort(s, n, sizeof(*s), double_cmp);
        st.min = s[0];
        st.max = s[n - 1];
        st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        return st;
}

unsigned bench_default_iterations(unsigned dflt) {
        const char *e = getenv("SRIOVD_BENCH_ITERATIONS");

        return e && *e ? (unsigned) strtoul(e, NULL, 10) : dflt;
}

long bench_status_kib(const char *key) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        size_t len = strlen(key);

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, len) == 0 && line[len] == ':')
                        return strtol(line + len + 1, NULL, 10);
        return -1;
}

bool bench_hwm_reset(void) {
        int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
        bool ok;

        if (fd < 0)
                return false;
        ok = write(fd, "5", 1) == 1;
        close(fd);
        return ok;
}

bool bench_io(BenchIo *ret) {
        static const struct {
                const char *key;
                size_t offset;
        } fields[] = {
                { "syscr:", offsetof(BenchIo, syscr) },
                { "syscw:", offsetof(BenchIo, syscw) },
                { "rchar:", offsetof(BenchIo, rchar) },
                { "wchar:", offsetof(BenchIo, wchar) },
        };
        _cleanup_fclose_ FILE *f = fopen("/proc/self/io", "re");
        BenchIo io = {};
        char line[128];
        size_t found = 0;

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                        if (strncmp(line, fields[i].key, 6) == 0) {
                                *(uint64_t *) ((char *) &io + fields[i].offset) = strtoull(line + 6, NULL, 10);
                                found++;
                        }
        if (found != ELEMENTSOF(fields))
                return false;
        *ret = io;
        return true;
}

int bench_spawn(char *const argv[]) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r, status;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return -r;
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

int bench_tree_remove(const char *path) {
        return nftw(path, remove_entry, 64, FTW_DEPTH | FTW_PHYS) < 0 ? negative_errno() : 0;
}

static const char *tmp_base(void) {
        struct stat st;

        if (stat("/dev/shm", &st) >= 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK | X_OK) >= 0)
                return "/dev/shm";
        return getenv("TMPDIR") ?: "/tmp";
}

int bench_mkdtemp(char *tmp, size_t size) {
        int n, r;

        n = snprintf(tmp, size, "%s/sriovd-bench-XXXXXX", tmp_base());
        if (n < 0 || (size_t) n >= size || !mkdtemp(tmp)) {
                r = n < 0 || (size_t) n >= size ? -ENAMETOOLONG : negative_errno();
                if (size > 0)
                        tmp[0] = 0;
                return r;
        }
        return 0;
}

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const char bench_config[] =
        "[cpus]\n"
        "keep_irqs_off_rt = no\n"
        "[match 15b3:101d]\n"
        "class = tp\n";
static const char bench_class[] =
        "[class]\n"
        "vnic = sriov-preferred\n"
        "irq_cpus = numa-local\n"
        "irq_spread = spread\n";

static int write_text(const char *dir, const char *name, const char *text) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(path, "we");
        if (!f)
                return negative_errno();
        if (fputs(text, f) < 0 || fflush(f) != 0)
                return negative_errno();
        return 0;
}

int bench_write_config(const char *dir, char *config_path, size_t size) {
        char classes[PATH_MAX];
        int r;

        if (snprintf(classes, sizeof(classes), "%s/tenant-classes.d", dir) >= (int) sizeof(classes) ||
            snprintf(config_path, size, "%s/sriovd.conf", dir) >= (int) size)
                return -ENAMETOOLONG;
        if (mkdir(classes, 0755) < 0)
                return negative_errno();
        r = write_text(classes, "tp.ini", bench_class);
        if (r < 0)
                return r;
        return write_text(dir, "sriovd.conf", bench_config);
}

int bench_mkhost_large(const char *python, const char *mkhost, const char *dest, double *ret_ms) {
        char *const argv[] = {
                (char *) python, (char *) mkhost, (char *) "large", (char *) dest,
                (char *) "--pfs", (char *) STRINGIFY(BENCH_HOST_PFS),
                (char *) "--vfs", (char *) STRINGIFY(BENCH_HOST_VFS),
                (char *) "--vf-irqs", (char *) STRINGIFY(BENCH_HOST_VF_IRQS),
                NULL
        };
        double t0 = bench_now_ms();
        int r = bench_spawn(argv);

        *ret_ms = bench_now_ms() - t0;
        return r;
}

int bench_parse_argv(int argc, char **argv, const char *name, unsigned default_warmup, void (*help)(void),
                     BenchOptions *o) {
        enum { ARG_PYTHON = 0x100, ARG_ROOT };
        static const struct option options[] = {
                { "iterations", required_argument, NULL, 'n' },
                { "warmup", required_argument, NULL, 'w' },
                { "python", required_argument, NULL, ARG_PYTHON },
                { "root", required_argument, NULL, ARG_ROOT },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        o->python = "python3";
        o->iterations = bench_default_iterations(20);
        o->warmup = default_warmup;
        while ((c = getopt_long(argc, argv, "n:w:h", options, NULL)) >= 0)
                switch (c) {
                case 'n':
                        o->iterations = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'w':
                        o->warmup = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case ARG_PYTHON:
                        o->python = optarg;
                        break;
                case ARG_ROOT:
                        o->root = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                o->mkhost = argv[optind++];
        if (optind < argc || (!o->mkhost && !o->root) || o->iterations == 0 || o->iterations > 100000) {
                fprintf(stderr, "%s: expected MKHOST (or --root DIR) and 1..100000 iterations; see --help\n", name);
                return -EINVAL;
        }
        return 1;
}
