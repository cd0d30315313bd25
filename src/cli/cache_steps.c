/*
 * The per-input parts of the result cache (cache.h): the memo the rewrite
 * asks before each spatch step (fix/rewrite.h), and the memo the scan asks
 * before each file (rules/scan_result.h). An entry is the step's output or
 * the file's result, named by the hash of its key (a step's input, sites
 * and the programs' paths; a file's path, bytes and scan context) salted
 * with the bytes of this binary (and for steps of spatch and python3); it
 * is written and checked like a run's entry, so a damaged one is ignored
 * and the step runs, or the file is scanned, again.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cache.h"
#include "cli/cache_key.h"
#include "fix/rewrite.h"
#include "rules/scan_result.h"

/* How the tree index's keys begin (analysis/tree_memo.c), and a validation's (pipeline/verify.h), counted apart. */
#define TREE_KEY "preemptify tree-uses"
#define VALIDATE_KEY "preemptify validate"

struct step_store {
	struct spatch_memo memo;
	struct memo scan; /* the same store, as the scan asks it */
	char *dir;
	struct buf salt; /* cache_key_programs() */
	atomic_bool wrote;
	atomic_size_t asked[STORE_KINDS], found[STORE_KINDS]; /* get() calls, and those answered, by kind */
};

/* The entry name of KEY: the hash of the salt and KEY. */
static void step_name(const struct step_store *s, const char *key, size_t key_len, char hex[33])
{
	struct buf b = BUF_INIT;
	struct cache_hash h;
	buf_add(&b, s->salt.ptr, s->salt.len);
	buf_add(&b, key, key_len);
	cache_hash_bytes(b.ptr, b.len, &h);
	cache_hash_hex(&h, hex);
	buf_release(&b);
}

static bool step_get(void *ctx, const char *key, size_t key_len, char **out, size_t *out_len)
{
	struct step_store *s = ctx;
	struct cache_entry e = CACHE_ENTRY_INIT;
	char hex[33];
	step_name(s, key, key_len, hex);
	bool hit = cache_load(s->dir, hex, &e) == 1 && e.rc == 0;
	/* a tree index's analysis, a validation, or anything else */
	int kind = key_len >= sizeof TREE_KEY - 1 && memcmp(key, TREE_KEY, sizeof TREE_KEY - 1) == 0 ? STORE_TREE
		 : key_len >= sizeof VALIDATE_KEY - 1 && memcmp(key, VALIDATE_KEY, sizeof VALIDATE_KEY - 1) == 0
			? STORE_VALIDATIONS : STORE_FILES;
	atomic_fetch_add(&s->asked[kind], 1);
	if (hit) {
		atomic_fetch_add(&s->found[kind], 1);
		*out_len = e.out.len;
		*out = buf_detach(&e.out);
	}
	cache_entry_release(&e);
	return hit;
}

/*
 * A step that cannot be stored costs nothing but the reuse: the run's own
 * entry, in the directory above, says when the cache cannot be written.
 */
static void step_put(void *ctx, const char *key, size_t key_len, const char *out, size_t out_len)
{
	struct step_store *s = ctx;
	struct cache_entry e = CACHE_ENTRY_INIT;
	char hex[33];
	step_name(s, key, key_len, hex);
	buf_add(&e.out, out, out_len);
	if (cache_write(s->dir, hex, &e) == 0)
		atomic_store(&s->wrote, true);
	else
		error_clear();
	cache_entry_release(&e);
}

/* A store in the part SUB of cache_dir(OPT_DIR); NULL when there is no cache directory. */
static struct step_store *store_open(const char *opt_dir, const char *sub)
{
	char *dir = cache_dir(opt_dir);
	if (!dir)
		return NULL;
	struct step_store *s = xcalloc(1, sizeof *s);
	s->memo = (struct spatch_memo){s, step_get, step_put};
	s->scan = (struct memo){s, step_get, step_put};
	s->dir = xasprintf("%s/%s", dir, sub);
	atomic_init(&s->wrote, false);
	for (int k = 0; k < STORE_KINDS; k++) {
		atomic_init(&s->asked[k], 0);
		atomic_init(&s->found[k], 0);
	}
	free(dir);
	return s;
}

struct step_store *step_store_open(const char *opt_dir, const char *spatch)
{
	struct step_store *s = store_open(opt_dir, CACHE_STEPS_DIR);
	if (s)
		cache_key_programs(&s->salt, spatch ? spatch : "spatch");
	return s;
}

struct step_store *file_store_open(const char *opt_dir)
{
	struct step_store *s = store_open(opt_dir, CACHE_FILES_DIR);
	if (s)
		cache_key_binary(&s->salt);
	return s;
}

const struct memo *file_store_memo(struct step_store *s)
{
	return s ? &s->scan : NULL;
}

void step_store_counts(struct step_store *s, int kind, size_t *asked, size_t *found)
{
	*asked = s ? atomic_load(&s->asked[kind]) : 0;
	*found = s ? atomic_load(&s->found[kind]) : 0;
}

const struct spatch_memo *step_store_memo(struct step_store *s)
{
	return s ? &s->memo : NULL;
}

void step_store_close(struct step_store *s)
{
	if (!s)
		return;
	if (atomic_load(&s->wrote))
		cache_evict(s->dir);
	buf_release(&s->salt);
	free(s->dir);
	free(s);
}
