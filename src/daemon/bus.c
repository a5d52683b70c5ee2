/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.c — org.sriovd.Manager1 on the system bus (not built yet: the API issue) */

#include "sriovd/bus.h"

int bus_new(Manager *m, Bus **ret) {
        return -EOPNOTSUPP;
}

Bus *bus_free(Bus *b) {
        return NULL;
}
