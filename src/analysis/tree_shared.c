/* What the tree's files share (tree_shared.h): the per-CPU arrays' entries. */
#include "analysis/tree_shared.h"

#include <stdlib.h>
#include <string.h>

void tree_array_release(struct tree_array *t)
{
	free(t->name);
	free(t->type);
	free(t->file);
	free(t->why_not);
	free(t->users);
	free(t->soa_tag);
	free(t->soa_file);
	free(t->soa_var);
	free(t->soa_fields);
	free(t->plan);
}

const struct tree_array *tree_array_find(const tree_array_vec *t, const char *name, const char *file)
{
	const struct tree_array *first = NULL;
	for (size_t i = 0; t && i < t->len; i++)
		if (strcmp(t->items[i].name, name) == 0) {
			if (file && strcmp(t->items[i].file, file) == 0)
				return &t->items[i];
			if (!first)
				first = &t->items[i];
		}
	return first;
}
