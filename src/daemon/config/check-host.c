/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* check-host.c — the --check-config checks that need the host: num_vfs and access_group */

#include <grp.h>
#include <string.h>

#include "sriovd/kernel/discover.h"
#include "check-host.h"

/* Returns 1 when the group exists, 0 when it does not, and a negative errno when the lookup fails.
 * The buffer is large, as in bus-access.c, because a group's member list can be long. */
static int group_exists(const char *name) {
        struct group grp, *result = NULL;
        char buf[16384];
        int r;

        r = getgrnam_r(name, &grp, buf, sizeof(buf), &result);
        if (r != 0)
                return -r;
        return result ? 1 : 0;
}

/*
 * Checks what only the host can say about a configuration that parsed. A num_vfs beyond what
 * the PF supports is an error, because the cycle would refuse it with a policy error at every
 * start. An access_group that does not exist is also a mistake, because then nobody but root
 * could change anything over D-Bus. Each finding goes to f as "FILE:LINE: error: ..." or
 * "FILE:LINE: warning: ...". Returns the number of errors. Returns -ENODEV when the host's PCI
 * devices cannot be read, and then only the file was checked.
 */
int config_check_host(const Config *c, RootFs *root, FILE *f) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        int n_errors = 0, r;
        Scope scope;

        r = rootfs_exists(root, "/sys/bus/pci/devices");
        if (r <= 0)
                return -ENODEV;
        config_scope(c, &scope);
        r = inventory_read(root, &scope, &inv);
        if (r < 0)
                return -ENODEV;

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                const PfPolicy *pol = config_pf_policy(c, pf->addr, pf->vendor, pf->device);

                if (!pol || pol->num_vfs < 0 || (unsigned) pol->num_vfs <= pf->total_vfs)
                        continue;
                fprintf(f, "%s:%u: error: num_vfs = %d exceeds sriov_totalvfs = %u of PF %s (%04x:%04x); "
                        "expected at most %u\n", c->path, pol->num_vfs_line ?: pol->line, pol->num_vfs,
                        pf->total_vfs, pf->addr, pf->vendor, pf->device, pf->total_vfs);
                n_errors++;
        }
        /* A missing [pf] may be hot-plugged later. So it is worth a warning, but it is not an error. */
        for (size_t i = 0; i < c->n_pfs; i++)
                if (c->pfs[i].by_addr && !inventory_find_pf(inv, c->pfs[i].addr))
                        fprintf(f, "%s:%u: warning: [pf %s]: no such SR-IOV PF on this host (yet)\n", c->path,
                                c->pfs[i].line, c->pfs[i].addr);

        /* Group names resolve on this host whatever --root says, because the bus checks callers on this host. */
        r = group_exists(c->access_group);
        if (r == 0 && c->access_group_line > 0) {
                fprintf(f, "%s:%u: error: access_group = %s: no such group on this host; expected an existing "
                        "group (getent group %s), or only root could change state over D-Bus\n",
                        c->path, c->access_group_line, c->access_group, c->access_group);
                n_errors++;
        } else if (r == 0)
                fprintf(f, "%s: warning: the default access_group %s does not exist on this host: only root may "
                        "change state over D-Bus (the package's sysusers.d entry creates it)\n",
                        c->path, c->access_group);
        else if (r < 0)
                fprintf(f, "%s: warning: cannot look up access_group %s: %s\n", c->path, c->access_group,
                        strerror(-r));
        return n_errors;
}
