/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* owned-devices.c — the PFs sriovd manages, published for sriovd-irqbalance-policy */

#include <errno.h>
#include <string.h>

#include "base/runtime.h"
#include "owned-devices.h"

static bool owned_devices_same(const OwnedDevices *o, const Inventory *inv) {
        if (!o->written || pci_set_size(&o->published) != inv->n_pfs)
                return false;
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (!streq(pci_set_get(&o->published, i), inv->pfs[i].addr))
                        return false;
        return true;
}

static void fill_owned_devices(FILE *f, const void *userdata) {
        const Inventory *inv = userdata;

        for (size_t i = 0; i < inv->n_pfs; i++)
                fprintf(f, "%s\n", inv->pfs[i].addr);
}

int owned_devices_publish(OwnedDevices *o, const Inventory *inv) {
        int r;

        if (!inv || owned_devices_same(o, inv))
                return 0;
        /* Make room first, so that the list in memory can always follow a file that was written. */
        pci_set_clear(&o->published);
        r = pci_set_reserve(&o->published, inv->n_pfs);
        if (r < 0) {
                o->written = false;
                return r;
        }
        r = runtime_file_write("owned-devices", 0644, fill_owned_devices, inv);
        if (r < 0) {
                o->written = false;
                return r;
        }
        for (size_t i = 0; i < inv->n_pfs; i++)
                (void) pci_set_add(&o->published, inv->pfs[i].addr);
        o->written = true;
        return 1;
}

void owned_devices_done(OwnedDevices *o) {
        pci_set_done(&o->published);
        o->written = false;
}
