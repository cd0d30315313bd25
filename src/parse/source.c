/*
 * The neutraliser: a small lexer over the raw bytes that rewrites what the
 * C grammar cannot parse into blanks or equivalent syntax of the same
 * length, so every byte offset the parser reports is an offset in the
 * user's file. It never touches comments, strings or directives. The
 * searches for words in raw text, and the blanking of assembly comments,
 * are source_text.c.
 */
#define _GNU_SOURCE /* memmem */
#include "parse/ctext.h"
#include "parse/source.h"

#include <stdlib.h>
#include <string.h>

/* Attribute-like kernel macros: replaced by spaces wherever they appear. */
static const char *const blank_words[] = {
	"__init", "__exit", "__devinit", "__devexit", "__devinitdata",
	"__devexitdata", "__initdata", "__exitdata", "__initconst",
	"__cpuinit", "__cpuinitdata", "__cpuexit", "__meminit",
	"__cacheline_aligned", "____cacheline_aligned",
	"____cacheline_aligned_in_smp", "__cacheline_aligned_in_smp",
	"__read_mostly", "asmlinkage", "fastcall", "__user", "__iomem",
	"__kernel", "__force", "__must_check", "__attribute_used__",
	"__attribute_const__", "__deprecated", "__sched", "__pure",
	"__nocast", "__bitwise", "__always_inline", "__devinitconst",
	"__exit_p", "__devexit_p", "__init_or_module", "__nosavedata",
	"__page_aligned", "__visible", "__irq_entry", "__used",
};

/*
 * File-scope macro invocations that declare or register something. They are
 * recorded (the analysis reads DECLARE_TASKLET, DEFINE_PER_CPU, ...) and
 * blanked together with a `static` before them and the `;` after.
 */
static const char *const toplevel_macros[] = {
	"EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL_NOVERS",
	"EXPORT_PER_CPU_SYMBOL", "EXPORT_PER_CPU_SYMBOL_GPL",
	"MODULE_LICENSE", "MODULE_AUTHOR", "MODULE_DESCRIPTION", "MODULE_PARM",
	"MODULE_PARM_DESC", "MODULE_DEVICE_TABLE", "MODULE_SUPPORTED_DEVICE",
	"MODULE_ALIAS", "MODULE_VERSION", "MODULE_FIRMWARE", "module_init",
	"module_exit", "module_param", "module_param_named",
	"module_param_array", "module_param_string", "__setup", "__initcall",
	"__exitcall", "core_initcall", "postcore_initcall", "arch_initcall",
	"subsys_initcall", "fs_initcall", "device_initcall", "late_initcall",
	"console_initcall", "LIST_HEAD", "DECLARE_WAIT_QUEUE_HEAD",
	"DECLARE_MUTEX", "DECLARE_MUTEX_LOCKED", "DECLARE_RWSEM",
	"DECLARE_TASKLET", "DECLARE_TASKLET_DISABLED", "DEFINE_PER_CPU",
	"DECLARE_PER_CPU", "DEFINE_SPINLOCK", "DEFINE_RWLOCK", "DEFINE_MUTEX",
	"DECLARE_WORK", "DECLARE_COMPLETION", "DEFINE_TIMER", "EXPORT_NO_SYMBOLS",
	"DECLARE_BITMAP", "DECLARE_FSTYPE", "DECLARE_FSTYPE_DEV", "DEVICE_ATTR",
	"ATOMIC_NOTIFIER_HEAD", "BLOCKING_NOTIFIER_HEAD", "DEFINE_RAW_SPINLOCK",
};

/* Is the word S (N identifier characters) one of SET's? Every word of every file parsed asks. */
static bool word_in(const char *s, size_t n, const char *const *set, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (set[i][0] == s[0] && strncmp(set[i], s, n) == 0 && set[i][n] == '\0')
			return true;
	return false;
}

/* Iterator macros: `list_for_each(p, head) {` becomes `while        (p, head) {`. */
static bool is_iterator_macro(const char *s, size_t n)
{
	if (n < 5)
		return false;
	for (size_t i = 0; i + 8 <= n; i++)
		if (memcmp(s + i, "for_each", 8) == 0)
			return true;
	return (n == 15 && memcmp(s, "skb_queue_walk", 14) == 0);
}

/* From t[i] == '(' to just past the matching ')', or len if unbalanced. */
static size_t skip_parens(const char *t, size_t len, size_t i)
{
	int depth = 0;
	while (i < len) {
		char c = t[i];
		size_t past = ctext_skip(t, len, i);
		if (past != i) {
			i = past;
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			return i + 1;
		else if (c == ';' || c == '{' || c == '}')
			return len; /* not a macro call we understand */
		i++;
	}
	return len;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\\'))
		n--;
	return xstrndup(s, n);
}

static void record_define(struct source *src, size_t start, size_t end)
{
	const char *t = src->text;
	size_t i = start + 1;
	while (i < end && (t[i] == ' ' || t[i] == '\t'))
		i++;
	if (end - i < 6 || memcmp(t + i, "define", 6) != 0)
		return;
	i += 6;
	while (i < end && (t[i] == ' ' || t[i] == '\t'))
		i++;
	size_t n0 = i;
	while (i < end && is_ident_char(t[i]))
		i++;
	if (i == n0)
		return;
	struct macro_def d = {0};
	d.name = xstrndup(t + n0, i - n0);
	d.offset = n0;
	d.end = end;
	if (i < end && t[i] == '(') {
		d.function_like = true;
		while (i < end && t[i] != ')')
			i++;
		if (i < end)
			i++;
	}
	struct buf body = BUF_INIT;
	for (size_t k = i; k < end; k++) {
		if (t[k] == '\\' && k + 1 < end && t[k + 1] == '\n') {
			buf_putc(&body, ' ');
			k++;
			continue;
		}
		buf_putc(&body, t[k]);
	}
	char *b = buf_detach(&body);
	d.body = trimmed(b, strlen(b));
	free(b);
	vec_push(&src->defs, d);
}

static void record_use(struct source *src, size_t name, size_t name_len, size_t open, size_t close)
{
	const char *t = src->text;
	struct macro_use u = {0};
	u.name = xstrndup(t + name, name_len);
	u.offset = name;
	if (open < close) {
		int depth = 0;
		size_t a = open + 1;
		for (size_t k = open + 1; k < close; k++) {
			char c = t[k];
			if (ctext_at(t, close, k) == CTEXT_STRING || ctext_at(t, close, k) == CTEXT_CHAR) {
				k = ctext_skip(t, close, k) - 1;
				continue;
			}
			if (c == '(' || c == '{' || c == '[')
				depth++;
			else if (c == ')' || c == '}' || c == ']') {
				if (depth == 0) {
					vec_push(&u.args, trimmed(t + a, k - a));
					break;
				}
				depth--;
			} else if (c == ',' && depth == 0) {
				vec_push(&u.args, trimmed(t + a, k - a));
				a = k + 1;
			}
		}
	}
	vec_push(&src->uses, u);
}

static void blank(char *out, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		if (out[k] != '\n')
			out[k] = ' ';
}

/* The neutraliser's state while it walks the raw bytes. */
struct neutraliser {
	struct source *src;
	const char *t;    /* the raw bytes */
	char *out;        /* parse_text, rewritten in place */
	size_t len;
	VEC(char) braces; /* 'b' block, 'i' initializer */
	char prev;        /* last significant punctuation; 'w' = word, 'x' = other */
	size_t skip_from, skip_to; /* a blanked arm the walk jumps over (blank_split_arms) */
};

/*
 * A file-scope macro call NAME (S, N bytes; J the first byte after it) with
 * its `;` and a `static` before it: recorded and blanked. Returns the
 * offset after it, or 0 when it is not a call we understand.
 */
static size_t blank_toplevel_macro(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	const char *t = nz->t;
	size_t len = nz->len;
	size_t close = j;
	if (j < len && t[j] == '(')
		close = skip_parens(t, len, j);
	if (!(close < len || (j < len && t[j] == ';')))
		return 0;
	record_use(nz->src, s, n, j < len && t[j] == '(' ? j : close, close);
	size_t e = ctext_skip_blanks(t, len, close);
	if (n == 14 && memcmp(t + s, "DEFINE_PER_CPU", 14) == 0)
		e = text_past_declarator_tail(t, len, e);
	if (e < len && t[e] == ';')
		e++;
	else
		e = close;
	/* a preceding `static` goes too */
	size_t b = s;
	if (nz->prev == 'w' && s >= 7) {
		size_t k = s;
		while (k > 0 && (t[k - 1] == ' ' || t[k - 1] == '\t' || t[k - 1] == '\n'))
			k--;
		if (k >= 6 && memcmp(t + k - 6, "static", 6) == 0 &&
		    (k == 6 || !is_ident_char(t[k - 7])))
			b = k - 6;
	}
	blank(nz->out, b, e);
	return e;
}

/* From t[i] == '{' to just past the matching '}', or len if unbalanced. */
static size_t skip_braces(const char *t, size_t len, size_t i)
{
	int depth = 0;
	while (i < len) {
		size_t past = ctext_skip(t, len, i);
		if (past != i) {
			i = past;
			continue;
		}
		if (t[i] == '{')
			depth++;
		else if (t[i] == '}' && --depth == 0)
			return i + 1;
		i++;
	}
	return len;
}

/*
 * A control-flow macro with an else (sunrpc's `task_for_first(task, head)
 * { ... } else { ... }`, an `if` in its body): `MACRO(...) {...} else`
 * becomes `if   (...) {...} else`. True if rewritten.
 */
static bool rewrite_if_macro(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	const char *t = nz->t;
	size_t len = nz->len;
	size_t close = skip_parens(t, len, j);
	size_t k = close < len ? ctext_skip_blanks(t, len, close) : len;
	if (k >= len || t[k] != '{' || n < 3)
		return false; /* `if` itself, or no block */
	size_t e = skip_braces(t, len, k);
	e = e < len ? ctext_skip_blanks(t, len, e) : len;
	if (e + 4 > len || memcmp(t + e, "else", 4) != 0 || (e + 4 < len && is_ident_char(t[e + 4])))
		return false;
	memcpy(nz->out + s, "if", 2);
	blank(nz->out, s + 2, s + n);
	vec_push(&nz->src->if_macros, e); /* its else: where spatch stops reading */
	return true;
}

/* `list_for_each(p, head) {` (S, N bytes; J its '(') becomes `while        (p, head) {`. */
static void rewrite_iterator(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	const char *t = nz->t;
	size_t len = nz->len;
	size_t close = skip_parens(t, len, j);
	size_t k = ctext_skip_blanks(t, len, close);
	if (close < len && k < len && t[k] != ';' && t[k] != ')' &&
	    t[k] != ',' && t[k] != '?' && t[k] != ':') {
		memcpy(nz->out + s, "while", 5);
		blank(nz->out, s + 5, s + n);
	}
}

/* 2.4 initialisers: `owner: THIS_MODULE` becomes `.owner= THIS_MODULE`. */
static void rewrite_old_initialiser(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	const char *t = nz->t;
	char *out = nz->out;
	size_t len = nz->len;
	if (!(nz->braces.len > 0 && nz->braces.items[nz->braces.len - 1] == 'i' &&
	      (nz->prev == '{' || nz->prev == ',') && j < len && t[j] == ':' &&
	      !(j + 1 < len && t[j + 1] == ':')))
		return;
	if (s > 0 && (t[s - 1] == ' ' || t[s - 1] == '\t')) {
		out[s - 1] = '.';
		out[j] = '=';
	} else if (j == s + n && j + 1 < len && (t[j + 1] == ' ' || t[j + 1] == '\t')) {
		/* `ident: x` at a line start: shift the name right by one */
		out[s] = '.';
		memcpy(out + s + 1, t + s, n);
		out[j + 1] = '=';
	}
}

/*
 * Macros taking a type: `list_entry(p, struct net_device, list)`,
 * `min_t(unsigned int, a, b)`. The type argument (0-based ARG) becomes one
 * identifier of the same length (`struct_net_device`), so the call parses
 * as C and the function around it is analysed.
 */
static const struct {
	const char *name;
	unsigned arg;
} type_arg_macros[] = {
	{"list_entry", 1}, {"container_of", 1}, {"min_t", 0}, {"max_t", 0},
};

static void rewrite_type_arg(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	const char *t = nz->t;
	unsigned arg = 0;
	size_t k;
	for (k = 0; k < ARRAY_SIZE(type_arg_macros); k++)
		if (strlen(type_arg_macros[k].name) == n && memcmp(t + s, type_arg_macros[k].name, n) == 0)
			break;
	if (k == ARRAY_SIZE(type_arg_macros))
		return;
	arg = type_arg_macros[k].arg;
	size_t a = j + 1, depth = 0;
	unsigned at = 0;
	for (size_t i = j + 1; i < nz->len; i++) {
		char c = t[i];
		if (c == '(')
			depth++;
		else if (c == ')' && depth)
			depth--;
		else if ((c == ',' && !depth) || c == ')') {
			if (at == arg) {
				size_t b = a, e = i;
				while (b < e && (t[b] == ' ' || t[b] == '\t'))
					b++;
				while (e > b && (t[e - 1] == ' ' || t[e - 1] == '\t'))
					e--;
				if (b == e || !is_ident_start(t[b]))
					return;
				for (size_t q = b; q < e; q++)
					if (!is_ident_char(t[q]) && t[q] != ' ' && t[q] != '\t' && t[q] != '*')
						return;
				for (size_t q = b; q < e; q++)
					if (!is_ident_char(t[q]))
						nz->out[q] = '_';
				return;
			}
			if (c == ')')
				return;
			at++;
			a = i + 1;
		} else if (c == ';' || c == '{' || c == '}' || c == '\n') {
			return;
		}
	}
}

/* The word starting at S. Returns the offset after what was handled. */
/*
 * NAME (S, N bytes; J the first byte after it) used as a statement with no
 * `;` of its own, an object-like macro of this file whose body is
 * statements (ends with `;`: 2.4 kernel/sched.c's SLEEP_ON_HEAD): the
 * grammar would read it as the start of an expression and lose the rest
 * of the function. Made an empty statement, `;` and blanks.
 */
static bool statement_macro(struct neutraliser *nz, size_t s, size_t n, size_t j)
{
	if (nz->braces.len == 0 || nz->braces.items[nz->braces.len - 1] != 'b' ||
	    (nz->prev != ';' && nz->prev != '{' && nz->prev != '}'))
		return false;
	if (j < nz->len && !is_ident_start(nz->t[j]) && nz->t[j] != '}' && nz->t[j] != '#')
		return false;
	for (size_t i = 0; i < nz->src->defs.len; i++) {
		const struct macro_def *d = &nz->src->defs.items[i];
		size_t bl = strlen(d->body);
		if (d->function_like || strlen(d->name) != n || memcmp(d->name, nz->t + s, n) != 0 || !bl ||
		    d->body[bl - 1] != ';')
			continue;
		blank(nz->out, s, s + n);
		nz->out[s] = ';';
		return true;
	}
	return false;
}

static size_t neutralise_word(struct neutraliser *nz, size_t s)
{
	const char *t = nz->t;
	size_t len = nz->len;
	size_t i = s;
	while (i < len && is_ident_char(t[i]))
		i++;
	size_t n = i - s;
	if (word_in(t + s, n, blank_words, ARRAY_SIZE(blank_words))) {
		/* __exit_p(f) and __devexit_p(f) too: `(f)` stays, a parenthesised name */
		blank(nz->out, s, i);
		return i;
	}
	size_t j = ctext_skip_blanks(t, len, i);
	if (((n == 13 && memcmp(t + s, "__attribute__", 13) == 0) || (n == 11 && memcmp(t + s, "__attribute", 11) == 0)) &&
	    j < len && t[j] == '(') {
		/*
		 * `T x[N] __attribute__((section(...))) = {...};`: the grammar takes no
		 * attribute after a declarator (before `=`, `;` or `,`), and one before
		 * an initialiser leaves the rest of the file unread
		 */
		size_t e = skip_parens(t, len, j);
		size_t k = e < len ? ctext_skip_blanks(t, len, e) : len;
		if (k < len && ((t[k] == '=' && (k + 1 >= len || t[k + 1] != '=')) || t[k] == ';' || t[k] == ',')) {
			blank(nz->out, s, e);
			return e;
		}
	}
	if (nz->braces.len == 0 && word_in(t + s, n, toplevel_macros, ARRAY_SIZE(toplevel_macros))) {
		size_t e = blank_toplevel_macro(nz, s, n, j);
		if (e) {
			nz->prev = ';';
			return e;
		}
	}
	if (nz->braces.len > 0 && j < len && t[j] == '(' && rewrite_if_macro(nz, s, n, j))
		;
	else if (nz->braces.len > 0 && j < len && t[j] == '(' && is_iterator_macro(t + s, n))
		rewrite_iterator(nz, s, n, j);
	if (nz->braces.len > 0 && j < len && t[j] == '(')
		rewrite_type_arg(nz, s, n, j);
	rewrite_old_initialiser(nz, s, n, j);
	nz->prev = statement_macro(nz, s, n, j) ? ';' : 'w';
	return i;
}

/* Braces opened after `=` (or inside an initializer, after `{` or `,`) open an initializer. */
static void track_brace(struct neutraliser *nz, char c)
{
	if (c == '{') {
		bool init = nz->prev == '=' || (nz->braces.len > 0 && nz->braces.items[nz->braces.len - 1] == 'i' &&
						(nz->prev == '{' || nz->prev == ','));
		char kind = init ? 'i' : 'b';
		vec_push(&nz->braces, kind);
	} else if (c == '}' && nz->braces.len > 0) {
		nz->braces.len--;
	}
}

/* The directive word at t[i] == '#' ("if", "else", ...): its start and length. */
static size_t directive_word(const char *t, size_t e, size_t i, size_t *at)
{
	size_t k = i + 1;
	while (k < e && (t[k] == ' ' || t[k] == '\t'))
		k++;
	*at = k;
	while (k < e && is_ident_char(t[k]))
		k++;
	return k - *at;
}

/* Does a directive start at t[j]: a '#' with only blanks before it on its line? */
static bool directive_at(const char *t, size_t j)
{
	if (t[j] != '#')
		return false;
	while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '\t'))
		j--;
	return j == 0 || t[j - 1] == '\n';
}

/*
 * `#if 0` inside a function or initializer (I: its '#', E: its line's
 * end): the dead arm, the `#else` and the `#endif` are blanked in the
 * parse text, the live arm kept, so code around it parses (a `printk()`
 * whose argument list holds an `#if 0` arm). Returns the offset after the
 * `#endif`, or 0 when it is not one we handle (an `#elif` arm).
 */
static size_t blank_if0(struct neutraliser *nz, size_t i, size_t e)
{
	const char *t = nz->t;
	size_t w, n = directive_word(t, e, i, &w);
	size_t k = w + n;
	while (k < e && (t[k] == ' ' || t[k] == '\t'))
		k++;
	if (n == 2 && memcmp(t + w, "if", 2) == 0 && k < e && t[k] == '0')
		k++;
	else if (n == 5 && memcmp(t + w, "ifdef", 5) == 0 && e - k >= 11 && memcmp(t + k, "__cplusplus", 11) == 0 &&
		 (e - k == 11 || !is_ident_char(t[k + 11])))
		k += 11; /* kernel code is never C++: `extern "C" {` there is a dead arm */
	else
		return 0;
	while (k < e && (t[k] == ' ' || t[k] == '\t'))
		k++;
	if (k < e && ctext_at(t, e, k) != CTEXT_BLOCK_COMMENT && ctext_at(t, e, k) != CTEXT_LINE_COMMENT)
		return 0;
	/* find the #else / #endif of this #if, at depth 0 */
	int depth = 0;
	size_t else_end = 0;
	for (size_t j = e; j < nz->len; j++) {
		if (!directive_at(t, j))
			continue;
		size_t de = ctext_directive_end(t, nz->len, j), dw, dn = directive_word(t, de, j, &dw);
		if (dn >= 2 && memcmp(t + dw, "if", 2) == 0) {
			depth++;
		} else if (dn == 4 && memcmp(t + dw, "elif", 4) == 0 && depth == 0) {
			return 0;
		} else if (dn == 4 && memcmp(t + dw, "else", 4) == 0 && depth == 0) {
			else_end = de;
			blank(nz->out, i, de); /* #if 0, the dead arm, #else */
		} else if (dn == 5 && memcmp(t + dw, "endif", 5) == 0) {
			if (depth-- > 0)
				continue;
			if (!else_end)
				blank(nz->out, i, de); /* all of it */
			else
				blank(nz->out, j, de);
			return else_end ? else_end : de;
		}
		j = de > j ? de - 1 : j;
	}
	return 0;
}

/* Is the directive t[i, e) `#ifdef __cplusplus`? (blank_if0() blanks it at any depth.) */
static bool is_cplusplus(const char *t, size_t i, size_t e)
{
	const char *p = memmem(t + i, e - i, "__cplusplus", 11);
	return p && memmem(t + i, (size_t)(p - t) - i, "ifdef", 5) != NULL;
}

/* The OPEN brackets opened minus CLOSE closed in t[from, to) (comments and literals skipped). */
static long bracket_delta(const char *t, size_t from, size_t to, char open, char close)
{
	long d = 0;
	for (size_t i = from; i < to; ) {
		size_t past = ctext_skip(t, to, i);
		if (past != i) {
			i = past;
			continue;
		}
		d += t[i] == open ? 1 : t[i] == close ? -1 : 0;
		i++;
	}
	return d;
}

/*
 * Is t[from, to), an #if arm without #else, only the head of a statement
 * whose body follows the #endif (`if (!dev->tagged)`, `else`): a first word
 * if, while, for or else, its parentheses closed, no `;` or brace?
 */
static bool statement_head(const char *t, size_t from, size_t to)
{
	size_t p = ctext_skip_blanks(t, to, from), w = p;
	while (w < to && is_ident_char(t[w]))
		w++;
	bool head = (w - p == 2 && memcmp(t + p, "if", 2) == 0) || (w - p == 3 && memcmp(t + p, "for", 3) == 0) ||
		    (w - p == 4 && memcmp(t + p, "else", 4) == 0) || (w - p == 5 && memcmp(t + p, "while", 5) == 0);
	if (!head || bracket_delta(t, from, to, '(', ')') != 0 || bracket_delta(t, from, to, '{', '}') != 0)
		return false;
	for (size_t i = from; i < to; ) {
		size_t past = ctext_skip(t, to, i);
		if (past != i) {
			i = past;
			continue;
		}
		if (t[i] == ';' || t[i] == '{' || t[i] == '}')
			return false;
		i++;
	}
	return true;
}

/*
 * `#ifdef X` inside a function whose two arms each open (or close) the same
 * braces, the other arm's closing them after the `#endif`:
 *
 *	#ifdef ETHTOOL_GPERMADDR
 *		if (!is_valid_ether_addr(netdev->perm_addr)) {
 *	#else
 *		if (!is_valid_ether_addr(netdev->dev_addr)) {
 *	#endif
 *		...
 *		}
 *
 * or whose two arms each open the same parentheses of one statement, the
 * code after the `#endif` closing them:
 *
 *	#ifdef NORMAL_MEM_ACCESS
 *		if ((head->flag & OWN) ==
 *	#else
 *		if ((GET_FLAG(head) & OWN) ==
 *	#endif
 *			OWN_HOST)
 *
 * or, at file scope, a function's declarator given twice (one per
 * configuration) before its body's `{`; or whose one arm, without an
 * `#else`, is the head of a statement whose body follows the `#endif`
 * (statement_head()). No grammar reads that (tree-sitter
 * gives up on the rest of the file). The parse text keeps the first arm only: the `#if` line, the `#else`, the
 * other arm and the `#endif` are blanked, offsets unchanged. Arms holding
 * conditionals of their own, or an `#elif`, are left alone. Returns the
 * offset of the first arm's text, or 0.
 */
static size_t blank_split_arms(struct neutraliser *nz, size_t i, size_t e)
{
	const char *t = nz->t;
	size_t w, n = directive_word(t, e, i, &w);
	if (!(n == 2 && memcmp(t + w, "if", 2) == 0) && !(n == 5 && memcmp(t + w, "ifdef", 5) == 0) &&
	    !(n == 6 && memcmp(t + w, "ifndef", 6) == 0))
		return 0;
	size_t else_at = 0, else_end = 0;
	for (size_t j = e; j < nz->len; j++) {
		if (!directive_at(t, j))
			continue;
		size_t de = ctext_directive_end(t, nz->len, j), dw, dn = directive_word(t, de, j, &dw);
		if ((dn >= 2 && memcmp(t + dw, "if", 2) == 0) || (dn == 4 && memcmp(t + dw, "elif", 4) == 0))
			return 0;
		if (dn == 4 && memcmp(t + dw, "else", 4) == 0) {
			if (else_at)
				return 0;
			else_at = j, else_end = de;
		} else if (dn == 5 && memcmp(t + dw, "endif", 5) == 0) {
			if (!else_at) {
				if (nz->braces.len == 0 || !statement_head(t, e, j))
					return 0;
				blank(nz->out, i, e); /* the arm kept whole, its statement after the #endif */
				nz->skip_from = j, nz->skip_to = de;
				blank(nz->out, j, de);
				return e;
			}
			long a = bracket_delta(t, e, else_at, '{', '}'), b = bracket_delta(t, else_end, j, '{', '}');
			long pa = bracket_delta(t, e, else_at, '(', ')'), pb = bracket_delta(t, else_end, j, '(', ')');
			bool parens = a == 0 && b == 0 && pa > 0 && pa == pb;
			bool header = nz->braces.len == 0 && !memchr(t + e, ';', else_at - e) &&
				      !memchr(t + else_end, ';', j - else_end) && !memchr(t + e, '{', else_at - e) &&
				      !memchr(t + else_end, '{', j - else_end);
			size_t next = ctext_skip_blanks(t, nz->len, de);
			if (nz->braces.len == 0 ? !header || next >= nz->len || t[next] != '{'
						: !parens && (a == 0 || a != b))
				return 0;
			blank(nz->out, i, e);
			blank(nz->out, else_at, de);
			nz->skip_from = else_at, nz->skip_to = de;
			return e;
		}
		j = de > j ? de - 1 : j;
	}
	return 0;
}

static void neutralise(struct source *src)
{
	const char *t = src->text;
	size_t len = src->len;
	struct neutraliser nz = {src, t, src->parse_text, len, VEC_INIT, ';', SIZE_MAX, 0};
	bool line_start = true;

	for (size_t i = 0; i < len; ) {
		if (i >= nz.skip_from) {
			i = nz.skip_to; /* the other arm: blanked, its braces not counted */
			nz.skip_from = SIZE_MAX;
			continue;
		}
		char c = t[i];
		if (c == '\n') {
			line_start = true;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			continue;
		}
		if (c == '#' && line_start) {
			size_t e = ctext_directive_end(t, len, i);
			size_t after = nz.braces.len > 0 || is_cplusplus(t, i, e) ? blank_if0(&nz, i, e) : 0;
			if (!after)
				after = blank_split_arms(&nz, i, e);
			if (after) {
				/* the live arm (after the #else) is neutralised as usual; the #endif is blank */
				i = after;
				continue;
			}
			record_define(src, i, e);
			i = e;
			continue;
		}
		line_start = false;
		enum ctext_kind kind = ctext_at(t, len, i);
		if (kind == CTEXT_BLOCK_COMMENT || kind == CTEXT_LINE_COMMENT) {
			size_t e = ctext_skip_blanks(t, len, i);
			for (size_t k = i; k < e; k++)
				if (t[k] == '\n')
					line_start = true;
			i = e;
			continue;
		}
		if (kind == CTEXT_STRING || kind == CTEXT_CHAR) {
			i = ctext_skip(t, len, i);
			nz.prev = 'x';
			continue;
		}
		if (is_ident_start(c)) {
			i = neutralise_word(&nz, i);
			continue;
		}
		track_brace(&nz, c);
		nz.prev = c;
		i++;
	}
	vec_release(&nz.braces);
}

static void index_lines(struct source *src)
{
	vec_push(&src->line_starts, (size_t)0);
	for (size_t i = 0; i < src->len; i++)
		if (src->text[i] == '\n')
			vec_push(&src->line_starts, i + 1);
}

void source_init(struct source *src, const char *path, char *text, size_t len)
{
	memset(src, 0, sizeof *src);
	src->path = xstrdup(path);
	src->text = text;
	src->len = len;
	src->parse_text = xmalloc(len + 1);
	memcpy(src->parse_text, text, len + 1);
	index_lines(src);
	neutralise(src);
}

void source_release(struct source *src)
{
	free(src->path);
	free(src->text);
	free(src->parse_text);
	vec_release(&src->line_starts);
	for (size_t i = 0; i < src->uses.len; i++) {
		free(src->uses.items[i].name);
		for (size_t k = 0; k < src->uses.items[i].args.len; k++)
			free(src->uses.items[i].args.items[k]);
		vec_release(&src->uses.items[i].args);
	}
	vec_release(&src->uses);
	for (size_t i = 0; i < src->defs.len; i++) {
		free(src->defs.items[i].name);
		free(src->defs.items[i].body);
	}
	vec_release(&src->defs);
	vec_release(&src->if_macros);
}

struct srcpos source_pos(const struct source *src, size_t offset)
{
	size_t lo = line_index(src->line_starts.items, src->line_starts.len, offset);
	struct srcpos p = {(unsigned)lo + 1, (unsigned)(offset - src->line_starts.items[lo]) + 1, offset};
	return p;
}

bool source_in_directive(const struct source *src, size_t offset)
{
	for (size_t i = 0; i < src->defs.len; i++)
		if (src->defs.items[i].offset <= offset && offset < src->defs.items[i].end)
			return true;
	return false;
}

bool source_defines(const struct source *src, const char *name, size_t len)
{
	for (size_t i = 0; i < src->defs.len; i++)
		if (strlen(src->defs.items[i].name) == len && memcmp(src->defs.items[i].name, name, len) == 0)
			return true;
	return false;
}
