/* Files embedded at build time: query files (grammars) and semantic patches (cocci). */
#ifndef PREEMPTIFY_EMBEDDED_H
#define PREEMPTIFY_EMBEDDED_H
#include <stddef.h>

struct embedded_file {
	const char *name; /* base name, e.g. "sites.scm" */
	const char *data; /* NUL-terminated contents */
	size_t len;
};

/* Terminated by an entry whose name is NULL. */
extern const struct embedded_file embedded_files[];

/* The embedded file called NAME, or NULL. */
const struct embedded_file *embedded_find(const char *name);

#endif
