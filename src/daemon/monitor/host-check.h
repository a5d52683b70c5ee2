/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-check.h — the RT host check on this host: run, print, log, and export as metrics */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

#include "sriovd/core/host-check.h"
#include "sriovd/core/metrics.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Reads the host under root and runs every check against cfg's RT and housekeeping CPUs. cfg may
 * be NULL, and then the RT CPUs are the kernel's isolated CPUs. The caller frees *ret. Returns
 * -ENOENT when the host's CPUs cannot be read, or -ENOMEM.
 */
int host_check_run(RootFs *root, const Config *cfg, HostCheck **ret);
HostCheck *host_check_free(HostCheck *hc);
DEFINE_TRIVIAL_CLEANUP_FUNC(HostCheck *, host_check_free);
/* Runs the check again into *slot, freeing the one it held. On failure *slot is kept. *ret points at the new one. */
int host_check_replace(HostCheck **slot, RootFs *root, const Config *cfg, const HostCheck **ret);

/* Prints the findings as a table, each failure with what was expected and its fix, and a summary line. */
void host_check_print(FILE *f, const HostCheck *hc);
/* The findings as a JSON object: the RT and housekeeping CPUs, the findings, and the counts. NULL on ENOMEM. */
json_object *host_check_json(const HostCheck *hc);
/* Logs each failed check at warning level, with SRIOVD_CHECK= and SRIOVD_SEVERITY=. */
void host_check_log(const HostCheck *hc);
/*
 * Adds sriovd_host_check_failed{check,severity} to s, 1 for a failed check and 0 for the others,
 * sorted by check. Returns 0 or a negative errno.
 */
int host_check_metrics(const HostCheck *hc, MetricSnapshot *s);
