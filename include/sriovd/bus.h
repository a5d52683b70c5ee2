/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.h — org.sriovd.Manager1 on the system bus: the API cloud controllers and sriovctl call */
#pragma once

#include "sriovd/macro.h"

typedef struct Manager Manager;
typedef struct Bus Bus;

/*
 * Connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured), export
 * /org/sriovd/Manager1, take the name org.sriovd.Manager1, attach to the
 * manager's event loop. The caller logs a failure and runs on without the API.
 */
int bus_new(Manager *m, Bus **ret);
Bus *bus_free(Bus *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(Bus *, bus_free);
