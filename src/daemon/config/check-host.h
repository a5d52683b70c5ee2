/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* check-host.h — the --check-config checks that need the host */
#pragma once

#include <stdio.h>

#include "sriovd/core/policy.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Check c, a config that loaded, against the host at root. It reports a num_vfs above a PF's
 * sriov_totalvfs, and an access_group that does not exist. Errors and warnings go to f as
 * "FILE:LINE: error: ..." lines. Returns the number of errors, or -ENODEV when the host cannot
 * be read.
 */
int config_check_host(const Config *c, RootFs *root, FILE *f);
