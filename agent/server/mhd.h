/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libmicrohttpd, loaded when an HTTP server starts rather than at exec: it
 * brings GnuTLS and its libraries (about 2 MiB resident), which an agent
 * serving only stdio would carry for nothing. Files that include this
 * header call MHD_* as usual: each name below stands for the pointer that
 * cw_mhd_load filled in, and <microhttpd.h> still checks every call's
 * types at build time. Call nothing before cw_mhd_load succeeded.
 */
#ifndef CW_SERVER_MHD_H
#define CW_SERVER_MHD_H

#include <microhttpd.h>

#define CW_MHD_SONAME "libmicrohttpd.so.12"

struct cw_mhd {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
};

/* Every pointer set once cw_mhd_load succeeded; all NULL before. */
extern struct cw_mhd cw_mhd;

/* Loads the library and its symbols, once per process (later calls give
 * the first one's result). 0, or -ENOENT with why set to a sentence that
 * names the missing library or symbol. */
int cw_mhd_load(const char **why);

#define MHD_start_daemon cw_mhd.start_daemon
#define MHD_stop_daemon cw_mhd.stop_daemon
#define MHD_get_daemon_info cw_mhd.get_daemon_info
#define MHD_get_connection_info cw_mhd.get_connection_info
#define MHD_lookup_connection_value cw_mhd.lookup_connection_value
#define MHD_add_response_header cw_mhd.add_response_header
#define MHD_queue_response cw_mhd.queue_response
#define MHD_destroy_response cw_mhd.destroy_response
#define MHD_create_response_from_callback cw_mhd.create_response_from_callback
#define MHD_create_response_from_buffer cw_mhd.create_response_from_buffer
#define MHD_suspend_connection cw_mhd.suspend_connection
#define MHD_resume_connection cw_mhd.resume_connection
#define MHD_quiesce_daemon cw_mhd.quiesce_daemon

#endif
