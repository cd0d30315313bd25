/*
 * Lock macros of the tree's headers: a function-like #define under
 * include/ whose body is one locking call of kernel_api.c,
 *
 *	#define s390irq_spin_lock_irqsave(irq,flags) \
 *		spin_lock_irqsave(&(ioinfo[irq]->irq_lock), flags)
 *	#define hci_dev_lock(d)	spin_lock(&d->lock)
 *
 * (2.4 include/asm-s390/irq.h, include/net/bluetooth/hci_core.h), or a
 * debug arm with one such call among checks (2.6's netfilter READ_LOCK,
 * pick_locking_stmt()), is read
 * as that call wherever a file uses it: it takes and drops what the call
 * does, and its lock is the call's lock argument with the macro's
 * parameters replaced by the use's arguments. A name defined twice with
 * different meanings (architecture variants) is not used; a file that
 * defines the name itself keeps its own definition.
 */
#include "analysis/kernel_api.h"
#include "parse/ctext.h"
#include "parse/source.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct hdr_lock {
	struct api api;   /* the call's op and keys under the macro's name; api.hdr points back */
	char *name;
	VEC(char *) params;
	char *lock_expr;  /* KEY_LOCK: the call's lock argument, as written */
	bool ambiguous;   /* defined elsewhere as something else */
};

static VEC(struct hdr_lock) locks;
/*
 * Predicate macros: a lower-case function-like name every header defines
 * as an expression that calls and changes nothing (`#define
 * enable_shub_wars_1_1() (pda.shub_1_1_found)`, asm-ia64/sn/pda.h), so
 * two tests of it with no write between read one value (paths_facts.c).
 * Sorted, for bsearch.
 */
static VEC(char *) pure_names;
static uint32_t *by_name;   /* open addressing: index + 1 of each usable lock, 0 empty */
static size_t by_name_cap;  /* a power of two */

#define HDR_MAX_DEPTH 8

static void hdr_lock_release(struct hdr_lock *h)
{
	free(h->name);
	for (size_t i = 0; i < h->params.len; i++)
		free(h->params.items[i]);
	vec_release(&h->params);
	free(h->lock_expr);
}

void header_locks_reset(void)
{
	for (size_t i = 0; i < locks.len; i++)
		hdr_lock_release(&locks.items[i]);
	vec_release(&locks);
	for (size_t i = 0; i < pure_names.len; i++)
		free(pure_names.items[i]);
	vec_release(&pure_names);
	free(by_name);
	by_name = NULL;
	by_name_cap = 0;
}

static size_t name_hash(const char *s, size_t n)
{
	size_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void index_names(void)
{
	by_name_cap = 16;
	while (by_name_cap < 2 * locks.len + 1)
		by_name_cap *= 2;
	by_name = xcalloc(by_name_cap, sizeof *by_name);
	for (size_t i = 0; i < locks.len; i++) {
		if (locks.items[i].ambiguous)
			continue;
		const char *n = locks.items[i].name;
		size_t k = name_hash(n, strlen(n)) & (by_name_cap - 1);
		while (by_name[k])
			k = (k + 1) & (by_name_cap - 1);
		by_name[k] = (uint32_t)i + 1;
	}
}

/* S..E without blanks at both ends. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\n'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\n' || (*e)[-1] == ';'))
		(*e)--;
}

/* From `(` at P to its `)` (exclusive of neither), or NULL when unbalanced before E. */
static const char *close_paren(const char *p, const char *e)
{
	int depth = 0;
	for (; p < e; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return NULL;
}

/* `do { BODY } while (0)` is BODY. */
static void strip_do_while(const char **s, const char **e)
{
	if (*e - *s < 12 || memcmp(*s, "do", 2) != 0 || is_ident_char((*s)[2]))
		return;
	const char *open = memchr(*s, '{', (size_t)(*e - *s));
	const char *close = NULL;
	for (const char *p = *e; p > *s; p--)
		if (p[-1] == '}') {
			close = p - 1;
			break;
		}
	if (!open || !close || close < open)
		return;
	const char *tail = close + 1, *te = *e;
	trim(&tail, &te);
	if (te - tail < 8 || memcmp(tail, "while", 5) != 0)
		return;
	*s = open + 1;
	*e = close;
	trim(s, e);
}

/*
 * `do { CHECK(l); spin_lock(&(l)->l); set_bit(cpu, &(l)->map); } while (0)`
 * (a debug arm of a lock macro): of the statements [*S, *E) exactly one is
 * a whole call of kernel_api.c, no other names one, and none returns or
 * jumps; then that statement is the body. Anything else is left alone.
 */
static void pick_locking_stmt(const char **s, const char **e)
{
	const char *pick = NULL, *pick_e = NULL;
	int depth = 0;
	for (const char *st = *s, *p = *s; p <= *e; p++) {
		if (p < *e && (*p == '(' || *p == '{'))
			depth++;
		else if (p < *e && (*p == ')' || *p == '}'))
			depth--;
		if (p < *e && (depth > 0 || *p != ';'))
			continue;
		const char *a = st, *ae = p;
		st = p + 1;
		trim(&a, &ae);
		if (a == ae)
			continue;
		const char *c = a;
		while (c < ae && is_ident_char(*c))
			c++;
		const char *o = c;
		while (o < ae && (*o == ' ' || *o == '\t'))
			o++;
		if (c > a && o < ae && *o == '(' && close_paren(o, ae) == ae - 1 && api_lookup(a, (size_t)(c - a))) {
			if (pick)
				return; /* two locking calls */
			pick = a, pick_e = ae;
			continue;
		}
		for (const char *q = a; q < ae;) { /* another statement: no API call, no jump */
			const char *w = q;
			while (q < ae && is_ident_char(*q))
				q++;
			if (q == w) {
				q++;
				continue;
			}
			size_t n = (size_t)(q - w);
			if ((n == 6 && memcmp(w, "return", 6) == 0) || (n == 4 && memcmp(w, "goto", 4) == 0) ||
			    (n == 5 && memcmp(w, "break", 5) == 0) || api_lookup(w, n))
				return;
		}
	}
	if (pick)
		*s = pick, *e = pick_e;
}

/* What one definition of a name means. */
enum def_kind { DEF_LOCK, DEF_NOOP, DEF_PURE, DEF_OTHER };

struct def_seen {
	char *name;
	unsigned file;            /* the header's number in the walk */
	enum def_kind kind;
	const struct api *api;    /* DEF_LOCK */
};

static VEC(struct def_seen) seen; /* every definition of the walk, decided at its end */
static unsigned file_no;

static void see(const char *name, size_t nlen, enum def_kind kind, const struct api *a)
{
	struct def_seen d = {xstrndup(name, nlen), file_no, kind, a};
	vec_push(&seen, d);
}

/* Is the body [B, BE) no code at all: empty, `do { } while (0)`, `(void)0`? */
static bool noop_body(const char *b, const char *be)
{
	static const char *const noops[] = {"", "do{}while(0)", "do{}while(0);", "(void)0", "((void)0)", "{}",
					    "do{;}while(0)", "0", "(0)"};
	char flat[32];
	size_t n = 0;
	for (; b < be; b++) {
		if (*b == ' ' || *b == '\t' || *b == '\n')
			continue;
		if (n + 1 >= sizeof flat)
			return false;
		flat[n++] = *b;
	}
	flat[n] = '\0';
	for (size_t i = 0; i < sizeof noops / sizeof *noops; i++)
		if (strcmp(flat, noops[i]) == 0)
			return true;
	return false;
}

/*
 * Is the body [B, BE) an expression that calls nothing and writes nothing:
 * names, fields, constants and operators, `sizeof`, no `=` but in a
 * comparison, no `++`/`--`, no statement?
 */
static bool pure_body(const char *b, const char *be)
{
	bool any = false;
	for (const char *p = b; p < be; p++) {
		if (is_ident_char(*p)) {
			const char *q = p;
			while (q < be && is_ident_char(*q))
				q++;
			const char *o = q;
			while (o < be && (*o == ' ' || *o == '\t'))
				o++;
			bool is_sizeof = q - p == 6 && memcmp(p, "sizeof", 6) == 0;
			if (o < be && *o == '(' && !is_sizeof && !(*p >= '0' && *p <= '9'))
				return false; /* a call, or another macro */
			p = q - 1;
			any = true;
		} else if (strchr(";{}\"'#", *p) || ((*p == '+' || *p == '-') && p + 1 < be && p[1] == *p)) {
			return false;
		} else if (*p == '=' && !(p > b && strchr("=!<>", p[-1])) && !(p + 1 < be && p[1] == '=')) {
			return false;
		}
	}
	return any;
}

/* One definition NAME(PARAMS) BODY, the body already joined over its continuations. */
static void consider(const char *name, size_t nlen, const char *params, size_t plen, const char *b, const char *be)
{
	trim(&b, &be);
	if (pure_body(b, be)) {
		see(name, nlen, DEF_PURE, NULL);
		return;
	}
	if (noop_body(b, be)) {
		see(name, nlen, DEF_NOOP, NULL);
		return;
	}
	strip_do_while(&b, &be);
	pick_locking_stmt(&b, &be);
	const char *callee = b;
	while (b < be && is_ident_char(*b))
		b++;
	size_t clen = (size_t)(b - callee);
	const char *open = b;
	while (open < be && (*open == ' ' || *open == '\t'))
		open++;
	const struct api *a = clen && open < be && *open == '(' && close_paren(open, be) == be - 1
		? api_lookup(callee, clen) : NULL;
	if (!a || api_lookup(name, nlen)) { /* not one locking call, or the kernel's own name */
		see(name, nlen, DEF_OTHER, NULL);
		return;
	}
	see(name, nlen, DEF_LOCK, a);
	for (size_t i = 0; i < locks.len; i++)
		if (strlen(locks.items[i].name) == nlen && memcmp(locks.items[i].name, name, nlen) == 0)
			return; /* the first definition names the lock */
	const char *arg0 = open + 1, *arg0e = arg0;
	for (int depth = 0; arg0e < be - 1 && (depth > 0 || *arg0e != ','); arg0e++)
		depth += *arg0e == '(' ? 1 : *arg0e == ')' ? -1 : 0;
	struct hdr_lock h;
	memset(&h, 0, sizeof h);
	h.name = xstrndup(name, nlen);
	h.api = *a;
	h.api.name = h.name;
	if (a->keys & KEY_LOCK)
		h.lock_expr = xstrndup(arg0, (size_t)(arg0e - arg0));
	for (const char *p = params; p < params + plen;) {
		while (p < params + plen && !is_ident_char(*p))
			p++;
		const char *q = p;
		while (q < params + plen && is_ident_char(*q))
			q++;
		if (q > p)
			vec_push(&h.params, xstrndup(p, (size_t)(q - p)));
		p = q;
	}
	vec_push(&locks, h);
}

/*
 * A function a header defines (`static inline unsigned long
 * claim_dma_lock(void)` in asm-i386/dma.h beside a macro in
 * asm-sparc64/dma.h): the line starts with static or extern and names it
 * before its `(`.
 */
static void see_function(const char *l, const char *eol)
{
	const char *p = l;
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	if (!((eol - p > 7 && memcmp(p, "static", 6) == 0) || (eol - p > 7 && memcmp(p, "extern", 6) == 0)))
		return;
	const char *paren = memchr(p, '(', (size_t)(eol - p));
	if (!paren)
		return;
	const char *e = paren;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	const char *n = e;
	while (n > p && is_ident_char(n[-1]))
		n--;
	if (e > n)
		see(n, (size_t)(e - n), DEF_OTHER, NULL);
}

static int def_seen_cmp(const void *a, const void *b)
{
	const struct def_seen *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (int)x->kind - (int)y->kind;
}

/* After the walk: the lower-case names every definition of which is pure. */
static void decide_pure(void)
{
	if (seen.len > 1)
		qsort(seen.items, seen.len, sizeof *seen.items, def_seen_cmp);
	for (size_t k = 0; k < seen.len;) {
		size_t e = k;
		bool pure = true;
		for (; e < seen.len && strcmp(seen.items[e].name, seen.items[k].name) == 0; e++)
			pure &= seen.items[e].kind == DEF_PURE;
		const char *n = seen.items[k].name;
		bool lower = false;
		for (const char *c = n; *c; c++)
			lower |= *c >= 'a' && *c <= 'z';
		if (pure && lower && !api_lookup(n, strlen(n)) && !api_context_test(n, strlen(n)))
			vec_push(&pure_names, xstrdup(n));
		k = e;
	}
}

/* After the walk: a name some definition gives another meaning (or a no-op in another header) is not used. */
static void decide(void)
{
	for (size_t i = 0; i < locks.len; i++) {
		struct hdr_lock *h = &locks.items[i];
		size_t n = strlen(h->name);
		unsigned lock_file = 0;
		bool have = false;
		for (size_t k = 0; k < seen.len && !h->ambiguous; k++) {
			const struct def_seen *d = &seen.items[k];
			if (strlen(d->name) != n || memcmp(d->name, h->name, n) != 0)
				continue;
			if (d->kind == DEF_LOCK && !have)
				lock_file = d->file, have = true;
			if (d->kind == DEF_OTHER || (d->kind == DEF_LOCK && (d->api->op != h->api.op || d->api->keys != h->api.keys)))
				h->ambiguous = true;
		}
		for (size_t k = 0; k < seen.len && !h->ambiguous; k++) {
			const struct def_seen *d = &seen.items[k];
			if (d->kind == DEF_NOOP && strlen(d->name) == n && memcmp(d->name, h->name, n) == 0 &&
			    d->file != lock_file)
				h->ambiguous = true; /* another architecture's no-op: not this lock everywhere */
		}
	}
	decide_pure();
	for (size_t k = 0; k < seen.len; k++)
		free(seen.items[k].name);
	vec_release(&seen);
}

/* The function-like #defines of header TEXT, and the functions it defines. */
static void read_header(const char *text, size_t len)
{
	const char *end = text + len;
	for (const char *l = text; l && l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l));
		const char *next = eol ? eol + 1 : NULL;
		const char *p = l;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '#') {
			see_function(l, eol ? eol : end);
			l = next;
			continue;
		}
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *name = p + 7;
		if (end - p < 7 || memcmp(p, "define", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) {
			l = next;
			continue;
		}
		while (name < end && (*name == ' ' || *name == '\t'))
			name++;
		p = name;
		while (p < end && is_ident_char(*p))
			p++;
		const char *dend = p; /* the directive's end: past its continuations */
		while (dend < end && (*dend != '\n' || dend[-1] == '\\'))
			dend++;
		next = dend < end ? dend + 1 : NULL;
		const char *pclose = p < end && *p == '(' ? memchr(p, ')', (size_t)(dend - p)) : NULL;
		if (p == name || !pclose) {
			l = next;
			continue;
		}
		char *body = xstrndup(pclose + 1, (size_t)(dend - pclose - 1));
		for (char *c = body; *c; c++)
			if (*c == '\\' && (c[1] == '\n' || c[1] == '\0'))
				*c = ' ';
		consider(name, (size_t)(p - name), p + 1, (size_t)(pclose - p - 1), body, body + strlen(body));
		free(body);
		l = next;
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	VEC(char *) names = VEC_INIT;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			vec_push(&names, xstrdup(e->d_name));
	closedir(d);
	if (names.len > 1) /* qsort() of an empty directory's NULL list is undefined */
		qsort(names.items, names.len, sizeof *names.items, name_cmp); /* one order: one answer */
	for (size_t i = 0; i < names.len; i++) {
		char *p = xasprintf("%s/%s", dir, names.items[i]);
		size_t n = strlen(p);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth < HDR_MAX_DEPTH) {
			walk(p, depth + 1);
		} else if (S_ISREG(st.st_mode) && n > 2 && strcmp(p + n - 2, ".h") == 0) {
			char *text = NULL;
			size_t len = 0;
			if (read_file_max(p, 1u << 22, &text, &len) == 0)
				read_header(text, len);
			file_no++;
			error_clear();
			free(text);
		}
		free(p);
		free(names.items[i]);
	}
	vec_release(&names);
}

void header_locks_read(const char *root)
{
	header_locks_reset();
	char *inc = xasprintf("%s/include", root);
	file_no = 0;
	walk(inc, 0);
	free(inc);
	decide();
	for (size_t i = 0; i < locks.len; i++)
		locks.items[i].api.hdr = &locks.items[i];
	index_names();
}

void header_locks_digest(struct buf *out)
{
	buf_printf(out, "header-locks %zu\n", locks.len);
	for (size_t i = 0; i < locks.len; i++) {
		const struct hdr_lock *h = &locks.items[i];
		buf_printf(out, "%s%c%d %d %u %u %s%c%s%c%s%c", h->name, 0, h->ambiguous, (int)h->api.op, h->api.keys,
			   h->api.lock_arg, h->api.lock ? h->api.lock : "-", 0, h->api.lock_field ? h->api.lock_field : "-",
			   0, h->lock_expr ? h->lock_expr : "-", 0);
		for (size_t k = 0; k < h->params.len; k++)
			buf_printf(out, "%s%c", h->params.items[k], 1);
		buf_putc(out, '\n');
	}
	buf_printf(out, "pure-macros %zu\n", pure_names.len);
	for (size_t i = 0; i < pure_names.len; i++)
		buf_printf(out, "%s\n", pure_names.items[i]);
}

static int pure_key_cmp(const void *key, const void *item)
{
	const char *const *k = key;
	return strcmp(*k, *(char *const *)item);
}

bool api_pure_macro(const char *name, size_t len)
{
	char buf[128];
	if (!pure_names.len || len >= sizeof buf)
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	const char *k = buf;
	return bsearch(&k, pure_names.items, pure_names.len, sizeof *pure_names.items, pure_key_cmp) != NULL;
}

const struct api *api_header_lock(const char *name, size_t len)
{
	if (!by_name_cap)
		return NULL;
	for (size_t k = name_hash(name, len) & (by_name_cap - 1); by_name[k]; k = (k + 1) & (by_name_cap - 1)) {
		const struct hdr_lock *h = &locks.items[by_name[k] - 1];
		if (strlen(h->name) == len && memcmp(h->name, name, len) == 0)
			return &h->api;
	}
	return NULL;
}

bool header_lock_word(const char *s, size_t n)
{
	return api_header_lock(s, n) != NULL;
}

void header_lock_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx)
{
	for (size_t i = 0; i < locks.len; i++)
		if (!locks.items[i].ambiguous)
			visit(locks.items[i].name, API_WORD_LOCK, ctx);
}

char *header_lock_key(const struct api *a, TSNode call, const char *src)
{
	const struct hdr_lock *h = a->hdr;
	TSNode args = ts_field(call, "arguments");
	struct buf b = BUF_INIT;
	for (const char *p = h->lock_expr; *p;) {
		if (!is_ident_char(*p) || (p > h->lock_expr && is_ident_char(p[-1]))) {
			if (*p != ' ' && *p != '\t' && *p != '\n')
				buf_putc(&b, *p);
			p++;
			continue;
		}
		const char *q = p;
		while (is_ident_char(*q))
			q++;
		size_t k = 0;
		while (k < h->params.len && (strlen(h->params.items[k]) != (size_t)(q - p) ||
					     memcmp(h->params.items[k], p, (size_t)(q - p)) != 0))
			k++;
		if (k < h->params.len && k < ts_node_named_child_count(args)) {
			TSNode arg = ts_node_named_child(args, (uint32_t)k);
			for (uint32_t i = ts_node_start_byte(arg); i < ts_node_end_byte(arg); i++)
				if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n')
					buf_putc(&b, src[i]);
		} else {
			buf_add(&b, p, (size_t)(q - p));
		}
		p = q;
	}
	char *k = buf_detach(&b);
	char *key = lock_key_text(k);
	free(k);
	return key;
}
