# SPDX-License-Identifier: LGPL-2.1-or-later
# sriovd_placement — the bridge between sriovd on one host and OpenStack Placement.
