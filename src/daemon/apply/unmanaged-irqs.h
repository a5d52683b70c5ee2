/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unmanaged-irqs.h — the IRQs whose affinity the kernel refused for good, and the IRQs sriovd owns */
#pragma once

#include <stdbool.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"

/*
 * The IRQs whose affinity the kernel refused for good, sorted. sriovd does not ask again for
 * them. The list lasts across runs in one boot, in a file named unmanaged-irqs.
 */
typedef struct UnmanagedIrqs {
        unsigned *irqs;
        size_t n, allocated;
        bool loaded;          /* the file was read, or there is none to read */
        bool dirty;           /* not yet written to the file */
} UnmanagedIrqs;

/* Remember irq. Returns 1 when it is new, 0 when it was known, or -ENOMEM. */
int unmanaged_irqs_add(UnmanagedIrqs *u, unsigned irq);
bool unmanaged_irqs_contains(const UnmanagedIrqs *u, unsigned irq);
/*
 * Read dir/unmanaged-irqs, which a run in the same boot wrote, and add its IRQs. A NULL dir means
 * $RUNTIME_DIRECTORY. A file of another boot, or a damaged one, is ignored, and so is a missing
 * one: the IRQs are then learnt again. Returns -ENOMEM or 0.
 */
int unmanaged_irqs_load(UnmanagedIrqs *u, const char *dir, const char *boot_id);
/* Write dir/unmanaged-irqs when the list changed since it was written or read. */
int unmanaged_irqs_save(UnmanagedIrqs *u, const char *dir, const char *boot_id);
/*
 * Read or write the list where this boot's runs keep it, see runtime_memory_dir(), for the host
 * at root whose state is in state_dir. The boot's ID comes from root. A fixture without a state
 * directory of its own keeps nothing, and its list counts as read. Returns -ENOMEM, the write's
 * error, or 0.
 */
int unmanaged_irqs_load_boot(UnmanagedIrqs *u, RootFs *root, const char *state_dir);
int unmanaged_irqs_save_boot(UnmanagedIrqs *u, RootFs *root, const char *state_dir);
void unmanaged_irqs_done(UnmanagedIrqs *u);

/*
 * Publish the IRQs that sriovd pins for sriovd-irqbalance-policy, so that irqbalance bans them:
 * the writable IRQs of inv that are not in u. The list goes to $RUNTIME_DIRECTORY/owned-irqs.
 */
int owned_irqs_write(const Inventory *inv, const UnmanagedIrqs *u);
