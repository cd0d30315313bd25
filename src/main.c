/* preemptify: port Linux 2.4 driver code to the 2.6 preemptible kernel. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_scan(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_rules(int argc, char **argv);

/* One row per command: adding a command is adding a row. */
static const struct cli_command commands[] = {
	{"scan", "[options] PATH...", "report code that is not preempt-safe in 2.6", cmd_scan},
	{"explain", "FILE:LINE", "explain the verdict and planned fix for the sites on one line", cmd_explain},
	{"rules", "", "list the rules", cmd_rules},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: preemptify <command> [options] PATH...\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'preemptify <command> --help' describes a command's options.\n"
		     "exit status: 0 nothing found, 1 findings, 2 usage error, 3 a file or tool failed\n");
}

int main(int argc, char **argv)
{
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
	char *help_argv[] = {NULL, "--help", NULL};
	if (strcmp(name, "help") == 0 && argc > 2) {
		name = argv[2];
		help_argv[0] = argv[2];
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (strcmp(commands[i].name, name) == 0)
				return commands[i].run(2, help_argv);
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "preemptify: unknown command '%s'\n\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
