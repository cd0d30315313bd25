/*
 * The read-only commands that explain: explain (the sites of one line or
 * file, with the reasoning and the planned edits) and rules (what each rule
 * means, and the fixes it may plan).
 */

/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "analysis/kernel_api.h"
#include "cli/emit.h"
#include "cli/explain.h"
#include "parse/walk.h"
#include "util/interrupt.h"

/* ---- explain ------------------------------------------------------------- */

int explain_parse_location(const char *arg, char **out_file, unsigned *out_line, unsigned *out_col)
{
	unsigned nums[2] = {0, 0};
	size_t n_nums = 0;
	size_t end = strlen(arg);
	if (end && arg[end - 1] == ':')
		end--; /* "file.c:12:5:" copied from a diagnostic */
	while (n_nums < 2) {
		size_t start = end;
		while (start > 0 && arg[start - 1] >= '0' && arg[start - 1] <= '9')
			start--;
		if (start == end || start == 0 || arg[start - 1] != ':' || end - start > 9)
			break;
		nums[n_nums++] = (unsigned)strtoul(arg + start, NULL, 10);
		end = start - 1;
	}
	if (n_nums == 0 || end == 0)
		return -1;
	/* with two numbers the last one read is the line */
	*out_line = n_nums == 2 ? nums[1] : nums[0];
	*out_col = n_nums == 2 ? nums[0] : 0;
	if (*out_line == 0)
		return -1;
	*out_file = xstrndup(arg, end);
	return 0;
}

/* The text of line LINE (1-based) of SRC, without its newline; length in *out_len. */
static const char *source_line(const char *src, unsigned line, size_t *out_len)
{
	const char *p = src;
	for (unsigned l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return NULL;
	const char *nl = strchr(p, '\n');
	*out_len = nl ? (size_t)(nl - p) : strlen(p);
	return p;
}

/* Prints "  | text" and a caret under COLUMN (tabs kept, so it lines up). */
static void print_context(const char *src, unsigned line, unsigned column)
{
	size_t len;
	const char *text = src ? source_line(src, line, &len) : NULL;
	if (!text)
		return;
	printf("  context:\n    %5u | %.*s\n          | ", line, (int)len, text);
	for (unsigned c = 1; c < column && c <= len; c++)
		putchar(text[c - 1] == '\t' ? '\t' : ' ');
	puts("^");
}

static void print_lines(const char *label, const char *text)
{
	printf("  %s\n", label);
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("    %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

static void explain_finding(const struct finding *f, const char *src, const struct scan_result *r)
{
	printf("%s:%u:%u: %s %s: ", f->file, f->pos.line, f->pos.column, rule_code(f->rule), rule_name(f->rule));
	if (f->protected_site)
		printf("protected (not a finding)\n");
	else
		printf("flagged (%s, %s confidence)\n", severity_name(f->severity), confidence_name(f->confidence));
	printf("  message: %s\n", f->message);
	if (f->function)
		printf("  function: %s()\n", f->function);
	else
		printf("  function: (file scope)\n");
	print_context(src, f->pos.line, f->pos.column);
	if (f->evidence && *f->evidence)
		explain_print_reasons("why:", f->evidence);
	if (f->protected_site) {
		printf("  fix: none needed\n");
	} else if (f->fix == FIX_NONE) {
		printf("  fix: none (%s)\n", rule_report_only(f->rule) ?
		       "this rule only reports" : "not rewritten automatically");
	} else {
		explain_print_fix(f, src, src ? strlen(src) : 0);
	}
	if (f->fix_note)
		print_lines("fix note:", f->fix_note);
	const struct tree_array *t = f->array ? tree_array_find(&r->arrays, f->array, f->file) : NULL;
	if (t && t->plan && !f->protected_site && f->fix != FIX_NONE)
		print_lines("the whole conversion, every file:", t->plan);
}

/*
 * The tree index over ROOT for FILE's findings in R (the file scanned again
 * with it); a shared array's plan over the whole tree, unless ROOT is a git
 * work tree (GIT: its arrays' users may lie outside, as scan says).
 */
static int explain_tree(const struct cli_command *cmd, const char *root, bool git, const char *file,
			const struct scan_options *so, struct scan_result *r)
{
	struct strvec index = VEC_INIT;
	struct walk_options wo = {NULL, 0, &index};
	diagnostic_vec diags = VEC_INIT;
	char *rootp = (char *)root;
	int rc = walk_paths(&rootp, 1, &wo, &index, &diags);
	for (size_t i = 0; i < diags.len; i++) {
		fprintf(stderr, "preemptify %s: option '--context-root': %s\n", cmd->name, diags.items[i].message);
		diagnostic_release(&diags.items[i]);
	}
	vec_release(&diags);
	if (rc == 0) {
		/* the file as named, so its findings keep their path */
		bool named = false;
		const char *bare = strncmp(file, "./", 2) == 0 ? file + 2 : file;
		for (size_t i = 0; i < index.len && !named; i++) {
			const char *ix = strncmp(index.items[i], "./", 2) == 0 ? index.items[i] + 2 : index.items[i];
			if (strcmp(ix, bare) == 0) {
				free(index.items[i]); /* the same file: named as given */
				index.items[i] = xstrdup(file);
				named = true;
			}
		}
		if (!named)
			strvec_push(&index, file);
		char *one = (char *)file;
		struct scan_options o = *so;
		o.whole_tree = o.arrays_over_index = !git; /* a shared array's whole plan, as the tree's scan makes it */
		scan_with_tree(index.items, index.len, &one, 1, &o, r, NULL);
	}
	strvec_release(&index);
	return rc;
}

/*
 * The one argument of explain: FILE:LINE[:COL] into *FILE, *LINE, *COL, or
 * a regular FILE alone (*WHOLE: every site of the file). -1 (message
 * printed) otherwise.
 */
static int explain_target(const struct strvec *args, char **file, unsigned *line, unsigned *col,
			  bool *whole)
{
	struct stat st;
	*whole = false;
	if (args->len == 1 && explain_parse_location(args->items[0], file, line, col) < 0 &&
	    stat(args->items[0], &st) == 0 && S_ISREG(st.st_mode)) {
		free(*file);
		*file = xstrdup(args->items[0]);
		*line = *col = 0;
		*whole = true;
	} else if (args->len != 1 || !*file) {
		fprintf(stderr, "preemptify explain: expected one FILE or FILE:LINE argument (see 'preemptify explain --help')\n");
		return -1;
	}
	return 0;
}

/* What explain asks for: the sites of LINE (COL, when not 0) of FILE, or all of them (WHOLE). */
struct explain_query {
	const char *file;
	unsigned line, col;
	bool whole;
};

/* Prints the findings and diagnostics Q asks for; *SHOWN and *FLAGGED count them. */
static void explain_show(const struct explain_query *q, const struct scan_result *r, const char *src,
			 const struct config *cfg, size_t *shown, size_t *flagged)
{
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (strcmp(f->file, q->file) != 0) /* another file's part of a shared array's conversion */
			continue;
		if (!q->whole && (f->pos.line != q->line || (q->col && f->pos.column != q->col)))
			continue;
		if ((*shown)++)
			putchar('\n');
		explain_finding(f, src, r);
		const char *glob = cfg && !f->protected_site ? config_ignores(cfg, f) : NULL;
		if (glob)
			printf("  config: %s ignores %s in \"%s\" ([ignore-paths]); scan does not report it\n",
			       cfg->path, rule_code(f->rule), glob);
		*flagged += !f->protected_site && !glob;
	}
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		if (q->whole ? d->line != 0 : d->line == q->line)
			printf("%s%s:%u:%u: %s\n", (*shown)++ ? "\n" : "", d->file, d->line, d->column, d->message);
	}
}

/* Does Q show a flagged finding whose verdict the callers in other files could change? */
static bool shows_tree_context(const struct explain_query *q, const struct scan_result *r)
{
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (!f->protected_site && rule_has(f->rule, PROP_TREE_CONTEXT) && strcmp(f->file, q->file) == 0 &&
		    (q->whole || (f->pos.line == q->line && (!q->col || f->pos.column == q->col))))
			return true;
	}
	return false;
}

/* Nothing to show for Q: says so, with the lines of the file that have sites. */
static void explain_none(const struct explain_query *q, const struct scan_result *r)
{
	if (q->whole) {
		printf("%s: no candidate site in this file\n", q->file);
		return;
	}
	printf("%s:%u: no candidate site on this line", q->file, q->line);
	const char *sep = "; sites in this file are on lines ";
	unsigned last = 0, listed = 0;
	for (size_t i = 0; i < r->findings.len && listed < 12; i++) {
		unsigned l = r->findings.items[i].pos.line;
		if (l == last || strcmp(r->findings.items[i].file, q->file) != 0)
			continue;
		printf("%s%u", sep, l);
		sep = ", ";
		last = l;
		listed++;
	}
	putchar('\n');
}

/*
 * Does LINE lie past the end of FILE? Says so on stderr (naming the file
 * and its length) before a tree is indexed for nothing. A file that cannot
 * be read is left to the scan, which names it.
 */
static bool line_past_end(const char *file, unsigned line)
{
	char *text = NULL;
	size_t len = 0;
	if (line == 0 || read_file(file, &text, &len) < 0) {
		error_clear();
		return false;
	}
	unsigned lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	lines += len && text[len - 1] != '\n';
	free(text);
	if (line <= lines)
		return false;
	fprintf(stderr, "preemptify explain: %s:%u: the file has %u line%s\n", file, line, lines, lines == 1 ? "" : "s");
	return true;
}

/* The scan options of explain from A (and --context-root's want), the user's sleepers set. */
static int explain_options(const struct cli_command *cmd, const struct scan_cli *a, bool tree,
			   struct scan_options *so)
{
	if (scan_cli_rules_mask(cmd, &a->ignore, &so->rules) < 0)
		return -1;
	kernel_api_reset_sleepers();
	/* what the tree says of itself: architectures without CONFIG_PREEMPT, a spinning BKL */
	kernel_api_read_tree(a->context_root ? a->context_root : a->tree_root);
	for (size_t i = 0; i < a->may_sleep.len; i++)
		kernel_api_add_sleeper(a->may_sleep.items[i]);
	so->target = a->target == TARGET_MODERN ? TARGET_MODERN : TARGET_26;
	so->strict_stats = a->strict_stats;
	so->modernize = a->modernize;
	so->fix_sleep = a->fix_sleep;
	so->verbose = true;
	so->jobs = tree ? 0 : 1;
	so->want = tree;
	return 0;
}

int cmd_explain(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("explain");
	struct scan_cli a = SCAN_CLI_INIT; /* the options explain shares with scan, and the config */
	const char *context_root = NULL;
	bool quiet = false; /* explain writes nothing but errors on stderr anyway */
	const struct cli_option opts[] = {
		{"ignore", 0, OPT_LIST, &a.ignore, "RULES", "skip rules, by code or name"},
		{"context-root", 0, OPT_STRING, &context_root, "DIR",
		 "follow the callers of the file's functions through the tree DIR (default: the kernel tree above FILE)"},
		{"no-tree", 0, OPT_FLAG, &a.no_tree, NULL, "the file alone: callers in other files unknown"},
		{"config", 0, OPT_STRING, &a.config, "FILE", "read FILE instead of the nearest " CONFIG_FILE_NAME},
		{"no-config", 0, OPT_FLAG, &a.no_config, NULL, "read no " CONFIG_FILE_NAME},
		{"cache-dir", 0, OPT_STRING, &a.cache_dir, "DIR",
		 "keep the result cache in DIR (default: $XDG_CACHE_HOME/preemptify, else ~/.cache/preemptify)"},
		{"no-cache", 0, OPT_FLAG, &a.no_cache, NULL, "neither read nor write the result cache"},
		CLI_QUIET_OPTION(&quiet),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct strvec args = {0};
	struct scan_result r = SCAN_RESULT_INIT;
	struct scan_options so = SCAN_OPTIONS_INIT;
	char *file = NULL, *src = NULL;
	size_t src_len = 0;
	struct explain_query q = {NULL, 0, 0, false};
	int rc = EXIT_USAGE;
	int p = cli_parse(cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (explain_target(&args, &file, &q.line, &q.col, &q.whole) < 0)
		goto done;
	q.file = file;
	if (!q.whole && line_past_end(file, q.line))
		goto done;
	struct strvec named = {&file, 1, 1};
	a.context_root = context_root;
	if (scan_cli_config(cmd, &a, &named) != EXIT_OK)
		goto done;
	if (!context_root)
		context_root = a.tree_root; /* the kernel tree found above FILE, unless --no-tree */
	if (explain_options(cmd, &a, context_root != NULL, &so) < 0)
		goto done;
	if (scan_files(&file, 1, &so, &r) > 0) {
		for (size_t i = 0; i < r.diagnostics.len; i++)
			fprintf(stderr, "preemptify explain: %s\n", r.diagnostics.items[i].message);
		rc = EXIT_FAILED;
		goto done;
	}
	a.progress = cli_progress(quiet); /* the tree's callers take a while on a whole tree */
	progress_phase(a.progress, "following callers across files", 0, false);
	int tree_rc = context_root ? explain_tree(cmd, context_root, a.tree_git, file, &so, &r) : 0;
	progress_clear(a.progress);
	if (tree_rc < 0) {
		rc = EXIT_FAILED;
		goto done;
	}
	if (read_file(file, &src, &src_len) < 0)
		src = NULL; /* scanned a moment ago; without the text, no context lines */
	size_t shown = 0, flagged = 0;
	explain_show(&q, &r, src, a.cfg, &shown, &flagged);
	if (!shown)
		explain_none(&q, &r);
	if (flagged && !context_root && shows_tree_context(&q, &r))
		printf("\n(callers in other files were not followed: %s)\n",
		       a.no_tree ? "--no-tree" : "no kernel tree or git work tree above the file; --context-root DIR names one");
	rc = EXIT_OK; /* explained: the findings are the answer, not a failure */
done:
	free(file);
	free(src);
	strvec_release(&args);
	progress_free(a.progress);
	scan_cli_release(&a);
	scan_result_release(&r);
	return rc;
}

/* ---- rules --------------------------------------------------------------- */

/* Prints TEXT wrapped at WIDTH columns, each line indented by INDENT. */
static void print_wrapped(const char *text, const char *indent, size_t width)
{
	struct buf b = BUF_INIT;
	buf_add_wrapped(&b, text, indent, indent, width);
	fputs(buf_cstr(&b), stdout);
	buf_release(&b);
}

int cmd_rules(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("rules");
	bool quiet = false; /* rules writes nothing but errors on stderr anyway */
	const struct cli_option opts[] = {CLI_QUIET_OPTION(&quiet), {NULL, 0, 0, NULL, NULL, NULL}};
	struct strvec args = {0};
	unsigned want = 0;
	int rc = EXIT_USAGE;
	int p = cli_parse(cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	for (size_t i = 0; i < args.len; i++) {
		int r = rule_parse(args.items[i]);
		if (r < 0) {
			fprintf(stderr, "preemptify rules: unknown rule '%s' (%s-%s or a rule name)\n", args.items[i],
				rule_code(0), rule_code(RULE_COUNT - 1));
			goto done;
		}
		want |= 1u << r;
	}
	if (!want)
		want = (1u << RULE_COUNT) - 1;
	bool first = true;
	for (int k = 0; k < RULE_COUNT; k++) {
		enum rule_id r = (enum rule_id)k;
		if (!(want & (1u << k)))
			continue;
		if (!first)
			putchar('\n');
		first = false;
		printf("%s %s\n    %s\n    fixes: ", rule_code(r), rule_name(r), rule_summary(r));
		const enum fix_kind *fixes = rule_fixes(r);
		if (fixes[0] == FIX_NONE)
			fputs("none (report only)", stdout);
		for (int j = 0; j < RULE_MAX_FIXES && fixes[j] != FIX_NONE; j++)
			printf("%s%s", j ? ", " : "", fix_name(fixes[j]));
		puts("\n");
		print_wrapped(rule_help(r), "    ", 76);
	}
	rc = EXIT_OK;
done:
	strvec_release(&args);
	return rc;
}
