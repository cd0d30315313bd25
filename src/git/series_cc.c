/*
 * Series: who each patch goes to. --to-cmd and --cc-cmd run a command on
 * the patch file (as git send-email runs them) and take the addresses it
 * prints; --cc-from-maintainers reads the tree's MAINTAINERS and adds the
 * M: and L: addresses of every entry whose F: patterns match a file the
 * patch touches.
 */
#include "git/series_cc.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/spawn.h"

/* One MAINTAINERS entry: its addresses and its F: patterns. */
struct maint {
	struct strvec addrs, files;
};

void series_cc_release(struct series_cc *c)
{
	for (size_t i = 0; i < c->entries.len; i++) {
		strvec_release(&c->entries.items[i].addrs);
		strvec_release(&c->entries.items[i].files);
	}
	vec_release(&c->entries);
}

static void push_unique(struct strvec *v, const char *s, size_t n)
{
	for (size_t i = 0; i < v->len; i++)
		if (strlen(v->items[i]) == n && strncmp(v->items[i], s, n) == 0)
			return;
	vec_push(v, xstrndup(s, n));
}

int series_cc_load(struct series_cc *c, const char *workdir)
{
	char *path = xasprintf("%sMAINTAINERS", workdir), *text = NULL;
	size_t len = 0;
	int rc = read_file(path, &text, &len);
	free(path);
	if (rc < 0)
		return error_set("--cc-from-maintainers: no MAINTAINERS file at the top of the tree");
	struct maint cur = {STRVEC_INIT, STRVEC_INIT};
	for (const char *l = text; l && *l;) {
		size_t n = strcspn(l, "\n");
		if (n >= 3 && l[1] == ':' && (l[2] == '\t' || l[2] == ' ') && strchr("MLF", l[0])) {
			const char *v = l + 3;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t vn = (size_t)(l + n - v);
			while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t' || v[vn - 1] == '\r'))
				vn--;
			if (vn)
				push_unique(l[0] == 'F' ? &cur.files : &cur.addrs, v, vn);
		} else if (n == 0 || strspn(l, " \t\r") == n) {
			if (cur.files.len && cur.addrs.len)
				vec_push(&c->entries, cur);
			else {
				strvec_release(&cur.addrs);
				strvec_release(&cur.files);
			}
			cur = (struct maint){STRVEC_INIT, STRVEC_INIT};
		}
		l += n + (l[n] == '\n');
	}
	if (cur.files.len && cur.addrs.len)
		vec_push(&c->entries, cur);
	else {
		strvec_release(&cur.addrs);
		strvec_release(&cur.files);
	}
	free(text);
	c->loaded = true;
	return 0;
}

/* Does MAINTAINERS pattern PAT cover PATH ("dir/" a whole directory, else a glob)? */
static bool covers(const char *pat, const char *path)
{
	size_t n = strlen(pat);
	if (n && pat[n - 1] == '/')
		return strncmp(pat, path, n) == 0;
	if (fnmatch(pat, path, 0) == 0)
		return true;
	return strncmp(pat, path, n) == 0 && path[n] == '/'; /* a directory named without its slash */
}

void series_cc_maintainers(const struct series_cc *c, const char *const *paths, size_t n, struct strvec *cc)
{
	for (size_t e = 0; e < c->entries.len; e++) {
		const struct maint *m = &c->entries.items[e];
		bool hit = false;
		for (size_t f = 0; f < m->files.len && !hit; f++)
			for (size_t p = 0; p < n && !hit; p++)
				hit = covers(m->files.items[f], paths[p]);
		for (size_t a = 0; hit && a < m->addrs.len; a++)
			push_unique(cc, m->addrs.items[a], strlen(m->addrs.items[a]));
	}
}

int series_cc_run(const char *cmd, const char *patch, const char *workdir, struct strvec *out)
{
	struct strvec argv = STRVEC_INIT;
	struct spawn_result r = SPAWN_RESULT_INIT;
	int rc = -1;
	for (const char *p = cmd; *p;) { /* words, no shell: as the user typed them, split on blanks */
		p += strspn(p, " \t");
		size_t w = strcspn(p, " \t");
		if (w)
			vec_push(&argv, xstrndup(p, w));
		p += w;
	}
	if (!argv.len) {
		error_set("an empty address command");
		goto done;
	}
	vec_push(&argv, xstrdup(patch));
	vec_push(&argv, NULL);
	if (spawn_run(argv.items, workdir, 60, &r) < 0)
		goto done;
	if (r.exit_code != 0 || r.timed_out) {
		char *why = spawn_describe(&r);
		error_set("%s: %s", cmd, why);
		free(why);
		goto done;
	}
	for (const char *l = r.output ? r.output : ""; *l;) {
		size_t n = strcspn(l, "\n");
		while (n && (l[n - 1] == ' ' || l[n - 1] == '\r'))
			n--;
		if (n && memchr(l, '@', n))
			push_unique(out, l, n);
		l += strcspn(l, "\n");
		l += *l == '\n';
	}
	rc = 0;
done:
	argv.len -= argv.len && !argv.items[argv.len - 1]; /* the NULL end */
	strvec_release(&argv);
	spawn_result_release(&r);
	return rc;
}
