/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unmanaged-irqs.c — the IRQs the kernel will not move, remembered for the boot, and owned-irqs */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "unmanaged-irqs.h"

int unmanaged_irqs_add(UnmanagedIrqs *u, unsigned irq) {
        if (unmanaged_irqs_contains(u, irq))
                return 0;
        if (GREEDY_REALLOC(u->irqs, u->allocated, u->n + 1) < 0)
                return -ENOMEM;
        u->dirty = true;
        u->irqs[u->n++] = irq;
        qsort_safe(u->irqs, u->n, sizeof(*u->irqs), unsigned_cmp);
        return 1;
}

bool unmanaged_irqs_contains(const UnmanagedIrqs *u, unsigned irq) {
        return bsearch_safe(&irq, u->irqs, u->n, sizeof(irq), unsigned_cmp);
}

int unmanaged_irqs_load(UnmanagedIrqs *u, const char *dir, const char *boot_id) {
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 0;
        int r;

        u->loaded = true;
        r = runtime_file_read_at(dir, "unmanaged-irqs", &text);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        r = unmanaged_irqs_parse(text, boot_id, &irqs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;   /* The numbers are from another boot or damaged, so learn them again. */
        for (size_t i = 0; i < n; i++) {
                r = unmanaged_irqs_add(u, irqs[i]);
                if (r < 0)
                        return r;
        }
        u->dirty = false;
        return 0;
}

typedef struct UnmanagedFile {
        const UnmanagedIrqs *u;
        const char *boot_id;
} UnmanagedFile;

static void fill_unmanaged(FILE *f, const void *userdata) {
        const UnmanagedFile *file = userdata;
        unmanaged_irqs_format(f, file->boot_id, file->u->irqs, file->u->n);
}

int unmanaged_irqs_save(UnmanagedIrqs *u, const char *dir, const char *boot_id) {
        UnmanagedFile file = { u, boot_id };
        int r;

        if (!u->dirty)
                return 0;
        r = runtime_file_write_at(dir, "unmanaged-irqs", 0644, fill_unmanaged, &file);
        if (r < 0)
                return r;
        u->dirty = false;
        return 0;
}

/* The boot's ID, or "unknown" when the kernel does not say. Returns -ENOMEM or 0. */
static int boot_id(RootFs *root, char **ret) {
        char *id = NULL;

        if (rootfs_read(root, &id, "/proc/sys/kernel/random/boot_id") < 0)
                id = strdup("unknown");
        if (!id)
                return -ENOMEM;
        *ret = id;
        return 0;
}

int unmanaged_irqs_load_boot(UnmanagedIrqs *u, RootFs *root, const char *state_dir) {
        _cleanup_free_ char *boot = NULL;
        const char *dir = runtime_memory_dir(root, state_dir);
        int r;

        if (dir && !dir[0]) {
                u->loaded = true;
                return 0;
        }
        r = boot_id(root, &boot);
        if (r < 0)
                return r;
        return unmanaged_irqs_load(u, dir, boot);
}

int unmanaged_irqs_save_boot(UnmanagedIrqs *u, RootFs *root, const char *state_dir) {
        _cleanup_free_ char *boot = NULL;
        const char *dir = runtime_memory_dir(root, state_dir);
        int r;

        if (!u->dirty || (dir && !dir[0]))
                return 0;
        r = boot_id(root, &boot);
        if (r < 0)
                return r;
        return unmanaged_irqs_save(u, dir, boot);
}

void unmanaged_irqs_done(UnmanagedIrqs *u) {
        u->irqs = mfree(u->irqs);
        u->n = u->allocated = 0;
}

/*
 * The list is written whole to a temporary file and renamed, so a reader never sees half a list.
 * It is written only under systemd's RuntimeDirectory=, or a test's.
 */
typedef struct OwnedFile {
        const Inventory *inv;
        const UnmanagedIrqs *u;
} OwnedFile;

static void fill_owned_irqs(FILE *f, const void *userdata) {
        const OwnedFile *file = userdata;
        const Inventory *inv = file->inv;

        for (size_t i = 0; i < inv->n_irqs; i++) {
                unsigned irq = inv->irqs[i].irq;
                if (inv->irqs[i].writable && !unmanaged_irqs_contains(file->u, irq))
                        fprintf(f, "%u\n", irq);
        }
}

int owned_irqs_write(const Inventory *inv, const UnmanagedIrqs *u) {
        OwnedFile file = { inv, u };

        if (!inv)
                return 0;
        return runtime_file_write("owned-irqs", 0644, fill_owned_irqs, &file);
}
