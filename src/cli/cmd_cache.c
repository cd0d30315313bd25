/* `preemptify cache`: where the result cache is and what it holds; `cache clean` empties it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cache.h"
#include "cli/commands.h"

int cmd_cache(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("cache");
	const char *dir_opt = NULL;
	bool quiet = false;
	const struct cli_option opts[] = {
		{"cache-dir", 0, OPT_STRING, &dir_opt, "DIR",
		 "the cache in DIR (default: $XDG_CACHE_HOME/preemptify, else ~/.cache/preemptify)"},
		CLI_QUIET_OPTION(&quiet),
		{NULL, 0, 0, NULL, NULL, NULL}};
	struct strvec args = STRVEC_INIT;
	char *dir = NULL;
	int rc = EXIT_USAGE, p = cli_parse(cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (args.len > 1 || (args.len == 1 && strcmp(args.items[0], "clean") != 0)) {
		fprintf(stderr, "preemptify cache: unknown action '%s' (only 'clean')\n", args.items[args.len - 1]);
		goto done;
	}
	if (!(dir = cache_dir(dir_opt))) {
		fputs("preemptify cache: no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir\n", stderr);
		goto done;
	}
	if (args.len == 1) {
		long n = cache_clean(dir);
		if (n < 0) {
			fprintf(stderr, "preemptify cache: %s\n", error_last());
			rc = EXIT_FAILED;
			goto done;
		}
		printf("removed %ld entr%s from %s\n", n, n == 1 ? "y" : "ies", dir);
	} else {
		size_t entries = 0, steps = 0, files = 0;
		uint64_t bytes = 0, step_bytes = 0, file_bytes = 0;
		char *sdir = xasprintf("%s/" CACHE_STEPS_DIR, dir), *fdir = xasprintf("%s/" CACHE_FILES_DIR, dir);
		cache_stat(dir, &entries, &bytes);
		cache_stat(sdir, &steps, &step_bytes);
		cache_stat(fdir, &files, &file_bytes);
		printf("location  %s\nentries   %zu\nbytes     %llu (bound %llu, least recently used evicted first)\n"
		       "spatch    %zu step%s, %llu bytes (in %s, bound %llu)\n"
		       "files     %zu file result%s, %llu bytes (in %s, bound %llu)\n",
		       dir, entries, (unsigned long long)bytes, (unsigned long long)CACHE_MAX_BYTES, steps,
		       steps == 1 ? "" : "s", (unsigned long long)step_bytes, sdir, (unsigned long long)CACHE_MAX_BYTES,
		       files, files == 1 ? "" : "s", (unsigned long long)file_bytes, fdir,
		       (unsigned long long)CACHE_MAX_BYTES);
		free(sdir);
		free(fdir);
	}
	rc = EXIT_OK;
done:
	free(dir);
	strvec_release(&args);
	return rc;
}
