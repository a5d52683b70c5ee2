/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layer-link.c — nothing to run: linked with all of one layer's library (link_whole) and the
 * layers below it only, so that a call from that layer to one above is an undefined symbol and
 * the build fails (see tests/layers/meson.build).
 */

int main(void) {
        return 0;
}
