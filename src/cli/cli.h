/*
 * The CLI: a command table and per-command option tables. Each command
 * declares its options once; the same table parses argv and prints --help.
 * Only the CLI (main.c, cmd_*.c) prints to the user and picks exit codes.
 */
#ifndef PREEMPTIFY_CLI_H
#define PREEMPTIFY_CLI_H

#include <stdio.h>
#include "util/util.h"

/*
 * Exit codes, documented in README and the man page. The status answers the
 * question the command asks: scan and explain "any findings?", diff "any
 * changes?" (as diff(1)); apply, commit, series, rules "did it work?" (0 also
 * when there was nothing to do). 128+N after signal N (main.c).
 */
enum exit_code {
	EXIT_OK = 0,       /* no findings / no changes / succeeded */
	EXIT_FOUND = 1,    /* findings (scan, explain) or changes (diff) */
	EXIT_USAGE = 2,    /* bad command line, or a request that cannot be answered */
	EXIT_FAILED = 3,   /* a file or tool failed (others were still processed); before 1 */
	EXIT_LEFT = 4,     /* --require-done: the run worked, and findings are left for hand work */
};

enum opt_type {
	OPT_FLAG,   /* bool *: set to true */
	OPT_STRING, /* const char **: the argument */
	OPT_INT,    /* int *: a decimal integer */
	OPT_LIST,   /* struct strvec *: repeatable, comma-separated */
	OPT_TARGET, /* enum target * (rules/scan_result.h): "2.6" or "modern" */
};

struct cli_option {
	const char *name;  /* long name without "--" */
	char short_name;   /* 0 for none */
	enum opt_type type;
	void *dest;
	const char *arg;   /* argument name for --help, e.g. "N" */
	const char *help;  /* one line */
};

/*
 * -q/--quiet, the same for every command: standard error carries only
 * errors (no summary, notes or progress); standard output is unchanged.
 */
#define CLI_QUIET_OPTION(flag) \
	{"quiet", 'q', OPT_FLAG, (flag), NULL, "only errors on stderr: no summary, notes or progress"}

struct cli_command {
	const char *name;
	const char *synopsis; /* "[options] PATH..." */
	const char *summary;  /* one line for the command list */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

/*
 * Parses ARGV[1..] against OPTS (terminated by an entry with name NULL);
 * positional arguments are collected in POSITIONAL. "--" ends options.
 * "--help"/"-h" prints usage to stdout and returns 1. On error prints one
 * line to stderr and returns -1. Returns 0 otherwise.
 */
int cli_parse(const struct cli_command *cmd, const struct cli_option *opts,
	      int argc, char **argv, struct strvec *positional);

/*
 * While FN is set (not NULL), cli_parse() does not parse: it calls FN with
 * the command and its option table and returns 1, as for --help, so the
 * command returns at once having done nothing. `preemptify completion`
 * reads every command's table this way. Not thread-safe; call from main.
 */
typedef void (*cli_options_fn)(const struct cli_command *cmd, const struct cli_option *opts, void *ctx);
void cli_capture_options(cli_options_fn fn, void *ctx);

/*
 * Whether to colour what goes to FD for `--color WHEN`: "always", "never",
 * or "auto": FD is a terminal (the one it stood for when the result cache
 * captures it) and NO_COLOR is unset or empty; FD -1 (a file) never is.
 * -1, the error printed for CMD, for any other WHEN.
 */
int cli_color(const struct cli_command *cmd, const char *when, int fd);

/* Prints "usage: preemptify CMD SYNOPSIS", the summary and the options. */
void cli_usage(FILE *out, const struct cli_command *cmd, const struct cli_option *opts);

#endif
