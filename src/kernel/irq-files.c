/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * irq-files.c — the IRQs' smp_affinity_list files a drift check reads, kept open between checks.
 *
 * On the real /proc a held file is read again with one pread(): procfs generates it anew at each
 * read from offset 0, and an IRQ freed meanwhile makes the old file fail (-EIO) rather than read
 * as before. bench-irq-files on a 6.1 kernel: 1.3 us a read against 8.6 us for open, read and
 * close, at ~4.4 KiB of kernel memory per file held (the page procfs fills at the first read,
 * kept until close). A fixture tree's file can be replaced under a held fd, which would then read the old
 * one: there every read goes by path.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel.h"

typedef struct HeldFile {
        unsigned irq;
        int fd;
} HeldFile;

struct IrqFiles {
        HeldFile *files;             /* by irq */
        size_t n_files, allocated, budget;
};

int irq_files_new(size_t budget, IrqFiles **ret) {
        IrqFiles *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        f->budget = budget;
        *ret = f;
        return 0;
}

IrqFiles *irq_files_free(IrqFiles *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_files; i++)
                closep(&f->files[i].fd);
        free(f->files);
        free(f);
        return NULL;
}

size_t irq_files_held(const IrqFiles *f) {
        return f ? f->n_files : 0;
}

/* The place of irq in files: its index when held (*found), else where it would go. */
static size_t held_find(const IrqFiles *f, unsigned irq, bool *found) {
        size_t lo = 0, hi = f->n_files;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (f->files[mid].irq == irq) {
                        *found = true;
                        return mid;
                }
                if (f->files[mid].irq < irq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

static void held_drop(IrqFiles *f, size_t i) {
        closep(&f->files[i].fd);
        memmove(f->files + i, f->files + i + 1, (f->n_files - i - 1) * sizeof(*f->files));
        f->n_files--;
}

int irq_files_read_affinity(IrqFiles *f, RootFs *root, unsigned irq, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        bool hold = f && rootfs_is_real(root), found = false;
        size_t i = 0;
        int r;

        if (hold) {
                i = held_find(f, irq, &found);
                if (found) {
                        r = rootfs_reread(f->files[i].fd, buf, size);
                        if (r >= 0)
                                return r;
                        /* Freed since (-EIO), perhaps set up again under its number: by path. */
                        held_drop(f, i);
                }
        }
        if (!hold || f->n_files >= f->budget)
                return rootfs_read_attr(root, buf, size, "/proc/irq/%u/smp_affinity_list", irq);

        fd = rootfs_open_file(root, "/proc/irq/%u/smp_affinity_list", irq);
        if (fd < 0)
                return fd;
        r = rootfs_reread(fd, buf, size);
        if (r < 0)
                return r;
        /* Out of memory for the list costs the next read a path lookup, nothing else. */
        if (GREEDY_REALLOC(f->files, f->allocated, f->n_files + 1) >= 0) {
                memmove(f->files + i + 1, f->files + i, (f->n_files - i) * sizeof(*f->files));
                f->files[i] = (HeldFile) { .irq = irq, .fd = TAKE_FD(fd) };
                f->n_files++;
        }
        return r;
}

void irq_files_prune(IrqFiles *f, const Inventory *inv) {
        size_t k = 0;

        if (!f)
                return;
        for (size_t i = 0; i < f->n_files; i++)
                if (inventory_find_irq(inv, f->files[i].irq) || inventory_find_other_irq(inv, f->files[i].irq))
                        f->files[k++] = f->files[i];
                else
                        closep(&f->files[i].fd);
        f->n_files = k;
}
