/* The source overlay (overlay.h): file identities and the texts standing in for them. */
#include "util/overlay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/util.h"

struct entry {
	dev_t dev;
	ino_t ino;
	char *text;
	size_t len;
};

/* Written only between runs (overlay.h), so the workers' reads need no lock. */
static VEC(struct entry) entries;

static struct entry *find(const struct stat *st)
{
	for (size_t i = 0; i < entries.len; i++)
		if (entries.items[i].dev == st->st_dev && entries.items[i].ino == st->st_ino)
			return &entries.items[i];
	return NULL;
}

int overlay_add(const char *path, const char *text, size_t len)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return error_set("%s: %s", path, strerror(errno));
	struct entry *e = find(&st);
	if (!e) {
		struct entry fresh = {st.st_dev, st.st_ino, NULL, 0};
		vec_push(&entries, fresh);
		e = &entries.items[entries.len - 1];
	}
	free(e->text);
	e->text = xmalloc(len + 1);
	memcpy(e->text, text, len);
	e->text[len] = '\0';
	e->len = len;
	return 0;
}

void overlay_clear(void)
{
	for (size_t i = 0; i < entries.len; i++)
		free(entries.items[i].text);
	vec_release(&entries);
}

size_t overlay_count(void)
{
	return entries.len;
}

int overlay_read(const char *path, char **out, size_t *out_len)
{
	struct stat st;
	const struct entry *e = entries.len && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? find(&st) : NULL;
	if (!e)
		return read_file(path, out, out_len);
	*out = xmalloc(e->len + 1);
	memcpy(*out, e->text, e->len + 1);
	*out_len = e->len;
	return 0;
}
