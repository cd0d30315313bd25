/*
 * libFuzzer target: one input is one C file. It goes through what `scan`
 * does with a file (the neutraliser, the parser, the analysis, the rules
 * and the verification of every planned fix) and through the three
 * emitters; the JSON and SARIF outputs must be valid JSON in UTF-8.
 * A crash, a sanitizer report, a hang or an invalid output is a finding.
 * Built and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/scan.h"
#include "cli/emit.h"
#include "json_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_format(const struct scan_result *r, enum output_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	emit_result(m, fmt, r, true);
	fclose(m);
	if (fmt != FORMAT_TEXT && !json_check(buf, len)) {
		fprintf(stderr, "invalid %s output:\n%.*s\n", fmt == FORMAT_JSON ? "JSON" : "SARIF", (int)len, buf);
		abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memchr(data, '\0', size))
		return 0; /* scan_file() refuses binary files before they get here */
	struct scan_options so = SCAN_OPTIONS_INIT;
	so.verbose = true;
	struct scan_result r = SCAN_RESULT_INIT;
	/* a file name outside ASCII, as a walk may give: the emitters must escape it */
	scan_buffer("drivers/fuzz/\xc3\xa9t\xe9.c", (const char *)data, size, &so, &r);
	check_format(&r, FORMAT_TEXT);
	check_format(&r, FORMAT_JSON);
	check_format(&r, FORMAT_SARIF);
	scan_result_release(&r);
	return 0;
}
