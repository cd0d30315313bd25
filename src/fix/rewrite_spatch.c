/*
 * Running spatch: the sidecar of a run's sites, one spatch process on one
 * file's text, why a run failed; and the plan's work directory (the
 * built-in semantic patches) and the Python interpreter spatch is given.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "fix/rewrite_internal.h"

#include <errno.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/embedded.h"
#include "util/interrupt.h"
#include "util/spawn.h"

static void sidecar_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			buf_puts(b, "\\n");
		else if (*s == '\t')
			buf_puts(b, "\\t");
		else if (*s == '\\')
			buf_puts(b, "\\\\");
		else
			buf_putc(b, *s);
	}
}

static const char op_letter[] = {
	[EDIT_REPLACE] = 'R', [EDIT_INSERT_AFTER] = 'A', [EDIT_INSERT_BEFORE] = 'B'};

/* The -D virtual rule of a run of OP: the .cocci's rules for the other operations and its standalone ones stay off. */
char *op_virtual(enum edit_op op)
{
	static char names[][5] = {[EDIT_REPLACE] = "op_R", [EDIT_INSERT_AFTER] = "op_A", [EDIT_INSERT_BEFORE] = "op_B"};
	return names[op];
}

/* The sidecar lines of one run on input NAME: the sites of KIND/OP/GROUP not yet done, one a line. */
void sidecar(struct buf *side, const char *name, enum fix_kind kind, enum edit_op op, const char *group,
	     const site_vec *sites)
{
	for (size_t i = 0; i < sites->len; i++) {
		const struct site *s = &sites->items[i];
		if (s->kind != kind || s->op != op || s->lost || strcmp(s->group, group) != 0)
			continue;
		buf_printf(side, "%s\t%c\t%u\t%u\t%u\t0\t%s\t", name, op_letter[op], s->line, s->col,
			   s->end_line, s->node ? s->node : "-");
		sidecar_escape(side, s->text);
		buf_putc(side, '\n');
	}
}

/* Why a spatch run failed: how it ended and the last non-empty line of its output, which says most. */
static char *spatch_failure(enum fix_kind kind, const struct spawn_result *res)
{
	char *what = spawn_describe(res);
	const char *o = res->output ? res->output : "";
	size_t n = strlen(o);
	while (n && (o[n - 1] == '\n' || o[n - 1] == ' '))
		n--;
	size_t b = n;
	while (b && o[b - 1] != '\n')
		b--;
	char *err = n ? xasprintf("spatch (%s) %s: %.*s", fix_name(kind), what, (int)(n - b), o + b)
		      : xasprintf("spatch (%s) %s", fix_name(kind), what);
	free(what);
	return err;
}

/* "h" when J's file is a header, else "c": spatch's input is named so. */
static const char *input_ext(const struct job *j)
{
	size_t plen = strlen(j->out->path);
	return plen > 2 && strcmp(j->out->path + plen - 2, ".h") == 0 ? "h" : "c";
}

/* The spatch input of J in its work directory DIR, relative to TMPDIR: fN/in.c (in.h for a header). */
char *input_name(const struct job *j, const char *dir)
{
	size_t tl = strlen(j->tmpdir);
	const char *rel = strncmp(dir, j->tmpdir, tl) == 0 && dir[tl] == '/' ? dir + tl + 1 : dir;
	return xasprintf("%s/in.%s", rel, input_ext(j));
}

void step_key(struct buf *key, const struct job *j, enum fix_kind kind, enum edit_op op, const char *group,
	      const site_vec *sites, const char *text, size_t len)
{
	char name[] = "in.c";
	name[3] = input_ext(j)[0];
	buf_printf(key, "spatch step 1\nspatch %s\npython %s\nfix %s %s\ninput %s\n", j->opts->spatch,
		   j->python ? j->python : "-", fix_name(kind), op_virtual(op), name);
	sidecar(key, name, kind, op, group, sites);
	buf_printf(key, "text %zu\n", len);
	buf_add(key, text, len);
}

int run_spatch(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
	       const char *group, const site_vec *sites, const char *cur, size_t cur_len, char **out,
	       size_t *out_len, char **err)
{
	int ret = -1;
	struct buf side = BUF_INIT;
	struct spawn_result res = SPAWN_RESULT_INIT;
	int timeout_sec = j->opts->timeout_sec > 0 ? j->opts->timeout_sec : 60;
	/*
	 * spatch 1.1.1 copies its output with `sh -c "cp ... <input name>"`,
	 * unquoted: it must never see a user's file name (docs/spatch.md).
	 */
	/* the input as named to spatch (relative to TMPDIR, where it runs): the sidecar's key */
	char *in = input_name(j, dir);
	char *outp = xasprintf("%s/out.c", dir), *sidep = xasprintf("%s/sites.txt", dir);
	char *cocci = xasprintf("%s/cocci/%s.cocci", j->tmpdir, fix_name(kind));
	char *sites_arg = xasprintf("sites=%s", sidep);
	char *timeout = xasprintf("%d", timeout_sec);
	char *in_path = xasprintf("%s/%s", j->tmpdir, in);

	buf_puts(&side, "# path op line col end_line end_col node text\n");
	sidecar(&side, in, kind, op, group, sites);
	unlink(outp);
	if (write_file(sidep, side.ptr, side.len) < 0 || write_file(in_path, cur, cur_len) < 0) {
		*err = xstrdup(error_last());
		goto done;
	}
	/* --temp-files: spatch writes its cocci_small_output-* and cocci-output-* files in
	 * /tmp whatever TMPDIR says; in our directory they go when we remove it */
	char *argv[20] = {(char *)j->opts->spatch, "--sp-file", cocci, "-D", sites_arg, "-D", op_virtual(op),
			  "--very-quiet", "--no-show-diff", "--no-includes", "--timeout", timeout,
			  "--temp-files", (char *)j->tmpdir, "-o", outp, in, NULL};
	if (j->python) {
		memmove(argv + 3, argv + 1, 17 * sizeof *argv); /* with the NULL */
		argv[1] = "--python";
		argv[2] = (char *)j->python;
	}
	/* spatch's own --timeout covers matching; ours also covers parsing.
	 * It runs in TMPDIR: it resolves #include "cocci/sidecar.cocci" there. */
	if (j->spawned)
		atomic_fetch_add(j->spawned, 1);
	if (spawn_run(argv, j->tmpdir, timeout_sec + 5, &res) < 0) {
		*err = xasprintf("spatch: %s", error_last());
		goto done;
	}
	if (!res.timed_out && !res.signal && res.exit_code != 0 && res.output &&
	    strstr(res.output, "no modified files")) {
		/* spatch refuses -o when it changed nothing: the text is unchanged. */
		*out = xstrndup(cur, cur_len);
		*out_len = cur_len;
		ret = 0;
		goto done;
	}
	if (res.timed_out || res.signal || res.exit_code != 0) {
		*err = spatch_failure(kind, &res);
		goto done;
	}
	if (read_file(outp, out, out_len) < 0) {
		*err = xasprintf("spatch (%s) wrote no output: %s", fix_name(kind), error_last());
		goto done;
	}
	ret = 0;
done:
	spawn_result_release(&res);
	buf_release(&side);
	free(in);
	free(in_path);
	free(outp);
	free(sidep);
	free(cocci);
	free(sites_arg);
	free(timeout);
	return ret;
}

/*
 * The Python interpreter spatch would start, resolved once: spatch runs
 * `python3` from PATH in every process to find it, and when that is a
 * wrapper (a pyenv shim is a shell script) the wrapper's start-up is most
 * of each spatch run (0.8 s against 0.16 s measured). The interpreter's own
 * path, given with --python, is the same Python without the detour. NULL
 * when python3 is not found or does not answer: spatch then finds its own.
 */
char *resolve_python(void)
{
	char *py = NULL;
	if (spawn_find_program("python3", &py) < 0)
		return NULL;
	char *argv[] = {py, "-c", "import sys; sys.stdout.write(sys.executable)", NULL};
	struct spawn_result res = SPAWN_RESULT_INIT;
	char *exe = NULL;
	if (spawn_run(argv, NULL, 20, &res) == 0 && !res.timed_out && !res.signal && res.exit_code == 0 &&
	    res.output && res.output[0] == '/' && !strchr(res.output, '\n') && access(res.output, X_OK) == 0)
		exe = xstrdup(res.output);
	spawn_result_release(&res);
	free(py);
	return exe;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* The temporary directory of a plan, holding the built-in semantic patches; *OUT is owned. */
int make_workdir(char **out)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpdir = xasprintf("%s/preemptify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	*out = NULL;
	if (!mkdtemp(tmpdir)) {
		error_set("%s: %s", tmpdir, strerror(errno));
		free(tmpdir);
		return -1;
	}
	/* spatch runs in this directory and is given paths in it: absolute, even for TMPDIR=tmp */
	char *real = realpath(tmpdir, NULL);
	if (!real) {
		error_set("%s: %s", tmpdir, strerror(errno));
		rmdir(tmpdir);
		free(tmpdir);
		return -1;
	}
	free(tmpdir);
	tmpdir = real;
	*out = tmpdir;
	interrupt_register_dir(tmpdir); /* a second Ctrl-C removes it too */
	/* TMPDIR/cocci/ as in the source tree; k == FIX_NONE: the sidecar code
	 * every fix kind's semantic patch #includes. */
	char *cocci_dir = xasprintf("%s/cocci", tmpdir);
	int made = mkdir(cocci_dir, 0700) == 0 ? 0 : error_set("%s: %s", cocci_dir, strerror(errno));
	free(cocci_dir);
	if (made < 0)
		return -1;
	for (int k = 0; k < FIX_COUNT; k++) {
		char *name = k == FIX_NONE ? xstrdup("sidecar.cocci")
					   : xasprintf("%s.cocci", fix_name((enum fix_kind)k));
		const struct embedded_file *ef = embedded_find(name);
		char *path = xasprintf("%s/cocci/%s", tmpdir, name);
		int r = ef ? write_file(path, ef->data, ef->len)
			   : error_set("semantic patch %s is not built in", name);
		free(name);
		free(path);
		if (r < 0)
			return -1;
	}
	return 0;
}

void remove_workdir(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	/* only now: a second Ctrl-C during the nftw() above finishes the removal */
	interrupt_unregister_dir(dir);
}
