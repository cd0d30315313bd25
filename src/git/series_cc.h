/* Series: the addresses of each patch (--to-cmd, --cc-cmd, --cc-from-maintainers). Internal to src/git. */
#ifndef PREEMPTIFY_SERIES_CC_H
#define PREEMPTIFY_SERIES_CC_H

#include "util/util.h"

struct maint;
struct series_cc {
	VEC(struct maint) entries; /* MAINTAINERS entries with F: patterns */
	bool loaded;
};
#define SERIES_CC_INIT {VEC_INIT, false}

/* Reads WORKDIR/MAINTAINERS (WORKDIR ends in '/'). 0, or -1 with the error slot set. */
int series_cc_load(struct series_cc *c, const char *workdir);

/* Appends to CC (once each) the M: and L: addresses of the entries whose F: patterns cover one of PATHS. */
void series_cc_maintainers(const struct series_cc *c, const char *const *paths, size_t n, struct strvec *cc);

/*
 * Runs CMD (split on blanks, no shell) with the patch file PATCH as its last
 * argument in WORKDIR, and appends each line of its output holding an '@'
 * to OUT (once each). 0, or -1 with the error slot set (it failed).
 */
int series_cc_run(const char *cmd, const char *patch, const char *workdir, struct strvec *out);

void series_cc_release(struct series_cc *c);

#endif
