/*
 * The fixed point of the tree index (tree.h): rounds of searching the
 * tree for the names followed, analysing the files that name them and
 * deciding each name from its uses (atomic, bound to its CPU, or
 * preemptible), following the callers of a call made with preemption on.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include "parse/source.h"
#include "util/interrupt.h"

/* ---- 3. decide ------------------------------------------------------------------ */

/*
 * Marks the files defining name N to be analysed again: the calls made
 * inside it, and inside the static functions only it calls, now read
 * protected. Its callers' files do not change.
 */
static void touch_files(struct tree_context *t, uint32_t n)
{
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		struct tfile *f = &t->files[x->files.items[i]];
		for (size_t k = 0; k < f->defines.len; k++)
			if (f->defines.items[k] == n)
				f->dirty = true, f->from = 0;
	}
}

#define REASON_MAX 900

static void reason_add(struct buf *b, const char *s)
{
	if (b->len < REASON_MAX)
		buf_puts(b, s);
}

/*
 * Decides name N from its uses: 1 settled (atomic or failed), 0 open
 * (waits for callers being followed), with new names added.
 */
/*
 * i386 interrupt entry stubs: BUILD_SMP_INTERRUPT(x, vector) (and the timer
 * variant) expands to assembly that calls smp_x() from an interrupt gate, in
 * hard-IRQ context; no C file names smp_x. Where such a stub is built for
 * NAME, a reason (owned), else NULL.
 */
static char *interrupt_stub(const struct tree_context *t, const struct tname *x)
{
	static const char *const builders[] = {"BUILD_SMP_INTERRUPT", "BUILD_SMP_TIMER_INTERRUPT"};
	if (x->len <= 4 + TREE_MIN_NAME || memcmp(x->name, "smp_", 4) != 0)
		return NULL;
	const char *stub = x->name + 4;
	size_t sn = x->len - 4;
	uint32_t h = ident_hash(stub, sn);
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tfile *f = &t->files[i];
		if (!f->ids_done || !tree_families_meet(x->fam, f->fam) || !tree_file_has(f, h))
			continue;
		char *text;
		size_t len;
		if (read_file(f->path, &text, &len) < 0)
			continue;
		char *found = NULL;
		for (size_t b = 0; b < ARRAY_SIZE(builders) && !found; b++) {
			size_t bn = strlen(builders[b]);
			for (const char *p = memmem(text, len, builders[b], bn); p && !found;
			     p = memmem(p + 1, len - (size_t)(p + 1 - text), builders[b], bn)) {
				const char *q = p + bn, *end = text + len;
				while (q < end && (*q == ' ' || *q == '\t'))
					q++;
				if (q == end || *q++ != '(')
					continue;
				while (q < end && (*q == ' ' || *q == '\t'))
					q++;
				if ((size_t)(end - q) <= sn || memcmp(q, stub, sn) != 0 || is_ident_char(q[sn]))
					continue;
				unsigned line = 1;
				for (const char *c = text; c < p; c++)
					line += *c == '\n';
				found = xasprintf("interrupt entry: %s(%.*s, ...) at %s:%u builds the stub that calls "
						  "it from an interrupt gate", builders[b], (int)sn, stub, f->path, line);
			}
		}
		free(text);
		if (found)
			return found;
	}
	return NULL;
}

/* Does a definition of name N may sleep (then other tasks may run on its CPU)? */
static bool name_sleeps(const struct tree_context *t, uint32_t n)
{
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		const struct tfile *f = &t->files[x->files.items[i]];
		for (size_t k = 0; k < f->sleeping.len; k++)
			if (f->sleeping.items[k] == n)
				return true;
	}
	return false;
}

static int decide(struct tree_context *t, uint32_t n, bool *added)
{
	struct tname *x = &t->names.items[n];
	struct buf why = BUF_INIT;
	bool pending = false;
	size_t ncalls = 0, shown = 0, nbound = 0;
	char *bound_how = NULL; /* the first call from code bound to its CPU */
	const struct tref *reg = NULL;
	const char *reg_path = NULL;
	bool unread = false;
	for (size_t fi = 0; fi < x->files.len; fi++) {
		const struct tfile *f = &t->files[x->files.items[fi]];
		if (f->dirty) {
			unread = true; /* not analysed yet, or its refs are stale */
			continue;
		}
		for (size_t k = 0; k < f->refs.len; k++) {
			const struct tref *r = &f->refs.items[k];
			if (r->name != n || r->other || r->kind == USE_DECLARATION || r->kind == USE_EXPORT)
				continue;
			char *fail = NULL;
			if (r->kind == USE_ADDRESS && r->verbatim && !r->line)
				fail = xasprintf("%s (%s)", r->why, f->path);
			else if (r->kind == USE_ADDRESS && r->verbatim)
				fail = xasprintf("%s (%s:%u)", r->why, f->path, r->line);
			else if (r->kind == USE_ADDRESS)
				fail = xasprintf("its address is taken at %s:%u (%s): callers through the pointer "
						 "are unknown", f->path, r->line,
						 r->why ? r->why : "not a registration preemptify knows");
			else if (r->kind == USE_REGISTERED && r->ctx == CTX_PROCESS)
				fail = xasprintf("registered at %s:%u: %s", f->path, r->line, r->why);
			else if (r->kind == USE_REGISTERED) {
				if (!reg || (r->ctx == CTX_HARDIRQ && reg->ctx != CTX_HARDIRQ))
					reg = r, reg_path = f->path;
			} else if (r->protected_call) {
				if (shown++ < 3) {
					char *s = xasprintf("%sfrom %s() at %s:%u (%s)", ncalls ? "; " : "",
							    r->caller, f->path, r->line, r->why);
					reason_add(&why, s);
					free(s);
				}
				ncalls++;
			} else if (r->self) {
				fail = xasprintf("it calls itself at %s:%u with preemption on", f->path, r->line);
			} else if (api_bound_entry(r->caller, strlen(r->caller))) {
				if (!nbound++)
					bound_how = xasprintf("from %s() at %s:%u: %s", r->caller, f->path, r->line,
							      api_bound_entry(r->caller, strlen(r->caller)));
			} else if (!r->roots_ok || r->nroots == 0) {
				fail = xasprintf("called from %s() at %s:%u with preemption on (%s)", r->caller,
						 f->path, r->line, r->why);
			} else {
				bool bound = false;
				for (size_t q = 0; q < r->nroots && !fail; q++) {
					const char *entry = api_bound_entry(r->roots[q], strlen(r->roots[q]));
					int have = tree_name_find(t, r->roots[q], strlen(r->roots[q]), f->fam);
					if (have >= 0 && t->names.items[have].state == T_ATOMIC)
						continue; /* analysed again: the call will read protected */
					if (!r->roots_sleep && (entry || (have >= 0 && t->names.items[have].state == T_BOUND))) {
						if (!bound && !nbound)
							bound_how = xasprintf("from %s() at %s:%u; %s(): %s", r->caller,
									      f->path, r->line, r->roots[q],
									      entry ? entry : t->names.items[have].reason);
						bound = true;
						continue;
					}
					if (entry || (have >= 0 && t->names.items[have].state == T_BOUND))
						fail = xasprintf("called from %s() at %s:%u with preemption on; %s() runs bound "
								 "to its CPU, but a function on the way may sleep, and other "
								 "tasks may then run on the CPU", r->caller, f->path, r->line,
								 r->roots[q]);
					else if (have >= 0 && t->names.items[have].state == T_FAILED)
						fail = xasprintf("called from %s() at %s:%u with preemption on; %s() "
								 "is preemptible: %s", r->caller, f->path, r->line,
								 r->roots[q], t->names.items[have].reason);
					else if (have < 0 && x->depth + 1 > TREE_MAX_DEPTH)
						fail = xasprintf("called from %s() at %s:%u with preemption on; its "
								 "callers are more than %d calls away from the site",
								 r->caller, f->path, r->line, TREE_MAX_DEPTH);
					else {
						if (have < 0) {
							tree_name_add(t, r->roots[q], x->depth + 1, f->fam);
							x = &t->names.items[n];
							*added = true;
						}
						pending = true;
					}
				}
				nbound += bound && !fail;
			}
			if (fail) {
				/* a long chain of reasons reads badly; keep the first words */
				if (strlen(fail) > REASON_MAX)
					strcpy(fail + REASON_MAX - 4, "...");
				tree_name_settle(&t->names.items[n], T_FAILED, CTX_PROCESS, fail);
				buf_release(&why);
				free(bound_how);
				return 1;
			}
		}
	}
	x = &t->names.items[n];
	x->waiting = pending;
	if (pending || unread) {
		buf_release(&why);
		free(bound_how);
		return 0;
	}
	if (bound_how && strlen(bound_how) > REASON_MAX)
		strcpy(bound_how + REASON_MAX - 4, "...");
	if (nbound && !x->sleep_asked) {
		/*
		 * whether it sleeps decides: read its definitions whole (with what they
		 * call), in the files not parsed (they may only define it) and the ones
		 * that define it but were parsed in slices
		 */
		x->sleep_asked = true;
		bool more = false;
		for (size_t i = 0; i < x->files.len; i++) {
			struct tfile *f = &t->files[x->files.items[i]];
			bool defines = false;
			for (size_t k = 0; k < f->defines.len && !defines; k++)
				defines = f->defines.items[k] == n;
			if (!f->parsed || (defines && f->sliced))
				f->dirty = f->force_parse = more = true, f->from = 0;
		}
		if (more) {
			free(bound_how);
			*added = true; /* not settled, but the next round has work */
			return 0;
		}
	}
	if (nbound && name_sleeps(t, n)) {
		tree_name_settle(x, T_FAILED, CTX_PROCESS,
			    xasprintf("called %s, but %s() may sleep, and other tasks may then run on its CPU",
				      bound_how, x->name));
	} else if (nbound) {
		tree_name_settle(x, T_BOUND, CTX_PROCESS,
			    xasprintf("every call in the tree runs on a task bound to its CPU%s: %s%s",
				      ncalls || reg ? " or with preemption off" : "", bound_how,
				      nbound + ncalls > 1 ? "; ..." : ""));
	} else if (reg) {
		tree_name_settle(x, T_ATOMIC, reg->ctx, xasprintf("%s, in %s%s%s", reg->why, reg_path,
							       ncalls ? "; every direct call in the tree is made with preemption off: " : "",
							       ncalls ? buf_cstr(&why) : ""));
	} else if (ncalls) {
		tree_name_settle(x, T_ATOMIC, CTX_CALLERS,
			    xasprintf("every call in the tree is made with preemption off: %s%s",
				      buf_cstr(&why), ncalls > 3 ? "; ..." : ""));
	} else {
		char *stub = interrupt_stub(t, x);
		if (stub)
			tree_name_settle(x, T_ATOMIC, CTX_HARDIRQ, stub);
		else
			tree_name_settle(x, T_FAILED, CTX_PROCESS,
				    xstrdup("no caller and no registration in the tree: its callers are unknown"));
	}
	buf_release(&why);
	free(bound_how);
	if (x->state == T_ATOMIC) {
		t->stats.atomic++;
		touch_files(t, n);
	}
	return 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tree_context_build(struct tree_context **out, char *const *files, size_t n,
			const tree_want_vec *want, struct tree_ids *ids, int jobs)
{
	double t0 = now();
	struct tree_context *t = xcalloc(1, sizeof *t);
	t->fields = xcalloc(1, sizeof *t->fields);
	pthread_mutex_init(&t->fields->mu, NULL);
	t->files = xcalloc(n ? n : 1, sizeof *t->files);
	t->nfiles = n;
	for (size_t i = 0; i < n; i++) {
		t->files[i].path = files[i];
		t->files[i].fam = tree_arch_family(files[i]);
		if (ids && ids[i].ids) { /* taken over */
			t->files[i].ids = ids[i];
			t->files[i].ids_done = true;
			ids[i].ids = NULL;
		}
	}
	for (size_t i = 0; i < want->len; i++)
		tree_name_add(t, want->items[i].name, 0, tree_arch_family(want->items[i].file));
	size_t wave = 1;
	for (unsigned round = 0; round < 256 && !interrupted(); round++) {
		t->stats.rounds++;
		/* new names wait until the open ones have no file left to read:
		 * one search over the tree's bytes serves them all */
		size_t analysed = tree_analyse_some(t, wave, jobs);
		if (!analysed) {
			bool any_new = false;
			for (size_t i = 0; i < t->names.len && !any_new; i++)
				any_new = t->names.items[i].state == T_NEW;
			if (any_new) {
				tree_search_new(t, jobs);
				wave = 1;
				analysed = tree_analyse_some(t, wave, jobs);
			}
		}
		bool settled = false, added = false;
		for (size_t i = 0; i < t->names.len; i++)
			if (t->names.items[i].state == T_OPEN && decide(t, (uint32_t)i, &added))
				settled = true;
		/* a name no longer waiting may have files left to read */
		bool readable = false;
		for (size_t i = 0; i < t->names.len && !readable && !settled && !added && !analysed; i++) {
			const struct tname *x = &t->names.items[i];
			for (size_t k = 0; x->state == T_OPEN && !x->waiting && k < x->files.len && !readable; k++)
				readable = t->files[x->files.items[k]].dirty;
		}
		if (!settled && !added && !analysed && !readable)
			break;
		wave = wave < TREE_MAX_FILES ? 2 * wave : wave;
	}
	/* what is still open waits on itself: a cycle, or callers never settled */
	for (size_t i = 0; i < t->names.len; i++) {
		struct tname *x = &t->names.items[i];
		if (x->state == T_OPEN || x->state == T_NEW)
			tree_name_settle(x, T_FAILED, CTX_PROCESS,
					 xstrdup("its callers depend on one another (a cycle of calls with preemption "
						 "on) or on functions the tree index did not settle"));
	}
	t->stats.names = t->names.len;
	t->fields->frozen = true;
	for (size_t i = 0; i < n; i++) {
		tree_file_refs_clear(&t->files[i]);
		vec_release(&t->files[i].refs);
		tree_file_seen_clear(&t->files[i]);
		vec_release(&t->files[i].seen);
		vec_release(&t->files[i].names);
		vec_release(&t->files[i].defines);
		vec_release(&t->files[i].sleeping);
		free(t->files[i].ids.ids);
		t->files[i].ids.ids = NULL;
	}
	t->stats.seconds = now() - t0;
	*out = t;
}
