/*
 * The result cache's key: which runs may be served from the cache, and the
 * hash over everything their output depends on. That is the binary itself
 * (its version and its bytes, which hold the queries and the semantic
 * patches), the command line and working directory, the environment that
 * changes the output (colour, terminal, PATH), the spatch program's bytes,
 * and every file under every path the command line names and under the
 * kernel tree found above them, by content: a caller's lock in one file
 * decides a verdict in another, so one changed byte anywhere is a new key.
 * Configs (.preemptify.toml) above those paths, --config FILE and the
 * baseline files they name are hashed too.
 */
#define _GNU_SOURCE
#include "cli/cache.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cache_key.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "util/parallel.h"
#include "util/spawn.h"

/* Runs with effects (files written), or inputs beyond the files (git history, SARIF's repository facts), are never cached. */
static bool cacheable(int argc, char **argv)
{
	if (strcmp(argv[0], "scan") != 0 && strcmp(argv[0], "diff") != 0 && strcmp(argv[0], "explain") != 0)
		return false;
	static const char *const never[] = {"--help", "--since", "--output", "--write-baseline", "--no-cache", NULL};
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (strcmp(s, "--") == 0)
			break;
		if (strcmp(s, "-") == 0 || strstr(s, "sarif"))
			return false;
		for (size_t k = 0; never[k]; k++)
			if (strncmp(s, never[k], strlen(never[k])) == 0)
				return false;
		if (s[0] == '-' && s[1] != '-' && (strchr(s, 'h') || strchr(s, 'o')))
			return false;
	}
	return true;
}

struct input {
	char *path; /* as opened */
	bool link;  /* hash the link's text, not the file */
	struct cache_hash h;
};
typedef VEC(struct input) input_vec;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every file under DIR, in name order, but none under SKIP (the cache
 * itself); directories reached through a symlink are not entered (the
 * link's text is hashed).
 */
static void list_tree(const char *dir, const char *skip, input_vec *out)
{
	DIR *d = opendir(dir);
	struct strvec names = STRVEC_INIT;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, ".git") != 0)
			strvec_push(&names, e->d_name);
	if (d)
		closedir(d);
	if (names.len)
		qsort(names.items, names.len, sizeof *names.items, name_cmp);
	for (size_t i = 0; i < names.len; i++) {
		char *p = xasprintf("%s/%s", dir, names.items[i]);
		struct stat st;
		if (lstat(p, &st) != 0) {
			free(p);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (!skip || strcmp(p, skip) != 0)
				list_tree(p, skip, out);
			free(p);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			vec_push(out, ((struct input){p, S_ISLNK(st.st_mode), {0, 0}}));
		} else {
			free(p);
		}
	}
	strvec_release(&names);
}

static void hash_one(size_t i, void *ctx)
{
	struct input *in = &((input_vec *)ctx)->items[i];
	char *text = NULL, link[PATH_MAX];
	size_t len = 0;
	if (in->link) {
		ssize_t n = readlink(in->path, link, sizeof link);
		cache_hash_bytes(link, n > 0 ? (size_t)n : 0, &in->h);
		struct stat st;
		if (stat(in->path, &st) != 0 || !S_ISREG(st.st_mode))
			return;
	}
	struct cache_hash h = in->h;
	if (read_file(in->path, &text, &len) < 0) {
		in->h = (struct cache_hash){~0ull, in->link};
		return;
	}
	cache_hash_bytes(text, len, &in->h);
	in->h.a ^= h.b;
	in->h.b ^= h.a;
	free(text);
}

/* The bytes of FILE into KM, hashed, labelled LABEL (nothing but the label when it cannot be read). */
static void key_file(struct buf *km, const char *label, const char *file)
{
	char *text = NULL;
	size_t len = 0;
	struct cache_hash h = {0, 0};
	if (file && read_file(file, &text, &len) == 0)
		cache_hash_bytes(text, len, &h);
	error_clear();
	free(text);
	buf_printf(km, "%s %s %016llx%016llx\n", label, file ? file : "-", (unsigned long long)h.a,
		   (unsigned long long)h.b);
}

/* The config file PATH and the baseline it names (which may lie anywhere), into KM. */
static void key_config(struct buf *km, const char *path)
{
	struct config cfg = CONFIG_INIT;
	key_file(km, "config", path);
	if (config_load(&cfg, path) < 0)
		error_clear();
	if (cfg.baseline)
		key_file(km, "config-baseline", cfg.baseline);
	config_release(&cfg);
}

/* Each .preemptify.toml from the directory of PATH up to /, into KM. */
static void key_configs(struct buf *km, const char *path)
{
	char *dir = xstrdup(path);
	for (;;) {
		char *cfg = xasprintf("%s/.preemptify.toml", *dir ? dir : "");
		if (access(cfg, F_OK) == 0)
			key_config(km, cfg);
		free(cfg);
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(dir);
}

/* Real paths of the command line's existing paths and the kernel trees above them, outermost only. */
static void find_roots(int argc, char **argv, struct strvec *roots)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cache-dir") == 0 || strncmp(argv[i], "--cache-dir=", 12) == 0) {
			i += argv[i][11] == '\0';
			continue;
		}
		char *real = realpath(argv[i], NULL), *file = NULL;
		unsigned line, col;
		if (!real && explain_parse_location(argv[i], &file, &line, &col) == 0)
			real = realpath(file, NULL); /* explain FILE:LINE[:COL] reads FILE */
		if (!real) {
			free(file);
			continue;
		}
		bool is_path = false, is_git = false;
		char *tree = cli_tree_root(file ? file : argv[i], &is_path, &is_git);
		free(file);
		char *tree_real = tree ? realpath(tree, NULL) : NULL;
		vec_push(roots, real);
		if (tree_real)
			vec_push(roots, tree_real);
		free(tree);
	}
	if (roots->len)
		qsort(roots->items, roots->len, sizeof *roots->items, name_cmp);
	size_t n = 0;
	for (size_t i = 0; i < roots->len; i++) {
		const char *last = n ? roots->items[n - 1] : NULL;
		size_t ll = last ? strlen(last) : 0;
		if (last && strncmp(roots->items[i], last, ll) == 0 &&
		    (roots->items[i][ll] == '\0' || roots->items[i][ll] == '/' || strcmp(last, "/") == 0)) {
			free(roots->items[i]);
			continue;
		}
		roots->items[n++] = roots->items[i];
	}
	roots->len = n;
}

/* The files under ROOTS, hashed (in parallel), into KM; their number. */
static size_t key_roots(struct buf *km, const struct strvec *roots, const char *cache)
{
	input_vec in = VEC_INIT;
	for (size_t r = 0; r < roots->len; r++) {
		struct stat st;
		buf_printf(km, "root %s\n", roots->items[r]);
		key_configs(km, roots->items[r]);
		if (stat(roots->items[r], &st) == 0 && S_ISDIR(st.st_mode))
			list_tree(roots->items[r], cache, &in);
		else
			vec_push(&in, ((struct input){xstrdup(roots->items[r]), false, {0, 0}}));
	}
	parallel_for(in.len, 0, hash_one, &in);
	for (size_t i = 0; i < in.len; i++) {
		buf_printf(km, "%s%c%016llx%016llx\n", in.items[i].path, 0, (unsigned long long)in.items[i].h.a,
			   (unsigned long long)in.items[i].h.b);
		free(in.items[i].path);
	}
	size_t n = in.len;
	vec_release(&in);
	return n;
}

/* The program NAME (a path, or looked up on PATH) by content. */
static void key_program(struct buf *km, const char *name)
{
	char *prog = NULL;
	if (spawn_find_program(name, &prog) < 0)
		error_clear();
	key_file(km, "program", prog);
	free(prog);
}

void cache_key_binary(struct buf *km)
{
	key_file(km, "binary", "/proc/self/exe");
}

void cache_key_programs(struct buf *km, const char *spatch)
{
	cache_key_binary(km);
	key_program(km, spatch);
	key_program(km, "python3");
}

/* The --spatch PROG of ARGV, else "spatch". */
static const char *spatch_of(int argc, char **argv)
{
	const char *p = "spatch";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--spatch") == 0 && i + 1 < argc)
			p = argv[i + 1];
		else if (strncmp(argv[i], "--spatch=", 9) == 0)
			p = argv[i] + 9;
	}
	return p;
}

int cache_key(int argc, char **argv, const char *dir, char keyhex[33], size_t *files)
{
	if (!cacheable(argc, argv))
		return 0;
	struct buf km = BUF_INIT;
	struct strvec roots = STRVEC_INIT;
	char cwd[PATH_MAX];
	static const char *const env[] = {"NO_COLOR", "COLUMNS", "TERM", "PATH", "TMPDIR", NULL};
	buf_printf(&km, "%s\nversion %s\n", CACHE_FORMAT, PREEMPTIFY_VERSION);
	if (strcmp(argv[0], "diff") == 0)
		cache_key_programs(&km, spatch_of(argc, argv));
	else
		key_file(&km, "binary", "/proc/self/exe");
	buf_printf(&km, "cwd %s\ntty %d%d%d\n", getcwd(cwd, sizeof cwd) ? cwd : "?", isatty(0), isatty(1), isatty(2));
	struct winsize ws; /* explain wraps its reasons at the terminal's width */
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		buf_printf(&km, "width %u\n", (unsigned)ws.ws_col);
	for (int i = 0; i < argc; i++)
		buf_printf(&km, "arg %s%c", argv[i], 0);
	for (size_t i = 0; env[i]; i++) {
		const char *v = getenv(env[i]);
		buf_printf(&km, "env %s=%s%c", env[i], v ? v : "(unset)", v ? 1 : 0);
	}
	key_configs(&km, cwd);
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--config") == 0)
			key_config(&km, argv[i + 1]);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--config=", 9) == 0)
			key_config(&km, argv[i] + 9);
	find_roots(argc, argv, &roots);
	char *cache = realpath(dir, NULL);
	*files = key_roots(&km, &roots, cache);
	free(cache);
	struct cache_hash h;
	cache_hash_bytes(km.ptr, km.len, &h);
	cache_hash_hex(&h, keyhex);
	strvec_release(&roots);
	buf_release(&km);
	return 1;
}
