/*
 * The commands of the preemptify binary. Each is `int cmd_NAME(int argc,
 * char **argv)` with argv[0] the command name, returning an enum exit_code.
 * main.c lists them in its command table {name, synopsis, summary, run}:
 * adding a command is one row there plus its function declared here.
 */
#ifndef PREEMPTIFY_COMMANDS_H
#define PREEMPTIFY_COMMANDS_H

#include "cli/cli.h"
#include "fix/rewrite.h"
#include "pipeline/scan.h"
#include "cli/config.h"

int cmd_scan(int argc, char **argv);    /* cmd_scan.c */
int cmd_explain(int argc, char **argv); /* cmd_explain.c */
int cmd_rules(int argc, char **argv);   /* cmd_explain.c */

/*
 * Parses explain's FILE:LINE or FILE:LINE:COL (as printed by scan; COL 0
 * when absent): 0 with *OUT_FILE owned, or -1 (cmd_explain.c; the cache's
 * key reads the file the same way).
 */
int explain_parse_location(const char *arg, char **out_file, unsigned *out_line, unsigned *out_col);
/* Added by later stages; declared here so their table row is one line. */
int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_commit(int argc, char **argv);
int cmd_series(int argc, char **argv);
int cmd_completion(int argc, char **argv); /* cmd_completion.c */
int cmd_cache(int argc, char **argv);      /* cmd_cache.c */

/*
 * main() registers its table here so that a command finds its own row
 * (name, synopsis, summary) for cli_parse() and --help. TABLE must outlive
 * every later call.
 */
void cli_commands_set(const struct cli_command *table, size_t n);
/* The registered table (N rows), for `preemptify completion`. */
const struct cli_command *cli_commands(size_t *n);

/*
 * The registered command called NAME; when there is none (unit tests), a
 * row with only the name set, so cli_parse() and cli_usage() still work.
 * Never NULL; the row is static (valid until the next call for an
 * unregistered name).
 */
const struct cli_command *cli_command_find(const char *name);

/*
 * The options every command that scans shares (scan, diff, apply, commit,
 * series): -j N, --exclude GLOB, --ignore RULES, --verbose, --quiet. Put
 * SCAN_CLI_OPTIONS(&a) in the command's option table, then call
 * scan_cli_run() with the positional PATH arguments.
 */
struct scan_cli {
	int jobs;                   /* 0: online CPUs */
	bool verbose;
	bool no_prefilter;          /* analyse the files the prefilter shows hold no site too */
	struct strvec exclude;    /* globs */
	struct strvec ignore;     /* rule codes or names */
	enum target target;         /* the generation fixes are planned for: a rewrite's --target, else the config's */
	struct strvec may_sleep;    /* the user's own sleeping functions */
	bool no_plans;              /* the output shows no fix: skip verifying plans */
	bool strict_stats;          /* fix statistics counters too */
	const char *context_root;   /* the tree whose callers count; NULL: the PATHs */
	bool no_tree;               /* each file alone: callers in other files unknown */
	bool quiet;                 /* stderr: errors only (no summary, notes, progress) */
	struct progress *progress;  /* not an option: from cli_progress(), or NULL */
	const char *since;          /* REV: report (and fix) only the files changed since REV */
	const char *baseline;       /* report only findings not in this baseline file */
	const char *config;         /* --config FILE; NULL: look for .preemptify.toml */
	bool no_config;             /* read no .preemptify.toml */
	struct config *cfg;         /* not an option: the config read (scan_cli_config), or NULL */
	char *tree_root;            /* not an option: the kernel tree found above the PATHs (scan_cli_config), or NULL */
	bool modernize;             /* also rewrite code already correct under 2.6 */
	bool fix_sleep;             /* --fix-sleep: GFP_KERNEL -> GFP_ATOMIC where P006 proves the context atomic */
	size_t hidden_baseline;     /* not an option: findings scan_cli_run() dropped as recorded in the baseline */
	size_t hidden_config;       /* not an option: ... as ignored by the config's [ignore-paths] */
	const char *cache_dir;      /* --cache-dir DIR; read by cache_run() before the command runs */
	bool no_cache;              /* --no-cache; likewise */
	size_t files_asked;         /* not an option: files whose earlier result scan_cli_run() looked for in the cache */
	size_t files_reused;        /* not an option: ... and found */
	size_t tree_asked;          /* not an option: the tree index's analyses looked for in the cache */
	size_t tree_reused;         /* not an option: ... and found */
	bool tree_git;              /* not an option: tree_root is a git work tree's top, not a kernel tree's */
};
#define SCAN_CLI_INIT {0, false, false, {NULL, 0, 0}, {NULL, 0, 0}, TARGET_UNSET, {NULL, 0, 0}, false, false, NULL, \
		       false, false, NULL, NULL, NULL, NULL, false, NULL, NULL, false, false, 0, 0, NULL, false, 0, 0, 0, 0, false}
#define SCAN_CLI_OPTIONS(a) \
	{"jobs", 'j', OPT_INT, &(a)->jobs, "N", "files analysed in parallel (default: online CPUs)"}, \
	{"exclude", 0, OPT_LIST, &(a)->exclude, "GLOB", "skip paths matching GLOB"}, \
	{"ignore", 0, OPT_LIST, &(a)->ignore, "RULES", "skip rules, by code or name (e.g. P006,unbalanced)"}, \
	{"may-sleep", 0, OPT_LIST, &(a)->may_sleep, "FUNCS", "treat these functions as sleeping, like schedule()"}, \
	{"strict-stats", 0, OPT_FLAG, &(a)->strict_stats, NULL, \
	 "also fix per-CPU statistics counters (x[smp_processor_id()].n++), which 2.6 left bare"}, \
	{"modernize", 0, OPT_FLAG, &(a)->modernize, NULL, \
	 "also rewrite code already correct under 2.6 (if (need_resched()) schedule(); -> cond_resched(); " \
	 "an NR_CPUS array whose this-CPU uses all have preemption off -> DEFINE_PER_CPU)"}, \
	{"fix-sleep", 0, OPT_FLAG, &(a)->fix_sleep, NULL, \
	 "also fix P006 allocations: GFP_KERNEL -> GFP_ATOMIC where the context is proven atomic " \
	 "and the result is checked for NULL at once (the allocation may then fail)"}, \
	{"context-root", 0, OPT_STRING, &(a)->context_root, "DIR", \
	 "find callers in the whole tree DIR (default: in the PATHs scanned)"}, \
	{"since", 0, OPT_STRING, &(a)->since, "REV", \
	 "only the files changed since REV (git diff REV, untracked files too); callers still from the whole tree"}, \
	{"no-tree", 0, OPT_FLAG, &(a)->no_tree, NULL, \
	 "analyse each file alone (callers in other files unknown; faster)"}, \
	{"baseline", 0, OPT_STRING, &(a)->baseline, "FILE", \
	 "report and fix only findings not recorded in FILE (scan --write-baseline)"}, \
	{"config", 0, OPT_STRING, &(a)->config, "FILE", \
	 "read options from FILE (default: the nearest .preemptify.toml above the first PATH)"}, \
	{"no-config", 0, OPT_FLAG, &(a)->no_config, NULL, "read no .preemptify.toml"}, \
	{"cache-dir", 0, OPT_STRING, &(a)->cache_dir, "DIR", \
	 "keep the result cache in DIR (default: $XDG_CACHE_HOME/preemptify, else ~/.cache/preemptify)"}, \
	{"no-cache", 0, OPT_FLAG, &(a)->no_cache, NULL, "neither read nor write the result cache"}, \
	{"verbose", 'v', OPT_FLAG, &(a)->verbose, NULL, "also report protected sites, with the reasoning"}, \
	CLI_QUIET_OPTION(&(a)->quiet), \
	{"no-prefilter", 0, OPT_FLAG, &(a)->no_prefilter, NULL, \
	 "analyse every file, also those the prefilter shows hold no site (the same findings; slower)"}

/*
 * The progress line for a command (util/progress.h): one on stderr when it
 * is a terminal and QUIET is not set, else NULL. Free with progress_free().
 */
struct progress *cli_progress(bool quiet);

/*
 * Walks PATHS and scans the files found into OUT (diagnostics included).
 * With --since REV, the findings and diagnostics of the files REV..work
 * tree did not change are then dropped (the walk and the cross-file
 * analysis still see every file), except the findings of a per-CPU array
 * shared with a changed file: it is converted in all its files or none.
 * Then drops the findings the config's [ignore-paths] ignores and those
 * recorded in the --baseline file. Prints one line and returns EXIT_USAGE
 * for a bad --ignore or -j, no PATH, a bad baseline file, or a --since REV
 * that does not resolve (or PATHS not in git); otherwise prints nothing and returns EXIT_FAILED when a root, a
 * file or the parser failed, else EXIT_OK. OUT is filled in every case
 * but EXIT_USAGE; the caller frees it with scan_result_release().
 */
int scan_cli_run(const struct cli_command *cmd, struct scan_cli *a,
		 const struct strvec *paths, struct scan_result *out);

/*
 * Reads the config (--config FILE, else the nearest .preemptify.toml at or
 * above PATHS[0], none with --no-config) into A->cfg and merges it into A:
 * its lists are added to the command line's, its baseline and strict_stats
 * are used when the command line gave none, and its target when A->target
 * is TARGET_UNSET (a rewrite's --target was copied there, scan has none).
 * Prints one line and returns EXIT_USAGE for a bad file, else EXIT_OK.
 */
int scan_cli_config(const struct cli_command *cmd, struct scan_cli *a, const struct strvec *paths);

/*
 * The kernel tree PATH lives in: the nearest directory at or above it with
 * a top Makefile setting VERSION and PATCHLEVEL and an include/linux/,
 * spelled from the current directory (".", "../..", "linux", or absolute);
 * NULL when there is none. *IS_PATH: it is PATH itself (a directory).
 */
char *cli_tree_root(const char *path, bool *is_path, bool *is_git);

/*
 * Says (on stderr, unless A->quiet), in plain words, what stood behind R:
 * the tree whose callers were followed (and the index's counts with -v),
 * the findings the baseline or the config's [ignore-paths] hid, the rules
 * not run (cli/account.c).
 */
void scan_cli_story(const struct scan_cli *a, const struct strvec *paths, const struct scan_result *r);

/* The rules left on by --ignore IGNORE, as a mask into *OUT; -1 (message printed) on a bad name. */
int scan_cli_rules_mask(const struct cli_command *cmd, const struct strvec *ignore, unsigned *out);

/* The scan options A stands for; -1 (message printed) on a bad --ignore. */
int scan_cli_options(const struct cli_command *cmd, const struct scan_cli *a,
		     struct scan_options *out);

void scan_cli_release(struct scan_cli *a);

/* The options of every command that rewrites (diff, apply, commit). */
struct rewrite_cli {
	int timeout;        /* seconds per spatch process */
	enum target target; /* --target; TARGET_UNSET: the config's, else 2.6 */
	const char *spatch; /* the Coccinelle program */
	bool no_slice;      /* spatch gets whole files */
	bool no_batch;      /* one spatch process per file and run */
	bool require_done;  /* exit EXIT_LEFT when findings are left for hand work */
};
#define REWRITE_CLI_INIT {60, TARGET_UNSET, "spatch", false, false, false}
#define REWRITE_CLI_OPTIONS(o) \
	{"timeout", 0, OPT_INT, &(o)->timeout, "SEC", "time limit per spatch process (default 60)"}, \
	{"no-slice", 0, OPT_FLAG, &(o)->no_slice, NULL, \
	 "give spatch whole files, not only the functions that hold sites (slower; for comparison)"}, \
	{"no-batch", 0, OPT_FLAG, &(o)->no_batch, NULL, \
	 "one spatch process per file and run, not one for the runs of many files (slower; for comparison)"}, \
	{"target", 0, OPT_TARGET, &(o)->target, "2.6|modern", "API generation to port to (default 2.6)"}, \
	{"spatch", 0, OPT_STRING, &(o)->spatch, "PROG", "the Coccinelle spatch program (default: spatch on PATH)"}, \
	{"require-done", 0, OPT_FLAG, &(o)->require_done, NULL, \
	 "exit 4 when findings are left for you (hand work), so CI can tell 'all done' from 'work left'"}

/*
 * What a command that rewrites holds from parsing to printing: its shared
 * options (put REWRITE_CLI_OPTIONS(&c.rewrite) and SCAN_CLI_OPTIONS(&c.scan)
 * in its table), its PATH arguments and the results.
 */
struct rewrite_cmd {
	struct scan_cli scan;
	struct rewrite_cli rewrite;
	struct strvec paths;
	struct scan_result sr;
	struct rewrite_result rr;
	bool no_rewrite; /* spatch could not be run at all: nothing was planned */
	size_t validations_asked, validations_reused; /* rewritten files' validations looked for in the cache, found */
};
#define REWRITE_CMD_INIT {SCAN_CLI_INIT, REWRITE_CLI_INIT, STRVEC_INIT, SCAN_RESULT_INIT, REWRITE_RESULT_INIT, false, 0, 0}

/*
 * Scans c->paths (scan_cli_run) and plans the rewrite (rewrite_plan) into
 * c->sr and c->rr, with a progress line (cli_progress(), in c->scan.progress,
 * cleared on return); prints diagnostics, sites not fixed and per-file
 * failures on stderr. Returns EXIT_USAGE (one line printed), EXIT_FAILED
 * when a file, the scan or spatch failed for some file (the others are
 * still planned), else EXIT_OK. Free C with rewrite_cmd_release().
 */
int rewrite_cli_run(const struct cli_command *cmd, struct rewrite_cmd *c);

void rewrite_cmd_release(struct rewrite_cmd *c);

/*
 * Would writing OUT replace a file this run reads? OUT must not be one of
 * PATHS (by inode), a *.c or *.h file under a directory of PATHS, or one of
 * FILES[0..N_FILES) (config, baseline; NULL entries skipped). A file that
 * does not exist or is not regular (a terminal, /dev/null) is never an
 * input. Returns the sentence saying which input it is (owned), or NULL.
 */
char *cli_output_is_input(const char *out, const struct strvec *paths, const char *const *files,
			  size_t n_files);

#endif
