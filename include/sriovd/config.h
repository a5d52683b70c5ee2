/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h — sriovd.conf and tenant-classes.d/NAME.ini, read into the policy model and validated */
#pragma once

#include "sriovd/policy.h"
#include "sriovd-config.h"

/* From meson's sysconfdir, so the binary reads where meson install and the package put it. */
#define CONFIG_DEFAULT_PATH SRIOVD_SYSCONFDIR "/sriovd.conf"

/*
 * Load path and every tenant-classes.d/NAME.ini beside it. On failure returns
 * -EINVAL (or the errno of an unreadable file) and sets *ret_errors to one
 * message per line, each "FILE:LINE: what was wrong, what was expected"; the
 * caller frees it. Unknown sections and keys are errors with the nearest valid
 * name suggested. A config that loads is internally consistent (classes named
 * by PFs exist, rt and housekeeping CPUs do not overlap).
 */
int config_load(const char *path, Config **ret, char **ret_errors);
/* Same, for a config held in memory (fuzzing, tests); classes_dir may be NULL. */
int config_load_string(const char *name, const char *text, const char *classes_dir,
                       Config **ret, char **ret_errors);
