/* preemptify: port Linux 2.4 driver code to the 2.6 preemptible kernel. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("preemptify %s\n", PREEMPTIFY_VERSION);
		return EXIT_OK;
	}
	fprintf(stderr, "usage: preemptify <command> [options] PATH...\n");
	return EXIT_USAGE;
}
