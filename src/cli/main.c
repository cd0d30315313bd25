/* preemptify: port Linux 2.4 driver code to the 2.6 preemptible kernel. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cache.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "fix/textdiff.h"
#include "util/interrupt.h"

/* One row per command: adding a command is adding a row (and its cmd_ function). */
static const struct cli_command commands[] = {
	{"scan", "[options] PATH...", "Report code that is not safe under 2.6 kernel preemption.", cmd_scan},
	{"explain", "[options] FILE[:LINE]", "Show the reasoning and planned fix for the sites on one line, or in a file.", cmd_explain},
	{"rules", "[RULE...]", "Describe the rules and the fixes each may plan.", cmd_rules},
	{"diff", "[options] PATH...", "Show the fixes as a unified diff; nothing is written.", cmd_diff},
	{"apply", "[options] PATH...", "Write the fixes into the files, atomically.", cmd_apply},
	{"commit", "[options] PATH...",
	 "Write the fixes and commit each file (or directory) on its own, kernel style.", cmd_commit},
	{"series", "[options] [RANGE]",
	 "Export the commits of the last commit run (or RANGE) as a numbered mbox series.", cmd_series},
	{"cache", "[clean]", "Show the result cache (entries, bytes, where), or empty it.", cmd_cache},
	{"completion", "bash|zsh", "Print a shell completion script (source it, or install it).", cmd_completion},
};

static void usage(FILE *out)
{
	fputs("usage: preemptify COMMAND [options] [ARGS]\n"
	      "       preemptify help COMMAND | --help | --version\n\n"
	      "Ports Linux 2.4 driver code to the 2.6 preemptible kernel.\n\ncommands:\n", out);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-10s  %s\n", commands[i].name, commands[i].summary);
	fputs("\n'preemptify COMMAND --help' lists a command's options.\n"
	      "exit status: scan: 0 no findings, 1 findings; diff: 0 no changes, 1 changes;\n"
	      "  explain, apply, commit, series, rules: 0 done (also when there was nothing to do,\n"
	      "  or a site is flagged);\n"
	      "  2 usage error, 3 a file or tool failed, 128+N signal N\n", out);
}

static const struct cli_command *find_command(const char *name)
{
	const struct cli_command *cmd = cli_command_find(name);
	return cmd->run ? cmd : NULL;
}

static int unknown_command(const char *name)
{
	const char *names[ARRAY_SIZE(commands)];
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		names[i] = commands[i].name;
	const char *best = nearest_word(name, strlen(name), names, ARRAY_SIZE(commands));
	if (best)
		fprintf(stderr, "preemptify: unknown command '%s'; did you mean '%s'? (see 'preemptify --help')\n",
			name, best);
	else
		fprintf(stderr, "preemptify: unknown command '%s' (see 'preemptify --help')\n", name);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	cli_commands_set(commands, ARRAY_SIZE(commands));
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("preemptify %s\n", PREEMPTIFY_VERSION);
		return EXIT_OK;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		const struct cli_command *cmd = find_command(argv[2]);
		if (!cmd)
			return unknown_command(argv[2]);
		char *help_argv[] = {argv[2], "--help", NULL};
		return cmd->run(2, help_argv);
	}
	if (name[0] == '-') {
		static const char *const global[] = {"--version", "--help"};
		const char *near = nearest_word(name, strlen(name), global, ARRAY_SIZE(global));
		if (near)
			fprintf(stderr, "preemptify: unknown option '%s'; did you mean '%s'? (see 'preemptify --help')\n",
				name, near);
		else
			fprintf(stderr, "preemptify: unknown option '%s' before the command (see 'preemptify --help')\n",
				name);
		return EXIT_USAGE;
	}
	const struct cli_command *cmd = find_command(name);
	if (!cmd)
		return unknown_command(name);
	interrupt_install();
	textdiff_begin();
	int rc = cache_run(cmd, argc - 1, argv + 1);
	textdiff_end();
	/* a report that could not be written (a full disk, a closed pipe) is a failure */
	int werr = cache_write_error();
	if (fflush(stdout) != 0 || ferror(stdout) || werr) {
		fprintf(stderr, "preemptify %s: cannot write the output: %s\n", name, strerror(werr ? werr : errno));
		if (rc != EXIT_USAGE)
			rc = EXIT_FAILED;
	}
	int sig = interrupted();
	if (sig) {
		fprintf(stderr, "preemptify %s: interrupted by signal %d (%s)\n", name, sig,
			sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "?");
		return 128 + sig;
	}
	return rc;
}
