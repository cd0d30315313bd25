/* Temporary: replaced by the shared test helper header at merge. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
static int failures, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
static inline int check_report(const char *name) { printf("%s: %d checks, %d failed\n", name, checks, failures); return failures != 0; }
#endif
