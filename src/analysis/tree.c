/*
 * The tree index (tree.h): the followed names and their table, the files'
 * identifiers (hashed once, searched each round for the new names) and the
 * questions asked of the index once it is built. The fixed point that
 * decides the names is tree_fixpoint.c; which uses a file holds,
 * tree_uses.c; which part of a file is parsed, tree_slice.c.
 */
#include "analysis/tree_internal.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "parse/source.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/overlay.h"

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/*
 * The architectures whose code can meet: a file under arch/A/ or
 * include/asm-A/ is built only for A, and calls or is called by generic
 * code and by code of A's family only (alpha's handle_irq() is not the one
 * a MIPS assembly file names). A family groups the architectures that
 * share sources in 2.4: mips64 builds arch/mips directories, x86_64
 * includes ia64's swiotlb.c, ppc includes m68k's Amiga files, m68k
 * includes asm-sparc headers (tree_families_meet(): m68k meets both,
 * sparc and ppc do not meet). The drivers of Amiga, Mac and HP300 buses
 * are m68k's. 0: generic code (or an architecture not listed), which
 * meets every family.
 */
unsigned tree_arch_family(const char *path)
{
	static const struct {
		const char *arch;
		unsigned fam;
	} archs[] = {
		{"i386", 1},  {"x86_64", 1}, {"ia64", 1},    {"um", 1},        {"mips", 2},  {"mips64", 2},
		{"sparc", 3}, {"sparc64", 3}, {"m68k", 14},  {"m68knommu", 14}, {"ppc", 15}, {"ppc64", 15},
		{"s390", 4},  {"s390x", 4},  {"sh", 5},      {"sh64", 5},      {"arm", 6},   {"arm26", 6},
		{"alpha", 7}, {"cris", 8},   {"parisc", 9},  {"h8300", 10},    {"v850", 11}, {"m32r", 12},
		{"frv", 13},
	};
	/* drivers that only one architecture family builds (2.4 drivers/s390/s390mach.c calls s390's smp_send_stop()) */
	static const struct {
		const char *dir;
		unsigned fam;
	} arch_drivers[] = {
		{"drivers/s390/", 4}, {"drivers/sbus/", 3},  {"drivers/zorro/", 14},     {"drivers/dio/", 14},
		{"drivers/nubus/", 14}, {"drivers/macintosh/", 14}, {"drivers/sgi/", 2}, {"drivers/tc/", 2},
		{"drivers/acorn/", 6}, {"drivers/parisc/", 9},
	};
	unsigned fam = 0;
	for (const char *p = path; *p; p++) {
		if (p != path && p[-1] != '/')
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(arch_drivers); k++)
			if (strncmp(p, arch_drivers[k].dir, strlen(arch_drivers[k].dir)) == 0)
				fam = arch_drivers[k].fam;
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

bool tree_families_meet(unsigned a, unsigned b)
{
	/*
	 * the families that share sources but not with each other: m68k (14)
	 * with the asm-sparc headers (3) and ppc's Amiga and Mac files (15);
	 * sparc and ppc never meet (ppc64's pte_clear() is not the one
	 * arch/sparc takes the address of)
	 */
	if ((a == 14 && (b == 3 || b == 15)) || (b == 14 && (a == 3 || a == 15)))
		return true;
	return a == 0 || b == 0 || a == b;
}

/* The followed function NAME (N bytes) of family FAM. */
int tree_name_find(const struct tree_context *t, const char *s, size_t n, unsigned fam)
{
	if (!t->cap)
		return -1;
	bool member = n > 0 && s[0] == '.';
	s += member, n -= member;
	for (size_t k = fnv(s, n) & (t->cap - 1); t->table[k]; k = (k + 1) & (t->cap - 1)) {
		const struct tname *x = &t->names.items[t->table[k] - 1];
		if (x->len == n && x->fam == fam && x->member == member && memcmp(x->name, s, n) == 0)
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
uint32_t tree_name_add(struct tree_context *t, const char *name, unsigned depth, unsigned fam)
{
	int have = tree_name_find(t, name, strlen(name), fam);
	if (have >= 0)
		return (uint32_t)have;
	bool member = name[0] == '.';
	struct tname x = {.name = xstrdup(name + member), .len = strlen(name + member), .state = T_NEW,
			  .ctx = CTX_PROCESS, .depth = depth, .fam = fam, .files = VEC_INIT, .member = member};
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

void tree_name_settle(struct tname *x, enum tstate st, enum fn_context ctx, char *reason)
{
	x->state = st;
	x->ctx = ctx;
	free(x->reason);
	x->reason = reason;
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
	if (overlay_read(f->path, &text, &len) < 0)
		return; /* unreadable: its calls are unknown; the scan reports the file */
	tree_ids_of(text, len, &f->ids);
	free(text);
}

bool tree_file_has(const struct tfile *f, uint32_t h)
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
	return tree_file_has(&f, ident_hash(name, n));
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
		if (at < n && ids[at] == h && tree_families_meet(x->fam, f->fam))
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
void tree_search_new(struct tree_context *t, int jobs)
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
			tree_name_settle(x, T_FAILED, CTX_PROCESS,
					 xasprintf("named in %zu files of the tree, more than the %d followed; "
						   "its callers were not followed", count[n], TREE_MAX_FILES));
	}
	free(count);
}

/* ---- the index built: what it answers ---- */

bool tree_context_lookup(const struct tree_context *t, const char *name, size_t len, const char *path,
			 enum fn_context *ctx, const char **reason)
{
	int k = t ? tree_name_find(t, name, len, tree_arch_family(path)) : -1;
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
	int k = t ? tree_name_find(t, name, strlen(name), tree_arch_family(path)) : -1;
	return k >= 0 && t->names.items[k].state == T_ATOMIC;
}

bool tree_context_names_atomic(const struct tree_context *t, const char *path, const char *text, size_t len)
{
	unsigned fam = t ? tree_arch_family(path) : 0;
	for (size_t k = 0; t && k < t->names.len; k++) {
		const struct tname *x = &t->names.items[k];
		if (x->state == T_ATOMIC && !x->member && x->fam == fam && text_has_word(text, len, x->name))
			return true;
	}
	return false;
}

const char *tree_context_bound(const struct tree_context *t, const char *name, const char *path)
{
	int k = t ? tree_name_find(t, name, strlen(name), tree_arch_family(path)) : -1;
	return k >= 0 && t->names.items[k].state == T_BOUND ? t->names.items[k].reason : NULL;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void tree_context_digest(const struct tree_context *t, struct buf *out)
{
	if (!t) {
		buf_puts(out, "tree none\n");
		return;
	}
	buf_printf(out, "tree %zu\n", t->names.len);
	for (size_t k = 0; k < t->names.len; k++) {
		const struct tname *x = &t->names.items[k];
		buf_printf(out, "%s%c%u %d %d %d %s%c", x->name, 0, x->fam, (int)x->state, (int)x->ctx, x->member,
			   x->reason ? x->reason : "(none)", 0);
	}
	/* the verdicts were decided by threads in any order: a set, sorted */
	struct strvec lines = STRVEC_INIT;
	pthread_mutex_lock(&t->fields->mu);
	for (size_t i = 0; i < t->fields->v.len; i++)
		strvec_pushf(&lines, "%s%c%s%c%d", t->fields->v.items[i].path, 1, t->fields->v.items[i].field, 1,
			     t->fields->v.items[i].private_);
	buf_printf(out, "fields %d\n", t->fields->frozen);
	pthread_mutex_unlock(&t->fields->mu);
	if (lines.len)
		qsort(lines.items, lines.len, sizeof *lines.items, line_cmp);
	for (size_t i = 0; i < lines.len; i++)
		if (i == 0 || strcmp(lines.items[i], lines.items[i - 1]) != 0)
			buf_printf(out, "%s%c", lines.items[i], 0);
	strvec_release(&lines);
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

/* The verdicts an analysis asks, for the memo (tree_memo.c); per thread: analyses run in parallel. */
static _Thread_local field_log *asked_log;

void tree_fields_log(field_log *log)
{
	asked_log = log;
}

static bool field_private(const struct tree_context *t, const char *path, const char *field);

bool tree_field_private(const struct tree_context *t, const char *path, const char *field)
{
	bool p = field_private(t, path, field);
	if (asked_log) {
		struct field_asked a = {xstrdup(path), xstrdup(field), p};
		vec_push(asked_log, a);
	}
	return p;
}

static bool field_private(const struct tree_context *t, const char *path, const char *field)
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
	unsigned fam = tree_arch_family(path);
	uint32_t h = ident_hash(field, strlen(field));
	bool private_ = true;
	for (size_t i = 0; i < t->nfiles && private_; i++) {
		const struct tfile *f = &t->files[i];
		if (strcmp(f->path, path) == 0 || !tree_families_meet(fam, f->fam))
			continue;
		char *text;
		size_t len;
		if (f->ids_done && !tree_file_has(f, h))
			continue;
		if (overlay_read(f->path, &text, &len) < 0)
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
