/* Textdiff: unified diffs through libgit2's buffer diff (Myers/patience). */
#include "fix/textdiff.h"

#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int make_patch(git_patch **out, const char *old_text, size_t old_len,
		      const char *new_text, size_t new_len, int context)
{
	git_diff_options o;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = (uint32_t)context;
	o.flags = GIT_DIFF_FORCE_TEXT;
	git_libgit2_init(); /* refcounted; balanced by the shutdown below */
	int r = git_patch_from_buffers(out, old_text, old_len, NULL, new_text, new_len, NULL, &o);
	git_libgit2_shutdown();
	if (r < 0) {
		const git_error *e = git_error_last();
		return error_set("diff failed: %s", e && e->message ? e->message : "libgit2 error");
	}
	return 0;
}

void textdiff_begin(void)
{
	git_libgit2_init();
}

void textdiff_end(void)
{
	git_libgit2_shutdown();
}

char *textdiff_display_path(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' && getcwd(cwd, sizeof cwd)) {
		size_t n = strlen(cwd);
		if (strncmp(path, cwd, n) == 0 && path[n] == '/')
			return xstrdup(path + n + 1);
	}
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	return xstrdup(path);
}

#define C_META "\033[1m"
#define C_FRAG "\033[36m"
#define C_OLD "\033[31m"
#define C_NEW "\033[32m"
#define C_RESET "\033[m"

int textdiff_unified(struct buf *out, const char *path, const char *old_text, size_t old_len,
		     const char *new_text, size_t new_len, const struct textdiff_options *opts)
{
	struct textdiff_options def = TEXTDIFF_OPTIONS_INIT;
	git_patch *patch = NULL;
	char *p = NULL;
	int ret = -1;

	if (!opts)
		opts = &def;
	if (old_len == new_len && memcmp(old_text, new_text, old_len) == 0)
		return 0;
	if (make_patch(&patch, old_text, old_len, new_text, new_len, opts->context) < 0)
		goto done;
	p = textdiff_display_path(path);
	/* a path outside the current directory stays absolute: a//x would not apply */
	if (p[0] == '/')
		memmove(p, p + 1, strlen(p));
	const char *meta = opts->color ? C_META : "", *reset = opts->color ? C_RESET : "";
	buf_printf(out, "%sdiff --git a/%s b/%s%s\n", meta, p, p, reset);
	buf_printf(out, "%s--- a/%s%s\n", meta, p, reset);
	buf_printf(out, "%s+++ b/%s%s\n", meta, p, reset);
	size_t nh = git_patch_num_hunks(patch);
	for (size_t h = 0; h < nh; h++) {
		const git_diff_hunk *hunk;
		size_t nl;
		if (git_patch_get_hunk(&hunk, &nl, patch, h) < 0)
			goto done;
		buf_printf(out, "%s%.*s%s", opts->color ? C_FRAG : "", (int)hunk->header_len,
			   hunk->header, reset);
		if (hunk->header_len == 0 || hunk->header[hunk->header_len - 1] != '\n')
			buf_putc(out, '\n');
		for (size_t l = 0; l < nl; l++) {
			const git_diff_line *line;
			if (git_patch_get_line_in_hunk(&line, patch, h, l) < 0)
				goto done;
			const char *col = "";
			char origin = line->origin;
			if (origin == GIT_DIFF_LINE_ADDITION)
				col = C_NEW;
			else if (origin == GIT_DIFF_LINE_DELETION)
				col = C_OLD;
			if (origin == GIT_DIFF_LINE_CONTEXT_EOFNL || origin == GIT_DIFF_LINE_ADD_EOFNL ||
			    origin == GIT_DIFF_LINE_DEL_EOFNL) {
				buf_puts(out, "\\ No newline at end of file\n");
				continue;
			}
			bool colored = opts->color && *col;
			buf_printf(out, "%s%c%.*s", colored ? col : "", origin,
				   (int)line->content_len, line->content);
			bool nl_end = line->content_len && line->content[line->content_len - 1] == '\n';
			if (colored) {
				if (nl_end)
					out->len--, out->ptr[out->len] = '\0';
				buf_puts(out, C_RESET);
			}
			if (nl_end && colored)
				buf_putc(out, '\n');
			else if (!nl_end)
				buf_putc(out, '\n');
		}
	}
	ret = 0;
done:
	free(p);
	git_patch_free(patch);
	return ret;
}

int textdiff_hunks(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
		   textdiff_hunk_vec *out)
{
	git_patch *patch = NULL;
	if (make_patch(&patch, old_text, old_len, new_text, new_len, 0) < 0)
		return -1;
	size_t nh = git_patch_num_hunks(patch);
	for (size_t h = 0; h < nh; h++) {
		const git_diff_hunk *hunk;
		size_t nl;
		git_patch_get_hunk(&hunk, &nl, patch, h);
		struct textdiff_hunk th = {(unsigned)hunk->old_start, (unsigned)hunk->old_lines,
					   (unsigned)hunk->new_start, (unsigned)hunk->new_lines};
		vec_push(out, th);
	}
	git_patch_free(patch);
	return 0;
}

int textdiff_count(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
		   size_t *out_added, size_t *out_removed)
{
	git_patch *patch = NULL;
	size_t ctx = 0;
	*out_added = *out_removed = 0;
	if (make_patch(&patch, old_text, old_len, new_text, new_len, 0) < 0)
		return -1;
	git_patch_line_stats(&ctx, out_added, out_removed, patch);
	git_patch_free(patch);
	return 0;
}
