/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h — sriovd.conf and tenant-classes.d/NAME.ini, read into the policy model and validated */
#pragma once

#include "sriovd-config.h"
#include "sriovd/core/policy.h"

/*
 * The path comes from meson's sysconfdir, so the binary reads the file where meson install and the
 * package put it.
 */
#define CONFIG_DEFAULT_PATH SRIOVD_SYSCONFDIR "/sriovd.conf"

/*
 * Loads path and every tenant-classes.d/NAME.ini beside it into *ret. On failure it returns
 * -EINVAL, or the errno of a file it could not read. It then sets *ret_errors to one message
 * per line, each in the form "FILE:LINE: what was wrong, what was expected". The caller frees
 * *ret_errors. An unknown section or key is an error, and its message suggests the nearest
 * valid name. A config that loads is consistent in itself: the classes that PFs name exist, and
 * the rt and housekeeping CPUs do not overlap.
 */
int config_load(const char *path, Config **ret, char **ret_errors);
/* Does the same for a config held in memory, as the fuzzer and the tests need. classes_dir may be NULL. */
int config_load_string(const char *name, const char *text, const char *classes_dir,
                       Config **ret, char **ret_errors);
