/*
 * The scan command (the report, in text, JSON or SARIF, or a baseline
 * written), plus scan_cli_run(), the walk+scan step every scanning command
 * shares. explain and rules are in cmd_explain.c.
 */

/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cache.h"
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
	free(a->tree_root);
	a->tree_root = NULL;
}

/*
 * The tree above the PATHs (cli_tree_root() of the first), unless the user
 * named one (--context-root) or none (--no-tree), or the first PATH is the
 * tree itself (its files are the index already).
 */
static void find_tree_root(struct scan_cli *a, const struct strvec *paths)
{
	bool is_path = false;
	if (a->context_root || a->no_tree || !paths->len || a->tree_root)
		return;
	a->tree_root = cli_tree_root(paths->items[0], &is_path, &a->tree_git);
	if (is_path) {
		free(a->tree_root);
		a->tree_root = NULL;
	}
}

int scan_cli_config(const struct cli_command *cmd, struct scan_cli *a, const struct strvec *paths)
{
	char *path = NULL;
	find_tree_root(a, paths);
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
	if (a->target == TARGET_UNSET) /* scan plans the fixes it shows for that target */
		a->target = cfg->target;
	return EXIT_OK;
}

/* The enabled-rules mask from --ignore; -1 (message printed) for an unknown rule. */
int scan_cli_rules_mask(const struct cli_command *cmd, const struct strvec *ignore, unsigned *out)
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
	if (scan_cli_rules_mask(cmd, &a->ignore, &so.rules) < 0)
		return -1;
	so.verbose = a->verbose;
	so.jobs = a->jobs;
	so.no_prefilter = a->no_prefilter;
	so.target = a->target == TARGET_MODERN ? TARGET_MODERN : TARGET_26;
	so.strict_stats = a->strict_stats;
	so.modernize = a->modernize;
	so.fix_sleep = a->fix_sleep;
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
	const char *tree = a->context_root ? a->context_root : a->tree_root;
	if (!tree) {
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
	char *root = (char *)tree;
	int rc = walk_paths(&root, 1, &wo, &index, &diags);
	if (diags.len)
		progress_clear(a->progress);
	for (size_t i = 0; i < diags.len; i++) {
		fprintf(stderr, "preemptify %s: %s %s: %s\n", cmd->name, a->context_root ? "option '--context-root'" :
			"the tree found above the PATHs,", tree, diags.items[i].message);
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
	int fd = cache_terminal_fd(STDERR_FILENO);
	return !quiet && fd >= 0 ? progress_new(fd) : NULL;
}

/*
 * Drops the findings the config's [ignore-paths] and the baseline BASE (may
 * be NULL) hide, counted in A, keeping a shared array's conversion whole.
 */
static void hide_findings(struct scan_cli *a, struct baseline *base, struct scan_result *out)
{
	struct strvec parts = STRVEC_INIT;
	arrays_parts(out, &parts);
	size_t before = out->findings.len;
	if (a->cfg)
		config_filter(a->cfg, out);
	a->hidden_config = before - out->findings.len;
	before = out->findings.len;
	if (base)
		baseline_filter(base, out);
	a->hidden_baseline = before - out->findings.len;
	arrays_keep_whole(out, &parts);
	strvec_release(&parts);
}

int scan_cli_run(const struct cli_command *cmd, struct scan_cli *a,
		 const struct strvec *paths, struct scan_result *out)
{
	struct scan_options so = SCAN_OPTIONS_INIT;
	struct strvec files = VEC_INIT, asm_files = VEC_INIT;
	struct tree_ids *ids = NULL;
	struct since since = SINCE_INIT;
	struct baseline *base = NULL;
	struct step_store *files_memo = NULL;
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
	/* a shared per-CPU array gets the tree's verdict and plan (not a git work tree's: users outside) */
	so.whole_tree = so.arrays_over_index = a->context_root != NULL || (a->tree_root != NULL && !a->tree_git);
	for (size_t i = 0; i < paths->len && !so.whole_tree; i++)
		so.whole_tree = is_tree_root(paths->items[i]);
	kernel_api_reset_sleepers();
	/* what the tree says of itself: architectures without CONFIG_PREEMPT, a spinning BKL */
	const char *root = a->context_root ? a->context_root : a->tree_root;
	for (size_t i = 0; i < paths->len && !root; i++)
		root = is_tree_root(paths->items[i]) ? paths->items[i] : NULL;
	kernel_api_read_tree(root);
	for (size_t i = 0; i < a->may_sleep.len; i++)
		kernel_api_add_sleeper(a->may_sleep.items[i]);
	struct walk_options wo = {a->exclude.items, a->exclude.len, so.want ? &asm_files : NULL};
	bool failed = walk_paths(paths->items, paths->len, &wo, &files, &out->diagnostics) < 0;
	if (so.want && !a->context_root && !a->tree_root) /* the scan reads every file: hash its identifiers then */
		ids = so.ids = xcalloc(files.len ? files.len : 1, sizeof *so.ids);
	progress_phase(a->progress, "scanning", files.len, false);
	so.progress = a->progress;
	/* files seen before in the same context are answered from the cache (cache.h) */
	files_memo = a->no_cache ? NULL : file_store_open(a->cache_dir);
	so.memo = file_store_memo(files_memo);
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
	hide_findings(a, base, out);
	rc = failed ? EXIT_FAILED : EXIT_OK;
done:
	step_store_counts(files_memo, STORE_FILES, &a->files_asked, &a->files_reused);
	step_store_counts(files_memo, STORE_TREE, &a->tree_asked, &a->tree_reused);
	step_store_close(files_memo);
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

/*
 * Where the report goes: standard output, or (-o FILE) memory, written
 * whole to FILE by report_close() so that a failed or interrupted scan
 * leaves FILE as it was.
 */
struct report {
	FILE *out;
	const char *path; /* -o FILE, or NULL */
	char *text;
	size_t len;
};

static int report_open(struct report *rep, const char *output)
{
	rep->out = stdout;
	rep->path = output && strcmp(output, "-") != 0 ? output : NULL;
	if (rep->path && !(rep->out = open_memstream(&rep->text, &rep->len))) {
		rep->out = stdout;
		fprintf(stderr, "preemptify scan: cannot write '%s': %s\n", output, strerror(errno));
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* Writes the report to its file unless WRITE is false; RC is the scan's status, returned or made EXIT_FAILED. */
static int report_close(struct report *rep, bool write, int rc)
{
	if (rep->out != stdout) {
		if (fclose(rep->out) == 0 && write && writefile_output(rep->path, rep->text, rep->len) < 0) {
			fprintf(stderr, "preemptify scan: cannot write '%s': %s\n", rep->path,
				after_path(error_last(), rep->path));
			error_clear();
			rc = EXIT_FAILED;
		}
	}
	free(rep->text);
	return rc;
}

/* Prints R in format FMT to OUT (text in COLOR or not), then the summary; the status for RC (the scan's). */
static int scan_print(FILE *out, int fmt, bool color, const struct scan_result *r, const struct scan_cli *a,
		      const struct strvec *paths, int rc)
{
	if (fmt == FORMAT_SARIF) {
		struct sarif_where w;
		sarif_where_init(&w, paths->items[0]);
		emit_sarif(out, r, a->verbose, &w.run);
		sarif_where_release(&w);
	} else if (fmt == FORMAT_TEXT) {
		emit_text(out, r, a->verbose, color);
	} else {
		emit_result(out, (enum output_format)fmt, r, a->verbose);
	}
	/* stdout and stderr piped into one file: the summary comes after the findings */
	fflush(out);
	if (!a->quiet)
		emit_summary(stderr, r);
	scan_cli_story(a, paths, r);
	return rc == EXIT_OK && count_flagged(r) ? EXIT_FOUND : rc;
}

int cmd_scan(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("scan");
	struct scan_cli a = SCAN_CLI_INIT;
	const char *format = "text", *output = NULL, *write_baseline = NULL, *color = "auto";
	const struct cli_option opts[] = {
		{"format", 'f', OPT_STRING, &format, "text|json|sarif", "output format (default text)"},
		{"color", 0, OPT_STRING, &color, "auto|always|never",
		 "colour the text report (default auto: on a terminal, unless NO_COLOR)"},
		{"output", 'o', OPT_STRING, &output, "FILE", "write the report to FILE instead of stdout"},
		{"write-baseline", 0, OPT_STRING, &write_baseline, "FILE",
		 "record today's findings in FILE (for --baseline) instead of reporting them"},
		SCAN_CLI_OPTIONS(&a),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct strvec paths = {0};
	struct scan_result r = SCAN_RESULT_INIT;
	struct report rep = {stdout, NULL, NULL, 0};
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
	if (paths.len == 0) {
		fprintf(stderr, "preemptify scan: no PATH given (see 'preemptify scan --help')\n");
		goto done;
	}
	int paint = cli_color(cmd, color, output && strcmp(output, "-") != 0 ? -1 : STDOUT_FILENO);
	if (paint < 0)
		goto done;
	if (scan_cli_config(cmd, &a, &paths) != EXIT_OK ||
	    (rc = scan_outputs_check(&a, &paths, output, write_baseline)) != EXIT_OK ||
	    (rc = report_open(&rep, output)) != EXIT_OK)
		goto done;
	if (write_baseline)
		a.baseline = NULL; /* every finding is recorded */
	a.progress = cli_progress(a.quiet);
	rc = scan_cli_run(cmd, &a, &paths, &r);
	if (rc == EXIT_USAGE || interrupted())
		goto done; /* an interrupted scan is not shown: it would look complete */
	if (write_baseline)
		rc = scan_write_baseline(write_baseline, &r, a.quiet, rc);
	else
		rc = scan_print(rep.out, fmt, paint, &r, &a, &paths, rc);
done:
	rc = report_close(&rep, rc != EXIT_USAGE && !interrupted(), rc);
	strvec_release(&paths);
	progress_free(a.progress);
	scan_cli_release(&a);
	scan_result_release(&r);
	return rc;
}
