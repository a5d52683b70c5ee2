/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-file.c — the metrics file on disk, replaced atomically through the state file's writer */

#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "state/state.h"
#include "metrics-file.h"

int metrics_file_write(const char *path, const char *buf, size_t size) {
        _cleanup_close_ int dfd = -EBADF;
        char dir[PATH_MAX];
        const char *slash;

        if (!path || path[0] != '/')
                return -EINVAL;
        slash = strrchr(path, '/');
        if ((size_t) (slash - path) >= sizeof(dir))
                return -ENAMETOOLONG;
        memcpy(dir, path, (size_t) (slash - path));
        dir[slash - path] = 0;

        dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        /* state_file_replace() checks that the name is not empty, has no '/' and is not hidden. */

        return state_file_replace(dfd, slash + 1, buf, size, 0644);
}
