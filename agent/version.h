/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CW_VERSION_H
#define CW_VERSION_H

#define CW_VERSION "0.1.0"

#endif
