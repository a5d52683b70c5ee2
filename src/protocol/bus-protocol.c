/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-protocol.c — the one table of the API's org.sriovd.Error.* names and the errno of each */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"

/* A name may have several rows. The name maps back to the errno in its first row. */
const sd_bus_error_map sriovd_bus_errors[] = {
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NO_CAPACITY, ENOSPC),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NO_RT_CPU, EXFULL),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_UNKNOWN_TENANT, ESRCH),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_UNKNOWN_CLASS, ENOENT),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_UNKNOWN_DEVICE, ENODEV),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_INVALID_ARGUMENT, EINVAL),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_INVALID_ARGUMENT, E2BIG),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_INVALID_ARGUMENT, ERANGE),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_BUSY, EBUSY),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_BUSY, EAGAIN),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NOT_PERMITTED, EPERM),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NOT_PERMITTED, EACCES),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_TOO_MANY_TENANTS, EUSERS),
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_FAILED, EIO),
        /* This errno is rare on purpose, so that no error passed up from the kernel or a library is taken for it. */
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NOT_ON_VF, EMEDIUMTYPE),
        /* This errno is rare for the same reason.
         * sd-bus itself returns ENODATA for missing credentials, but it never returns ENOSTR. */
        SD_BUS_ERROR_MAP(SRIOVD_ERROR_NOT_MONITORING, ENOSTR),
        SD_BUS_ERROR_MAP_END
};

const char *bus_error_name_from_errno(int error) {
        error = error < 0 ? -error : error;
        for (const sd_bus_error_map *e = sriovd_bus_errors; e->name; e++)
                if (e->code == error)
                        return e->name;
        return SRIOVD_ERROR_FAILED;
}

int bus_error_errno_from_name(const char *name) {
        if (!name)
                return 0;
        for (const sd_bus_error_map *e = sriovd_bus_errors; e->name; e++)
                if (streq(e->name, name))
                        return e->code;
        return 0;
}

int bus_error_setf(sd_bus_error *e, int error, const char *fmt, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;

        /* The message is allocated because a failed Reload carries every FILE:LINE: mistake.
         * That can be more than one line holds. */
        va_start(ap, fmt);
        if (vasprintf(&message, fmt, ap) < 0)
                message = NULL;
        va_end(ap);
        /* sd_bus_error_set() returns the errno that the API maps the name to.
         * The caller returns that errno. */
        return sd_bus_error_set(e, bus_error_name_from_errno(error), message ?: "Out of memory");
}
