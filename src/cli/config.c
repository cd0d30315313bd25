/* .preemptify.toml: a small subset of TOML, read by hand (see config.h for why). */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include "cli/config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where the reader is: the text left, its line, the file (for messages). */
struct cursor {
	const char *p;
	size_t line;
	const char *path;
};

enum value_type { VAL_STRING, VAL_LIST, VAL_BOOL };

struct value {
	enum value_type type;
	char *s;
	struct strvec list;
	bool b;
};

static int syntax(const struct cursor *c, const char *what)
{
	return error_set("%s:%zu: %s", c->path, c->line, what);
}

static void skip_blanks(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')
		c->p++;
}

/* Blanks, newlines and comments: what may come between the items of a list. */
static void skip_space(struct cursor *c)
{
	for (;;) {
		skip_blanks(c);
		if (*c->p == '#')
			while (*c->p && *c->p != '\n')
				c->p++;
		if (*c->p != '\n')
			return;
		c->p++;
		c->line++;
	}
}

/* The end of a line: blanks, perhaps a comment, then a newline or the end. */
static int end_of_line(struct cursor *c)
{
	skip_blanks(c);
	if (*c->p == '#')
		while (*c->p && *c->p != '\n')
			c->p++;
	if (*c->p && *c->p != '\n')
		return syntax(c, "expected the end of the line");
	if (*c->p)
		c->p++, c->line++;
	return 0;
}

/* A "basic" string (escapes \" \\ \t \n) or a 'literal' one, on one line. */
static int read_string(struct cursor *c, char **out)
{
	char quote = *c->p++;
	struct buf b = BUF_INIT;
	for (; *c->p != quote; c->p++) {
		if (!*c->p || *c->p == '\n') {
			buf_release(&b);
			return syntax(c, "unterminated string");
		}
		if (quote == '"' && *c->p == '\\') {
			static const char from[] = "\"\\tn", to[] = "\"\\\t\n";
			const char *k = c->p[1] ? strchr(from, c->p[1]) : NULL;
			if (!k) {
				buf_release(&b);
				return syntax(c, "unsupported escape in a string (\\\" \\\\ \\t \\n)");
			}
			buf_putc(&b, to[k - from]);
			c->p++;
			continue;
		}
		buf_putc(&b, *c->p);
	}
	c->p++;
	*out = xstrdup(buf_cstr(&b));
	buf_release(&b);
	return 0;
}

static bool is_bare(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '-';
}

/* A bare key (letters, digits, _ and -) or a quoted one. */
static int read_key(struct cursor *c, char **out)
{
	if (*c->p == '"' || *c->p == '\'')
		return read_string(c, out);
	const char *start = c->p;
	while (is_bare(*c->p))
		c->p++;
	if (c->p == start)
		return syntax(c, "expected a key");
	*out = xstrndup(start, (size_t)(c->p - start));
	return 0;
}

/* A string, a list of strings (over several lines, a trailing comma allowed) or true/false. */
static int read_value(struct cursor *c, struct value *v)
{
	if (*c->p == '"' || *c->p == '\'') {
		v->type = VAL_STRING;
		return read_string(c, &v->s);
	}
	if (strncmp(c->p, "true", 4) == 0 || strncmp(c->p, "false", 5) == 0) {
		v->type = VAL_BOOL;
		v->b = *c->p == 't';
		c->p += v->b ? 4 : 5;
		return 0;
	}
	if (*c->p != '[')
		return syntax(c, "expected a value: \"string\", [\"list\", ...], true or false");
	v->type = VAL_LIST;
	c->p++;
	for (;;) {
		skip_space(c);
		if (*c->p == ']')
			break;
		if (*c->p != '"' && *c->p != '\'')
			return syntax(c, "expected a string in the list");
		char *s;
		if (read_string(c, &s) < 0)
			return -1;
		vec_push(&v->list, s);
		skip_space(c);
		if (*c->p == ',')
			c->p++;
		else if (*c->p != ']')
			return syntax(c, "expected ',' or ']' in the list");
	}
	c->p++;
	return 0;
}

static const char *const type_names[] = {"a string", "a list of strings", "true or false"};

static int want_type(const struct cursor *c, const char *key, const struct value *v, enum value_type t)
{
	if (v->type == t)
		return 0;
	return error_set("%s:%zu: '%s' must be %s", c->path, c->line, key, type_names[t]);
}

/* The rules named in LIST as a mask of enum rule_id bits; -1 for an unknown one. */
static int rules_of(const struct cursor *c, const struct strvec *list, unsigned *out)
{
	*out = 0;
	for (size_t i = 0; i < list->len; i++) {
		int r = rule_parse(list->items[i]);
		if (r < 0)
			return error_set("%s:%zu: unknown rule '%s' (see 'preemptify rules')", c->path, c->line,
					 list->items[i]);
		*out |= 1u << r;
	}
	return 0;
}

static void take_list(struct strvec *to, struct value *v)
{
	for (size_t i = 0; i < v->list.len; i++)
		vec_push(to, v->list.items[i]);
	v->list.len = 0;
}

/* The top-level keys, spelled with `_`; `-` is read as `_` in every key and section name. */
static const char *const top_keys[] = {"exclude", "ignore", "may_sleep", "target", "baseline", "strict_stats"};

/* NAME with every `-` read as `_` (`may-sleep` is `may_sleep`, `[ignore_paths]` is `[ignore-paths]`). */
static void underscores(char *name)
{
	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';
}

/* The error for a key that is none of ours: the nearest one when it looks like a typo of it. */
static int unknown_key(const struct cursor *c, const char *key)
{
	char *name = xstrdup(key);
	underscores(name);
	const char *near = nearest_word(name, strlen(name), top_keys, ARRAY_SIZE(top_keys));
	free(name);
	if (near)
		return error_set("%s:%zu: unknown key '%s'; did you mean '%s'?", c->path, c->line, key, near);
	return error_set("%s:%zu: unknown key '%s' (exclude, ignore, may_sleep, target, baseline, "
			 "strict_stats, or a [ignore-paths] table)", c->path, c->line, key);
}

/*
 * Applies top-level KEY = V (the cursor is on the line after it, so the line
 * is c->line - 1): KEY as SPELLED in the file, with `_` for `-`.
 */
static int set_top(struct config *cfg, const struct cursor *c, const char *key, const char *spelled,
		   struct value *v)
{
	if (strcmp(key, "exclude") == 0 || strcmp(key, "may_sleep") == 0 || strcmp(key, "ignore") == 0) {
		if (want_type(c, spelled, v, VAL_LIST) < 0)
			return -1;
		unsigned mask;
		if (key[0] == 'i' && rules_of(c, &v->list, &mask) < 0)
			return -1;
		take_list(key[0] == 'e' ? &cfg->exclude : key[0] == 'i' ? &cfg->ignore : &cfg->may_sleep, v);
		return 0;
	}
	if (strcmp(key, "target") == 0) {
		if (want_type(c, spelled, v, VAL_STRING) < 0)
			return -1;
		cfg->target = target_parse(v->s);
		if (cfg->target == TARGET_UNSET)
			return error_set("%s:%zu: 'target' must be \"2.6\" or \"modern\", got \"%s\"", c->path,
					 c->line, v->s);
		return 0;
	}
	if (strcmp(key, "baseline") == 0) {
		if (want_type(c, spelled, v, VAL_STRING) < 0)
			return -1;
		free(cfg->baseline);
		cfg->baseline = v->s[0] == '/' || !cfg->dir ? xstrdup(v->s) : xasprintf("%s/%s", cfg->dir, v->s);
		return 0;
	}
	if (strcmp(key, "strict_stats") == 0) {
		if (want_type(c, spelled, v, VAL_BOOL) < 0)
			return -1;
		cfg->strict_stats = v->b;
		return 0;
	}
	return unknown_key(c, spelled);
}

/* A [section] header; only [ignore-paths] is known. *OUT_PATHS: whether it is that one. */
static int read_section(struct cursor *c, bool *out_paths)
{
	c->p++;
	if (*c->p == '[')
		return syntax(c, "arrays of tables ([[...]]) are not supported; use [ignore-paths]");
	skip_blanks(c);
	char *name = NULL;
	if (read_key(c, &name) < 0)
		return -1;
	skip_blanks(c);
	int rc = 0;
	static const char *const paths = "ignore_paths";
	char *spelled = xstrdup(name);
	underscores(name);
	if (*c->p != ']')
		rc = syntax(c, "expected ']' after the section name");
	else if (strcmp(name, "ignore_paths") != 0 && nearest_word(name, strlen(name), &paths, 1))
		rc = error_set("%s:%zu: unknown section [%s]; did you mean [ignore-paths]?", c->path, c->line,
			       spelled);
	else if (strcmp(name, "ignore_paths") != 0)
		rc = error_set("%s:%zu: unknown section [%s] (only [ignore-paths])", c->path, c->line, spelled);
	free(spelled);
	c->p++;
	*out_paths = true;
	free(name);
	return rc < 0 ? rc : end_of_line(c);
}

/* One `key = value` line, applied to the top level or to [ignore-paths]. */
static int read_pair(struct config *cfg, struct cursor *c, bool in_paths)
{
	char *key = NULL;
	struct value v = {VAL_STRING, NULL, STRVEC_INIT, false};
	int rc = -1;
	if (read_key(c, &key) < 0)
		goto done;
	skip_blanks(c);
	if (*c->p != '=') {
		syntax(c, "expected '=' after the key");
		goto done;
	}
	c->p++;
	skip_blanks(c);
	struct cursor at = *c; /* errors about the value name the line it starts on */
	if (read_value(c, &v) < 0 || end_of_line(c) < 0)
		goto done;
	if (!in_paths) {
		char *name = xstrdup(key);
		underscores(name);
		rc = set_top(cfg, &at, name, key, &v);
		free(name);
		goto done;
	}
	unsigned mask;
	if (want_type(&at, key, &v, VAL_LIST) < 0 || rules_of(&at, &v.list, &mask) < 0)
		goto done;
	vec_push(&cfg->ignore_globs, key);
	key = NULL;
	vec_push(&cfg->ignore_masks, mask);
	rc = 0;
done:
	free(key);
	free(v.s);
	strvec_release(&v.list);
	return rc;
}

int config_load(struct config *out, const char *path)
{
	char *text = NULL;
	size_t len;
	int rc = -1;
	out->path = xstrdup(path);
	const char *slash = strrchr(path, '/');
	char *d = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	out->dir = realpath(d, NULL);
	free(d);
	if (read_file_max(path, 1u << 20, &text, &len) < 0)
		goto done;
	if (memchr(text, '\0', len)) {
		error_set("%s:1: not a text file", path);
		goto done;
	}
	struct cursor c = {text, 1, path};
	bool in_paths = false;
	for (;;) {
		skip_space(&c);
		if (!*c.p)
			break;
		if (*c.p == '[' ? read_section(&c, &in_paths) < 0 : read_pair(out, &c, in_paths) < 0)
			goto done;
	}
	rc = 0;
done:
	free(text);
	return rc;
}

void config_find(char **out, const char *start)
{
	*out = NULL;
	char *dir = realpath(start, NULL);
	struct stat st;
	if (!dir)
		return;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		*strrchr(dir, '/') = '\0'; /* a file: from its directory (realpath is absolute) */
	for (;;) {
		char *p = xasprintf("%s/%s", dir, CONFIG_FILE_NAME);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			*out = p;
			break;
		}
		free(p);
		char *slash = strrchr(dir, '/');
		if (!slash || dir[1] == '\0')
			break; /* the root */
		slash[slash == dir ? 1 : 0] = '\0';
	}
	free(dir);
}

/* FILE relative to DIR when it lies under it, else NULL. */
static char *relative_to(const char *dir, const char *file)
{
	char *real = dir ? realpath(file, NULL) : NULL;
	size_t n = dir ? strlen(dir) : 0;
	char *rel = NULL;
	if (real && strncmp(real, dir, n) == 0 && (real[n] == '/' || n == 1))
		rel = xstrdup(real + (n == 1 ? 1 : n + 1));
	free(real);
	return rel;
}

/* Whether the [ignore-paths] key GLOB names FILE (REL: FILE relative to the config's directory, or NULL). */
static bool glob_names(const char *glob, const char *file, const char *rel)
{
	return path_glob_match(glob, file) || (rel && path_glob_match(glob, rel));
}

/* The rules (bits of enum rule_id) that C's [ignore-paths] ignores in FILE. */
static unsigned ignore_mask(const struct config *c, const char *file)
{
	unsigned mask = 0;
	char *rel = relative_to(c->dir, file);
	for (size_t k = 0; k < c->ignore_globs.len; k++)
		if (glob_names(c->ignore_globs.items[k], file, rel))
			mask |= c->ignore_masks.items[k];
	free(rel);
	return mask;
}

const char *config_ignores(const struct config *c, const struct finding *f)
{
	const char *glob = NULL;
	char *rel = relative_to(c->dir, f->file);
	for (size_t k = 0; k < c->ignore_globs.len && !glob; k++)
		if ((c->ignore_masks.items[k] & (1u << f->rule)) && glob_names(c->ignore_globs.items[k], f->file, rel))
			glob = c->ignore_globs.items[k];
	free(rel);
	return glob;
}

size_t config_filter(const struct config *c, struct scan_result *r)
{
	size_t kept = 0, dropped = 0;
	char *file = NULL; /* a copy: the finding named it may be released */
	unsigned mask = 0;
	for (size_t i = 0; i < r->findings.len; i++) {
		struct finding *f = &r->findings.items[i];
		if (c->ignore_globs.len && (!file || strcmp(file, f->file) != 0)) {
			free(file);
			file = xstrdup(f->file);
			mask = ignore_mask(c, file);
		}
		if (c->ignore_globs.len && !f->protected_site && (mask & (1u << f->rule))) {
			r->stats.per_rule[f->rule]--;
			finding_release(f);
			dropped++;
		} else {
			r->findings.items[kept++] = *f;
		}
	}
	r->findings.len = kept;
	free(file);
	return dropped;
}

void config_release(struct config *c)
{
	free(c->path);
	free(c->dir);
	strvec_release(&c->exclude);
	strvec_release(&c->ignore);
	strvec_release(&c->may_sleep);
	free(c->baseline);
	strvec_release(&c->ignore_globs);
	vec_release(&c->ignore_masks);
	*c = (struct config)CONFIG_INIT;
}
