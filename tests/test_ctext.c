/*
 * Unit tests for the C text cursor (src/parse/ctext.c): what each byte
 * starts, where comments, literals, continuations and directives end, and
 * the cursor's walk over code bytes.
 */
#include <string.h>

#include "check.h"
#include "parse/ctext.h"

#define LEN(s) (sizeof(s) - 1)

static void test_at_and_skip(void)
{
	static const char t[] = "a /* x \"*/ b // c\n\"s\\\"/*\" 'x' '\\'' d";
	size_t len = LEN(t);
	CHECK(ctext_at(t, len, 0) == CTEXT_CODE);
	CHECK(ctext_at(t, len, 2) == CTEXT_BLOCK_COMMENT);
	CHECK(ctext_skip(t, len, 2) == 10, "a quote in a comment opens nothing: %zu", ctext_skip(t, len, 2));
	CHECK(ctext_at(t, len, 13) == CTEXT_LINE_COMMENT);
	CHECK(t[ctext_skip(t, len, 13)] == '\n', "a line comment stops at its newline");
	size_t s = 18;
	CHECK(ctext_at(t, len, s) == CTEXT_STRING);
	CHECK(ctext_skip(t, len, s) == 25, "an escaped quote and a comment opener in a string: %zu", ctext_skip(t, len, s));
	CHECK(ctext_at(t, len, 26) == CTEXT_CHAR && ctext_skip(t, len, 26) == 29);
	CHECK(ctext_at(t, len, 30) == CTEXT_CHAR && ctext_skip(t, len, 30) == 34, "'\\'' is one literal");
	CHECK(ctext_skip(t, len, 0) == 0, "code: no move");
	CHECK(ctext_skip(t, len, len - 1) == len - 1);
	/* a backslash ending a line comment splices the next line into it (the compiler's phase 2) */
	static const char u[] = "x // a \\\n/* b\n#define y \\\r\nz\n";
	size_t ul = LEN(u);
	CHECK(ctext_skip(u, ul, 2) == 13, "a line comment runs on past its backslash-newline: %zu", ctext_skip(u, ul, 2));
	static const char v[] = "// a \\\r\nb\nc";
	CHECK(ctext_skip(v, LEN(v), 0) == 9, "and past a backslash-CRLF: %zu", ctext_skip(v, LEN(v), 0));
}

static void test_unclosed(void)
{
	static const char c[] = "/* open";
	CHECK(ctext_skip(c, LEN(c), 0) == LEN(c), "an unclosed comment runs to the end");
	static const char s[] = "\"open\nx";
	CHECK(ctext_skip(s, LEN(s), 0) == 6, "an unclosed literal stops past its newline");
	static const char k[] = "\"a\\\nb\" x";
	CHECK(ctext_skip(k, LEN(k), 0) == 6, "a backslash-newline continues a literal");
	static const char e[] = "'\\";
	CHECK(ctext_skip(e, LEN(e), 0) == LEN(e), "a literal never ends past the text");
	static const char star[] = "/*/ x */";
	CHECK(ctext_skip(star, LEN(star), 0) == LEN(star), "/*/ does not close itself");
	bool open = true;
	CHECK(ctext_comment_close(star, LEN(star), 3, &open) == LEN(star) && !open, "closed at the very end");
	CHECK(ctext_comment_close(star, 5, 3, &open) == 5 && open, "the close is looked for before LEN only");
}

static void test_blanks_and_directives(void)
{
	static const char b[] = " \t/* a */\n// b\n\\\n\f\v\r x";
	CHECK(b[ctext_skip_blanks(b, LEN(b), 0)] == 'x');
	static const char crlf[] = " \\\r\nx";
	CHECK(ctext_skip_blanks(crlf, LEN(crlf), 0) == 1, "a backslash before CR-LF stops the blanks");
	CHECK(ctext_continuation(crlf, LEN(crlf), 1) == 3 && ctext_continuation("\\\n", 2, 0) == 2 &&
	      ctext_continuation("\\x", 2, 0) == 0);
	static const char d[] = "#define X 1 \\\n  + 2 /* a\nb */ + 3\nint y;";
	size_t e = ctext_directive_end(d, LEN(d), 0);
	CHECK(e == 33 && d[e] == '\n', "a directive runs over continuations and comments: %zu", e);
	static const char last[] = "#endif";
	CHECK(ctext_directive_end(last, LEN(last), 0) == LEN(last));
}

static void test_cursor(void)
{
	static const char t[] = "{ /* { */ \"}\" '{'\n  # define A { \\\n }\n/* c */ #x {\nb }";
	struct ctext cx;
	int depth = 0, codes = 0, directives = 0;
	for (ctext_init(&cx, t, LEN(t)); ctext_more(&cx); ctext_next(&cx)) {
		if (cx.kind != CTEXT_CODE)
			continue;
		codes++;
		if (cx.directive) {
			directives += t[cx.pos] == '#';
			continue;
		}
		depth += t[cx.pos] == '{' ? 1 : t[cx.pos] == '}' ? -1 : 0;
	}
	CHECK(depth == 0, "braces in comments, literals and directives do not count: %d", depth);
	CHECK(directives == 2, "an indented '#' and one after a comment open directives: %d", directives);
	CHECK(codes > 0);
	ctext_init(&cx, t, 0);
	CHECK(!ctext_more(&cx), "an empty text has no byte");
	ctext_init(&cx, t, LEN(t));
	CHECK(cx.line_start && cx.kind == CTEXT_CODE && cx.end == 1);
	ctext_next(&cx);
	ctext_next(&cx);
	CHECK(cx.kind == CTEXT_BLOCK_COMMENT && cx.end == 9 && !cx.line_start);
}

int main(void)
{
	test_at_and_skip();
	test_unclosed();
	test_blanks_and_directives();
	test_cursor();
	return check_summary();
}
