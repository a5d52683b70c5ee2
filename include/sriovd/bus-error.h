/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-error.h — the one table of org.sriovd.Error.* names and the errno each stands for */
#pragma once

#include <systemd/sd-bus.h>

#define SRIOVD_BUS_NAME "org.sriovd.Manager1"
#define SRIOVD_BUS_PATH "/org/sriovd/Manager1"
#define SRIOVD_BUS_INTERFACE "org.sriovd.Manager1"

#define SRIOVD_ERROR_NO_CAPACITY "org.sriovd.Error.NoCapacity"
#define SRIOVD_ERROR_UNKNOWN_TENANT "org.sriovd.Error.UnknownTenant"
#define SRIOVD_ERROR_UNKNOWN_CLASS "org.sriovd.Error.UnknownClass"
#define SRIOVD_ERROR_UNKNOWN_DEVICE "org.sriovd.Error.UnknownDevice"
#define SRIOVD_ERROR_INVALID_ARGUMENT "org.sriovd.Error.InvalidArgument"
#define SRIOVD_ERROR_BUSY "org.sriovd.Error.Busy"
#define SRIOVD_ERROR_NOT_PERMITTED "org.sriovd.Error.NotPermitted"
#define SRIOVD_ERROR_TOO_MANY_TENANTS "org.sriovd.Error.TooManyTenants"
#define SRIOVD_ERROR_FAILED "org.sriovd.Error.Failed"

/*
 * name <-> errno. Several errnos may share a name (EPERM and EACCES are both
 * NotPermitted); a name maps back to the first errno listed for it. Registered
 * with sd_bus_error_add_map(), so sd_bus_error_get_errno() on a client gives
 * these errnos too. Terminated by SD_BUS_ERROR_MAP_END.
 */
extern const sd_bus_error_map sriovd_bus_errors[];

/* The org.sriovd.Error name for a negative errno; anything unlisted is Failed. */
const char *bus_error_name_from_errno(int error);
/* The errno (positive) of an org.sriovd.Error name; 0 when it is not one. */
int bus_error_errno_from_name(const char *name);
/* Set e from a negative errno with the API's name and message (printf-style). */
int bus_error_setf(sd_bus_error *e, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
