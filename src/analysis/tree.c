/*
 * The tree index (tree.h): a pessimistic fixed point over the functions
 * whose context decides a finding, across the files of the tree.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <tree_sitter/api.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "analysis/flow.h"
#include "parse/source.h"
#include "util/interrupt.h"
#include "util/parallel.h"

const TSLanguage *tree_sitter_c(void);

/* T_BOUND: preemptible, but on a task that never migrates and runs alone on its CPU (api_bound_entry()) */
enum tstate { T_NEW, T_OPEN, T_ATOMIC, T_BOUND, T_FAILED };

struct tname {
	char *name;
	size_t len;
	uint32_t hash;        /* ident_hash() */
	enum tstate state;
	enum fn_context ctx;
	char *reason;         /* atomic: why; failed: why not */
	unsigned depth;
	unsigned fam;         /* arch_family() of the definition: 0, any */
	VEC(uint32_t) files;  /* the files naming it */
	bool sleep_asked;     /* bound candidate: its files parsed in full once more, for its definitions */
	bool waiting;         /* a call with preemption on waits for its caller's roots (decide()) */
};

/* One use of a followed name in one file. */
struct tref {
	uint32_t name;
	enum fn_use_kind kind;
	enum fn_context ctx;  /* USE_REGISTERED */
	bool protected_call;  /* USE_CALL */
	bool self;            /* a call from the function itself */
	bool other;           /* the file defines its own static function of that name */
	bool roots_ok;        /* USE_CALL from a function whose context its callers give */
	bool roots_sleep;     /* ...a function between the call and the roots may sleep */
	bool verbatim;        /* USE_ADDRESS: WHY says it all (a macro, assembly, unread) */
	unsigned line;
	char *caller;         /* the enclosing function, or NULL */
	char *why;            /* registration reason, or the protection at the call */
	char **roots;         /* the caller's roots (context_roots()) */
	size_t nroots;
};

/* A function a parse of the file found defined there, other files may call. */
struct tdef {
	char *name;
	bool sleeps;
};

struct tfile {
	const char *path;
	VEC(uint32_t) names;  /* followed names the file contains */
	VEC(uint32_t) defines; /* ...of them, the ones it defines (found when parsed) */
	VEC(uint32_t) sleeping; /* ...of those, the ones that may sleep */
	VEC(struct tref) refs;
	VEC(struct tdef) seen; /* the shared definitions its parses since the last whole analysis read */
	size_t from;          /* names[0, from) keep the uses the last analysis classified */
	bool dirty;           /* analyse (again) in the next round: the names from FROM on, or all */
	bool force_parse;     /* ...parsed even if it only declares: it may define a bound candidate */
	bool ids_done;
	bool parsed;          /* analyse_one() parsed it for all its names (else: declarations only) */
	bool parsed_now;      /* ...the last analysis parsed it (for the statistics) */
	bool sliced;          /* ...some of it only in the functions that matter (slice_ranges()) */
	unsigned fam;         /* arch_family() */
	struct tree_ids ids;  /* file_ids(): sorted identifier hashes */
};

/* Whether a struct field's member accesses are all in one file (tree_field_private()). */
struct field_verdict {
	char *path, *field;
	bool private_;
};

struct field_cache {
	pthread_mutex_t mu;
	VEC(struct field_verdict) v;
	bool frozen; /* the files' identifiers are gone: only what was decided stands */
};

struct tree_context {
	struct field_cache *fields; /* mutable behind a const context: analyses run in parallel */
	VEC(struct tname) names;
	uint32_t *table;      /* open addressing: names index + 1 */
	size_t cap;
	struct tfile *files;
	size_t nfiles;
	struct tree_stats stats;
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static inline uint32_t ident_hash(const char *s, size_t n);

/*
 * The architectures whose code can meet: a file under arch/A/ or
 * include/asm-A/ is built only for A, and calls or is called by generic
 * code and by code of A's family only (alpha's handle_irq() is not the one
 * a MIPS assembly file names). A family groups the architectures that
 * share sources in 2.4: mips64 builds arch/mips directories, x86_64
 * includes ia64's swiotlb.c, ppc includes m68k's Amiga files, m68k
 * includes asm-sparc headers. 0: generic code (or an architecture not
 * listed), which meets every family.
 */
static unsigned arch_family(const char *path)
{
	static const struct {
		const char *arch;
		unsigned fam;
	} archs[] = {
		{"i386", 1},  {"x86_64", 1}, {"ia64", 1},    {"um", 1},        {"mips", 2},  {"mips64", 2},
		{"sparc", 3}, {"sparc64", 3}, {"m68k", 3},   {"m68knommu", 3}, {"ppc", 3},   {"ppc64", 3},
		{"s390", 4},  {"s390x", 4},  {"sh", 5},      {"sh64", 5},      {"arm", 6},   {"arm26", 6},
		{"alpha", 7}, {"cris", 8},   {"parisc", 9},  {"h8300", 10},    {"v850", 11}, {"m32r", 12},
		{"frv", 13},
	};
	unsigned fam = 0;
	for (const char *p = path; *p; p++) {
		if (p != path && p[-1] != '/')
			continue;
		size_t skip = strncmp(p, "arch/", 5) == 0 ? 5 : strncmp(p, "include/asm-", 12) == 0 ? 12 : 0;
		if (!skip)
			continue;
		const char *a = p + skip, *e = strchr(a, '/');
		if (!e)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(archs); k++)
			if (strlen(archs[k].arch) == (size_t)(e - a) && memcmp(archs[k].arch, a, (size_t)(e - a)) == 0)
				fam = archs[k].fam; /* the last one: the tree may lie below a directory named arch */
	}
	return fam;
}

static bool families_meet(unsigned a, unsigned b)
{
	return a == 0 || b == 0 || a == b;
}

/* The followed function NAME (N bytes) of family FAM. */
static int name_find(const struct tree_context *t, const char *s, size_t n, unsigned fam)
{
	if (!t->cap)
		return -1;
	for (size_t k = fnv(s, n) & (t->cap - 1); t->table[k]; k = (k + 1) & (t->cap - 1)) {
		const struct tname *x = &t->names.items[t->table[k] - 1];
		if (x->len == n && x->fam == fam && memcmp(x->name, s, n) == 0)
			return (int)t->table[k] - 1;
	}
	return -1;
}

static void table_rebuild(struct tree_context *t)
{
	size_t cap = 64;
	while (cap < 2 * t->names.len + 1)
		cap *= 2;
	free(t->table);
	t->table = xcalloc(cap, sizeof *t->table);
	t->cap = cap;
	for (size_t i = 0; i < t->names.len; i++) {
		size_t k = fnv(t->names.items[i].name, t->names.items[i].len) & (cap - 1);
		while (t->table[k])
			k = (k + 1) & (cap - 1);
		t->table[k] = (uint32_t)i + 1;
	}
}

/* Adds NAME of family FAM (not yet known) to follow; returns its index. */
static uint32_t name_add(struct tree_context *t, const char *name, unsigned depth, unsigned fam)
{
	int have = name_find(t, name, strlen(name), fam);
	if (have >= 0)
		return (uint32_t)have;
	struct tname x = {.name = xstrdup(name), .len = strlen(name), .state = T_NEW, .ctx = CTX_PROCESS,
			  .depth = depth, .fam = fam, .files = VEC_INIT};
	x.hash = ident_hash(x.name, x.len);
	if (x.len < TREE_MIN_NAME) {
		x.state = T_FAILED;
		x.reason = xasprintf("a name of fewer than %d characters is not followed", TREE_MIN_NAME);
	}
	vec_push(&t->names, x);
	if (2 * t->names.len + 1 > t->cap)
		table_rebuild(t);
	else {
		size_t k = fnv(x.name, x.len) & (t->cap - 1);
		while (t->table[k])
			k = (k + 1) & (t->cap - 1);
		t->table[k] = (uint32_t)t->names.len;
	}
	return (uint32_t)t->names.len - 1;
}

static void name_settle(struct tname *x, enum tstate st, enum fn_context ctx, char *reason)
{
	x->state = st;
	x->ctx = ctx;
	free(x->reason);
	x->reason = reason;
}

/* ---- 1. search: which files name a new name --------------------------------- */

/* A new name's identifier hash (ident_hash(), 0 stored as 1) and index. */
struct fresh_name {
	uint32_t hash, name;
};

struct search_job {
	struct tree_context *t;
	const struct fresh_name *fresh; /* the new names, by hash */
	size_t nfresh;
	VEC(uint32_t) *found; /* per file: new names it contains */
};

/*
 * A hash of an identifier from its length and its first and last eight
 * bytes: two loads instead of a loop, as every identifier of the tree is
 * hashed. Two names alike in those bytes only cost a parse that finds
 * nothing.
 */
static inline uint32_t ident_hash(const char *s, size_t n)
{
	uint64_t a = 0, b = 0;
	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, s + n - 8, 8);
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ (n * 0x165667b19e3779f9ull);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32);
}

/* Sorts V (N values) in four byte-wide counting passes. */
static void radix_sort(uint32_t *v, size_t n)
{
	uint32_t *tmp = xmalloc((n ? n : 1) * sizeof *tmp);
	for (unsigned shift = 0; shift < 32; shift += 8) {
		size_t count[257] = {0};
		for (size_t i = 0; i < n; i++)
			count[((v[i] >> shift) & 0xff) + 1]++;
		for (size_t b = 1; b < 257; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i] >> shift) & 0xff]++] = v[i];
		memcpy(v, tmp, n * sizeof *v);
	}
	free(tmp);
}

/*
 * The file's identifiers, as an open-addressing set of 32-bit hashes (0
 * stands for empty; a hash of 0 is stored as 1): read once, so later
 * searches for new names read no file. A collision only costs a parse that
 * finds nothing.
 */
/* 1: a character of an identifier or a number */
static uint8_t word_char[256];

static void word_chars_init(void)
{
	static const char ident[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789$";
	for (const char *c = ident; *c; c++)
		word_char[(unsigned char)*c] = 1;
}

/* The open-addressing set tree_ids_of() fills. */
struct id_set {
	uint32_t *v;
	size_t cap, used;
};

static void id_grow(struct id_set *set);

/* Adds the word TEXT[p, e) unless it is a number or too short to be followed (int, i, dev). */
static inline void id_add(struct id_set *set, const char *text, size_t p, size_t e)
{
	if (e - p < TREE_MIN_NAME || (text[p] >= '0' && text[p] <= '9'))
		return;
	uint32_t h = ident_hash(text + p, e - p);
	h += !h;
	size_t k = h & (set->cap - 1);
	while (set->v[k] && set->v[k] != h)
		k = (k + 1) & (set->cap - 1);
	if (set->v[k])
		return;
	set->v[k] = h;
	if (2 * ++set->used > set->cap)
		id_grow(set);
}

/* Doubles SET's table (rehash). */
static void id_grow(struct id_set *set)
{
	uint32_t *old = set->v;
	size_t oc = set->cap;
	set->cap *= 2;
	set->v = xcalloc(set->cap, sizeof *set->v);
	for (size_t i = 0; i < oc; i++)
		if (old[i]) {
			size_t q = old[i] & (set->cap - 1);
			while (set->v[q])
				q = (q + 1) & (set->cap - 1);
			set->v[q] = old[i];
		}
	free(old);
}

#ifdef __SSE2__
/* Bit i set when B[i] is a word character (word_char[]), for 64 bytes. */
static uint64_t word_mask64(const unsigned char *b)
{
	const __m128i bias = _mm_set1_epi8((char)0x80);
	uint64_t m = 0;
	for (int q = 0; q < 4; q++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * q));
		/* unsigned ranges through a signed compare: (x - lo) ^ 0x80 < (hi - lo + 1) ^ 0x80 */
		__m128i lower = _mm_or_si128(x, _mm_set1_epi8(0x20)); /* A-Z to a-z */
		__m128i alpha = _mm_cmplt_epi8(_mm_xor_si128(_mm_sub_epi8(lower, _mm_set1_epi8('a')), bias),
					       _mm_set1_epi8((char)(26 ^ 0x80)));
		__m128i digit = _mm_cmplt_epi8(_mm_xor_si128(_mm_sub_epi8(x, _mm_set1_epi8('0')), bias),
					       _mm_set1_epi8((char)(10 ^ 0x80)));
		__m128i other = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('_')), _mm_cmpeq_epi8(x, _mm_set1_epi8('$')));
		__m128i w = _mm_or_si128(_mm_or_si128(alpha, digit), other);
		m |= (uint64_t)(uint16_t)_mm_movemask_epi8(w) << (16 * q);
	}
	return m;
}
#endif

void tree_ids_of(const char *text, size_t len, struct tree_ids *out)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, word_chars_init);
	struct id_set set = {NULL, 256, 0};
	while (set.cap < len / 32)
		set.cap *= 2;
	set.v = xcalloc(set.cap, sizeof *set.v);
	const unsigned char *b = (const unsigned char *)text;
	size_t p = 0; /* never inside a word */
#ifdef __SSE2__
	/* 64 bytes at a time: the words are the runs of set bits, found without a branch per byte */
	while (p + 64 <= len) {
		uint64_t m = word_mask64(b + p), starts = m & ~(m << 1);
		size_t next = p + 64;
		while (starts) {
			unsigned s = (unsigned)__builtin_ctzll(starts);
			uint64_t rest = ~m >> s;
			if (!rest) { /* runs past the block */
				size_t e = p + 64;
				while (e < len && word_char[b[e]])
					e++;
				id_add(&set, text, p + s, e);
				next = e;
				break;
			}
			id_add(&set, text, p + s, p + s + (unsigned)__builtin_ctzll(rest));
			starts &= starts - 1;
		}
		p = next;
	}
#endif
	while (p < len) {
		if (!word_char[b[p]]) {
			p++;
			continue;
		}
		size_t e = p + 1;
		while (e < len && word_char[b[e]])
			e++;
		id_add(&set, text, p, e);
		p = e;
	}
	/* kept sorted and dense: a tree holds ten thousand files */
	size_t u = 0;
	for (size_t i = 0; i < set.cap; i++)
		if (set.v[i])
			set.v[u++] = set.v[i];
	radix_sort(set.v, u);
	out->ids = u ? xrealloc(set.v, u * sizeof *set.v) : NULL;
	if (!u)
		free(set.v);
	out->n = u;
}

/*
 * The file's identifiers, as a sorted set of 32-bit hashes (0 stands for
 * empty; a hash of 0 is stored as 1), unless the scan gave them: read
 * once, so later searches for new names read no file. A collision only
 * costs a parse that finds nothing.
 */
static void file_ids(struct tfile *f)
{
	f->ids_done = true;
	char *text;
	size_t len;
	if (read_file(f->path, &text, &len) < 0)
		return; /* unreadable: its calls are unknown; the scan reports the file */
	tree_ids_of(text, len, &f->ids);
	free(text);
}

static bool file_has(const struct tfile *f, uint32_t h)
{
	h += !h;
	size_t lo = 0, hi = f->ids.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->ids.ids[mid] < h)
			lo = mid + 1;
		else if (f->ids.ids[mid] > h)
			hi = mid;
		else
			return true;
	}
	return false;
}

bool tree_ids_has(const struct tree_ids *ids, const char *name)
{
	size_t n = strlen(name);
	if (n < TREE_MIN_NAME)
		return false;
	struct tfile f = {0};
	f.ids = *ids;
	return file_has(&f, ident_hash(name, n));
}

static void search_one(size_t i, void *ctx)
{
	struct search_job *j = ctx;
	struct tfile *f = &j->t->files[i];
	if (interrupted())
		return;
	if (!f->ids_done)
		file_ids(f);
	const uint32_t *ids = f->ids.ids;
	size_t n = f->ids.n, at = 0;
	/* both sorted: each name is looked for from where the one before it was */
	for (size_t k = 0; k < j->nfresh && at < n; k++) {
		uint32_t h = j->fresh[k].hash;
		size_t step = 1, hi = at;
		while (hi < n && ids[hi] < h) { /* gallop, then bisect [at, hi] */
			at = hi + 1;
			hi += step;
			step *= 2;
		}
		if (hi > n)
			hi = n;
		while (at < hi) {
			size_t mid = at + (hi - at) / 2;
			if (ids[mid] < h)
				at = mid + 1;
			else
				hi = mid;
		}
		const struct tname *x = &j->t->names.items[j->fresh[k].name];
		if (at < n && ids[at] == h && families_meet(x->fam, f->fam))
			vec_push(&j->found[i], j->fresh[k].name);
	}
	/* in the names' order, as they were added */
	for (size_t a = 1; a < j->found[i].len; a++)
		for (size_t b = a; b > 0 && j->found[i].items[b - 1] > j->found[i].items[b]; b--) {
			uint32_t tmp = j->found[i].items[b];
			j->found[i].items[b] = j->found[i].items[b - 1];
			j->found[i].items[b - 1] = tmp;
		}
}

static int fresh_cmp(const void *a, const void *b)
{
	const struct fresh_name *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Finds the files naming the new names; a name in too many files is not followed. */
static void search_new(struct tree_context *t, int jobs)
{
	VEC(struct fresh_name) fresh = VEC_INIT;
	for (size_t n = 0; n < t->names.len; n++)
		if (t->names.items[n].state == T_NEW) {
			uint32_t h = t->names.items[n].hash;
			struct fresh_name fn = {h + !h, (uint32_t)n};
			vec_push(&fresh, fn);
		}
	if (fresh.len > 1)
		qsort(fresh.items, fresh.len, sizeof *fresh.items, fresh_cmp);
	struct search_job j = {t, fresh.items, fresh.len, xcalloc(t->nfiles ? t->nfiles : 1, sizeof *j.found)};
	parallel_for(t->nfiles, jobs, search_one, &j);
	vec_release(&fresh);
	t->stats.files_searched += t->nfiles;
	size_t *count = xcalloc(t->names.len ? t->names.len : 1, sizeof *count);
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < j.found[i].len; k++)
			count[j.found[i].items[k]]++;
	/* a name failed for its spread leaves its files as they are: marked, a file
	 * analysed already would be read again for the names it holds open */
	for (size_t i = 0; i < t->nfiles; i++) {
		for (size_t k = 0; k < j.found[i].len; k++) {
			uint32_t n = j.found[i].items[k];
			if (count[n] > TREE_MAX_FILES)
				continue;
			vec_push(&t->names.items[n].files, (uint32_t)i);
			vec_push(&t->files[i].names, n);
			t->files[i].dirty = true;
		}
		vec_release(&j.found[i]);
	}
	free(j.found);
	for (size_t n = 0; n < t->names.len; n++) {
		struct tname *x = &t->names.items[n];
		if (x->state != T_NEW)
			continue;
		x->state = T_OPEN;
		if (count[n] > TREE_MAX_FILES)
			name_settle(x, T_FAILED, CTX_PROCESS,
				    xasprintf("named in %zu files of the tree, more than the %d followed; "
					      "its callers were not followed", count[n], TREE_MAX_FILES));
	}
	free(count);
}

/* ---- 2. analyse: classify every use of a followed name ------------------------ */

static void tref_release(struct tref *r)
{
	free(r->caller);
	free(r->why);
	for (size_t i = 0; i < r->nroots; i++)
		free(r->roots[i]);
	free(r->roots);
}

static void file_seen_clear(struct tfile *f)
{
	for (size_t i = 0; i < f->seen.len; i++)
		free(f->seen.items[i].name);
	f->seen.len = 0;
}

static void file_refs_clear(struct tfile *f)
{
	for (size_t i = 0; i < f->refs.len; i++)
		tref_release(&f->refs.items[i]);
	f->refs.len = 0;
}

/* A use at OFF that the grammar did not read as an identifier. */
static bool in_macro_body(TSNode n)
{
	for (; !ts_node_is_null(n); n = ts_parent(n))
		if (ts_type_is(n, "preproc_def") || ts_type_is(n, "preproc_function_def"))
			return true;
	return false;
}

/* Is the identifier at OFF of S a member name: after `.` or `->` (blanks between)? */
static bool member_name_at(const char *s, uint32_t off)
{
	while (off > 0 && (s[off - 1] == ' ' || s[off - 1] == '\t'))
		off--;
	return off > 0 && (s[off - 1] == '.' || (off > 1 && s[off - 1] == '>' && s[off - 2] == '-'));
}

static void classify_at(const struct tree_context *t, const struct file_analysis *fa, uint32_t name,
			uint32_t off, struct tfile *out)
{
	const struct tname *x = &t->names.items[name];
	TSNode root = ts_tree_root_node(fa->tree);
	TSNode n = ts_node_descendant_for_byte_range(root, off, off + (uint32_t)x->len);
	struct tref r = {0};
	r.name = name;
	r.line = source_pos(fa->src, off).line;
	bool ident = ts_type_is(n, "identifier") && ts_node_start_byte(n) == off &&
		     ts_node_end_byte(n) == off + x->len;
	if (!ident) {
		if (!in_macro_body(n) && !ts_type_is(n, "ERROR") && !ts_node_has_error(n))
			return; /* a comment, a string, a field or type of that name */
		if (member_name_at(fa->src->parse_text, off))
			return; /* `ia64_mv.cpu_init` in a macro body: a field of that name */
		r.kind = USE_ADDRESS;
		r.why = xstrdup("named in a macro body or in code the grammar could not read; the users "
				"of that text are not followed");
		r.verbatim = true;
		vec_push(&out->refs, r);
		return;
	}
	int own = analysis_fn_index(fa, x->name, x->len);
	if (own >= 0 && !analysis_fn_is_shared(fa, &fa->fns.items[own]))
		r.other = true;
	struct fn_use u;
	context_classify_use(fa, n, &u);
	r.kind = u.kind;
	r.ctx = u.ctx;
	r.why = u.reason;
	if (u.unread) {
		free(r.why);
		r.why = xstrdup("named in a macro body or in code the grammar could not read; the users of "
				"that text are not followed");
		r.verbatim = true;
	}
	const struct fn *caller = analysis_fn_at(fa, off);
	if (caller)
		r.caller = xstrdup(caller->name);
	if (u.kind == USE_CALL) {
		if (!caller) {
			r.kind = USE_ADDRESS; /* a call outside a function: in an initialiser */
			vec_push(&out->refs, r);
			return;
		}
		r.self = strcmp(caller->name, x->name) == 0;
		struct point_state ps = flow_state_at(caller, ts_node_start_byte(u.call));
		r.protected_call = point_protected(&ps);
		struct buf why = BUF_INIT;
		const char *via;
		size_t vlen = ts_call_name(u.call, fa->src->parse_text, &via);
		if (vlen && (vlen != x->len || memcmp(via, x->name, vlen) != 0))
			buf_printf(&why, "as the okfn of %.*s(), run in its caller's context: ", (int)vlen, via);
		point_explain(caller, &ps, &why);
		r.why = buf_detach(&why);
		if (!r.protected_call) {
			name_vec roots = VEC_INIT;
			r.roots_ok = caller->ctx == CTX_PROCESS && context_roots_sleep(fa, caller, &roots, &r.roots_sleep);
			r.roots = xcalloc(roots.len ? roots.len : 1, sizeof *r.roots);
			for (size_t i = 0; i < roots.len; i++)
				r.roots[r.nroots++] = xstrdup(roots.items[i]);
			vec_release(&roots);
		}
	}
	vec_push(&out->refs, r);
}

/* True if the identifier S (N bytes) is an open name the file F is analysed for. */
static bool open_name_at(const struct tree_context *t, const struct tfile *f, const char *s, size_t n)
{
	for (size_t k = f->from; k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		if (x->state == T_OPEN && x->len == n && memcmp(x->name, s, n) == 0)
			return true;
	}
	return false;
}

static bool word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* A keyword that may stand right before a call: `return f(x);`. */
static bool keyword_before_call(const char *s, size_t n)
{
	static const char *const kw[] = {"return", "else", "do", "case", "goto", "sizeof",
					  "typeof", "__typeof__", "__extension__"};
	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (word_is(s, n, kw[i]))
			return true;
	return false;
}

/* Do the braces of S balance, never closing more than they opened (across #if arms too)? */
static bool braces_balance(const char *s, size_t len)
{
	long depth = 0;
	bool directive = false, line_start = true;
	for (size_t p = 0; p < len; p++) {
		char c = s[p];
		if (c == '\n') {
			directive = directive && p > 0 && s[p - 1] == '\\';
			line_start = true;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '*') {
			const char *e = p + 2 < len ? memmem(s + p + 2, len - p - 2, "*/", 2) : NULL;
			p = e ? (size_t)(e - s) + 1 : len;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '/') {
			while (p + 1 < len && s[p + 1] != '\n')
				p++;
			continue;
		}
		if (c == '"' || c == '\'') {
			for (p++; p < len && s[p] != c && s[p] != '\n'; p++)
				if (s[p] == '\\')
					p++;
			continue;
		}
		if (c == '#' && line_start)
			directive = true;
		if (c != ' ' && c != '\t')
			line_start = false;
		if (!directive && c == '{')
			depth++;
		if (!directive && c == '}' && --depth < 0)
			return false;
	}
	return depth == 0;
}

/*
 * Does the file name an open name anywhere but in a comment, a string or a
 * declaration? Only then is it worth a parse. Declarations are `extern`
 * statements (the bulk of a header) and, when the file's braces balance,
 * a name at file scope right after a type (`int f(void);`, a definition's
 * own name) or inside EXPORT_SYMBOL(). A lexer, not a parser: comments,
 * strings, character constants and directives (a use in a #define body
 * needs the parse) are recognised; a statement is what follows `;`, `{` or
 * `}`. Anything it is unsure of is parsed.
 */
static bool needs_parse(const struct tree_context *t, const struct tfile *f, const char *s, size_t len)
{
	bool stmt_start = true, stmt_extern = false, directive = false, line_start = true;
	bool depth_ok = braces_balance(s, len);
	long depth = 0;
	/* the token before: an identifier (its text), or another character */
	const char *prev = NULL;
	size_t prev_len = 0;
	char prev_c = ';';
	for (size_t p = 0; p < len;) {
		char c = s[p];
		if (c == '\n') {
			if (!(p > 0 && s[p - 1] == '\\'))
				directive = false;
			line_start = true;
			p++;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '*') {
			const char *e = p + 2 < len ? memmem(s + p + 2, len - p - 2, "*/", 2) : NULL;
			p = e ? (size_t)(e - s) + 2 : len;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '/') {
			while (p < len && s[p] != '\n')
				p++;
			continue;
		}
		if (c == '"' || c == '\'') {
			for (p++; p < len && s[p] != c && s[p] != '\n'; p++)
				if (s[p] == '\\')
					p++;
			p++;
			line_start = false;
			prev = NULL, prev_c = c;
			continue;
		}
		if (c == '#' && line_start)
			directive = true;
		if (c != ' ' && c != '\t' && c != '\r')
			line_start = false;
		if (!is_ident_start(c)) {
			if (!directive && (c == ';' || c == '{' || c == '}')) {
				stmt_start = true;
				stmt_extern = false;
				depth += c == '{' ? 1 : c == '}' ? -1 : 0;
			}
			if (c != ' ' && c != '\t' && c != '\r' && c != '*')
				prev = NULL, prev_c = c; /* `*` keeps the type before it: `struct x *f(` */
			p++;
			continue;
		}
		size_t e = p + 1;
		while (e < len && is_ident_char(s[e]))
			e++;
		if (!directive && stmt_start) {
			stmt_extern = word_is(s + p, e - p, "extern");
			stmt_start = false;
		}
		if (open_name_at(t, f, s + p, e - p)) {
			bool decl = !directive && stmt_extern;
			if (!directive && depth_ok && depth == 0) {
				if (prev && !keyword_before_call(prev, prev_len))
					decl = true; /* int f(void); or the definition's name */
				if (!prev && prev_c == '(' && p >= 14) {
					/* EXPORT_SYMBOL(f), EXPORT_SYMBOL_GPL(f) */
					size_t q = p;
					while (q > 0 && s[q - 1] != '(')
						q--;
					size_t r = q - 1;
					while (r > 0 && (s[r - 1] == ' ' || s[r - 1] == '\t'))
						r--;
					size_t w = r;
					while (w > 0 && is_ident_char(s[w - 1]))
						w--;
					decl = r - w >= 13 && memcmp(s + w, "EXPORT_SYMBOL", 13) == 0;
				}
			}
			if (!decl)
				return true;
		}
		prev = s + p, prev_len = e - p, prev_c = 0;
		p = e;
	}
	return false;
}

/* ---- slices: parse only the functions that matter ------------------------------ */

/* A function definition at file scope, found by the lexer. */
struct topdef {
	size_t start, end;       /* from after the previous statement to after its `}` */
	const char *name;        /* the last identifier before its first `(` */
	size_t name_len;
	bool needed;
	bool callee;             /* defines an open name, or is called by one that does: whether it sleeps counts */
};
typedef VEC(struct topdef) topdef_vec;

/* A declaration at file scope: from after the previous statement to its `;` (a table, a prototype). */
struct topdecl {
	size_t start, end;
	bool keep;
};
typedef VEC(struct topdecl) topdecl_vec;

/* Is the next significant byte of S from P a `{` (or a directive: unsure)? Comments are skipped. */
static bool brace_next(const char *s, size_t p, size_t len)
{
	while (p < len) {
		if (s[p] == ' ' || s[p] == '\t' || s[p] == '\r' || s[p] == '\n') {
			p++;
		} else if (s[p] == '/' && p + 1 < len && s[p + 1] == '*') {
			const char *e = p + 2 < len ? memmem(s + p + 2, len - p - 2, "*/", 2) : NULL;
			p = e ? (size_t)(e - s) + 2 : len;
		} else if (s[p] == '/' && p + 1 < len && s[p + 1] == '/') {
			while (p < len && s[p] != '\n')
				p++;
		} else {
			return s[p] == '{' || s[p] == '#';
		}
	}
	return false;
}

/*
 * The function definitions of S into OUT: a `{` at file scope right after
 * a `)` opens a body. DECLS (if set) gets its declarations at file scope
 * that a parse can leave out whole (none split by a directive, none next
 * to a K&R definition). False when the file's braces do not balance (an
 * #if arm opening a brace another arm closes): then the file is parsed
 * whole.
 */
static bool top_defs(const char *s, size_t len, topdef_vec *out, topdecl_vec *decls)
{
	long depth = 0;
	bool directive = false, line_start = true;
	size_t stmt = 0;        /* where the current file-scope statement began */
	size_t decl = 0;        /* ...and the current declaration (a `{}` inside it does not end it) */
	bool decl_ok = true;    /* ...begun at a statement's end (not after a directive inside one) */
	char decl_first = 0;    /* ...its first significant character */
	char last = ';';        /* the last significant character at file scope */
	const char *name = NULL, *ident = NULL;
	size_t name_len = 0, ident_len = 0;
	bool paren_seen = false;
	struct topdef cur = {0};
	for (size_t p = 0; p < len; p++) {
		char c = s[p];
		if (c == '\n') {
			if (directive && !(p > 0 && s[p - 1] == '\\')) {
				directive = false;
				if (depth == 0) {
					stmt = p + 1, paren_seen = false;
					if (!decl_first)
						decl = p + 1; /* nothing of a declaration yet: it begins after */
					else
						decl_ok = false; /* a directive inside a declaration: it stays */
				}
			}
			line_start = true;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '*') {
			const char *e = p + 2 < len ? memmem(s + p + 2, len - p - 2, "*/", 2) : NULL;
			p = e ? (size_t)(e - s) + 1 : len;
			continue;
		}
		if (c == '/' && p + 1 < len && s[p + 1] == '/') {
			while (p + 1 < len && s[p + 1] != '\n')
				p++;
			continue;
		}
		if (c == '"' || c == '\'') {
			for (p++; p < len && s[p] != c && s[p] != '\n'; p++)
				if (s[p] == '\\')
					p++;
			last = c;
			continue;
		}
		if (c == '#' && line_start)
			directive = true;
		if (c != ' ' && c != '\t' && c != '\r')
			line_start = false;
		if (directive || c == ' ' || c == '\t' || c == '\r')
			continue;
		if (depth == 0 && !decl_first)
			decl_first = c;
		if (depth == 0 && is_ident_start(c)) {
			size_t e = p + 1;
			while (e < len && is_ident_char(s[e]))
				e++;
			ident = s + p, ident_len = e - p;
			p = e - 1;
			last = 'a';
			continue;
		}
		if (c == '(' && depth == 0 && !paren_seen && ident) {
			name = ident, name_len = ident_len;
			paren_seen = true;
		}
		if (c == '{') {
			if (depth == 0 && last == ')' && name) {
				cur = (struct topdef){.start = stmt, .name = name, .name_len = name_len};
			}
			depth++;
		} else if (c == '}') {
			if (--depth < 0)
				return false;
			if (depth == 0) {
				if (cur.name) {
					cur.end = p + 1;
					vec_push(out, cur);
					cur.name = NULL;
					decl = p + 1, decl_ok = true, decl_first = 0;
				}
				stmt = p + 1, paren_seen = false, name = ident = NULL;
			}
		} else if (c == ';' && depth == 0) {
			/* not a K&R definition's parameters, nor its body: `int f(a) int a; { ... }` */
			if (decls && decl_ok && decl_first != '{' && !brace_next(s, p + 1, len)) {
				struct topdecl d = {decl, p + 1, false};
				vec_push(decls, d);
			}
			decl = p + 1, decl_ok = true, decl_first = 0;
			stmt = p + 1, paren_seen = false, name = ident = NULL;
		}
		if (depth == 0 || (c == '{' && depth == 1))
			last = c;
	}
	return depth == 0;
}

/* Does S[A, B) contain the word W (N bytes)? */
static bool has_word(const char *s, size_t a, size_t b, const char *w, size_t n)
{
	if (n == 0 || a >= b)
		return false;
	for (const char *p = memmem(s + a, b - a, w, n); p; p = memmem(p + 1, (size_t)(s + b - p - 1), w, n)) {
		size_t off = (size_t)(p - s);
		if ((off == a || !is_ident_char(s[off - 1])) && (off + n >= b || !is_ident_char(s[off + n])))
			return true;
		if ((size_t)(s + b - p) <= 1)
			break;
	}
	return false;
}

/*
 * From *AT on in S, the next field function NAME (N bytes) is stored in
 * (`x->f = name`, `x.f = name`, `.f = name`): its length, *FLD its start;
 * 0 when there is none. *AT moves past it.
 */
static size_t stored_in(const char *s, size_t len, const char *name, size_t n, size_t *at, const char **fld)
{
	while (*at < len) {
		const char *p = memmem(s + *at, len - *at, name, n);
		if (!p)
			break;
		*at = (size_t)(p - s) + n;
		if ((p > s && is_ident_char(p[-1])) || (p + n < s + len && is_ident_char(p[n])))
			continue;
		const char *q = p;
		while (q > s && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '&'))
			q--;
		if (q == s || q[-1] != '=' || (q - 1 > s && strchr("=!<>+-*/&|^%", q[-2])))
			continue;
		q--;
		while (q > s && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		const char *e = q;
		while (q > s && is_ident_char(q[-1]))
			q--;
		if (q == e || q == s || !(q[-1] == '.' || (q[-1] == '>' && q - 1 > s && q[-2] == '-')))
			continue;
		*fld = q;
		return (size_t)(e - q);
	}
	return 0;
}

typedef VEC(size_t) index_vec;

/*
 * The element of BASE (N of SIZE bytes, each beginning with `size_t start,
 * end`, in file order, not overlapping) holding byte OFF, or -1: a
 * definition of top_defs(), or a declaration.
 */
static long span_at(const void *base, size_t n, size_t size, size_t off)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, span[2];
		memcpy(span, (const char *)base + mid * size, sizeof span);
		if (off < span[0])
			hi = mid;
		else if (off >= span[1])
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}
_Static_assert(offsetof(struct topdef, start) == 0 && offsetof(struct topdef, end) == sizeof(size_t) &&
		       offsetof(struct topdecl, start) == 0 && offsetof(struct topdecl, end) == sizeof(size_t),
	       "span_at() reads start and end first");

/*
 * Sets HIT to the definitions of DEFS holding the word W (N bytes) of S, in
 * file order, once each; the declarations of DECLS holding it are kept.
 */
static void defs_naming(const char *s, size_t len, const topdef_vec *defs, topdecl_vec *decls, const char *w, size_t n,
			index_vec *hit)
{
	hit->len = 0;
	if (n == 0)
		return;
	for (const char *p = memmem(s, len, w, n); p; p = memmem(p + 1, (size_t)(s + len - p - 1), w, n)) {
		size_t off = (size_t)(p - s);
		if (!((off > 0 && is_ident_char(s[off - 1])) || (off + n < len && is_ident_char(s[off + n])))) {
			long d = span_at(defs->items, defs->len, sizeof *defs->items, off);
			if (d >= 0 && (hit->len == 0 || hit->items[hit->len - 1] != (size_t)d))
				vec_push(hit, (size_t)d);
			else if (d < 0 && (d = span_at(decls->items, decls->len, sizeof *decls->items, off)) >= 0)
				decls->items[d].keep = true;
		}
		if ((size_t)(s + len - p) <= 1)
			break;
	}
}

/*
 * The byte ranges of S worth parsing for F's open names (those it is
 * analysed for, from F->from on): everything but the
 * function definitions that name none of them, nor any function that does
 * (its callers, or where its address is taken or it is registered), to a
 * fixed point, nor (CALLEES) a function an open name's definition calls:
 * whether it sleeps decides tree_context_bound(). Sets *N to 0 when the
 * whole file is to be parsed.
 */
static TSRange *slice_ranges(const struct tree_context *t, const struct tfile *f, const char *s, size_t len,
			     bool callees, uint32_t *n)
{
	*n = 0;
	topdef_vec defs = VEC_INIT;
	topdecl_vec decls = VEC_INIT;
	if (!top_defs(s, len, &defs, &decls) || defs.len < 4) {
		vec_release(&defs);
		vec_release(&decls);
		return NULL;
	}
	index_vec hit = VEC_INIT, more = VEC_INIT, work = VEC_INIT;
	for (size_t k = f->from; k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		if (x->state != T_OPEN)
			continue;
		for (size_t d = 0; d < defs.len; d++)
			if (defs.items[d].name_len == x->len && memcmp(defs.items[d].name, x->name, x->len) == 0)
				defs.items[d].callee = defs.items[d].needed = true;
		defs_naming(s, len, &defs, &decls, x->name, x->len, &hit);
		for (size_t h = 0; h < hit.len; h++)
			defs.items[hit.items[h]].needed = true;
	}
	/* what an open name's definition calls, and what that calls */
	for (bool grew = callees; grew;) {
		grew = false;
		for (size_t d = 0; d < defs.len; d++) {
			if (!defs.items[d].callee)
				continue;
			for (size_t o = 0; o < defs.len; o++)
				if (!defs.items[o].callee &&
				    has_word(s, defs.items[d].start, defs.items[d].end, defs.items[o].name,
					     defs.items[o].name_len))
					defs.items[o].needed = defs.items[o].callee = grew = true;
		}
	}
	/* the callers of what is needed, to a fixed point: each needed definition once */
	for (size_t d = 0; d < defs.len; d++)
		if (defs.items[d].needed)
			vec_push(&work, d);
	while (work.len) {
		const struct topdef *d = &defs.items[work.items[--work.len]];
		defs_naming(s, len, &defs, &decls, d->name, d->name_len, &hit);
		/* stored in a field (`x->f = name;`): the calls through it, too (context.c) */
		const char *fld;
		for (size_t at = 0, fl; (fl = stored_in(s, len, d->name, d->name_len, &at, &fld)) > 0;) {
			defs_naming(s, len, &defs, &decls, fld, fl, &more);
			for (size_t h = 0; h < more.len; h++)
				vec_push(&hit, more.items[h]);
		}
		for (size_t h = 0; h < hit.len; h++)
			if (!defs.items[hit.items[h]].needed) {
				defs.items[hit.items[h]].needed = true;
				vec_push(&work, hit.items[h]);
			}
	}
	vec_release(&work);
	vec_release(&hit);
	vec_release(&more);
	/* left out: the definitions not needed, and the declarations naming nothing needed */
	VEC(struct topdecl) out = VEC_INIT;
	size_t dropped = 0;
	for (size_t d = 0, u = 0; d < defs.len || u < decls.len;) {
		bool def = u == decls.len || (d < defs.len && defs.items[d].start < decls.items[u].start);
		struct topdecl x = def ? (struct topdecl){defs.items[d].start, defs.items[d].end, defs.items[d].needed}
				       : decls.items[u];
		def ? d++ : u++;
		if (x.keep)
			continue;
		vec_push(&out, x);
		dropped += x.end - x.start;
	}
	vec_release(&defs);
	vec_release(&decls);
	if (dropped < len / 4) {
		vec_release(&out);
		return NULL; /* not worth it */
	}
	TSRange *r = xcalloc(out.len + 1, sizeof *r);
	size_t from = 0, row = 0, col = 0, at = 0;
	/* advance the point from AT to OFF */
#define ADVANCE(off) \
	for (; at < (off); at++) { \
		if (s[at] == '\n') \
			row++, col = 0; \
		else \
			col++; \
	}
	TSPoint from_pt = {0, 0};
	for (size_t d = 0; d <= out.len; d++) {
		size_t to = d < out.len ? out.items[d].start : len;
		ADVANCE(to);
		if (to > from) {
			r[*n] = (TSRange){from_pt, {(uint32_t)row, (uint32_t)col}, (uint32_t)from, (uint32_t)to};
			++*n;
		}
		if (d < out.len) {
			ADVANCE(out.items[d].end);
			from = out.items[d].end;
			from_pt = (TSPoint){(uint32_t)row, (uint32_t)col};
		}
	}
#undef ADVANCE
	vec_release(&out);
	return r;
}

struct analyse_job {
	const struct tree_context *t;
	size_t *which;  /* file indices to analyse */
};

static void analyse_names(const struct tree_context *t, struct tfile *f);

static void analyse_one(size_t i, void *ctx)
{
	struct analyse_job *j = ctx;
	const struct tree_context *t = j->t;
	struct tfile *f = &t->files[j->which[i]];
	if (interrupted())
		return;
	/* only new names since the last analysis: the uses classified then stand */
	bool whole = f->from == 0;
	if (whole)
		file_refs_clear(f);
	bool was_parsed = f->parsed, was_sliced = f->sliced;
	analyse_names(t, f);
	f->parsed_now = f->parsed;
	if (!whole) {
		f->parsed = f->parsed && was_parsed;
		f->sliced = f->sliced || was_sliced;
	}
	/* a definition read by this parse or an earlier one (a definition's name alone
	 * is no use: a new name it holds is classified without a parse); a whole
	 * analysis without a parse keeps what the last parse found */
	for (size_t k = f->from; (f->parsed || !whole) && k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		for (size_t d = 0; d < f->seen.len; d++)
			if (strlen(f->seen.items[d].name) == x->len && memcmp(f->seen.items[d].name, x->name, x->len) == 0) {
				vec_push(&f->defines, f->names.items[k]);
				if (f->seen.items[d].sleeps)
					vec_push(&f->sleeping, f->names.items[k]);
				break;
			}
	}
	f->from = f->names.len;
}

/* analyse_one() for F's names from F->from on. */
static void analyse_names(const struct tree_context *t, struct tfile *f)
{
	char *text = NULL;
	size_t len = 0;
	f->parsed = f->sliced = false;
	if (read_file(f->path, &text, &len) < 0 || memchr(text, '\0', len)) {
		free(text);
		for (size_t k = f->from; k < f->names.len; k++) {
			struct tref r = {0};
			r.name = f->names.items[k];
			r.kind = USE_ADDRESS;
			r.why = xstrdup("named in a file that could not be read");
			r.verbatim = true;
			vec_push(&f->refs, r);
		}
		return;
	}
	size_t pl = strlen(f->path);
	if (pl > 2 && f->path[pl - 2] == '.' && (f->path[pl - 1] == 'S' || f->path[pl - 1] == 's')) {
		/* assembly: any mention outside a comment may be a call the C analysis cannot see */
		asm_blank_comments(text, len);
		for (size_t k = f->from; k < f->names.len; k++) {
			if (!text_has_word(text, len, t->names.items[f->names.items[k]].name))
				continue;
			struct tref r = {0};
			r.name = f->names.items[k];
			r.kind = USE_ADDRESS;
			r.why = xstrdup("named in assembly code, which may call it in any context");
			r.verbatim = true;
			vec_push(&f->refs, r);
		}
		free(text);
		return;
	}
	if (!f->force_parse && !needs_parse(t, f, text, len)) {
		free(text); /* only declarations: no use to classify */
		return;
	}
	f->parsed = true;
	bool whole_defs = f->force_parse;
	f->force_parse = false;
	struct source src;
	source_init(&src, f->path, text, len);
	TSParser *parser = ts_parser_new();
	ts_parser_set_language(parser, tree_sitter_c());
	uint32_t nr;
	TSRange *ranges = slice_ranges(t, f, src.parse_text, len, whole_defs, &nr);
	if (nr && !ts_parser_set_included_ranges(parser, ranges, nr))
		nr = 0;
	free(ranges);
	f->sliced = nr > 0;
	TSTree *tree = ts_parser_parse_string(parser, NULL, src.parse_text, (uint32_t)len);
	if (tree) {
		struct file_analysis fa;
		analysis_run(&fa, &src, tree, t);
		if (f->from == 0) {
			file_seen_clear(f);
			f->defines.len = 0;
			f->sleeping.len = 0;
		}
		for (size_t d = 0; d < fa.fns.len; d++) {
			const struct fn *fn = &fa.fns.items[d];
			/* the first definition of a name answers (#if arms), as analysis_fn_index() does */
			if (analysis_fn_index(&fa, fn->name, strlen(fn->name)) == (int)d && analysis_fn_is_shared(&fa, fn)) {
				struct tdef td = {xstrdup(fn->name), fn->sleeps != SLEEP_NO};
				vec_push(&f->seen, td);
			}
		}
		for (size_t k = f->from; k < f->names.len; k++) {
			const struct tname *x = &t->names.items[f->names.items[k]];
			if (x->state != T_OPEN)
				continue;
			const char *s = src.parse_text, *end = s + len;
			for (const char *p = memmem(s, len, x->name, x->len); p;
			     p = memmem(p + 1, (size_t)(end - p - 1), x->name, x->len)) {
				size_t off = (size_t)(p - s);
				if ((off > 0 && is_ident_char(s[off - 1])) ||
				    (off + x->len < len && is_ident_char(s[off + x->len])))
					continue;
				classify_at(t, &fa, f->names.items[k], (uint32_t)off, f);
				if ((size_t)(end - p) <= 1)
					break;
			}
		}
		analysis_release(&fa);
		ts_parent_forget(tree);
		ts_tree_delete(tree);
	}
	ts_parser_delete(parser);
	source_release(&src);
}

/*
 * Analyses, for each open name, up to K of the dirty files naming it
 * (sources before headers, which mostly only declare): a name fails on its
 * first call with preemption on, so the files after it need no parse.
 * Returns the number of files analysed.
 */
static size_t analyse_some(struct tree_context *t, size_t k, int jobs)
{
	VEC(size_t) which = VEC_INIT;
	uint8_t *picked = xcalloc(t->nfiles ? t->nfiles : 1, 1);
	for (int pass = 0; pass < 2; pass++)
		for (size_t n = 0; n < t->names.len; n++) {
			const struct tname *x = &t->names.items[n];
			/* a name waiting for the roots of a call made with preemption on reads no
			 * more files: most roots are preemptible, and then so is the name */
			if (x->state != T_OPEN || x->waiting)
				continue;
			size_t taken = 0;
			for (size_t i = 0; i < x->files.len && taken < k; i++) {
				uint32_t fi = x->files.items[i];
				size_t pl = strlen(t->files[fi].path);
				bool header = pl >= 2 && strcmp(t->files[fi].path + pl - 2, ".h") == 0;
				if (!t->files[fi].dirty || header != (pass == 1))
					continue;
				taken++;
				if (!picked[fi]) {
					picked[fi] = 1;
					vec_push(&which, (size_t)fi);
				}
			}
		}
	free(picked);
	for (size_t i = 0; i < which.len; i++)
		t->files[which.items[i]].dirty = false;
	struct analyse_job j = {t, which.items};
	parallel_for(which.len, jobs, analyse_one, &j);
	for (size_t i = 0; i < which.len; i++)
		t->stats.files_analysed += t->files[which.items[i]].parsed_now;
	size_t done = which.len;
	vec_release(&which);
	return done;
}

/* ---- 3. decide ------------------------------------------------------------------ */

/*
 * Marks the files defining name N to be analysed again: the calls made
 * inside it, and inside the static functions only it calls, now read
 * protected. Its callers' files do not change.
 */
static void touch_files(struct tree_context *t, uint32_t n)
{
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		struct tfile *f = &t->files[x->files.items[i]];
		for (size_t k = 0; k < f->defines.len; k++)
			if (f->defines.items[k] == n)
				f->dirty = true, f->from = 0;
	}
}

#define REASON_MAX 900

static void reason_add(struct buf *b, const char *s)
{
	if (b->len < REASON_MAX)
		buf_puts(b, s);
}

/*
 * Decides name N from its uses: 1 settled (atomic or failed), 0 open
 * (waits for callers being followed), with new names added.
 */
/*
 * i386 interrupt entry stubs: BUILD_SMP_INTERRUPT(x, vector) (and the timer
 * variant) expands to assembly that calls smp_x() from an interrupt gate, in
 * hard-IRQ context; no C file names smp_x. Where such a stub is built for
 * NAME, a reason (owned), else NULL.
 */
static char *interrupt_stub(const struct tree_context *t, const struct tname *x)
{
	static const char *const builders[] = {"BUILD_SMP_INTERRUPT", "BUILD_SMP_TIMER_INTERRUPT"};
	if (x->len <= 4 + TREE_MIN_NAME || memcmp(x->name, "smp_", 4) != 0)
		return NULL;
	const char *stub = x->name + 4;
	size_t sn = x->len - 4;
	uint32_t h = ident_hash(stub, sn);
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tfile *f = &t->files[i];
		if (!f->ids_done || !families_meet(x->fam, f->fam) || !file_has(f, h))
			continue;
		char *text;
		size_t len;
		if (read_file(f->path, &text, &len) < 0)
			continue;
		char *found = NULL;
		for (size_t b = 0; b < ARRAY_SIZE(builders) && !found; b++) {
			size_t bn = strlen(builders[b]);
			for (const char *p = memmem(text, len, builders[b], bn); p && !found;
			     p = memmem(p + 1, len - (size_t)(p + 1 - text), builders[b], bn)) {
				const char *q = p + bn, *end = text + len;
				while (q < end && (*q == ' ' || *q == '\t'))
					q++;
				if (q == end || *q++ != '(')
					continue;
				while (q < end && (*q == ' ' || *q == '\t'))
					q++;
				if ((size_t)(end - q) <= sn || memcmp(q, stub, sn) != 0 || is_ident_char(q[sn]))
					continue;
				unsigned line = 1;
				for (const char *c = text; c < p; c++)
					line += *c == '\n';
				found = xasprintf("interrupt entry: %s(%.*s, ...) at %s:%u builds the stub that calls "
						  "it from an interrupt gate", builders[b], (int)sn, stub, f->path, line);
			}
		}
		free(text);
		if (found)
			return found;
	}
	return NULL;
}

/* Does a definition of name N may sleep (then other tasks may run on its CPU)? */
static bool name_sleeps(const struct tree_context *t, uint32_t n)
{
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		const struct tfile *f = &t->files[x->files.items[i]];
		for (size_t k = 0; k < f->sleeping.len; k++)
			if (f->sleeping.items[k] == n)
				return true;
	}
	return false;
}

static int decide(struct tree_context *t, uint32_t n, bool *added)
{
	struct tname *x = &t->names.items[n];
	struct buf why = BUF_INIT;
	bool pending = false;
	size_t ncalls = 0, shown = 0, nbound = 0;
	char *bound_how = NULL; /* the first call from code bound to its CPU */
	const struct tref *reg = NULL;
	const char *reg_path = NULL;
	bool unread = false;
	for (size_t fi = 0; fi < x->files.len; fi++) {
		const struct tfile *f = &t->files[x->files.items[fi]];
		if (f->dirty) {
			unread = true; /* not analysed yet, or its refs are stale */
			continue;
		}
		for (size_t k = 0; k < f->refs.len; k++) {
			const struct tref *r = &f->refs.items[k];
			if (r->name != n || r->other || r->kind == USE_DECLARATION || r->kind == USE_EXPORT)
				continue;
			char *fail = NULL;
			if (r->kind == USE_ADDRESS && r->verbatim && !r->line)
				fail = xasprintf("%s (%s)", r->why, f->path);
			else if (r->kind == USE_ADDRESS && r->verbatim)
				fail = xasprintf("%s (%s:%u)", r->why, f->path, r->line);
			else if (r->kind == USE_ADDRESS)
				fail = xasprintf("its address is taken at %s:%u (%s): callers through the pointer "
						 "are unknown", f->path, r->line,
						 r->why ? r->why : "not a registration preemptify knows");
			else if (r->kind == USE_REGISTERED && r->ctx == CTX_PROCESS)
				fail = xasprintf("registered at %s:%u: %s", f->path, r->line, r->why);
			else if (r->kind == USE_REGISTERED) {
				if (!reg || (r->ctx == CTX_HARDIRQ && reg->ctx != CTX_HARDIRQ))
					reg = r, reg_path = f->path;
			} else if (r->protected_call) {
				if (shown++ < 3) {
					char *s = xasprintf("%sfrom %s() at %s:%u (%s)", ncalls ? "; " : "",
							    r->caller, f->path, r->line, r->why);
					reason_add(&why, s);
					free(s);
				}
				ncalls++;
			} else if (r->self) {
				fail = xasprintf("it calls itself at %s:%u with preemption on", f->path, r->line);
			} else if (api_bound_entry(r->caller, strlen(r->caller))) {
				if (!nbound++)
					bound_how = xasprintf("from %s() at %s:%u: %s", r->caller, f->path, r->line,
							      api_bound_entry(r->caller, strlen(r->caller)));
			} else if (!r->roots_ok || r->nroots == 0) {
				fail = xasprintf("called from %s() at %s:%u with preemption on (%s)", r->caller,
						 f->path, r->line, r->why);
			} else {
				bool bound = false;
				for (size_t q = 0; q < r->nroots && !fail; q++) {
					const char *entry = api_bound_entry(r->roots[q], strlen(r->roots[q]));
					int have = name_find(t, r->roots[q], strlen(r->roots[q]), f->fam);
					if (have >= 0 && t->names.items[have].state == T_ATOMIC)
						continue; /* analysed again: the call will read protected */
					if (!r->roots_sleep && (entry || (have >= 0 && t->names.items[have].state == T_BOUND))) {
						if (!bound && !nbound)
							bound_how = xasprintf("from %s() at %s:%u; %s(): %s", r->caller,
									      f->path, r->line, r->roots[q],
									      entry ? entry : t->names.items[have].reason);
						bound = true;
						continue;
					}
					if (entry || (have >= 0 && t->names.items[have].state == T_BOUND))
						fail = xasprintf("called from %s() at %s:%u with preemption on; %s() runs bound "
								 "to its CPU, but a function on the way may sleep, and other "
								 "tasks may then run on the CPU", r->caller, f->path, r->line,
								 r->roots[q]);
					else if (have >= 0 && t->names.items[have].state == T_FAILED)
						fail = xasprintf("called from %s() at %s:%u with preemption on; %s() "
								 "is preemptible: %s", r->caller, f->path, r->line,
								 r->roots[q], t->names.items[have].reason);
					else if (have < 0 && x->depth + 1 > TREE_MAX_DEPTH)
						fail = xasprintf("called from %s() at %s:%u with preemption on; its "
								 "callers are more than %d calls away from the site",
								 r->caller, f->path, r->line, TREE_MAX_DEPTH);
					else {
						if (have < 0) {
							name_add(t, r->roots[q], x->depth + 1, f->fam);
							x = &t->names.items[n];
							*added = true;
						}
						pending = true;
					}
				}
				nbound += bound && !fail;
			}
			if (fail) {
				/* a long chain of reasons reads badly; keep the first words */
				if (strlen(fail) > REASON_MAX)
					strcpy(fail + REASON_MAX - 4, "...");
				name_settle(&t->names.items[n], T_FAILED, CTX_PROCESS, fail);
				buf_release(&why);
				free(bound_how);
				return 1;
			}
		}
	}
	x = &t->names.items[n];
	x->waiting = pending;
	if (pending || unread) {
		buf_release(&why);
		free(bound_how);
		return 0;
	}
	if (bound_how && strlen(bound_how) > REASON_MAX)
		strcpy(bound_how + REASON_MAX - 4, "...");
	if (nbound && !x->sleep_asked) {
		/*
		 * whether it sleeps decides: read its definitions whole (with what they
		 * call), in the files not parsed (they may only define it) and the ones
		 * that define it but were parsed in slices
		 */
		x->sleep_asked = true;
		bool more = false;
		for (size_t i = 0; i < x->files.len; i++) {
			struct tfile *f = &t->files[x->files.items[i]];
			bool defines = false;
			for (size_t k = 0; k < f->defines.len && !defines; k++)
				defines = f->defines.items[k] == n;
			if (!f->parsed || (defines && f->sliced))
				f->dirty = f->force_parse = more = true, f->from = 0;
		}
		if (more) {
			free(bound_how);
			*added = true; /* not settled, but the next round has work */
			return 0;
		}
	}
	if (nbound && name_sleeps(t, n)) {
		name_settle(x, T_FAILED, CTX_PROCESS,
			    xasprintf("called %s, but %s() may sleep, and other tasks may then run on its CPU",
				      bound_how, x->name));
	} else if (nbound) {
		name_settle(x, T_BOUND, CTX_PROCESS,
			    xasprintf("every call in the tree runs on a task bound to its CPU%s: %s%s",
				      ncalls || reg ? " or with preemption off" : "", bound_how,
				      nbound + ncalls > 1 ? "; ..." : ""));
	} else if (reg) {
		name_settle(x, T_ATOMIC, reg->ctx, xasprintf("%s, in %s%s%s", reg->why, reg_path,
							       ncalls ? "; every direct call in the tree is made with preemption off: " : "",
							       ncalls ? buf_cstr(&why) : ""));
	} else if (ncalls) {
		name_settle(x, T_ATOMIC, CTX_CALLERS,
			    xasprintf("every call in the tree is made with preemption off: %s%s",
				      buf_cstr(&why), ncalls > 3 ? "; ..." : ""));
	} else {
		char *stub = interrupt_stub(t, x);
		if (stub)
			name_settle(x, T_ATOMIC, CTX_HARDIRQ, stub);
		else
			name_settle(x, T_FAILED, CTX_PROCESS,
				    xstrdup("no caller and no registration in the tree: its callers are unknown"));
	}
	buf_release(&why);
	free(bound_how);
	if (x->state == T_ATOMIC) {
		t->stats.atomic++;
		touch_files(t, n);
	}
	return 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tree_context_build(struct tree_context **out, char *const *files, size_t n,
			const tree_want_vec *want, struct tree_ids *ids, int jobs)
{
	double t0 = now();
	struct tree_context *t = xcalloc(1, sizeof *t);
	t->fields = xcalloc(1, sizeof *t->fields);
	pthread_mutex_init(&t->fields->mu, NULL);
	t->files = xcalloc(n ? n : 1, sizeof *t->files);
	t->nfiles = n;
	for (size_t i = 0; i < n; i++) {
		t->files[i].path = files[i];
		t->files[i].fam = arch_family(files[i]);
		if (ids && ids[i].ids) { /* taken over */
			t->files[i].ids = ids[i];
			t->files[i].ids_done = true;
			ids[i].ids = NULL;
		}
	}
	for (size_t i = 0; i < want->len; i++)
		name_add(t, want->items[i].name, 0, arch_family(want->items[i].file));
	size_t wave = 1;
	for (unsigned round = 0; round < 256 && !interrupted(); round++) {
		t->stats.rounds++;
		/* new names wait until the open ones have no file left to read:
		 * one search over the tree's bytes serves them all */
		size_t analysed = analyse_some(t, wave, jobs);
		if (!analysed) {
			bool any_new = false;
			for (size_t i = 0; i < t->names.len && !any_new; i++)
				any_new = t->names.items[i].state == T_NEW;
			if (any_new) {
				search_new(t, jobs);
				wave = 1;
				analysed = analyse_some(t, wave, jobs);
			}
		}
		bool settled = false, added = false;
		for (size_t i = 0; i < t->names.len; i++)
			if (t->names.items[i].state == T_OPEN && decide(t, (uint32_t)i, &added))
				settled = true;
		/* a name no longer waiting may have files left to read */
		bool readable = false;
		for (size_t i = 0; i < t->names.len && !readable && !settled && !added && !analysed; i++) {
			const struct tname *x = &t->names.items[i];
			for (size_t k = 0; x->state == T_OPEN && !x->waiting && k < x->files.len && !readable; k++)
				readable = t->files[x->files.items[k]].dirty;
		}
		if (!settled && !added && !analysed && !readable)
			break;
		wave = wave < TREE_MAX_FILES ? 2 * wave : wave;
	}
	/* what is still open waits on itself: a cycle, or callers never settled */
	for (size_t i = 0; i < t->names.len; i++) {
		struct tname *x = &t->names.items[i];
		if (x->state == T_OPEN || x->state == T_NEW)
			name_settle(x, T_FAILED, CTX_PROCESS,
				    xstrdup("its callers depend on one another (a cycle of calls with preemption "
					    "on) or on functions the tree index did not settle"));
	}
	t->stats.names = t->names.len;
	t->fields->frozen = true;
	for (size_t i = 0; i < n; i++) {
		file_refs_clear(&t->files[i]);
		vec_release(&t->files[i].refs);
		file_seen_clear(&t->files[i]);
		vec_release(&t->files[i].seen);
		vec_release(&t->files[i].names);
		vec_release(&t->files[i].defines);
		vec_release(&t->files[i].sleeping);
		free(t->files[i].ids.ids);
		t->files[i].ids.ids = NULL;
	}
	t->stats.seconds = now() - t0;
	*out = t;
}

bool tree_context_lookup(const struct tree_context *t, const char *name, size_t len, const char *path,
			 enum fn_context *ctx, const char **reason)
{
	int k = t ? name_find(t, name, len, arch_family(path)) : -1;
	if (k < 0)
		return false;
	const struct tname *x = &t->names.items[k];
	if (x->state != T_ATOMIC && x->state != T_FAILED)
		return false; /* still open while the index is built: preemptible for now */
	*ctx = x->state == T_ATOMIC ? x->ctx : CTX_PROCESS;
	*reason = x->reason;
	return true;
}

bool tree_context_atomic(const struct tree_context *t, const char *name, const char *path)
{
	int k = t ? name_find(t, name, strlen(name), arch_family(path)) : -1;
	return k >= 0 && t->names.items[k].state == T_ATOMIC;
}

const char *tree_context_bound(const struct tree_context *t, const char *name, const char *path)
{
	int k = t ? name_find(t, name, strlen(name), arch_family(path)) : -1;
	return k >= 0 && t->names.items[k].state == T_BOUND ? t->names.items[k].reason : NULL;
}

const struct tree_stats *tree_context_stats(const struct tree_context *t)
{
	return &t->stats;
}

void tree_context_free(struct tree_context *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->names.len; i++) {
		free(t->names.items[i].name);
		free(t->names.items[i].reason);
		vec_release(&t->names.items[i].files);
	}
	vec_release(&t->names);
	free(t->table);
	free(t->files);
	for (size_t i = 0; i < t->fields->v.len; i++) {
		free(t->fields->v.items[i].path);
		free(t->fields->v.items[i].field);
	}
	vec_release(&t->fields->v);
	pthread_mutex_destroy(&t->fields->mu);
	free(t->fields);
	free(t);
}

bool tree_field_private(const struct tree_context *t, const char *path, const char *field)
{
	if (!t || strlen(field) < TREE_MIN_NAME)
		return false; /* a short name is not hashed: its files are unknown */
	struct field_cache *fc = t->fields;
	pthread_mutex_lock(&fc->mu);
	for (size_t i = 0; i < fc->v.len; i++)
		if (strcmp(fc->v.items[i].path, path) == 0 && strcmp(fc->v.items[i].field, field) == 0) {
			bool p = fc->v.items[i].private_;
			pthread_mutex_unlock(&fc->mu);
			return p;
		}
	bool frozen = fc->frozen;
	pthread_mutex_unlock(&fc->mu);
	if (frozen)
		return false;
	unsigned fam = arch_family(path);
	uint32_t h = ident_hash(field, strlen(field));
	bool private_ = true;
	for (size_t i = 0; i < t->nfiles && private_; i++) {
		const struct tfile *f = &t->files[i];
		if (strcmp(f->path, path) == 0 || !families_meet(fam, f->fam))
			continue;
		char *text;
		size_t len;
		if (f->ids_done && !file_has(f, h))
			continue;
		if (read_file(f->path, &text, &len) < 0)
			continue;
		private_ = text_member_accesses(text, len, field, 1) == 0;
		free(text);
	}
	pthread_mutex_lock(&fc->mu);
	struct field_verdict v = {xstrdup(path), xstrdup(field), private_};
	vec_push(&fc->v, v);
	pthread_mutex_unlock(&fc->mu);
	return private_;
}

void tree_want_release(tree_want_vec *w)
{
	for (size_t i = 0; i < w->len; i++) {
		free(w->items[i].name);
		free(w->items[i].file);
	}
	vec_release(w);
}
