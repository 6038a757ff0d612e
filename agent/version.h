/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version cmdwarden reports: `cmdwarden version`, the MCP initialize
 * result's serverInfo and the audit log's start record.
 */
#ifndef CW_VERSION_H
#define CW_VERSION_H

#define CW_VERSION "0.1.0"

#endif
