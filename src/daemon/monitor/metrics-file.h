/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-file.h — the Prometheus page, replaced whole each period, for node_exporter's textfile collector */
#pragma once

#include <stddef.h>

/*
 * Replace the file at path with buf, atomically, through state_file_replace(). path must be
 * absolute, and its directory must exist. The file gets mode 0644, so that node_exporter, which
 * runs as another user, can read it. The temporary ".NAME.tmp-*" does not end in ".prom", so
 * the collector never reads a half-written page. Returns -EINVAL for a path that is not
 * absolute or names no file, or else the errno of a failed system call.
 */

int metrics_file_write(const char *path, const char *buf, size_t size);
