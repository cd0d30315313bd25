/*
 * The read-only commands: scan (report), explain (one line, with the
 * reasoning and the planned edits) and rules (what each rule means), plus
 * scan_cli_run(), the walk+scan step every scanning command shares.
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
#include "cli/baseline.h"
#include "cli/emit.h"
#include "git/repo.h"
#include "util/interrupt.h"
#include "parse/walk.h"
#include "util/writefile.h"

#define MAX_JOBS 1024

void scan_cli_release(struct scan_cli *a)
{
	strvec_release(&a->exclude);
	strvec_release(&a->ignore);
	strvec_release(&a->may_sleep);
	if (a->cfg)
		config_release(a->cfg);
	free(a->cfg);
	a->cfg = NULL;
}

int scan_cli_config(const struct cli_command *cmd, struct scan_cli *a, const struct strvec *paths,
		    const char **target)
{
	char *path = NULL;
	if (a->no_config)
		return EXIT_OK;
	if (a->config)
		path = xstrdup(a->config);
	else if (paths->len)
		config_find(&path, paths->items[0]);
	if (!path)
		return EXIT_OK;
	struct config *cfg = a->cfg = xcalloc(1, sizeof *cfg);
	*cfg = (struct config)CONFIG_INIT;
	int rc = config_load(cfg, path);
	free(path);
	if (rc < 0) {
		fprintf(stderr, "preemptify %s: %s\n", cmd->name, error_last());
		error_clear();
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < cfg->exclude.len; i++)
		strvec_push(&a->exclude, cfg->exclude.items[i]);
	for (size_t i = 0; i < cfg->ignore.len; i++)
		strvec_push(&a->ignore, cfg->ignore.items[i]);
	for (size_t i = 0; i < cfg->may_sleep.len; i++)
		strvec_push(&a->may_sleep, cfg->may_sleep.items[i]);
	if (!a->baseline)
		a->baseline = cfg->baseline;
	if (!a->strict_stats && cfg->strict_stats == 1)
		a->strict_stats = true;
	if (cfg->target && target && !*target)
		*target = cfg->target;
	if (cfg->target && !target) /* scan plans the fixes it shows for that target */
		a->modern = strcmp(cfg->target, "modern") == 0;
	return EXIT_OK;
}

/* The enabled-rules mask from --ignore; -1 (message printed) for an unknown rule. */
static int rules_mask(const struct cli_command *cmd, const struct strvec *ignore, unsigned *out)
{
	*out = (1u << RULE_COUNT) - 1;
	for (size_t i = 0; i < ignore->len; i++) {
		int r = rule_parse(ignore->items[i]);
		if (r < 0) {
			fprintf(stderr, "preemptify %s: option '--ignore': unknown rule '%s' "
				"(see 'preemptify rules')\n", cmd->name, ignore->items[i]);
			return -1;
		}
		*out &= ~(1u << r);
	}
	return 0;
}

int scan_cli_options(const struct cli_command *cmd, const struct scan_cli *a,
		     struct scan_options *out)
{
	struct scan_options so = SCAN_OPTIONS_INIT;
	if (rules_mask(cmd, &a->ignore, &so.rules) < 0)
		return -1;
	so.verbose = a->verbose;
	so.jobs = a->jobs;
	so.no_prefilter = a->no_prefilter;
	so.modern = a->modern;
	so.strict_stats = a->strict_stats;
	so.no_verify = a->no_plans;
	so.want = !a->no_tree;
	*out = so;
	return 0;
}

struct spelled {
	char *real;
	const char *path;
};

static int spelled_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spelled *)a)->real, ((const struct spelled *)b)->real);
}

/*
 * The index walked from --context-root spells a file its own way
 * (`./net/core/dev.c` for `--context-root .`); where it is a file scanned
 * (`net/core/dev.c`), it takes the scanned spelling, so that one file is
 * one file to the analysis (its uses of a shared array, its findings).
 */
static void index_spell_as_scanned(struct strvec *index, const struct strvec *files)
{
	struct spelled *sc = xmalloc((files->len ? files->len : 1) * sizeof *sc);
	size_t n = 0;
	for (size_t i = 0; i < files->len; i++) {
		char *real = realpath(files->items[i], NULL);
		if (real)
			sc[n++] = (struct spelled){real, files->items[i]};
	}
	qsort(sc, n, sizeof *sc, spelled_cmp);
	for (size_t i = 0; n && i < index->len; i++) {
		struct spelled key = {realpath(index->items[i], NULL), NULL};
		const struct spelled *hit = key.real ? bsearch(&key, sc, n, sizeof *sc, spelled_cmp) : NULL;
		if (hit && strcmp(hit->path, index->items[i]) != 0) {
			free(index->items[i]);
			index->items[i] = xstrdup(hit->path);
		}
		free(key.real);
	}
	for (size_t i = 0; i < n; i++)
		free(sc[i].real);
	free(sc);
}

/*
 * The tree index over --context-root DIR (walked with the same excludes),
 * or over the files scanned; then the files it changes scanned again.
 */
static int scan_tree(const struct cli_command *cmd, const struct scan_cli *a, const struct strvec *files,
		     const struct strvec *asm_files, const struct scan_options *so, struct scan_result *out)
{
	struct strvec index = VEC_INIT;
	if (!a->context_root) {
		for (size_t i = 0; i < files->len; i++)
			vec_push(&index, files->items[i]);
		for (size_t i = 0; i < asm_files->len; i++)
			vec_push(&index, asm_files->items[i]);
		/* the scan hashed the files' identifiers (so->ids, aligned with FILES) */
		struct tree_ids *ids = xcalloc(index.len ? index.len : 1, sizeof *ids);
		for (size_t i = 0; so->ids && i < files->len; i++)
			ids[i] = so->ids[i], so->ids[i].ids = NULL;
		scan_with_tree(index.items, index.len, index.items, files->len, so, out, ids);
		for (size_t i = 0; i < index.len; i++)
			free(ids[i].ids);
		free(ids);
		vec_release(&index); /* the strings are FILES' and ASM_FILES' */
		return 0;
	}
	struct walk_options wo = {a->exclude.items, a->exclude.len, NULL};
	wo.assembly = &index;
	diagnostic_vec diags = VEC_INIT;
	char *root = (char *)a->context_root;
	int rc = walk_paths(&root, 1, &wo, &index, &diags);
	if (diags.len)
		progress_clear(a->progress);
	for (size_t i = 0; i < diags.len; i++) {
		fprintf(stderr, "preemptify %s: option '--context-root': %s\n", cmd->name, diags.items[i].message);
		diagnostic_release(&diags.items[i]);
	}
	vec_release(&diags);
	if (rc == 0) {
		index_spell_as_scanned(&index, files);
		scan_with_tree(index.items, index.len, files->items, files->len, so, out, NULL);
	}
	strvec_release(&index);
	return rc;
}

/* Is PATH a kernel tree's root (a directory holding include/linux/)? */
static bool is_tree_root(const char *path)
{
	struct stat st;
	char *p = xasprintf("%s/include/linux", path);
	bool yes = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return yes;
}

/* --since: the repository of the PATHs and the files changed since REV. */
struct since {
	struct repo *repo;
	struct strvec changed; /* repository-relative, sorted */
	char *last;            /* one-entry cache of is_changed() */
	bool last_changed;
};
#define SINCE_INIT {NULL, STRVEC_INIT, NULL, false}

static void since_release(struct since *s)
{
	repo_free(s->repo);
	strvec_release(&s->changed);
	free(s->last);
}

/* "ARRAY\tFILE\tLINE" of every finding that is part of a shared array's conversion, into PARTS. */
static void arrays_parts(const struct scan_result *r, struct strvec *parts)
{
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->array && !f->protected_site)
			strvec_pushf(parts, "%s\t%s\t%u\t%d", f->array, f->file, f->pos.line, (int)f->rule);
	}
}

/*
 * A shared array converts in all its files or none: when the config or the
 * baseline dropped one of its parts (PARTS, from before), the others are
 * reported but not fixed.
 */
static void arrays_keep_whole(struct scan_result *r, const struct strvec *parts)
{
	for (size_t p = 0; p < parts->len; p++) {
		bool kept = false;
		for (size_t i = 0; i < r->findings.len && !kept; i++) {
			const struct finding *f = &r->findings.items[i];
			char *key = f->array ? xasprintf("%s\t%s\t%u\t%d", f->array, f->file, f->pos.line, (int)f->rule)
					     : NULL;
			kept = key && strcmp(key, parts->items[p]) == 0;
			free(key);
		}
		if (kept)
			continue;
		size_t nl = strcspn(parts->items[p], "\t");
		const char *where = parts->items[p] + nl + 1;
		for (size_t i = 0; i < r->findings.len; i++) {
			struct finding *f = &r->findings.items[i];
			if (!f->array || strlen(f->array) != nl || strncmp(f->array, parts->items[p], nl) != 0 ||
			    f->fix == FIX_NONE)
				continue;
			char *note = xasprintf("not converted: a part of the conversion of %s is ignored (config or "
					       "baseline) at %.*s, so none of its files converts", f->array,
					       (int)strcspn(where, "\t"), where);
			finding_unfixable(f, note);
		}
	}
}

/* Opens the repository holding PATH and lists what changed since REV; EXIT_USAGE (printed) if it cannot. */
static int since_load(const struct cli_command *cmd, const char *rev, const char *path, struct since *s)
{
	if (repo_open(&s->repo, path) < 0) {
		fprintf(stderr, "preemptify %s: option '--since' needs a git repository: %s\n", cmd->name, error_last());
		return EXIT_USAGE;
	}
	int e = repo_changed_since(s->repo, rev, &s->changed);
	if (e < 0) {
		fprintf(stderr, "preemptify %s: option '--since': %s\n", cmd->name, error_last());
		return e == REPO_EUSAGE ? EXIT_USAGE : EXIT_FAILED;
	}
	return EXIT_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Did the file PATH (as walked) change since REV? Outside the repository: no. */
static bool is_changed(struct since *s, const char *path)
{
	if (s->last && strcmp(s->last, path) == 0)
		return s->last_changed;
	char *rel = NULL;
	bool yes = repo_relpath(s->repo, path, &rel) == 0 &&
		   bsearch(&rel, s->changed.items, s->changed.len, sizeof *s->changed.items, cmp_str);
	free(rel);
	free(s->last);
	s->last = xstrdup(path);
	s->last_changed = yes;
	return yes;
}

/*
 * Drops from OUT the findings and diagnostics of the files that did not
 * change, but keeps every finding of a per-CPU array (finding.array) one
 * kept finding converts: such an array is converted in all its files or none.
 */
static void since_filter(struct since *s, struct scan_result *out)
{
	struct strvec arrays = STRVEC_INIT;
	bool *keep = xcalloc(out->findings.len + 1, sizeof *keep);
	for (size_t i = 0; i < out->findings.len; i++) {
		const struct finding *f = &out->findings.items[i];
		keep[i] = is_changed(s, f->file);
		if (keep[i] && f->array)
			strvec_push(&arrays, f->array);
	}
	for (size_t i = 0; i < out->findings.len; i++) {
		const struct finding *f = &out->findings.items[i];
		for (size_t k = 0; !keep[i] && f->array && k < arrays.len; k++)
			keep[i] = strcmp(arrays.items[k], f->array) == 0;
	}
	bool *keep_diag = xcalloc(out->diagnostics.len + 1, sizeof *keep_diag);
	for (size_t i = 0; i < out->diagnostics.len; i++)
		keep_diag[i] = is_changed(s, out->diagnostics.items[i].file);
	scan_result_keep(out, keep, keep_diag);
	free(keep);
	free(keep_diag);
	strvec_release(&arrays);
}

struct progress *cli_progress(bool quiet)
{
	return !quiet && isatty(STDERR_FILENO) ? progress_new(STDERR_FILENO) : NULL;
}

int scan_cli_run(const struct cli_command *cmd, const struct scan_cli *a,
		 const struct strvec *paths, struct scan_result *out)
{
	struct scan_options so = SCAN_OPTIONS_INIT;
	struct strvec files = VEC_INIT, asm_files = VEC_INIT;
	struct tree_ids *ids = NULL;
	struct since since = SINCE_INIT;
	struct baseline *base = NULL;
	int rc = EXIT_USAGE;
	if (paths->len == 0) {
		fprintf(stderr, "preemptify %s: no PATH given (see 'preemptify %s --help')\n", cmd->name, cmd->name);
		goto done;
	}
	if (a->jobs < 0 || a->jobs > MAX_JOBS) {
		fprintf(stderr, "preemptify %s: option '--jobs' must be between 0 (all CPUs) and %d, got %d\n",
			cmd->name, MAX_JOBS, a->jobs);
		goto done;
	}
	if (scan_cli_options(cmd, a, &so) < 0)
		goto done;
	/* a wrong REV is cheaper to learn before the scan */
	if (a->since && (rc = since_load(cmd, a->since, paths->items[0], &since)) != EXIT_OK)
		goto done;
	rc = EXIT_USAGE;
	if (a->baseline && baseline_load(&base, a->baseline) < 0) {
		fprintf(stderr, "preemptify %s: option '--baseline': %s\n", cmd->name, error_last());
		error_clear();
		goto done;
	}
	so.whole_tree = a->context_root != NULL;
	for (size_t i = 0; i < paths->len && !so.whole_tree; i++)
		so.whole_tree = is_tree_root(paths->items[i]);
	kernel_api_reset_sleepers();
	for (size_t i = 0; i < a->may_sleep.len; i++)
		kernel_api_add_sleeper(a->may_sleep.items[i]);
	struct walk_options wo = {a->exclude.items, a->exclude.len, so.want ? &asm_files : NULL};
	bool failed = walk_paths(paths->items, paths->len, &wo, &files, &out->diagnostics) < 0;
	if (so.want && !a->context_root) /* the scan reads every file: hash its identifiers then */
		ids = so.ids = xcalloc(files.len ? files.len : 1, sizeof *so.ids);
	progress_phase(a->progress, "scanning", files.len, false);
	so.progress = a->progress;
	if (scan_files(files.items, files.len, &so, out) > 0)
		failed = true;
	so.progress = NULL; /* the tree's files are not the ones counted */
	if (so.want && !interrupted()) {
		progress_phase(a->progress, "following callers across files", 0, false);
		failed |= scan_tree(cmd, a, &files, &asm_files, &so, out) < 0;
	}
	progress_clear(a->progress);
	if (a->since)
		since_filter(&since, out);
	for (size_t i = 0; i < out->diagnostics.len; i++)
		if (out->diagnostics.items[i].kind != DIAG_UNPARSED)
			failed = true;
	struct strvec parts = STRVEC_INIT;
	arrays_parts(out, &parts);
	if (a->cfg)
		config_filter(a->cfg, out);
	if (base)
		baseline_filter(base, out);
	arrays_keep_whole(out, &parts);
	strvec_release(&parts);
	rc = failed ? EXIT_FAILED : EXIT_OK;
done:
	baseline_free(base);
	for (size_t i = 0; ids && i < files.len; i++)
		free(ids[i].ids);
	free(ids);
	strvec_release(&files);
	strvec_release(&asm_files);
	since_release(&since);
	return rc;
}

/* Where a SARIF run happened (struct sarif_run) and the strings it points to. */
struct sarif_where {
	struct sarif_run run;
	char cwd[PATH_MAX];
	char *root;
	struct repo_provenance prov;
};

/*
 * %SRCROOT% is the working tree of the git repository holding PATH (the
 * first scanned), with its origin, HEAD and branch; outside git, the
 * current directory.
 */
static void sarif_where_init(struct sarif_where *w, const char *path)
{
	struct repo *repo = NULL;
	memset(w, 0, sizeof *w);
	w->prov = (struct repo_provenance)REPO_PROVENANCE_INIT;
	if (!getcwd(w->cwd, sizeof w->cwd))
		return; /* no base: relative URIs against an undefined %SRCROOT% */
	w->run.cwd = w->cwd;
	if (repo_open(&repo, path) == 0 && repo_provenance_get(repo, &w->prov) == 0) {
		w->root = xstrdup(repo_workdir(repo));
		w->run.in_git = true;
		w->run.repo_uri = w->prov.remote_uri;
		w->run.revision = w->prov.head[0] ? w->prov.head : NULL;
		w->run.branch = w->prov.branch;
	} else {
		error_clear();
		w->root = strcmp(w->cwd, "/") == 0 ? xstrdup("/") : xasprintf("%s/", w->cwd);
	}
	repo_free(repo);
	w->run.root = w->root;
}

static void sarif_where_release(struct sarif_where *w)
{
	free(w->root);
	repo_provenance_release(&w->prov);
}

static size_t count_flagged(const struct scan_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->findings.len; i++)
		n += !r->findings.items[i].protected_site;
	return n;
}

/* scan --write-baseline FILE: records R's findings; RC is the scan's status (0 or 3). */
static int scan_write_baseline(const char *path, const struct scan_result *r, bool quiet, int rc)
{
	size_t n = 0;
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		if (d->kind != DIAG_UNPARSED)
			fprintf(stderr, "%s: error: %s\n", d->file, after_path(d->message, d->file));
	}
	if (baseline_write(path, r, &n) < 0) {
		fprintf(stderr, "preemptify scan: option '--write-baseline': %s\n", error_last());
		error_clear();
		return EXIT_FAILED;
	}
	if (!quiet)
		fprintf(stderr, "preemptify: %zu finding%s recorded in %s\n", n, n == 1 ? "" : "s", path);
	return rc;
}

/*
 * -o FILE and --write-baseline FILE must not replace a file the scan reads
 * (a source, the config, the baseline): checked before anything is read,
 * one line each, EXIT_USAGE; an output whose directory cannot be written,
 * EXIT_FAILED, before the scan rather than after it. Else EXIT_OK.
 */
static int scan_outputs_check(const struct scan_cli *a, const struct strvec *paths,
				 const char *output, const char *write_baseline)
{
	const char *inputs[] = {a->config, a->cfg ? a->cfg->path : NULL, a->baseline};
	const struct {
		const char *opt, *path;
		size_t n_inputs; /* --write-baseline replaces the baseline it reads: the usual update */
	} outs[] = {{"--output", output, 3}, {"--write-baseline", write_baseline, 2}};
	int rc = EXIT_OK;
	for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
		if (!outs[i].path || strcmp(outs[i].path, "-") == 0)
			continue;
		char *why = cli_output_is_input(outs[i].path, paths, inputs, outs[i].n_inputs);
		if (why)
			fprintf(stderr, "preemptify scan: option '%s': %s; not overwritten\n", outs[i].opt, why);
		if (why)
			rc = EXIT_USAGE;
		free(why);
		/* a directory that is not there is better learned before the scan */
		char *dir = xstrdup(outs[i].path);
		char *slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir] = '\0';
		if (!why && access(outs[i].path, F_OK) != 0 && access(slash ? dir : ".", W_OK) != 0) {
			fprintf(stderr, "preemptify scan: cannot write '%s': %s\n", outs[i].path, strerror(errno));
			rc = rc == EXIT_OK ? EXIT_FAILED : rc;
		}
		free(dir);
	}
	return rc;
}

int cmd_scan(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("scan");
	struct scan_cli a = SCAN_CLI_INIT;
	const char *format = "text", *output = NULL, *write_baseline = NULL;
	const struct cli_option opts[] = {
		{"format", 'f', OPT_STRING, &format, "text|json|sarif", "output format (default text)"},
		{"output", 'o', OPT_STRING, &output, "FILE", "write the report to FILE instead of stdout"},
		{"write-baseline", 0, OPT_STRING, &write_baseline, "FILE",
		 "record today's findings in FILE (for --baseline) instead of reporting them"},
		SCAN_CLI_OPTIONS(&a),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct strvec paths = {0};
	struct scan_result r = SCAN_RESULT_INIT;
	FILE *out = stdout;
	char *report = NULL;
	size_t report_len = 0;
	int rc = EXIT_USAGE;
	int p = cli_parse(cmd, opts, argc, argv, &paths);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	int fmt = output_format_parse(format);
	if (fmt < 0) {
		fprintf(stderr, "preemptify scan: option '--format': unknown format '%s' (text, json, sarif)\n", format);
		goto done;
	}
	/* plain text shows no fix: the plans need not be proven */
	a.no_plans = fmt == FORMAT_TEXT && !a.verbose;
	if (paths.len == 0) {
		fprintf(stderr, "preemptify scan: no PATH given (see 'preemptify scan --help')\n");
		goto done;
	}
	if (scan_cli_config(cmd, &a, &paths, NULL) != EXIT_OK)
		goto done;
	if ((rc = scan_outputs_check(&a, &paths, output, write_baseline)) != EXIT_OK)
		goto done;
	/* the report is written whole at the end: a failed or interrupted scan leaves FILE as it was */
	if (output && strcmp(output, "-") != 0) {
		out = open_memstream(&report, &report_len);
		if (!out) {
			out = stdout;
			rc = EXIT_FAILED;
			goto done;
		}
	}
	if (write_baseline)
		a.baseline = NULL; /* every finding is recorded */
	a.progress = cli_progress(a.quiet);
	rc = scan_cli_run(cmd, &a, &paths, &r);
	if (rc == EXIT_USAGE || interrupted())
		goto done; /* an interrupted scan is not shown: it would look complete */
	if (write_baseline) {
		rc = scan_write_baseline(write_baseline, &r, a.quiet, rc);
		goto done;
	}
	if (fmt == FORMAT_SARIF) {
		struct sarif_where w;
		sarif_where_init(&w, paths.items[0]);
		emit_sarif(out, &r, a.verbose, &w.run);
		sarif_where_release(&w);
	} else {
		emit_result(out, (enum output_format)fmt, &r, a.verbose);
	}
	/* stdout and stderr piped into one file: the summary comes after the findings */
	fflush(out);
	if (!a.quiet)
		emit_summary(stderr, &r);
	if (rc == EXIT_OK && count_flagged(&r))
		rc = EXIT_FOUND;
done:
	if (out != stdout) {
		bool whole = fclose(out) == 0 && rc != EXIT_USAGE && !interrupted();
		if (whole && writefile_output(output, report, report_len) < 0) {
			fprintf(stderr, "preemptify scan: cannot write '%s': %s\n", output,
				after_path(error_last(), output));
			error_clear();
			rc = EXIT_FAILED;
		}
	}
	free(report);
	strvec_release(&paths);
	progress_free(a.progress);
	scan_cli_release(&a);
	scan_result_release(&r);
	return rc;
}

/* ---- explain ------------------------------------------------------------- */

/* Parses FILE:LINE or FILE:LINE:COL (as printed by scan). COL is 0 when absent. */
static int parse_location(const char *arg, char **out_file, unsigned *out_line, unsigned *out_col)
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

/* Edit text quoted, with newlines and tabs visible. */
static void print_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\t')
			fputs("\\t", stdout);
		else if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void explain_finding(const struct finding *f, const char *src, const struct scan_result *r)
{
	static const char *const ops[] = {"replace", "insert-before", "insert-after"};
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
		print_lines("why:", f->evidence);
	if (f->protected_site) {
		printf("  fix: none needed\n");
	} else if (f->fix == FIX_NONE) {
		printf("  fix: none (%s)\n", f->rule == RULE_P006 || f->rule == RULE_P007 ?
		       "this rule only reports" : "not rewritten automatically");
	} else {
		printf("  fix: %s, %zu edit%s\n", fix_name(f->fix), f->edits.len, f->edits.len == 1 ? "" : "s");
		for (size_t k = 0; k < f->edits.len; k++) {
			const struct edit *e = &f->edits.items[k];
			printf("    %-13s %u:%u-%u:%u %s ", ops[e->op], e->start.line, e->start.column,
			       e->end.line, e->end.column, e->node ? e->node : "?");
			print_quoted(e->text ? e->text : "");
			putchar('\n');
		}
	}
	if (f->fix_note)
		print_lines("fix note:", f->fix_note);
	const struct tree_array *t = f->array ? tree_array_find(&r->arrays, f->array, f->file) : NULL;
	if (t && t->plan && !f->protected_site && f->fix != FIX_NONE)
		print_lines("the whole conversion, every file:", t->plan);
}

/* The tree index over ROOT for FILE's findings in R (the file scanned again with it). */
static int explain_tree(const struct cli_command *cmd, const char *root, const char *file,
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
		o.whole_tree = o.arrays_over_index = true; /* a shared array's whole plan, as the tree's scan makes it */
		scan_with_tree(index.items, index.len, &one, 1, &o, r, NULL);
	}
	strvec_release(&index);
	return rc;
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
		 "follow the callers of the file's functions through the tree DIR"},
		{"config", 0, OPT_STRING, &a.config, "FILE", "read FILE instead of the nearest " CONFIG_FILE_NAME},
		{"no-config", 0, OPT_FLAG, &a.no_config, NULL, "read no " CONFIG_FILE_NAME},
		CLI_QUIET_OPTION(&quiet),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct strvec args = {0};
	struct scan_result r = SCAN_RESULT_INIT;
	char *file = NULL, *src = NULL;
	size_t src_len = 0;
	unsigned line = 0, col = 0;
	int rc = EXIT_USAGE;
	int p = cli_parse(cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	struct stat st;
	bool whole = false; /* FILE alone: every site of the file */
	if (args.len == 1 && parse_location(args.items[0], &file, &line, &col) < 0 &&
	    stat(args.items[0], &st) == 0 && S_ISREG(st.st_mode)) {
		free(file);
		file = xstrdup(args.items[0]);
		line = col = 0;
		whole = true;
	} else if (args.len != 1 || !file) {
		fprintf(stderr, "preemptify explain: expected one FILE or FILE:LINE argument (see 'preemptify explain --help')\n");
		goto done;
	}
	struct strvec named = {&file, 1, 1};
	if (scan_cli_config(cmd, &a, &named, NULL) != EXIT_OK)
		goto done;
	struct scan_options so = SCAN_OPTIONS_INIT;
	if (rules_mask(cmd, &a.ignore, &so.rules) < 0)
		goto done;
	kernel_api_reset_sleepers();
	for (size_t i = 0; i < a.may_sleep.len; i++)
		kernel_api_add_sleeper(a.may_sleep.items[i]);
	so.modern = a.modern;
	so.strict_stats = a.strict_stats;
	so.verbose = true;
	so.jobs = context_root ? 0 : 1;
	so.want = context_root != NULL;
	if (scan_files(&file, 1, &so, &r) > 0) {
		for (size_t i = 0; i < r.diagnostics.len; i++)
			fprintf(stderr, "preemptify explain: %s\n", r.diagnostics.items[i].message);
		rc = EXIT_FAILED;
		goto done;
	}
	if (context_root && explain_tree(cmd, context_root, file, &so, &r) < 0) {
		rc = EXIT_FAILED;
		goto done;
	}
	if (read_file(file, &src, &src_len) < 0)
		src = NULL; /* scanned a moment ago; without the text, no context lines */
	size_t shown = 0, flagged = 0;
	for (size_t i = 0; i < r.findings.len; i++) {
		const struct finding *f = &r.findings.items[i];
		if (strcmp(f->file, file) != 0) /* another file's part of a shared array's conversion */
			continue;
		if (!whole && (f->pos.line != line || (col && f->pos.column != col)))
			continue;
		if (shown++)
			putchar('\n');
		explain_finding(f, src, &r);
		const char *glob = a.cfg && !f->protected_site ? config_ignores(a.cfg, f) : NULL;
		if (glob)
			printf("  config: %s ignores %s in \"%s\" ([ignore-paths]); scan does not report it\n",
			       a.cfg->path, rule_code(f->rule), glob);
		flagged += !f->protected_site && !glob;
	}
	for (size_t i = 0; i < r.diagnostics.len; i++) {
		const struct diagnostic *d = &r.diagnostics.items[i];
		if (whole ? d->line != 0 : d->line == line) {
			printf("%s%s:%u:%u: %s\n", shown++ ? "\n" : "", d->file, d->line, d->column, d->message);
		}
	}
	if (!shown && whole) {
		printf("%s: no candidate site in this file\n", file);
	} else if (!shown) {
		printf("%s:%u: no candidate site on this line", file, line);
		const char *sep = "; sites in this file are on lines ";
		unsigned last = 0, listed = 0;
		for (size_t i = 0; i < r.findings.len && listed < 12; i++) {
			unsigned l = r.findings.items[i].pos.line;
			if (l == last || strcmp(r.findings.items[i].file, file) != 0)
				continue;
			printf("%s%u", sep, l);
			sep = ", ";
			last = l;
			listed++;
		}
		putchar('\n');
	}
	if (flagged && !context_root)
		printf("\n(callers in other files were not followed; give --context-root DIR, the whole tree, "
		       "to follow them)\n");
	rc = flagged ? EXIT_FOUND : EXIT_OK;
done:
	free(file);
	free(src);
	strvec_release(&args);
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
