# SPDX-License-Identifier: LGPL-2.1-or-later
# vfio.sh — guest 4: vf_driver = vfio-pci binds the VFs for passthrough, a second --once leaves
# them, vf_driver = host gives them back to igbvf.
pf_up
sriovd_once vfio-1 /vm/conf-vfio/sriovd.conf
snapshot vfio
sriovd_once vfio-2 /vm/conf-vfio/sriovd.conf
sriovd_once host-1 /vm/conf-host/sriovd.conf
snapshot host
