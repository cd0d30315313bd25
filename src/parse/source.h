/*
 * Source preparation: a file's bytes, a copy with kernel macros neutralised
 * for the C grammar (same length, same offsets), a line index, and what the
 * neutraliser learned on the way (file-scope macro invocations, #defines).
 */
#ifndef PREEMPTIFY_SOURCE_H
#define PREEMPTIFY_SOURCE_H

#include "parse/diagnostic.h"

/* A file-scope macro invocation that was blanked, e.g. DECLARE_TASKLET(t, f, 0). */
struct macro_use {
	char *name;
	VEC(char *) args; /* trimmed argument texts */
	size_t offset;    /* of the name */
};

/* A #define seen anywhere in the file. */
struct macro_def {
	char *name;
	bool function_like;
	char *body;    /* with line continuations joined */
	size_t offset; /* of the name */
	size_t end;    /* end of the directive */
};

struct source {
	char *path;       /* owned */
	char *text;       /* original bytes, NUL-terminated, owned */
	size_t len;
	char *parse_text; /* neutralised copy given to the parser, owned */
	VEC(size_t) line_starts; /* offset of each line's first byte */
	VEC(struct macro_use) uses;
	VEC(struct macro_def) defs;
	VEC(size_t) if_macros; /* the else of each control-flow macro read as `if` (spatch cannot) */
};

/* Takes ownership of TEXT (NUL-terminated, LEN bytes) and prepares it. */
void source_init(struct source *src, const char *path, char *text, size_t len);
void source_release(struct source *src);

/* Position of OFFSET (1-based line and byte column). */
struct srcpos source_pos(const struct source *src, size_t offset);

/* True if OFFSET lies inside a preprocessor directive (e.g. a #define body). */
bool source_in_directive(const struct source *src, size_t offset);
/* Does the file #define NAME (LEN bytes) itself? */
bool source_defines(const struct source *src, const char *name, size_t len);

/* Byte classes used by the lexers. */
static inline bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Does TEXT (LEN bytes) hold WORD as a whole identifier? */
bool text_has_word(const char *text, size_t len, const char *word);

/*
 * Blanks the comments of assembly source TEXT, newlines kept: C comments
 * (a .S file goes through the C preprocessor), // to the end of the line
 * (ia64) and lines starting with a # that no directive follows (i386's
 * `# is done in init_IRQ().`). A "..." string on one line is left as it
 * is, comment openers in it too. Other assemblers' comment characters
 * (sparc's !, arm's @) are not known: a name there still counts.
 */
void asm_blank_comments(char *text, size_t len);

/*
 * Does TEXT hold WORD as the name of an object or function: a whole
 * identifier that is not a struct, union or enum tag (`struct WORD`) and
 * not a member (`.WORD`, `->WORD`)? Those live in other name spaces.
 */
bool text_names_object(const char *text, size_t len, const char *word);

/*
 * What the directives of TEXT before offset UPTO, outside every #if, say
 * of macro NAME (N bytes): 1 when the last of them #defines it, 0 when it
 * #undefs it, -1 when none names it (its value then comes from elsewhere).
 */
int text_defined_before(const char *text, size_t upto, const char *name, size_t n);
/*
 * What may follow DEFINE_PER_CPU(T, x), which stands for a declarator, in
 * T (LEN bytes) from I: attribute words and an `= initialiser`. The offset
 * of the `;` that ends them, or I when something else follows.
 */
size_t text_past_declarator_tail(const char *t, size_t len, size_t i);
/* The member accesses `->FIELD` / `.FIELD` in TEXT (comments too), counted up to MOST (0: all). */
unsigned text_member_accesses(const char *text, size_t len, const char *field, unsigned most);

#endif
