/*
 * What a kernel tree's own sources say about preemption, read once before
 * any analysis: the architectures its Kconfig builds without CONFIG_PREEMPT
 * (their code is never compiled preemptible), and whether its big kernel
 * lock is a spinlock under CONFIG_PREEMPT (2.6.9 include/linux/smp_lock.h)
 * or sleeps (2.6.11's PREEMPT_BKL semaphore; a 2.4 tree has no preemption
 * to judge, and its port keeps the 2.6 default of "no protection").
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static bool bkl_spins;
static struct strvec no_preempt = STRVEC_INIT; /* architectures without `config PREEMPT` */

static char *read_text(const char *path, size_t *len)
{
	char *text = NULL;
	*len = 0;
	if (read_file_max(path, 1u << 22, &text, len) < 0) {
		error_clear();
		return NULL;
	}
	return text;
}

static bool has(const char *text, size_t len, const char *word)
{
	return text && memmem(text, len, word, strlen(word)) != NULL;
}

/* Does a Kconfig file of arch/NAME (Kconfig, Kconfig.cpu, ...) define PREEMPT? */
static bool arch_defines_preempt(const char *root, const char *name)
{
	char *dir = xasprintf("%s/arch/%s", root, name);
	DIR *d = opendir(dir);
	bool yes = false;
	for (struct dirent *e; d && !yes && (e = readdir(d));) {
		if (strncmp(e->d_name, "Kconfig", 7) != 0)
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		size_t len;
		char *text = read_text(p, &len);
		for (const char *l = text; l && !yes; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			yes = strncmp(l, "config PREEMPT", 14) == 0 && (l[14] == '\n' || l[14] == ' ' || l[14] == '\t');
		free(text);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
	return yes;
}

static void read_arches(const char *root)
{
	char *dir = xasprintf("%s/arch", root);
	DIR *d = opendir(dir);
	struct strvec without = STRVEC_INIT;
	bool any = false;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *kc = xasprintf("%s/%s/Kconfig", dir, e->d_name);
		size_t len;
		char *text = read_text(kc, &len);
		free(kc);
		if (!text)
			continue; /* not a Kconfig architecture (2.4's config.in): nothing to judge */
		free(text);
		if (arch_defines_preempt(root, e->d_name))
			any = true;
		else
			strvec_push(&without, e->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	/* a tree none of whose architectures can preempt predates CONFIG_PREEMPT: it is ported, not judged */
	if (any)
		for (size_t i = 0; i < without.len; i++)
			strvec_push(&no_preempt, without.items[i]);
	strvec_release(&without);
}

static void read_bkl(const char *root)
{
	char *h = xasprintf("%s/include/linux/smp_lock.h", root), *c = xasprintf("%s/lib/kernel_lock.c", root);
	size_t hl, cl;
	char *ht = read_text(h, &hl), *ct = read_text(c, &cl);
	bkl_spins = has(ht, hl, "CONFIG_PREEMPT") && has(ht, hl, "spin_lock(&kernel_flag)") &&
		    !has(ct, cl, "kernel_sem") && !has(ht, hl, "PREEMPT_BKL");
	free(ht);
	free(ct);
	free(h);
	free(c);
}

void kernel_api_read_tree(const char *root)
{
	kernel_api_reset_tree();
	if (!root)
		return;
	read_arches(root);
	read_bkl(root);
}

void kernel_api_reset_tree(void)
{
	bkl_spins = false;
	strvec_release(&no_preempt);
}

bool api_bkl_spins(void)
{
	return bkl_spins;
}

const char *api_arch_without_preempt(const char *path, size_t *len)
{
	static const char *const prefixes[] = {"arch/", "include/asm-"};
	for (size_t k = 0; k < ARRAY_SIZE(prefixes); k++) {
		size_t pl = strlen(prefixes[k]);
		for (const char *p = path; (p = strstr(p, prefixes[k])); p++) {
			if (p != path && p[-1] != '/')
				continue;
			const char *a = p + pl, *slash = strchr(a, '/');
			if (!slash)
				break;
			for (size_t i = 0; i < no_preempt.len; i++)
				if (strlen(no_preempt.items[i]) == (size_t)(slash - a) &&
				    memcmp(no_preempt.items[i], a, (size_t)(slash - a)) == 0) {
					*len = (size_t)(slash - a);
					return a;
				}
			break;
		}
	}
	return NULL;
}

bool point_bkl_only(const struct fn *f, const struct point_state *s, uint32_t offset)
{
	if (!bkl_spins || s->atomic_ctx || s->entry_held || s->must_acq < 0)
		return false;
	name_vec held = VEC_INIT;
	flow_held_keys(f, offset, false, &held);
	bool only = held.len > 0;
	for (size_t i = 0; i < held.len && only; i++)
		only = strcmp(held.items[i], "kernel_flag") == 0;
	vec_release(&held);
	return only;
}
