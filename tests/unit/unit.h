/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests use cmocka; tests/run.sh runs each binary with TAP output. */
#ifndef CW_UNIT_H
#define CW_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif
