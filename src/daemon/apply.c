/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* apply.c — run planned actions through the kernel modules; classify what the kernel said */

#include "sriovd/apply.h"
#include "sriovd/kernel.h"

ErrorInfo kernel_error_classify(ActionKind kind, int error) {
        int e = error < 0 ? -error : error;

        if (kind == ACTION_SET_NUM_VFS)
                switch (e) {
                case EBUSY:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "VFs are in use or the PF is resetting; the count "
                                             "can change only after they are released" };
                case ENOSPC:
                        return (ErrorInfo) { ERROR_FATAL,
                                             "MSI-X vector or PCI bus number space exhausted; "
                                             "ask for fewer VFs or enlarge it in firmware" };
                case ERANGE:
                case EINVAL:
                        return (ErrorInfo) { ERROR_FATAL, "the PF refuses this VF count" };
                case ENOENT:
                case ENODEV:
                        return (ErrorInfo) { ERROR_TRANSIENT,
                                             "the PF or its driver went away (reload or hot-unplug)" };
                case EOPNOTSUPP:
                case ENOSYS:
                        return (ErrorInfo) { ERROR_UNMANAGED,
                                             "the PF driver does not support SR-IOV" };
                }

        switch (e) {
        case EPERM:
        case EACCES:
                return (ErrorInfo) { ERROR_FATAL, "not permitted: sriovd needs root" };
        case EROFS:
                return (ErrorInfo) { ERROR_FATAL,
                                     "read-only file system (ProtectKernelTunables= or a "
                                     "read-only /sys mount?)" };
        case ENOENT:
                return (ErrorInfo) { ERROR_UNMANAGED, "this kernel does not have the setting" };
        case EAGAIN:
        case EINTR:
        case EBUSY:
                return (ErrorInfo) { ERROR_TRANSIENT, "busy; retried on the next cycle" };
        case EIO:
                return (ErrorInfo) { ERROR_UNMANAGED, "the kernel manages this itself" };
        }
        return (ErrorInfo) { ERROR_TRANSIENT, "unexpected kernel error" };
}

const char *error_class_to_string(ErrorClass c) {
        switch (c) {
        case ERROR_TRANSIENT:
                return "transient";
        case ERROR_UNMANAGED:
                return "unmanaged";
        case ERROR_FATAL:
                return "fatal";
        }
        return "unknown";
}

int action_apply(RootFs *root, Action *a) {
        int r = -EOPNOTSUPP;

        switch (a->kind) {
        case ACTION_SET_AUTOPROBE:
                r = sriov_set_drivers_autoprobe(root, a->target, a->after != 0);
                break;
        case ACTION_SET_NUM_VFS:
                r = sriov_set_num_vfs(root, a->target, (unsigned) a->after);
                break;
        case ACTION_SET_RTNET_PRIO:
                r = sysctl_set_rtnet_prio(root, a->after);
                break;
        case _ACTION_KIND_MAX:
                break;
        }
        a->applied = true;
        a->result = r;
        return r;
}
