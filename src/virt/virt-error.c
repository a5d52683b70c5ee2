/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt-error.c — turns libvirt's errors into a negative errno and keeps libvirt's own message */

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>

#include "virt-internal.h"

static const struct {
        int code;
        int error;
} code_table[] = {
        { VIR_ERR_NO_MEMORY, -ENOMEM },
        { VIR_ERR_NO_DOMAIN, -ENOENT },
        { VIR_ERR_NO_NETWORK, -ENOENT },
        { VIR_ERR_NO_NODE_DEVICE, -ENOENT },
        { VIR_ERR_NO_DOMAIN_SNAPSHOT, -ENOENT },
        { VIR_ERR_NO_DOMAIN_METADATA, -ENOENT },
        { VIR_ERR_OPERATION_INVALID, -EBUSY },          /* e.g. "domain is not running" */
        { VIR_ERR_CONFIG_UNSUPPORTED, -EOPNOTSUPP },
        { VIR_ERR_NO_SUPPORT, -EOPNOTSUPP },
        { VIR_ERR_OPERATION_UNSUPPORTED, -EOPNOTSUPP },
        { VIR_ERR_ARGUMENT_UNSUPPORTED, -EOPNOTSUPP },
        { VIR_ERR_XML_ERROR, -EINVAL },
        { VIR_ERR_XML_DETAIL, -EINVAL },
        { VIR_ERR_INVALID_ARG, -EINVAL },
        { VIR_ERR_INVALID_DOMAIN, -EINVAL },
        { VIR_ERR_AUTH_FAILED, -EACCES },
        { VIR_ERR_AUTH_CANCELLED, -EACCES },
        { VIR_ERR_AUTH_UNAVAILABLE, -EACCES },
        { VIR_ERR_ACCESS_DENIED, -EACCES },
        { VIR_ERR_OPERATION_DENIED, -EPERM },
        { VIR_ERR_NO_CONNECT, -ENOTCONN },
        { VIR_ERR_INVALID_CONN, -ENOTCONN },
        { VIR_ERR_RPC, -ENOTCONN },
        { VIR_ERR_OPERATION_TIMEOUT, -ETIMEDOUT },
        { VIR_ERR_AGENT_UNRESPONSIVE, -ETIMEDOUT },
        { VIR_ERR_DEVICE_MISSING, -ENODEV },
        { VIR_ERR_OPERATION_ABORTED, -ECANCELED },
        { VIR_ERR_DOM_EXIST, -EEXIST },
        { VIR_ERR_MULTIPLE_INTERFACES, -EINVAL },
};

int virt_errno_from_code(int code, int sys_errno) {
        if (code == VIR_ERR_OK)
                return 0;
        if (code == VIR_ERR_SYSTEM_ERROR)
                return sys_errno > 0 ? -sys_errno : -EIO;
        for (size_t i = 0; i < ELEMENTSOF(code_table); i++)
                if (code_table[i].code == code)
                        return code_table[i].error;
        return -EIO;
}

/* Silences libvirt's default printing of every error to stderr. The errors are read with virGetLastError() instead. */
static void ignore_error(void *userdata, virErrorPtr e) {
}

void virt_error_silence(void) {
        virSetErrorFunc(NULL, ignore_error);
}

int virt_error_set(VirtError *err, int error, const char *fmt, ...) {
        va_list ap;

        if (err) {
                err->error = error;
                err->code = 0;
                va_start(ap, fmt);
                vsnprintf(err->message, sizeof(err->message), fmt, ap);
                va_end(ap);
        }
        return error;
}

int virt_error_last(VirtError *err, int fallback) {
        virErrorPtr e = virGetLastError();
        int r;

        if (!e || e->code == VIR_ERR_OK) {
                virt_error_set(err, fallback, "libvirt reported no error");
                return fallback;
        }
        /* int1 carries the errno of VIR_ERR_SYSTEM_ERROR. */
        r = virt_errno_from_code(e->code, e->code == VIR_ERR_SYSTEM_ERROR ? e->int1 : 0);
        if (err) {
                err->error = r;
                err->code = e->code;
                snprintf(err->message, sizeof(err->message), "%s", e->message ?: "unknown libvirt error");
        }
        virResetLastError();
        return r;
}
