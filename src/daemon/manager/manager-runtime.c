/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-runtime.c — what the manager keeps for the boot: the lock, saved scheduling, unmanaged IRQs */

#include "manager-internal.h"

/*
 * Where sriovd keeps what it learned in this boot between runs. That is systemd's
 * RuntimeDirectory= when it is set. Otherwise it is the state directory, as for --once from a
 * shell. A fixture without a state directory of its own keeps nothing, and gets "".
 */
static const char *manager_memory_dir(const Manager *m) {
        if (getenv("RUNTIME_DIRECTORY"))
                return NULL;   /* runtime_file_*_at(NULL) picks RuntimeDirectory=. */
        if (rootfs_is_real(m->root) || !streq(m->config->state_dir, CONFIG_DEFAULT_STATE_DIR))
                return m->config->state_dir;
        return "";
}

/* The boot's ID, or "unknown" when the kernel does not say. Returns -ENOMEM or 0. */
static int manager_boot_id(const Manager *m, char **ret) {
        char *id = NULL;

        if (rootfs_read(m->root, &id, "/proc/sys/kernel/random/boot_id") < 0)
                id = strdup("unknown");
        if (!id)
                return -ENOMEM;
        *ret = id;
        return 0;
}

int manager_load_unmanaged(Manager *m) {
        _cleanup_free_ char *boot = NULL;
        const char *dir = manager_memory_dir(m);
        int r;

        if (dir && !dir[0]) {
                m->unmanaged.loaded = true;
                return 0;
        }
        r = manager_boot_id(m, &boot);
        if (r < 0)
                return r;
        return unmanaged_irqs_load(&m->unmanaged, dir, boot);
}

int manager_save_unmanaged(Manager *m) {
        _cleanup_free_ char *boot = NULL;
        const char *dir = manager_memory_dir(m);
        int r;

        if (!m->unmanaged.dirty || (dir && !dir[0]))
                return 0;
        r = manager_boot_id(m, &boot);
        if (r < 0)
                return r;
        return unmanaged_irqs_save(&m->unmanaged, dir, boot);
}

int manager_write_owned_irqs(Manager *m) {
        return owned_irqs_write(m->inventory, &m->unmanaged);
}

int manager_load_runtime(Manager *m) {
        int r;

        /* Before anything is restored, each entry is checked again: is the PID still the same kernel thread? */
        r = saved_sched_table_load(&m->saved);
        if (r < 0)
                return log_warning_errno(r, "Failed to read what a previous sriovd changed on IRQ threads, ignoring: %m");
        if (m->saved.n > 0)
                log_info("Restoring knowledge of %zu IRQ threads a previous sriovd changed", m->saved.n);
        return 0;
}

int manager_restore_sched(Manager *m) {
        int r, k;

        r = saved_sched_table_restore(&m->saved, m->root);
        /* Everything is put back, so nothing is left for a later sriovd to restore. */
        k = saved_sched_table_save(&m->saved);
        if (k < 0)
                log_warning_errno(k, "Failed to clear %s/saved-sched, ignoring: %m", getenv("RUNTIME_DIRECTORY"));
        return r;
}

int manager_stop(Manager *m) {
        if (m->config && m->config->restore_on_stop)
                return manager_restore_sched(m);
        if (m->saved.n > 0)
                log_info("Stopping with %zu threads left as sriovd set them (restore_on_stop = no); "
                         "what they were before is kept for the next sriovd, and sriovd --restore puts it back",
                         m->saved.n);
        return 0;
}

int manager_restore(Manager *m) {
        int r;

        r = runtime_lock(&m->runtime_lock_fd);
        if (r == -EBUSY)
                return log_error_errno(r, "sriovd is running (it holds %s/lock): stop it first "
                                       "(systemctl stop sriovd), or its next cycle would redo what --restore undoes",
                                       getenv("RUNTIME_DIRECTORY"));
        if (r < 0)
                return log_error_errno(r, "Failed to lock %s/lock: %m", getenv("RUNTIME_DIRECTORY"));
        r = manager_load_runtime(m);
        if (r < 0)
                return r;
        r = manager_restore_sched(m);
        if (r < 0)
                return r;
        /* sriovd no longer owns these IRQs, so irqbalance may move them again at its next rescan. */
        int k = runtime_file_remove("owned-irqs");
        if (k < 0)
                return log_error_errno(k, "Failed to remove %s/owned-irqs: %m", getenv("RUNTIME_DIRECTORY"));
        return r;
}
