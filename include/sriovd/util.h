/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.h — leaf utilities every layer may use: the clock, UTF-8, PCI address syntax */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds, the clock sd-event's timers take. */
uint64_t now_usec(void);

/* Length (1-4) of the valid, strict UTF-8 sequence at s within avail bytes; 0 if invalid. */
size_t utf8_sequence_len(const unsigned char *s, size_t avail);

#define PCI_ADDR_MAX 16   /* "0000:41:00.0" plus NUL, with room */

/* "0000:41:00.0"-style: 4:2:2.1 lowercase hex, device 00-1f, function 0-7. */
bool pci_addr_valid(const char *s);
/* The domain and routing ID (bus << 8 | device << 3 | function) of a valid address; -EINVAL. */
int pci_addr_rid(const char *s, unsigned *ret_domain, unsigned *ret_rid);
/* Whether addr is one of list's n addresses. */
bool pci_addr_in(const char (*list)[PCI_ADDR_MAX], size_t n, const char *addr);
