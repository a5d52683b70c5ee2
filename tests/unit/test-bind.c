/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bind.c — vfio-pci binding on a copy of a fixture host: write sequence, idempotence, errors */

#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "sriovd/kernel/bind.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "test.h"

static const char *fixtures_dir;

/* two-socket: PF 41:00.0, VF0-3 (41:00.2-41:00.5) on mlx5_core, VF4-7 (41:00.6-41:01.1) on vfio-pci. */
#define VF_MLX5 "0000:41:00.2"
#define VF_MLX5_B "0000:41:00.3"
#define VF_MLX5_C "0000:41:00.4"
#define VF_VFIO "0000:41:00.6"
#define VF_VFIO_B "0000:c1:00.6"
#define DEV "/sys/bus/pci/devices/"
#define DRV "/sys/bus/pci/drivers/"
#define PROBE "/sys/bus/pci/drivers_probe"

/* Every file this module may write is set to this mtime; any write moves it to now. */
static const struct timespec STAMP = { .tv_sec = 946684800, .tv_nsec = 123 };

typedef struct Scratch {
        char dir[64];
        char root[128];
} Scratch;

/*
 * A private copy of the fixture's PCI part (sys/bus and sys/devices/pci*: all this module
 * reaches), on tmpfs where there is one: copying thousands of files to ext4 takes ~1 s.
 */
static void scratch_new(Scratch *s, const char *host) {
        const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        char src[1024], cmd[4096];

        snprintf(src, sizeof(src), "%s/fixture-%s", fixtures_dir, host);
        snprintf(s->dir, sizeof(s->dir), "%s/sriovd-bind-XXXXXX", tmp);
        ASSERT(mkdtemp(s->dir));
        snprintf(s->root, sizeof(s->root), "%s/root", s->dir);
        /* The kernel's write-only files (0200) made readable to the test even when not run as root. */
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %2$s/sys/devices && cp -a %1$s/sys/bus %2$s/sys/ && cp -a %1$s/sys/devices/pci* %2$s/sys/devices/ "
                 "&& chmod u+r %2$s" PROBE " %2$s" DRV "*/*bind",
                 src, s->root);
        ASSERT_EQ(system(cmd), 0);
}

static void scratch_done(Scratch *s) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
        ASSERT_EQ(system(cmd), 0);
}

/* A RootFs on the copy; fail = the writes to fail for it, or NULL. */
static RootFs *scratch_rootfs(const Scratch *s, const char *fail) {
        RootFs *r = NULL;

        ASSERT_EQ(rootfs_new(s->root, &(RootFsOptions) { .fail_writes = fail }, &r), 0);
        return r;
}

_printf_(3, 4) static void fullpath(const Scratch *s, char buf[static PATH_MAX], const char *fmt, ...) {
        int n = snprintf(buf, PATH_MAX, "%s", s->root);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf + n, (size_t) (PATH_MAX - n), fmt, ap);
        va_end(ap);
}

/* The file as written, newline included; one result at a time. */
_printf_(2, 3) static const char *slurp(const Scratch *s, const char *fmt, ...) {
        static char buf[256];
        char path[PATH_MAX];
        va_list ap;
        size_t n;
        FILE *f;
        int k;

        k = snprintf(path, sizeof(path), "%s", s->root);
        va_start(ap, fmt);
        vsnprintf(path + k, sizeof(path) - (size_t) k, fmt, ap);
        va_end(ap);
        f = fopen(path, "re");
        ASSERT(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return buf;
}

static void put(const Scratch *s, const char *rel, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        fullpath(s, path, "%s", rel);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

/* Every driver_override, every drivers/X/{bind,unbind} and drivers_probe. */
static const char *const WATCHED[] = { DEV "*/driver_override", DRV "*/bind", DRV "*/unbind", PROBE };

static void stamp_all(const Scratch *s) {
        for (size_t i = 0; i < ELEMENTSOF(WATCHED); i++) {
                char pattern[PATH_MAX];
                glob_t g;

                fullpath(s, pattern, "%s", WATCHED[i]);
                ASSERT_EQ(glob(pattern, 0, NULL, &g), 0);
                for (size_t j = 0; j < g.gl_pathc; j++)
                        ASSERT_EQ(utimensat(AT_FDCWD, g.gl_pathv[j], (const struct timespec[2]) { STAMP, STAMP }, 0), 0);
                globfree(&g);
        }
}

static bool path_written(const char *path) {
        struct stat st;
        ASSERT_EQ(stat(path, &st), 0);
        return st.st_mtim.tv_sec != STAMP.tv_sec || st.st_mtim.tv_nsec != STAMP.tv_nsec;
}

/* Whether the file was written since stamp_all(). */
_printf_(2, 3) static bool written(const Scratch *s, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        int k;

        k = snprintf(path, sizeof(path), "%s", s->root);
        va_start(ap, fmt);
        vsnprintf(path + k, sizeof(path) - (size_t) k, fmt, ap);
        va_end(ap);
        return path_written(path);
}

/* How many watched files were written since stamp_all(). */
static unsigned n_written(const Scratch *s) {
        unsigned n = 0;

        for (size_t i = 0; i < ELEMENTSOF(WATCHED); i++) {
                char pattern[PATH_MAX];
                glob_t g;

                fullpath(s, pattern, "%s", WATCHED[i]);
                ASSERT_EQ(glob(pattern, 0, NULL, &g), 0);
                for (size_t j = 0; j < g.gl_pathc; j++)
                        n += path_written(g.gl_pathv[j]);
                globfree(&g);
        }
        return n;
}

/* What the kernel does on a successful probe or unbind: move the driver links. to "" = unbound. */
static void kernel_rebind(const Scratch *s, const char *addr, const char *to) {
        char link[PATH_MAX], target[PATH_MAX], devdir[PATH_MAX], rootdir[PATH_MAX], old[PATH_MAX];
        const char *devrel;
        unsigned depth = 0;
        ssize_t n;

        ASSERT(realpath(s->root, rootdir));
        fullpath(s, link, DEV "%s", addr);
        ASSERT(realpath(link, devdir));
        ASSERT(strncmp(devdir, rootdir, strlen(rootdir)) == 0);
        devrel = devdir + strlen(rootdir) + strlen("/sys/");   /* "devices/pci0000:40/ADDR" */
        for (const char *p = devrel; *p; p++)
                depth += *p == '/';

        fullpath(s, link, DEV "%s/driver", addr);
        n = readlink(link, old, sizeof(old) - 1);
        if (n >= 0) {
                old[n] = 0;
                ASSERT_EQ(unlink(link), 0);
                fullpath(s, target, DRV "%s/%s", strrchr(old, '/') + 1, addr);
                ASSERT_EQ(unlink(target), 0);
        }
        if (!*to)
                return;

        /* From sys/devices/pci0000:40/ADDR up to sys/, and from sys/bus/pci/drivers/TO up to sys/. */
        target[0] = 0;
        for (unsigned i = 0; i <= depth; i++)
                strcat(target, "../");
        strcat(target, "bus/pci/drivers/");
        strcat(target, to);
        ASSERT_EQ(symlink(target, link), 0);
        snprintf(target, sizeof(target), "../../../../%s", devrel);
        fullpath(s, link, DRV "%s/%s", to, addr);
        ASSERT_EQ(symlink(target, link), 0);
}

static void expect_read(RootFs *r, const char *addr, const char *driver, const char *override) {
        char d[DRIVER_MAX], o[DRIVER_MAX];

        ASSERT_EQ(pci_driver_read(r, addr, d, sizeof(d), o, sizeof(o)), 0);
        ASSERT_STREQ(d, driver);
        ASSERT_STREQ(o, override);
}

TEST(read) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        char d[DRIVER_MAX] = "x", o[4] = "y";
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        expect_read(r, VF_MLX5, "mlx5_core", "");    /* "(null)" */
        expect_read(r, VF_VFIO, "vfio-pci", "vfio-pci");
        expect_read(r, "0000:01:00.0", "nvme", "");
        /* Either output may be left out. */
        ASSERT_EQ(pci_driver_read(r, VF_VFIO, NULL, 0, NULL, 0), 0);
        /* Too small for "vfio-pci": an error, and the buffers keep what they had. */
        ASSERT_EQ(pci_driver_read(r, VF_VFIO, d, sizeof(d), o, sizeof(o)), -ENOBUFS);
        ASSERT_STREQ(d, "x");
        ASSERT_STREQ(o, "y");
        ASSERT_EQ(pci_driver_read(r, "0000:41:00", d, sizeof(d), NULL, 0), -EINVAL);
        ASSERT_EQ(pci_driver_read(r, "0000:42:00.0", d, sizeof(d), NULL, 0), -ENODEV);
        ASSERT_STREQ(d, "x");

        /* Unbound; an override cleared with "\n" reads "" on a fixture, "(null)" on the kernel. */
        kernel_rebind(&s, VF_MLX5, "");
        put(&s, DEV VF_MLX5 "/driver_override", "\n");
        expect_read(r, VF_MLX5, "", "");
        scratch_done(&s);
}

TEST(bind_native_vf) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, VF_MLX5, "vfio-pci"), 1);
        /* The override, the old driver's unbind, drivers_probe: three writes, nothing else. */
        ASSERT_STREQ(slurp(&s, DEV VF_MLX5 "/driver_override"), "vfio-pci");
        ASSERT_STREQ(slurp(&s, DRV "mlx5_core/unbind"), VF_MLX5);
        ASSERT_STREQ(slurp(&s, PROBE), VF_MLX5);
        ASSERT_EQ(n_written(&s), 3);

        /* The kernel moved the device; a second call writes nothing. */
        kernel_rebind(&s, VF_MLX5, "vfio-pci");
        expect_read(r, VF_MLX5, "vfio-pci", "vfio-pci");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, VF_MLX5, "vfio-pci"), 0);
        ASSERT_EQ(n_written(&s), 0);
        scratch_done(&s);
}

TEST(bind_already_there) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, VF_VFIO, "vfio-pci"), 0);
        ASSERT_EQ(n_written(&s), 0);

        /* On vfio-pci without the override (bound through new_id): only the override is written. */
        put(&s, DEV VF_VFIO "/driver_override", "(null)\n");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, VF_VFIO, "vfio-pci"), 1);
        ASSERT_STREQ(slurp(&s, DEV VF_VFIO "/driver_override"), "vfio-pci");
        ASSERT_EQ(n_written(&s), 1);
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, VF_VFIO, "vfio-pci"), 0);
        ASSERT_EQ(n_written(&s), 0);
        scratch_done(&s);
}

TEST(bind_unbound) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        kernel_rebind(&s, VF_MLX5_B, "");
        stamp_all(&s);
        /* No driver to unbind from: the override, then drivers_probe. */
        ASSERT_EQ(pci_driver_bind(r, VF_MLX5_B, "vfio-pci"), 1);
        ASSERT_STREQ(slurp(&s, DEV VF_MLX5_B "/driver_override"), "vfio-pci");
        ASSERT_STREQ(slurp(&s, PROBE), VF_MLX5_B);
        ASSERT_EQ(n_written(&s), 2);
        scratch_done(&s);
}

/* Inject a failure at one step of bind: its errno comes back, earlier steps happened, later ones not. */
TEST(bind_stops_at_failed_write) {
        static const struct {
                const char *fail;
                int error;
                bool override, unbind;   /* written before the failing step */
        } steps[] = {
                { "driver_override=13", EACCES, false, false },
                { "/unbind=16", EBUSY, true, false },
                { "drivers_probe=22", EINVAL, true, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_(rootfs_freep) RootFs *r = NULL;
                Scratch s;

                scratch_new(&s, "two-socket");
                r = scratch_rootfs(&s, steps[i].fail);
                stamp_all(&s);
                ASSERT_EQ(pci_driver_bind(r, VF_MLX5, "vfio-pci"), -steps[i].error);
                ASSERT_EQ(written(&s, DEV VF_MLX5 "/driver_override"), steps[i].override);
                ASSERT_EQ(written(&s, DRV "mlx5_core/unbind"), steps[i].unbind);
                ASSERT_EQ(written(&s, PROBE), false);
                ASSERT_EQ(n_written(&s), steps[i].override + steps[i].unbind);
                if (steps[i].override)
                        ASSERT_STREQ(slurp(&s, DEV VF_MLX5 "/driver_override"), "vfio-pci");

                /* Retried without the fault, it carries on from where the kernel stands. */
                rootfs_free(TAKE_PTR(r));
                r = scratch_rootfs(&s, NULL);
                stamp_all(&s);
                ASSERT_EQ(pci_driver_bind(r, VF_MLX5, "vfio-pci"), 1);
                ASSERT_EQ(written(&s, DEV VF_MLX5 "/driver_override"), !steps[i].override);
                ASSERT_STREQ(slurp(&s, PROBE), VF_MLX5);
                scratch_done(&s);
        }
}

TEST(restore_to_original) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "mlx5_core"), 1);
        /* Override = mlx5_core, unbind from vfio-pci, probe, clear: the override ends cleared. */
        ASSERT_STREQ(slurp(&s, DEV VF_VFIO "/driver_override"), "\n");
        ASSERT_STREQ(slurp(&s, DRV "vfio-pci/unbind"), VF_VFIO);
        ASSERT_STREQ(slurp(&s, PROBE), VF_VFIO);
        ASSERT_EQ(n_written(&s), 3);

        /* The kernel bound it back; nothing left to do, whether the override reads "" or "(null)". */
        kernel_rebind(&s, VF_VFIO, "mlx5_core");
        expect_read(r, VF_VFIO, "mlx5_core", "");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "mlx5_core"), 0);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, ""), 0);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, NULL), 0);
        put(&s, DEV VF_VFIO "/driver_override", "(null)\n");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "mlx5_core"), 0);
        ASSERT_EQ(n_written(&s), 0);

        /* And a round trip: bind again, restore again. */
        ASSERT_EQ(pci_driver_bind(r, VF_VFIO, "vfio-pci"), 1);
        kernel_rebind(&s, VF_VFIO, "vfio-pci");
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "mlx5_core"), 1);
        kernel_rebind(&s, VF_VFIO, "mlx5_core");
        expect_read(r, VF_VFIO, "mlx5_core", "");

        /* Bound where it belongs but an override left behind (a bind cut short): only the clear. */
        put(&s, DEV VF_MLX5_C "/driver_override", "vfio-pci\n");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_MLX5_C, "mlx5_core"), 1);
        ASSERT_STREQ(slurp(&s, DEV VF_MLX5_C "/driver_override"), "\n");
        ASSERT_EQ(n_written(&s), 1);
        scratch_done(&s);
}

/* Same order check for restore: override, unbind, probe, clear. */
TEST(restore_stops_at_failed_write) {
        static const struct {
                const char *fail;
                int error;
                const char *override;   /* driver_override afterwards */
                bool unbind;
        } steps[] = {
                { "driver_override=13", EACCES, "vfio-pci\n", false },   /* as mkhost wrote it */
                { "/unbind=16", EBUSY, "mlx5_core", false },
                { "drivers_probe=22", EINVAL, "mlx5_core", true },   /* and not yet cleared */
        };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_(rootfs_freep) RootFs *r = NULL;
                Scratch s;

                scratch_new(&s, "two-socket");
                r = scratch_rootfs(&s, steps[i].fail);
                stamp_all(&s);
                ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "mlx5_core"), -steps[i].error);
                ASSERT_STREQ(slurp(&s, DEV VF_VFIO "/driver_override"), steps[i].override);
                ASSERT_EQ(written(&s, DRV "vfio-pci/unbind"), steps[i].unbind);
                ASSERT_EQ(written(&s, PROBE), false);
                scratch_done(&s);
        }
}

TEST(restore_to_kernel_choice) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        /* "": the override is cleared first, so the probe goes by ID table; no second clear. */
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO_B, ""), 1);
        ASSERT_STREQ(slurp(&s, DEV VF_VFIO_B "/driver_override"), "\n");
        ASSERT_STREQ(slurp(&s, DRV "vfio-pci/unbind"), VF_VFIO_B);
        ASSERT_STREQ(slurp(&s, PROBE), VF_VFIO_B);
        ASSERT_EQ(n_written(&s), 3);

        kernel_rebind(&s, VF_VFIO_B, "mlx5_core");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO_B, ""), 0);
        ASSERT_EQ(n_written(&s), 0);
        rootfs_free(TAKE_PTR(r));

        /* The clear is the first write there: with the probe failing, it already happened. */
        r = scratch_rootfs(&s, "drivers_probe=5");
        kernel_rebind(&s, VF_VFIO_B, "vfio-pci");
        put(&s, DEV VF_VFIO_B "/driver_override", "vfio-pci\n");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO_B, ""), -EIO);
        ASSERT_STREQ(slurp(&s, DEV VF_VFIO_B "/driver_override"), "\n");
        ASSERT_EQ(n_written(&s), 2);
        rootfs_free(TAKE_PTR(r));

        /* Unbound, no override: a probe lets the kernel choose. */
        r = scratch_rootfs(&s, NULL);
        kernel_rebind(&s, VF_VFIO_B, "");
        stamp_all(&s);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO_B, ""), 1);
        ASSERT_STREQ(slurp(&s, PROBE), VF_VFIO_B);
        ASSERT_EQ(n_written(&s), 1);
        scratch_done(&s);
}

/* The test hooks are options of a fixture root. They are copied when it is made, and off without them. */
TEST(rootfs_options) {
        _cleanup_(rootfs_freep) RootFs *r = NULL, *real = NULL;
        char spec[] = "drivers_probe=5";
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        ASSERT(!rootfs_sched_live(r));
        rootfs_free(TAKE_PTR(r));

        ASSERT_EQ(rootfs_new(s.root, &(RootFsOptions) { .sched_live = true, .fail_writes = spec }, &r), 0);
        memset(spec, 0, sizeof(spec));
        ASSERT(rootfs_sched_live(r));
        stamp_all(&s);
        ASSERT_EQ(rootfs_write(r, VF_VFIO_B, PROBE), -EIO);
        ASSERT_EQ(n_written(&s), 0);
        ASSERT_EQ(rootfs_write(r, VF_VFIO_B, DEV VF_VFIO_B "/driver_override"), 0);
        ASSERT_EQ(n_written(&s), 1);

        /* The real root's threads are always this host's. */
        ASSERT_EQ(rootfs_new("/", &(RootFsOptions) { .sched_live = false }, &real), 0);
        ASSERT(rootfs_sched_live(real));
        scratch_done(&s);
}

TEST(errors) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        static const char *const bad_addrs[] = {
                NULL, "", "0000:41:00", "41:00.2", "0000:41:00.2 ", "0000:41:00.2\n", "0000:C1:00.6",
                "0000:41:00.8", "../41:00.2/..", "0000:41:00.2/driver",
        };
        static const char *const bad_drivers[] = { NULL, "", ".", "..", "vfio/pci", "../../../../proc" };
        Scratch s;

        scratch_new(&s, "two-socket");
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        for (size_t i = 0; i < ELEMENTSOF(bad_addrs); i++) {
                ASSERT_EQ(pci_driver_bind(r, bad_addrs[i], "vfio-pci"), -EINVAL);
                ASSERT_EQ(pci_driver_restore(r, bad_addrs[i], "mlx5_core"), -EINVAL);
                ASSERT_EQ(pci_driver_read(r, bad_addrs[i], NULL, 0, NULL, 0), -EINVAL);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_drivers); i++) {
                ASSERT_EQ(pci_driver_bind(r, VF_MLX5, bad_drivers[i]), -EINVAL);
                if (bad_drivers[i] && *bad_drivers[i])
                        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, bad_drivers[i]), -EINVAL);
        }

        /* No such device. */
        ASSERT_EQ(pci_driver_bind(r, "0000:42:00.0", "vfio-pci"), -ENODEV);
        ASSERT_EQ(pci_driver_restore(r, "0000:42:00.0", ""), -ENODEV);

        /* Driver not loaded: checked before anything is written. */
        ASSERT_EQ(pci_driver_bind(r, VF_MLX5, "igb"), -ENOENT);
        ASSERT_EQ(pci_driver_bind(r, VF_VFIO, "igb"), -ENOENT);
        ASSERT_EQ(pci_driver_restore(r, VF_VFIO, "igb"), -ENOENT);
        ASSERT_EQ(n_written(&s), 0);
        scratch_done(&s);

        /* A host without an IOMMU has no vfio-pci loaded. */
        scratch_new(&s, "one-socket-cx7");
        rootfs_free(TAKE_PTR(r));
        r = scratch_rootfs(&s, NULL);
        stamp_all(&s);
        ASSERT_EQ(pci_driver_bind(r, "0000:17:00.0", "vfio-pci"), -ENOENT);
        ASSERT_EQ(n_written(&s), 0);
        scratch_done(&s);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(read);
        RUN(bind_native_vf);
        RUN(bind_already_there);
        RUN(bind_unbound);
        RUN(bind_stops_at_failed_write);
        RUN(restore_to_original);
        RUN(restore_stops_at_failed_write);
        RUN(restore_to_kernel_choice);
        RUN(errors);
        RUN(rootfs_options);
        return 0;
}
