/*
 * Structs of per-CPU arrays across the tree: `struct S { T f[NR_CPUS]; ... }`
 * with one instance (2.4 `struct kernel_stat kstat`). Found on the text of
 * the tree's files (comments blanked), before any file is parsed: the
 * per-file scans need the fields that move to know which uses convert.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree_shared.h"
#include "analysis/tree.h"
#include "parse/ctext.h"
#include "parse/source.h"
#include "util/overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * TEXT with comments and the insides of string/char literals (their quotes
 * stay) blanked to spaces, newlines kept (owned).
 */
static char *blank_comments(const char *text, size_t len)
{
	char *t = xmalloc(len + 1);
	memcpy(t, text, len);
	t[len] = '\0';
	for (size_t i = 0; i < len;) {
		enum ctext_kind kind = ctext_at(text, len, i);
		size_t e = ctext_skip(text, len, i);
		if (kind == CTEXT_CODE) {
			i++;
			continue;
		}
		size_t from = i, to = e;
		if (kind == CTEXT_STRING || kind == CTEXT_CHAR) {
			from = i + 1;
			to = e > from && text[e - 1] == text[i] ? e - 1 : e;
		}
		for (size_t k = from; k < to; k++)
			if (t[k] != '\n')
				t[k] = ' ';
		i = e;
	}
	return t;
}

static size_t skip_blank(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r' || t[i] == '\\'))
		i++;
	return i;
}

static size_t word_end(const char *t, size_t len, size_t i)
{
	while (i < len && is_ident_char(t[i]))
		i++;
	return i;
}

static bool word_at(const char *t, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);
	return i + n <= len && memcmp(t + i, w, n) == 0 && (i == 0 || !is_ident_char(t[i - 1])) &&
	       (i + n == len || !is_ident_char(t[i + n]));
}

static unsigned line_at(const char *t, size_t i)
{
	unsigned line = 1;
	for (size_t k = 0; k < i; k++)
		line += t[k] == '\n';
	return line;
}

struct soa_def {
	char *tag, *file;
	unsigned line;
	struct buf fields; /* " f1 f2 ": the fields whose first dimension is NR_CPUS */
	bool global;       /* the struct has other fields too */
	char *why_not;
};
typedef VEC(struct soa_def) soa_def_vec;

/*
 * The declarators of one field declaration D (blanked text, no `;`), into
 * DEF: a per-CPU field has NR_CPUS as its first dimension. A reason when
 * one declaration mixes both kinds (owned), else NULL.
 */
static char *field_decl(const char *d, size_t n, struct soa_def *def, unsigned line)
{
	size_t i = 0, piece = 0;
	int depth = 0;
	/* a nested struct/union type: the declarators follow its closing brace */
	const char *close = NULL;
	for (size_t k = 0; k < n; k++) {
		if (d[k] == '{')
			depth++;
		else if (d[k] == '}' && --depth == 0)
			close = d + k;
	}
	if (close)
		i = (size_t)(close - d) + 1;
	unsigned percpu = 0, other = 0;
	depth = 0;
	for (size_t k = i; k <= n; k++) {
		if (k < n && (d[k] == '[' || d[k] == '('))
			depth++;
		else if (k < n && (d[k] == ']' || d[k] == ')'))
			depth--;
		if (k < n && (d[k] != ',' || depth))
			continue;
		/* one declarator in [piece_start, k): its name is the identifier before its first '[' */
		size_t s = piece ? piece : i, e = k;
		const char *br = memchr(d + s, '[', e - s);
		size_t ne = br ? (size_t)(br - d) : e;
		while (ne > s && !is_ident_char(d[ne - 1]))
			ne--;
		size_t ns = ne;
		while (ns > s && is_ident_char(d[ns - 1]))
			ns--;
		/* a bit-field `x : 3`: the name is before the colon */
		const char *colon = memchr(d + s, ':', e - s);
		if (!br && colon) {
			ne = (size_t)(colon - d);
			while (ne > s && !is_ident_char(d[ne - 1]))
				ne--;
			for (ns = ne; ns > s && is_ident_char(d[ns - 1]); ns--)
				;
		}
		bool nr = false;
		if (br) {
			size_t a = skip_blank(d, e, (size_t)(br - d) + 1), b = a;
			b = word_end(d, e, b);
			nr = b - a == 7 && memcmp(d + a, "NR_CPUS", 7) == 0 && skip_blank(d, e, b) < e &&
			     d[skip_blank(d, e, b)] == ']';
		}
		if (ne > ns && nr) {
			buf_printf(&def->fields, "%.*s ", (int)(ne - ns), d + ns);
			percpu++;
		} else {
			other++;
		}
		piece = k + 1;
	}
	if (percpu && other)
		return xasprintf("the field declaration at line %u mixes per-CPU arrays and other fields", line);
	if (other)
		def->global = true;
	return NULL;
}

/* Is byte I of T the first on its line but blanks? */
static bool first_on_line(const char *t, size_t i)
{
	while (i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\t'))
		i--;
	return i == 0 || t[i - 1] == '\n';
}

/* The fields of the struct body [OPEN+1, CLOSE) of T: per-CPU or not. */
static void struct_fields(const char *t, size_t open, size_t close, struct soa_def *def)
{
	size_t start = open + 1;
	int depth = 0;
	for (size_t i = open + 1; i < close; i++) {
		if (t[i] == '#' && first_on_line(t, i)) {
			/* a directive: to the end of its line (continuations included) */
			size_t k = i;
			while (k < close && !(t[k] == '\n' && t[k - 1] != '\\'))
				k++;
			if (depth == 0 && skip_blank(t, close, start) == i)
				start = k;
			i = k;
			continue;
		}
		if (t[i] == '{' || t[i] == '(' || t[i] == '[')
			depth++;
		else if (t[i] == '}' || t[i] == ')' || t[i] == ']')
			depth--;
		else if (t[i] == ';' && depth == 0) {
			size_t s = skip_blank(t, i, start);
			char *why = s < i ? field_decl(t + s, i - s, def, line_at(t, s)) : NULL;
			if (why && !def->why_not)
				def->why_not = why;
			else
				free(why);
			start = i + 1;
		}
	}
}

/* The struct definitions of T (blanked) with a per-CPU field, into OUT. */
static void find_defs(const char *path, const char *t, size_t len, soa_def_vec *out)
{
	for (const char *p = memmem(t, len, "struct", 6); p; p = memmem(p + 1, len - (size_t)(p + 1 - t), "struct", 6)) {
		size_t i = (size_t)(p - t);
		if (!word_at(t, len, i, "struct"))
			continue;
		size_t ts = skip_blank(t, len, i + 6), te = word_end(t, len, ts);
		if (te == ts)
			continue;
		size_t open = skip_blank(t, len, te);
		if (open >= len || t[open] != '{')
			continue;
		int depth = 0;
		size_t close = open;
		for (; close < len; close++) {
			if (t[close] == '{')
				depth++;
			else if (t[close] == '}' && --depth == 0)
				break;
		}
		if (close >= len)
			return;
		const char *nr = memmem(t + open, close - open, "NR_CPUS", 7);
		if (nr) {
			struct soa_def d = {xstrndup(t + ts, te - ts), xstrdup(path), line_at(t, i), BUF_INIT, false, NULL};
			struct_fields(t, open, close, &d);
			if (d.fields.len)
				vec_push(out, d);
			else {
				free(d.tag);
				free(d.file);
				buf_release(&d.fields);
				free(d.why_not);
			}
		}
	}
}

/* The uses of `struct TAG` in T (blanked): definitions, instances, the first other use. */
struct soa_uses {
	const struct soa_def *def;
	char *name;             /* the instance's name */
	char *file;             /* where it is defined (not extern) */
	unsigned line, defs;    /* instances defined */
	char *why_not;
	bool decl_in_def_file;  /* the struct's file declares the instance */
	char *init_why;         /* the instance's initialiser, a reason after the others */
};

static void note_why(struct soa_uses *u, char *why)
{
	if (!u->why_not)
		u->why_not = why;
	else
		free(why);
}

/* `struct TAG {` at I of PATH: a second definition, or one with a typedef name, is a reason. */
static void note_definition(struct soa_uses *u, const char *path, const char *t, size_t i, unsigned line)
{
	const char *tag = u->def->tag;
	size_t b = i;
	while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t' || t[b - 1] == '\n'))
		b--;
	if (b >= 7 && memcmp(t + b - 7, "typedef", 7) == 0 && (b == 7 || !is_ident_char(t[b - 8])))
		note_why(u, xasprintf("struct %s is defined with a typedef name (%s:%u): uses through it "
				      "are not followed", tag, path, line));
	if (strcmp(path, u->def->file) != 0 || line != u->def->line)
		note_why(u, xasprintf("struct %s is also defined at %s:%u", tag, path, line));
}

/*
 * The instance NAME declared at PATH:LINE (EXT: extern; INIT: with an
 * initialiser): one name, one definition, and where the struct's file
 * declares it.
 */
static void note_instance(struct soa_uses *u, const char *path, unsigned line, const char *name, bool ext,
			  bool init)
{
	const char *tag = u->def->tag;
	if (u->name && strcmp(u->name, name) != 0)
		note_why(u, xasprintf("struct %s has more than one instance (%s, %s at %s:%u): per-CPU "
				      "fields of a struct with many instances need alloc_percpu, a redesign",
				      tag, u->name, name, path, line));
	else if (!u->name)
		u->name = xstrdup(name);
	if (strcmp(path, u->def->file) == 0)
		u->decl_in_def_file = true;
	if (ext)
		return;
	u->defs++;
	if (u->defs > 1)
		note_why(u, xasprintf("%s is defined more than once (%s:%u and %s:%u)", name, u->file,
				      u->line, path, line));
	else {
		u->file = xstrdup(path);
		u->line = line;
	}
	if (init && !u->init_why)
		u->init_why = xasprintf("%s has an initialiser (%s:%u): DEFINE_PER_CPU data starts "
					"zeroed; set it by hand", name, path, line);
}

/*
 * A use of `struct TAG` at I of T (blanked), its name at K, other than its
 * definition or a forward declaration: the one instance, or a reason.
 */
static void note_use(struct soa_uses *u, const char *path, const char *t, size_t len, size_t i, size_t k,
		     unsigned line)
{
	const char *tag = u->def->tag;
	size_t ne = word_end(t, len, k);
	size_t after = skip_blank(t, len, ne);
	bool plain = ne > k && after < len && (t[after] == ';' || t[after] == '=' ||
						 word_at(t, len, after, "__cacheline_aligned"));
	/* the word before `struct`: extern, typedef or none */
	size_t b = i;
	while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t' || t[b - 1] == '\n'))
		b--;
	size_t ws = b;
	while (ws > 0 && is_ident_char(t[ws - 1]))
		ws--;
	if (b - ws == 7 && memcmp(t + ws, "typedef", 7) == 0) {
		note_why(u, xasprintf("struct %s has a typedef name (%s:%u): uses through it are not "
				      "followed", tag, path, line));
		return;
	}
	if (ne == k && k < len && t[k] == ',') {
		/* offsetof(struct S, f): the layout is used, by assembly or by hand */
		note_why(u, xasprintf("the layout of struct %s is used at %s:%u (offsetof, for assembly "
				      "code or by hand): its per-CPU fields cannot move (--exclude that code to "
				      "convert the rest, and port it by hand)", tag, path, line));
		return;
	}
	if (ne > k && after < len && t[after] == ',') {
		note_why(u, xasprintf("struct %s has more than one instance (%s:%u): per-CPU fields of a "
				      "struct with many instances need alloc_percpu, a redesign", tag, path, line));
		return;
	}
	if (!plain) {
		note_why(u, xasprintf("struct %s is used at %s:%u other than as its one instance (a pointer, "
				      "a parameter, a copy or an array of them): per-CPU fields of a struct "
				      "with many instances need alloc_percpu, a redesign", tag, path, line));
		return;
	}
	bool ext = b - ws == 6 && memcmp(t + ws, "extern", 6) == 0;
	char *name = xstrndup(t + k, ne - k);
	note_instance(u, path, line, name, ext, t[after] == '=');
	free(name);
}

static void find_uses(const char *path, const char *t, size_t len, struct soa_uses *u)
{
	const char *tag = u->def->tag;
	for (const char *p = memmem(t, len, "struct", 6); p; p = memmem(p + 1, len - (size_t)(p + 1 - t), "struct", 6)) {
		size_t i = (size_t)(p - t);
		if (!word_at(t, len, i, "struct"))
			continue;
		size_t ts = skip_blank(t, len, i + 6), te = word_end(t, len, ts);
		if (te - ts != strlen(tag) || memcmp(t + ts, tag, te - ts) != 0)
			continue;
		size_t k = skip_blank(t, len, te);
		unsigned line = line_at(t, i);
		if (k < len && t[k] == '{')
			note_definition(u, path, t, i, line);
		else if (!(k < len && t[k] == ';')) /* not a forward declaration */
			note_use(u, path, t, len, i, k, line);
	}
}

/* The hashes of the struct tags a file names (`struct TAG`), in no order. */
typedef VEC(uint32_t) tag_set;

static uint32_t tag_hash(const char *s, size_t n)
{
	return (uint32_t)hash_bytes(s, n);
}

static void struct_tags(const char *text, size_t len, tag_set *out)
{
	for (const char *p = memmem(text, len, "struct", 6); p; p = memmem(p + 1, len - (size_t)(p + 1 - text), "struct", 6)) {
		size_t i = (size_t)(p - text);
		if (!word_at(text, len, i, "struct"))
			continue;
		size_t ts = skip_blank(text, len, i + 6), te = word_end(text, len, ts);
		if (te > ts)
			vec_push(out, tag_hash(text + ts, te - ts));
	}
}

static bool tag_set_has(const tag_set *s, const char *tag)
{
	uint32_t h = tag_hash(tag, strlen(tag));
	for (size_t i = 0; i < s->len; i++)
		if (s->items[i] == h)
			return true;
	return false;
}

/*
 * The identifiers of TEXT that end in a suffix a per-CPU part's name may
 * take, into WORDS: without the index's identifiers, what tree_names()
 * looks up instead of reading the tree again.
 */
static void suffixed_words(const char *text, size_t len, struct strvec *words)
{
	const char *const suffixes[] = {"_percpu", "_pcpu", "_cpu_data"};
	for (size_t k = 0; k < 3; k++) {
		size_t sl = strlen(suffixes[k]);
		for (const char *p = memmem(text, len, suffixes[k], sl); p;
		     p = memmem(p + 1, len - (size_t)(p + 1 - text), suffixes[k], sl)) {
			if (p + sl < text + len && is_ident_char(p[sl]))
				continue;
			const char *b = p;
			while (b > text && is_ident_char(b[-1]))
				b--;
			vec_push(words, xstrndup(b, (size_t)(p + sl - b)));
		}
	}
}

/*
 * Does a file of INDEX name WORD? With IDS (their identifiers), only the
 * files that may are read; without, WORDS holds every suffixed identifier.
 */
static bool tree_names(char *const *index, size_t n, const struct tree_ids *ids, const struct strvec *words,
		       const char *word)
{
	if (!ids) {
		for (size_t i = 0; i < words->len; i++)
			if (strcmp(words->items[i], word) == 0)
				return true;
		return false;
	}
	for (size_t f = 0; f < n; f++) {
		if (ids[f].ids && !tree_ids_has(&ids[f], word))
			continue;
		char *text;
		size_t len;
		if (overlay_read(index[f], &text, &len) < 0)
			continue;
		bool has = text_has_word(text, len, word);
		free(text);
		if (has)
			return true;
	}
	return false;
}

static bool may_name(const struct tree_ids *ids, size_t f, const char *word)
{
	return !ids || !ids[f].ids || strlen(word) < TREE_MIN_NAME || tree_ids_has(&ids[f], word);
}

/* The tree as soa_discover() reads it. */
struct soa_tree {
	char *const *index;
	size_t n;
	const struct tree_ids *ids; /* the files' identifiers, or NULL */
	tag_set *tags;              /* without IDS: each file's struct tags (one per file) */
	struct strvec words;        /* without IDS: every suffixed identifier (suffixed_words()) */
};

/*
 * The first read of the tree: the struct definitions with a per-CPU field,
 * into DEFS; without the index's identifiers, it notes what the next read
 * and tree_names() need: each file's struct tags, the suffixed words.
 */
static void read_defs(struct soa_tree *tr, soa_def_vec *defs)
{
	for (size_t f = 0; f < tr->n; f++) {
		char *text;
		size_t len;
		if (!may_name(tr->ids, f, "NR_CPUS") || overlay_read(tr->index[f], &text, &len) < 0)
			continue;
		if (tr->tags) {
			struct_tags(text, len, &tr->tags[f]);
			suffixed_words(text, len, &tr->words);
		}
		if (memmem(text, len, "NR_CPUS", 7)) {
			char *t = blank_comments(text, len);
			find_defs(tr->index[f], t, len, defs);
			free(t);
		}
		free(text);
	}
}

/* One read of the tree for every struct's uses: USES[d] for DEFS' d. */
static void read_uses(const struct soa_tree *tr, const soa_def_vec *defs, struct soa_uses *uses)
{
	for (size_t f = 0; f < tr->n && defs->len; f++) {
		/* a struct already left alone needs no more of the tree (task_struct: refused at its first pointer) */
		bool maybe = false;
		for (size_t d = 0; d < defs->len && !maybe; d++)
			maybe = !uses[d].why_not && (tr->tags ? tag_set_has(&tr->tags[f], defs->items[d].tag)
							      : may_name(tr->ids, f, defs->items[d].tag));
		char *text;
		size_t len;
		if (!maybe || overlay_read(tr->index[f], &text, &len) < 0)
			continue;
		char *t = NULL;
		for (size_t d = 0; d < defs->len; d++) {
			if (uses[d].why_not || !text_has_word(text, len, defs->items[d].tag))
				continue;
			if (!t)
				t = blank_comments(text, len);
			find_uses(tr->index[f], t, len, &uses[d]);
		}
		free(t);
		free(text);
	}
}

/* Why the instance U of DEF's struct cannot have its per-CPU fields moved, into U. */
static void instance_whys(const struct soa_def *def, struct soa_uses *u)
{
	if (!def->global)
		note_why(u, xasprintf("every field of struct %s is a per-CPU array: %s becomes "
				      "DEFINE_PER_CPU(struct %s, %s) with the fields' [NR_CPUS] dropped, by hand "
				      "(preemptify moves the per-CPU fields out of a struct that keeps others)",
				      def->tag, u->name, def->tag, u->name));
	size_t fl = strlen(u->file);
	if (fl < 2 || strcmp(u->file + fl - 2, ".c") != 0)
		note_why(u, xasprintf("%s is defined in %s, not in a .c file: DEFINE_PER_CPU there would "
				      "define it in every file that includes it", u->name, u->file));
	if (!u->decl_in_def_file)
		note_why(u, xasprintf("%s, where struct %s is defined, does not declare %s: the per-CPU "
				      "struct has no place to go", def->file, def->tag, u->name));
}

/*
 * The first name of U's per-CPU part no file of the tree takes (owned), or
 * NULL; a reason into U when there is none, or when the tree takes the
 * per-CPU struct's tag STAG.
 */
static char *percpu_part_name(const struct soa_tree *tr, struct soa_uses *u, const char *stag)
{
	char *var = NULL;
	const char *const forms[] = {"%s_percpu", "%s_pcpu", "%s_cpu_data"};
	for (size_t k = 0; k < 3 && !var; k++) {
		char *v = xasprintf(forms[k], u->name);
		if (!tree_names(tr->index, tr->n, tr->ids, &tr->words, v))
			var = v;
		else
			free(v);
	}
	if (!var)
		note_why(u, xasprintf("every name tried for %s's per-CPU part is taken in the tree", u->name));
	else if (tree_names(tr->index, tr->n, tr->ids, &tr->words, stag))
		note_why(u, xasprintf("the name %s is taken in the tree", stag));
	return var;
}

/* The tree's entry for DEF's struct of arrays, with its uses U (consumed), into A; none for a mere type. */
static void add_soa_array(tree_array_vec *a, const struct soa_def *def, struct soa_uses u, const struct soa_tree *tr)
{
	if (u.init_why)
		note_why(&u, u.init_why);
	if ((!u.name || !u.defs) && !u.why_not) {
		free(u.name);
		free(u.file);
		return; /* a type, not per-CPU data of the tree: nothing to say */
	}
	if (!u.name || !u.defs) {
		/* left alone before its instance was met (the tree is read no further): the struct says why */
		free(u.name);
		free(u.file);
		struct tree_array t = {xstrdup(""), xasprintf("struct %s", def->tag), xstrdup(def->file), def->line,
				       u.why_not, NULL, xstrdup(def->tag), xstrdup(def->file), def->line,
				       xstrdup(""), xasprintf(" %s", buf_cstr(&def->fields)), NULL, false, false};
		vec_push(a, t);
		return;
	}
	instance_whys(def, &u);
	char *stag = xasprintf("%s_percpu", def->tag);
	char *var = percpu_part_name(tr, &u, stag);
	struct tree_array t = {u.name, xasprintf("struct %s", stag), u.file, u.line, u.why_not, NULL,
			       xstrdup(def->tag), xstrdup(def->file), def->line,
			       var ? var : xstrdup(u.name), xasprintf(" %s", buf_cstr(&def->fields)), NULL, false, false};
	free(stag);
	vec_push(a, t);
}

void soa_discover(tree_array_vec *a, char *const *index, size_t n, const struct tree_ids *ids)
{
	soa_def_vec defs = VEC_INIT;
	/* without the index's identifiers, this read notes what the next needs: each file's struct tags */
	struct soa_tree tr = {index, n, ids, ids ? NULL : xcalloc(n ? n : 1, sizeof *tr.tags), VEC_INIT};
	read_defs(&tr, &defs);
	struct soa_uses *uses = xcalloc(defs.len ? defs.len : 1, sizeof *uses);
	for (size_t d = 0; d < defs.len; d++)
		uses[d] = (struct soa_uses){&defs.items[d], NULL, NULL, 0, 0,
					    defs.items[d].why_not ? xstrdup(defs.items[d].why_not) : NULL, false, NULL};
	read_uses(&tr, &defs, uses);
	for (size_t d = 0; d < defs.len; d++)
		add_soa_array(a, &defs.items[d], uses[d], &tr);
	free(uses);
	strvec_release(&tr.words);
	for (size_t f = 0; tr.tags && f < n; f++)
		vec_release(&tr.tags[f]);
	free(tr.tags);
	for (size_t d = 0; d < defs.len; d++) {
		free(defs.items[d].tag);
		free(defs.items[d].file);
		buf_release(&defs.items[d].fields);
		free(defs.items[d].why_not);
	}
	vec_release(&defs);
}
