/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* main.c — the sriovd command line: --check-config, --check-host, --dry-run, --once, --restore or the daemon */

#include <getopt.h>
#include <string.h>

#include "sriovd-config.h"
#include "base/jsonc.h"
#include "base/log.h"
#include "base/runtime.h"
#include "bus/bus.h"
#include "config/check-host.h"
#include "manager/manager.h"
#include "monitor/host-check.h"
#include "output.h"

/* Exit codes scripts can rely on. */
enum {
        EXIT_OK = 0,          /* everything is as the policy says */
        EXIT_INCOMPLETE = 1,  /* an action failed, did not stick, or policy cannot be met */
        EXIT_UNUSABLE = 2,    /* bad usage or configuration, or the host cannot be read */
};

typedef struct Options {
        const char *config;
        const char *root;
        bool dry_run, once, json, check_config, check_host, restore;
} Options;

static void help(void) {
        printf("Usage: sriovd [OPTIONS]\n\n"
               "SR-IOV NIC, IRQ and tenant networking daemon for KVM hypervisors.\n\n"
               "  --config FILE      configuration (default %s);\n"
               "                     tenant classes are read from tenant-classes.d/ beside it\n"
               "  --root DIR         read and write /sys and /proc under DIR (a fixture tree)\n"
               "  --dry-run          print the inventory and the plan, change nothing\n"
               "  --once             run one observe/plan/apply/verify cycle and exit\n"
               "  --json             machine-readable output for --dry-run, --once and --check-host\n"
               "  --check-config     validate the configuration (and, where the host is readable,\n"
               "                     against it) and exit 0 (valid) or 1\n"
               "  --check-host       check that the host isolates the RT CPUs and keeps them quiet,\n"
               "                     and exit 0 (no error-level finding) or 1\n"
               "  --restore          with sriovd stopped: put back the scheduling of the threads\n"
               "                     sriovd changed (kept in %s/saved-sched), then exit\n"
               "  --log-level LEVEL  debug, info, notice, warning, err (default info)\n"
               "  --version          print the version\n\n"
               "Exit status: 0 all in place, 1 some action failed or policy cannot be met,\n"
               "2 bad usage or configuration, or the host could not be read.\n",
               CONFIG_DEFAULT_PATH, RUNTIME_DIR_DEFAULT);
}

static int parse_argv(int argc, char **argv, Options *o) {
        enum { ARG_CONFIG = 0x100, ARG_ROOT, ARG_DRY_RUN, ARG_ONCE, ARG_JSON, ARG_CHECK, ARG_CHECK_HOST, ARG_RESTORE, ARG_LEVEL,
               ARG_VERSION };
        static const struct option options[] = {
                { "config", required_argument, NULL, ARG_CONFIG },
                { "root", required_argument, NULL, ARG_ROOT },
                { "dry-run", no_argument, NULL, ARG_DRY_RUN },
                { "once", no_argument, NULL, ARG_ONCE },
                { "json", no_argument, NULL, ARG_JSON },
                { "check-config", no_argument, NULL, ARG_CHECK },
                { "check-host", no_argument, NULL, ARG_CHECK_HOST },
                { "restore", no_argument, NULL, ARG_RESTORE },
                { "log-level", required_argument, NULL, ARG_LEVEL },
                { "version", no_argument, NULL, ARG_VERSION },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, level;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case ARG_CONFIG:
                        o->config = optarg;
                        break;
                case ARG_ROOT:
                        o->root = optarg;
                        break;
                case ARG_DRY_RUN:
                        o->dry_run = true;
                        break;
                case ARG_ONCE:
                        o->once = true;
                        break;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_CHECK:
                        o->check_config = true;
                        break;
                case ARG_CHECK_HOST:
                        o->check_host = true;
                        break;
                case ARG_RESTORE:
                        o->restore = true;
                        break;
                case ARG_LEVEL:
                        level = log_level_from_string(optarg);
                        if (level < 0) {
                                fprintf(stderr, "sriovd: invalid --log-level \"%s\" (expected debug, info, notice, warning or err)\n", optarg);
                                return -EINVAL;
                        }
                        log_setup(LOG_TARGET_AUTO, level);
                        break;
                case ARG_VERSION:
                        printf("sriovd %s\n", SRIOVD_VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }

        if (optind < argc) {
                fprintf(stderr, "sriovd: unexpected argument \"%s\" (see --help)\n", argv[optind]);
                return -EINVAL;
        }
        if (o->dry_run + o->once + o->check_config + o->check_host + o->restore > 1) {
                fprintf(stderr, "sriovd: --dry-run, --once, --check-config, --check-host and --restore exclude each other\n");
                return -EINVAL;
        }
        if (o->json && !o->dry_run && !o->once && !o->check_host) {
                fprintf(stderr, "sriovd: --json needs --dry-run, --once or --check-host\n");
                return -EINVAL;
        }
        return 1;
}

static int print_result(const Manager *m, const Options *o, const CycleResult *res, bool daemon_running) {
        const Inventory *inv = manager_inventory(m);
        const Plan *plan = manager_plan(m);

        if (o->json) {
                _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
                const char *text = NULL;
                json_object *result;
                int r;

                r = doc ? jsonc_add_string(doc, "mode", o->dry_run ? "dry-run" : "once") : -ENOMEM;
                if (r >= 0 && o->dry_run)
                        r = jsonc_add_bool(doc, "daemon_running", daemon_running);
                if (r >= 0)
                        r = jsonc_add(doc, "inventory", output_inventory_json(inv));
                if (r >= 0)
                        r = jsonc_add(doc, "plan", output_plan_json(plan));
                if (r >= 0 && o->once) {
                        result = json_object_new_object();
                        r = jsonc_add(doc, "result", result);
                        if (r >= 0 && (jsonc_add_int(result, "actions", res->n_actions) < 0 ||
                                       jsonc_add_int(result, "done", res->n_done) < 0 ||
                                       jsonc_add_int(result, "skipped", res->n_skipped) < 0 ||
                                       jsonc_add_int(result, "failed", res->n_failed) < 0 ||
                                       jsonc_add_int(result, "drift", res->n_drift) < 0 ||
                                       jsonc_add_int(result, "policy_errors", res->n_policy_errors) < 0))
                                r = -ENOMEM;
                }
                if (r >= 0)
                        text = jsonc_text(doc, JSONC_PRETTY, NULL);
                if (!text)
                        return log_error_errno(-ENOMEM, "Failed to format the JSON output: %m");
                puts(text);
                return 0;
        }

        output_inventory_text(stdout, inv);
        output_plan_text(stdout, plan);
        if (o->once)
                printf("\nResult: %u actions, %u done, %u skipped, %u failed, %u still differ after apply, "
                       "%u policy errors\n", res->n_actions, res->n_done, res->n_skipped, res->n_failed,
                       res->n_drift, res->n_policy_errors);
        else
                printf("\nDry run: nothing was changed.%s\n",
                       daemon_running ? " sriovd is running: this plan read its saved tenants (read only)." : "");
        return 0;
}

/* Runs the host check and prints it. Returns the exit code. */
static int check_host(const Manager *m, const Options *o) {
        _cleanup_(host_check_freep) HostCheck *hc = NULL;
        int r;

        r = host_check_run(manager_root(m), manager_config(m), &hc);
        if (r < 0) {
                log_error_errno(r, "Failed to read the host's CPUs under %s: %m", o->root ?: "/");
                return EXIT_UNUSABLE;
        }
        if (o->json) {
                _cleanup_(json_object_putp) json_object *doc = host_check_json(hc);
                const char *text = doc ? jsonc_text(doc, JSONC_PRETTY, NULL) : NULL;

                if (!text) {
                        log_error_errno(-ENOMEM, "Failed to format the JSON output: %m");
                        return EXIT_UNUSABLE;
                }
                puts(text);
        } else
                host_check_print(stdout, hc);
        return host_check_failed(hc, HOST_CHECK_ERROR) > 0 ? EXIT_INCOMPLETE : EXIT_OK;
}

static int run_daemon(Manager *m) {
        _cleanup_(bus_freep) Bus *bus = NULL;
        int r;

        r = manager_start(m);
        if (r < 0)
                return r;
        r = bus_new(m, &bus);
        if (r < 0)
                log_warning_errno(r, "D-Bus API org.sriovd.Manager1 unavailable, running without it: %m");
        return manager_run(m);
}

int main(int argc, char **argv) {
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_close_ int lock_fd = -EBADF;
        Options o = {};
        CycleResult res = {};
        bool daemon_running = false;
        const char *lock_dir;
        int r;

        log_setup(LOG_TARGET_AUTO, LOG_INFO);
        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_UNUSABLE : EXIT_OK;

        r = manager_new(o.root, o.config, &m);
        if (r < 0)
                return EXIT_UNUSABLE;

        /*
         * --restore needs no configuration on purpose, because undoing must work with a broken one
         * too. Run by hand, it has no RUNTIME_DIRECTORY, so it uses the service's RuntimeDirectory=sriovd.
         */
        if (o.restore) {
                if (!getenv("RUNTIME_DIRECTORY") && setenv("RUNTIME_DIRECTORY", RUNTIME_DIR_DEFAULT, 1) < 0)
                        return EXIT_UNUSABLE;
                r = manager_restore(m);
                if (r == -EBUSY)
                        return EXIT_UNUSABLE;
                if (r < 0)
                        return EXIT_INCOMPLETE;
                printf("Restored %d IRQ threads to the scheduling sriovd found them with, and %u CPU idle states "
                       "and governors to what sriovd found. IRQ affinities, VF counts, VF settings, coalescing and "
                       "offloads stay as they are.\n", r, manager_cpu_restored(m));
                return EXIT_OK;
        }

        r = manager_load_config(m);
        if (o.check_config) {
                const char *path = o.config ?: CONFIG_DEFAULT_PATH;
                if (r < 0)
                        return EXIT_INCOMPLETE;
                /* The file is sound. Now check what only the host can tell,
                 * if the host or the --root tree can be read. */
                r = config_check_host(manager_config(m), manager_root(m), stderr);
                if (r == -ENODEV) {
                        printf("%s: configuration is valid (%zu tenant classes); checked the file only: "
                               "the host's PCI devices under %s cannot be read\n",
                               path, manager_config(m)->n_classes, o.root ?: "/");
                        return EXIT_OK;
                }
                if (r > 0) {
                        printf("%s: %d errors against this host\n", path, r);
                        return EXIT_INCOMPLETE;
                }
                printf("%s: configuration is valid (%zu tenant classes), checked against the host at %s\n",
                       path, manager_config(m)->n_classes, o.root ?: "/");
                return EXIT_OK;
        }
        if (o.check_host)
                return r < 0 ? EXIT_INCOMPLETE : check_host(m, &o);
        if (r < 0)
                return EXIT_UNUSABLE;

        if (!o.dry_run && !o.once)
                return run_daemon(m) < 0 ? EXIT_INCOMPLETE : EXIT_OK;

        /*
         * Take the daemon's lock. --once must not race a running daemon, because both would write
         * the same settings and state. The lock is held for the whole --once, so no daemon starts
         * under it. A dry run changes nothing and may run beside the daemon. It then says that it
         * planned the daemon's saved tenants.
         */
        /* A fixture tree under --root is not a host that a daemon runs on,
         * unless the caller names its RUNTIME_DIRECTORY. */
        lock_dir = getenv("RUNTIME_DIRECTORY") ?: o.root ? NULL : RUNTIME_DIR_DEFAULT;
        r = runtime_lock_at(lock_dir, o.once, &lock_fd);
        if (r == -EBUSY && o.once) {
                fprintf(stderr, "sriovd: a running sriovd (or sriovd --restore) holds %s/lock; --once would race it. "
                        "Use sriovctl verify, or stop the daemon first.\n", lock_dir);
                return EXIT_UNUSABLE;
        }
        daemon_running = r == -EBUSY;
        if (r < 0 && r != -EBUSY && r != -ENOENT && o.once) {
                log_error_errno(r, "Failed to lock %s/lock: %m", lock_dir);
                return EXIT_UNUSABLE;
        }
        if (o.dry_run && lock_fd >= 0) {
                close(lock_fd);
                lock_fd = -EBADF;
        }

        r = o.dry_run ? manager_cycle(m, CYCLE_DRY_RUN, &res) : manager_once(m, &res);
        if (r < 0)
                return EXIT_UNUSABLE;
        if (print_result(m, &o, &res, daemon_running) < 0)
                return EXIT_UNUSABLE;
        fflush(stdout);

        if (o.dry_run)
                return res.n_policy_errors ? EXIT_INCOMPLETE : EXIT_OK;
        return res.n_failed || res.n_drift || res.n_policy_errors ? EXIT_INCOMPLETE : EXIT_OK;
}
