// SPDX-License-Identifier: Apache-2.0
/* Loads libmicrohttpd at run time and fills in the call table of mhd.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "server/mhd.h"

/* Room for the library's name and dlerror()'s sentence. */
#define MHD_ERROR_MAX 512

struct cw_mhd cw_mhd;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why_not[MHD_ERROR_MAX];

static void load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(f) { "MHD_" #f, offsetof(struct cw_mhd, f) }
		SYM(start_daemon), SYM(stop_daemon), SYM(get_daemon_info),
		SYM(get_connection_info), SYM(lookup_connection_value),
		SYM(add_response_header), SYM(queue_response),
		SYM(destroy_response), SYM(create_response_from_callback),
		SYM(create_response_from_buffer), SYM(suspend_connection),
		SYM(resume_connection), SYM(quiesce_daemon),
#undef SYM
	};
	void *lib, *f;
	size_t i;

	lib = dlopen(CW_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why_not, sizeof(why_not),
			 "the HTTP transport needs %s (Debian package libmicrohttpd12): %s",
			 CW_MHD_SONAME, dlerror());
		return;
	}
	for (i = 0; i < CW_ARRAY_SIZE(syms); i++) {
		f = dlsym(lib, syms[i].name);
		if (!f) {
			snprintf(why_not, sizeof(why_not), "%s: %s", CW_MHD_SONAME,
				 dlerror());
			memset(&cw_mhd, 0, sizeof(cw_mhd));
			return;
		}
		memcpy((char *)&cw_mhd + syms[i].off, &f, sizeof(f));
	}
}

int cw_mhd_load(const char **why)
{
	pthread_once(&once, load);
	if (!cw_mhd.start_daemon) {
		*why = why_not;
		return -ENOENT;
	}
	return 0;
}
