/*
 * The result cache: a run of `scan` or `diff` on inputs it has seen before
 * (same binary, same command line, same files, byte for byte) prints the
 * stored output of the earlier run instead of analysing the tree again.
 *
 * An entry is one file, named by the key (a hash over everything the output
 * depends on, cache_key.c), holding the run's exit code, stdout and stderr
 * and a checksum. Entries are written to a temporary file and renamed into
 * place, so a reader never sees half an entry; an entry whose checksum,
 * format or version does not match is ignored and rewritten, never trusted.
 * The directory is bounded (CACHE_MAX_BYTES): the least recently used
 * entries go first.
 */
#ifndef PREEMPTIFY_CACHE_H
#define PREEMPTIFY_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define CACHE_MAX_BYTES ((uint64_t)256 << 20)
#define CACHE_FORMAT "preemptify-cache 1"

/* A 128-bit content hash (not cryptographic: it tells changed bytes apart). */
struct cache_hash {
	uint64_t a, b;
};
void cache_hash_bytes(const void *p, size_t n, struct cache_hash *out);
/* 32 hex digits and a NUL into OUT. */
void cache_hash_hex(const struct cache_hash *h, char out[33]);

/* One stored run. */
struct cache_entry {
	int rc;
	size_t files; /* input files the key covered */
	struct buf out, err;
};
#define CACHE_ENTRY_INIT {0, 0, BUF_INIT, BUF_INIT}
void cache_entry_release(struct cache_entry *e);

/*
 * The cache directory: DIR when given, else $XDG_CACHE_HOME/preemptify,
 * else $HOME/.cache/preemptify; NULL when none can be named. Caller frees.
 */
char *cache_dir(const char *dir);

/*
 * Reads the entry KEYHEX from DIR into OUT: 1 found and intact (its use time
 * is refreshed), 0 absent, -1 present but damaged or foreign (ignored; the
 * caller rewrites it).
 */
int cache_load(const char *dir, const char *keyhex, struct cache_entry *out);

/*
 * Writes E as entry KEYHEX in DIR (created if missing) through a temporary
 * file and a rename (never over a file that is not an entry), then evicts
 * the least recently used entries over CACHE_MAX_BYTES. 0, or -1 with the
 * reason in error_last(). cache_write() is the same without the eviction
 * (for many entries in a row: cache_evict() once after them).
 */
int cache_store(const char *dir, const char *keyhex, const struct cache_entry *e);
int cache_write(const char *dir, const char *keyhex, const struct cache_entry *e);
void cache_evict(const char *dir);

/* What DIR itself holds: entries and their bytes. */
void cache_stat(const char *dir, size_t *entries, uint64_t *bytes);

/*
 * Removes every entry (and stray temporary file) of DIR and of its spatch
 * steps' and files' parts; the number removed, -1 on error.
 */
long cache_clean(const char *dir);

/*
 * The spatch steps' part of the cache (cache_steps.c), in DIR/spatch: each
 * spatch step's output by its input, so that a run on changed files (which
 * the run's entry cannot answer) runs spatch only on the functions whose
 * input changed. Bounded like the runs' part, on its own.
 */
#define CACHE_STEPS_DIR "spatch"
struct spatch_memo;
struct step_store;

/*
 * The store in cache_dir(OPT_DIR) for a run whose spatch is SPATCH: NULL
 * when there is no cache directory. step_store_close() evicts what is over
 * the bound and frees it (NULL is fine).
 */
struct step_store *step_store_open(const char *opt_dir, const char *spatch);
const struct spatch_memo *step_store_memo(struct step_store *s);
void step_store_close(struct step_store *s);

/*
 * The files' part of the cache, in DIR/files: each file's scan result by
 * its path, bytes and everything else its scan reads (pipeline/scan_memo.c),
 * so that a run on a changed tree (which the run's entry cannot answer)
 * parses only the files whose key changed. Bounded like the others. Opened
 * as the steps' store (NULL: no cache directory), closed with
 * step_store_close().
 */
#define CACHE_FILES_DIR "files"
struct memo;
struct step_store *file_store_open(const char *opt_dir);
const struct memo *file_store_memo(struct step_store *s);
/*
 * How many entries S was asked for, and found (a damaged entry is not
 * found), of KIND: the files' results or spatch steps (STORE_FILES), the
 * tree index's analyses (STORE_TREE), the rewrites' validations
 * (STORE_VALIDATIONS, fix/validate.h).
 */
enum { STORE_FILES, STORE_TREE, STORE_VALIDATIONS, STORE_KINDS };
void step_store_counts(struct step_store *s, int kind, size_t *asked, size_t *found);

/*
 * Runs the command CMD (ARGV[0] its name) through the cache in the
 * directory --cache-dir DIR names (else cache_dir(NULL)), unless ARGV says
 * --no-cache or the run is not one that is cached (cache_key.h): a stored
 * answer is replayed (stdout byte for byte, stderr with one line saying
 * so), else the command runs and its answer is stored. A cache that cannot
 * be written costs one warning, never the run. Returns the command's exit code.
 */
struct cli_command;
int cache_run(const struct cli_command *cmd, int argc, char **argv);

/*
 * FD (1 or 2) when it is a terminal, or the terminal it stood for before
 * cache_run() began capturing it (write a progress line there); -1 when
 * it is not a terminal.
 */
int cache_terminal_fd(int fd);

/*
 * The errno of the first write to standard output that failed while
 * cache_run() passed the command's output on (0: none); the output
 * then counts as not written, as a failed fflush(stdout) would.
 */
int cache_write_error(void);

#endif
