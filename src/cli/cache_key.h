/* The result cache's key (cache_key.c): which runs are cached, over which inputs. */
#ifndef PREEMPTIFY_CACHE_KEY_H
#define PREEMPTIFY_CACHE_KEY_H

#include <stddef.h>

/*
 * For the command line ARGV (ARGV[0] the command name): 1 and the key of
 * its output in KEYHEX (32 hex digits), with *FILES the input files it
 * covers (none under the cache directory DIR); 0 when this run is never cached (not scan or diff, or it writes
 * files, reads git history, asks for help or SARIF, or says --no-cache).
 */
int cache_key(int argc, char **argv, const char *dir, char keyhex[33], size_t *files);

/*
 * Into KM: the bytes of this binary, of the spatch program SPATCH (a path,
 * or looked up on PATH) and of python3, hashed: what a spatch result
 * depends on besides its input.
 */
struct buf;
void cache_key_programs(struct buf *km, const char *spatch);
/* Into KM: this binary's bytes, hashed (what a file's scan depends on besides its key). */
void cache_key_binary(struct buf *km);

#endif
