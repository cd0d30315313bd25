/*
 * check.h: the one CHECK of the C unit tests (test_*.c include it once).
 *
 *   CHECK(cond)             counts a check; a false COND prints
 *                           "FAIL file:line: cond" on stderr
 *   CHECK(cond, fmt, ...)   the same with a printf-style message (FMT and
 *                           up to eight values)
 *
 * CHECK is an expression: the truth of COND, so a test can stop early with
 * if (!CHECK(p != NULL)) return;. Helpers that compare by hand count into
 * check_passed / check_failed themselves. check_summary() prints the
 * "N passed, M failed" line every test program ends with and returns the
 * exit status.
 */
#ifndef PREEMPTIFY_TESTS_CHECK_H
#define PREEMPTIFY_TESTS_CHECK_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/util.h" /* PRINTF_LIKE */

static int check_passed, check_failed;

static inline bool check_at(bool ok, const char *file, int line, const char *fmt, ...)
	PRINTF_LIKE(4, 5);
static inline bool check_at(bool ok, const char *file, int line, const char *fmt, ...)
{
	if (ok) {
		check_passed++;
		return true;
	}
	check_failed++;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL %s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return false;
}

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

/* CHECK(cond) or CHECK(cond, fmt, ...): picked by the number of arguments. */
#define CHECK(...)                                                                  \
	CHECK_PICK_(__VA_ARGS__, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,     \
		    CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,      \
		    CHECK_BARE_, CHECK_NONE_)(__VA_ARGS__)
#define CHECK_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, which, ...) which
#define CHECK_BARE_(cond) check_at(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG_(cond, ...) check_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#endif
