/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-util.h — what the state file and journal fuzzers share */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* CRC32C written again, bit by bit, independent of the library's: a bug in one does not hide in the other. */
static inline uint32_t crc32c_bitwise(const uint8_t *p, size_t size) {
        uint32_t crc = UINT32_MAX;

        for (size_t i = 0; i < size; i++) {
                crc ^= p[i];
                for (int k = 0; k < 8; k++)
                        crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
        }
        return ~crc;
}
