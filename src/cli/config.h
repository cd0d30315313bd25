/*
 * .preemptify.toml: a project's default options, in a small subset of TOML
 * (docs/config.md): `key = "string"`, `key = ["list", "of", "strings"]`,
 * `key = true|false`, `[ignore-paths]` with `"glob" = ["RULE", ...]`, and
 * `#` comments. No TOML library for C is packaged in Debian (only C++
 * ones), so this file reads the subset itself.
 */
#ifndef PREEMPTIFY_CONFIG_H
#define PREEMPTIFY_CONFIG_H

#include "pipeline/scan.h"

#define CONFIG_FILE_NAME ".preemptify.toml"

struct config {
	char *path;              /* the file read */
	char *dir;               /* its directory, resolved (NULL if it cannot be) */
	struct strvec exclude;   /* globs, as --exclude */
	struct strvec ignore;    /* rule codes or names, checked */
	struct strvec may_sleep; /* functions, as --may-sleep */
	enum target target;      /* TARGET_UNSET when not set */
	char *baseline;          /* resolved against dir; NULL when not set */
	int strict_stats;        /* -1 not set, else 0 or 1 */
	struct strvec ignore_globs;  /* [ignore-paths] keys */
	VEC(unsigned) ignore_masks;  /* aligned: the rules (bits of enum rule_id) ignored there */
};
#define CONFIG_INIT {NULL, NULL, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT, TARGET_UNSET, NULL, -1, STRVEC_INIT, VEC_INIT}

/*
 * Reads PATH into OUT (initialised with CONFIG_INIT). 0, or -1 with the
 * error slot set to "PATH:LINE: what is wrong" (or "PATH: reason" when it
 * cannot be read). OUT is filled as far as it was read either way; free it
 * with config_release().
 */
int config_load(struct config *out, const char *path);

/*
 * The nearest .preemptify.toml at or above START (a file or directory),
 * walking up to the file system root: a new string in *OUT, or NULL when
 * there is none (or START cannot be resolved).
 */
void config_find(char **out, const char *start);

/*
 * Drops from R the flagged findings that C's [ignore-paths] ignores; a
 * glob is matched against the finding's path relative to the config's
 * directory and as given (each path suffix after a '/', as --exclude).
 * Returns how many were dropped.
 */
size_t config_filter(const struct config *c, struct scan_result *r);

/*
 * The [ignore-paths] key (a glob) under which C ignores F's rule in F's
 * file, or NULL when none does (explain names it).
 */
const char *config_ignores(const struct config *c, const struct finding *f);

void config_release(struct config *c);

#endif
