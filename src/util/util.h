/*
 * Small shared pieces: allocation, the error slot, a growable byte buffer,
 * a typed vector and a string vector. Used everywhere; nothing here prints
 * or exits except the x*alloc family on out-of-memory.
 *
 * Ownership words, as in git, everywhere in preemptify:
 *   x_release(struct x *): frees what X owns and leaves X empty (zeroed),
 *                          reusable; X itself is the caller's (often on the stack).
 *   x_free(struct x *):    frees X itself too (X came from x_new()/x_open());
 *                          NULL is fine.
 */
#ifndef PREEMPTIFY_UTIL_H
#define PREEMPTIFY_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* Allocation that aborts with a message on out-of-memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/*
 * The error slot: one per thread. Library functions that fail return a
 * negative int and leave a message here; the CLI decides what to print.
 */
int error_set(const char *fmt, ...) PRINTF_LIKE(1, 2); /* returns -1 */
const char *error_last(void);                           /* "" if none */
void error_clear(void);

/* A growable NUL-terminated byte buffer. BUF_INIT is a valid empty buffer. */
struct buf {
	char *ptr;
	size_t len, cap;
};
#define BUF_INIT {NULL, 0, 0}

void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/*
 * Appends S as the body of a JSON string (no quotes): always valid UTF-8;
 * a byte that is not part of a valid UTF-8 sequence is written as \\u00XX,
 * its Latin-1 reading.
 */
void buf_json_str(struct buf *b, const char *s);
/*
 * Appends TEXT's words wrapped at WIDTH columns, the first line after FIRST,
 * the others after REST, each ended by a newline (nothing for no word); a
 * word longer than a line stays whole.
 */
void buf_add_wrapped(struct buf *b, const char *text, const char *first, const char *rest, size_t width);
/* Never NULL: "" for an empty buffer. */
const char *buf_cstr(const struct buf *b);
/* Hands the storage to the caller (NUL-terminated, never NULL) and resets B. */
char *buf_detach(struct buf *b);
void buf_clear(struct buf *b); /* len = 0, keeps storage */
void buf_release(struct buf *b);

/*
 * A typed vector: VEC(int) v = VEC_INIT; vec_push(&v, 3); v.items[0].
 * Elements move on growth: do not keep pointers into items across a push.
 */
#define VEC(T) struct { T *items; size_t len, cap; }
#define VEC_INIT {NULL, 0, 0}
#define vec_reserve(v, n) \
	vec_reserve_((void **)&(v)->items, &(v)->cap, (v)->len + (n), sizeof(*(v)->items))
#define vec_push(v, x) \
	(vec_reserve((v), 1), (v)->items[(v)->len++] = (x))
#define vec_release(v) (free((v)->items), (v)->items = NULL, (v)->len = (v)->cap = 0)
void vec_reserve_(void **items, size_t *cap, size_t need, size_t elem);

/*
 * A vector of owned strings, as git's strvec: STRVEC_INIT is a valid empty
 * one; items[0..len) are NUL-terminated and belong to the vector. The
 * VEC macros work on it too (vec_push() hands a string over).
 */
struct strvec {
	char **items;
	size_t len, cap;
};
#define STRVEC_INIT {NULL, 0, 0}

void strvec_push(struct strvec *v, const char *s); /* pushes a copy of S */
void strvec_pushf(struct strvec *v, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Frees the strings and the array; V is empty and reusable after. */
void strvec_release(struct strvec *v);

/* MSG without a leading "PATH: " (for messages printed after the path already). */
const char *after_path(const char *msg, const char *path);

/*
 * A store of byte strings by key, kept across runs (the result cache's
 * per-input parts, cli/cache.h): GET gives the bytes stored under KEY
 * (owned by the caller; true) or says there are none (false); PUT stores
 * them. Called from several threads at once. Who asks makes the key cover
 * everything the bytes depend on; the store adds this binary's bytes.
 */
struct memo {
	void *ctx;
	bool (*get)(void *ctx, const char *key, size_t key_len, char **out, size_t *out_len);
	void (*put)(void *ctx, const char *key, size_t key_len, const char *out, size_t out_len);
};

/*
 * A flat form of numbers and strings, for what the cache keeps: a number
 * as 8 bytes (little-endian), a string as its length plus one and its
 * bytes (0 for NULL).
 */
void buf_put_u64(struct buf *b, uint64_t v);
void buf_put_str(struct buf *b, const char *s);
/* Reads the form back; anything past the end or out of range sets BAD (and gives 0 / NULL). */
struct reader {
	const unsigned char *p;
	size_t n;
	bool bad;
};
uint64_t reader_u64(struct reader *r);
uint64_t reader_below(struct reader *r, uint64_t limit); /* a number below LIMIT */
char *reader_str(struct reader *r);                      /* owned, or NULL; a NUL inside is bad */

/* FNV-1a, 64 bits: tells one read of a file from another. */
uint64_t hash_bytes(const void *p, size_t n);
/* A 128-bit content hash (not cryptographic: it tells changed bytes apart), into OUT[0..1]. */
void hash128(const void *p, size_t n, uint64_t out[2]);

/*
 * Reads a whole regular file. A FIFO, a device, a socket or a directory is
 * refused without blocking ("PATH: a FIFO, not a regular file; not read").
 * 0 ok, -1 with the error slot set (names PATH).
 */
int read_file(const char *path, char **out, size_t *out_len);

/* read_file() of a file that may hold at most MAX bytes (0: no bound), else refused. */
int read_file_max(const char *path, size_t max, char **out, size_t *out_len);

/*
 * Creates or truncates PATH and writes LEN bytes (not atomic: for files
 * preemptify owns, like temporary copies and patch files; user files go
 * through writefile_replace()). 0, or -1 with the error slot set.
 */
int write_file(const char *path, const char *data, size_t len);

/* The 0-based line holding byte OFFSET, given the sorted offsets of the N line starts. */
size_t line_index(const size_t *starts, size_t n, size_t offset);

/* fnmatch-style glob over a path: matches the whole path or any suffix after a '/'. */
bool path_glob_match(const char *glob, const char *path);

/*
 * Edit distance of A[0..LA) and B: insertions, deletions, substitutions and
 * swaps of two neighbours (`scna` is one from `scan`); 32 when either is
 * longer than 31.
 */
size_t edit_distance(const char *a, size_t la, const char *b);

/*
 * "Did you mean": the word of WORDS (N of them) that WORD[0..LEN) is a
 * typo of, the nearest (the first on a tie): at most 2 edits, and fewer
 * than a third of that word's length, so another word is not taken for a
 * typo. NULL when none is that close. Returns a pointer into WORDS.
 */
const char *nearest_word(const char *word, size_t len, const char *const *words, size_t n);

#endif
