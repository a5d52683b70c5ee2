/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.h — org.sriovd.Manager1 on the system bus: the API cloud controllers and sriovctl call */
#pragma once

#include "sriovd/shared/macro.h"

typedef struct Manager Manager;
typedef struct Bus Bus;

/*
 * Connects to the system bus, exports /org/sriovd/Manager1 and takes the name
 * org.sriovd.Manager1. DBUS_SYSTEM_BUS_ADDRESS is honoured. The bus is attached to the
 * manager's event loop. Returns 0 and puts the new Bus in *ret, which the caller frees with
 * bus_free(). Returns a negative errno on failure. The caller logs a failure and runs on
 * without the API.
 */
int bus_new(Manager *m, Bus **ret);
Bus *bus_free(Bus *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(Bus *, bus_free);
