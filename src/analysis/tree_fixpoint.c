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
#include "util/overlay.h"

/* ---- 3. decide ------------------------------------------------------------------ */

/*
 * Marks the files defining name N to be analysed again: the calls made
 * inside it, and inside the static functions only it calls, now read
 * protected. Its callers' files do not change; for a field followed, every file naming it
 * (the static functions stored there get its context).
 */
static void touch_files(struct tree_context *t, uint32_t n)
{
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		struct tfile *f = &t->files[x->files.items[i]];
		if (x->member)
			f->dirty = true, f->from = 0; /* the static functions stored in the field */
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
 * i386 interrupt entry stubs: BUILD_SMP_INTERRUPT(x, vector) (and the timer
 * variant; 2.6's BUILD_INTERRUPT, voyager's CPIs too) expands to assembly that calls smp_x() from an interrupt gate, in
 * hard-IRQ context; no C file names smp_x. Where such a stub is built for
 * NAME, a reason (owned), else NULL.
 */
static char *interrupt_stub(const struct tree_context *t, const struct tname *x)
{
	/* 2.4 include/asm-i386/hw_irq.h; 2.6 arch/i386/kernel/entry.S (`call smp_##name`, used in entry_arch.h) */
	static const char *const builders[] = {"BUILD_SMP_INTERRUPT", "BUILD_SMP_TIMER_INTERRUPT", "BUILD_INTERRUPT"};
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
		if (overlay_read(f->path, &text, &len) < 0)
			continue;
		char *found = NULL;
		for (size_t b = 0; b < ARRAY_SIZE(builders) && !found; b++) {
			size_t bn = strlen(builders[b]);
			for (const char *p = memmem(text, len, builders[b], bn); p && !found;
			     p = memmem(p + 1, len - (size_t)(p + 1 - text), builders[b], bn)) {
				const char *q = p + bn, *end = text + len;
				if (p > text && is_ident_char(p[-1]))
					continue;
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

/* What the uses of one name add up to, while decide() weighs them. */
struct uses {
	struct buf why;           /* the calls with preemption off, the first three */
	size_t ncalls, shown;     /* ...how many, how many of them WHY shows */
	size_t nbound;            /* the calls from code bound to its CPU */
	char *bound_how;          /* ...the first one (owned) */
	const struct tref *reg;   /* the registration in an atomic context (hard IRQ first) */
	const char *reg_path;     /* ...its file */
	bool pending;             /* a call waits for its caller's roots, being followed */
	bool unread;              /* a file naming it is not analysed yet, or its uses are stale */
};

/* A long chain of reasons reads badly: keep the first words of S (owned). */
static void reason_cut(char *s)
{
	if (s && strlen(s) > REASON_MAX)
		strcpy(s + REASON_MAX - 4, "...");
}

/* Why the address taken in R (of file F) leaves the name preemptible (owned). */
static char *address_failure(const struct tfile *f, const struct tref *r)
{
	if (r->verbatim && !r->line)
		return xasprintf("%s (%s)", r->why, f->path);
	if (r->verbatim)
		return xasprintf("%s (%s:%u)", r->why, f->path, r->line);
	return xasprintf("its address is taken at %s:%u (%s): callers through the pointer are unknown", f->path,
			 r->line, r->why ? r->why : "not a registration preemptify knows");
}

/* A registration: in process context it fails (returned, owned); else the hard-IRQ one wins. */
static char *registration_weigh(const struct tfile *f, const struct tref *r, struct uses *u)
{
	if (r->ctx == CTX_PROCESS)
		return xasprintf("registered at %s:%u: %s", f->path, r->line, r->why);
	if (!u->reg || (r->ctx == CTX_HARDIRQ && u->reg->ctx != CTX_HARDIRQ))
		u->reg = r, u->reg_path = f->path;
	return NULL;
}

/* A call with preemption off: counted, and the first three said why. */
static void protected_call_note(const struct tfile *f, const struct tref *r, struct uses *u)
{
	if (u->shown++ < 3) {
		char *s = xasprintf("%sfrom %s() at %s:%u (%s)", u->ncalls ? "; " : "", r->caller, f->path, r->line,
				    r->why);
		reason_add(&u->why, s);
		free(s);
	}
	u->ncalls++;
}

/* Is a root bound to its CPU: a bring-up entry (ENTRY), or a followed name (HAVE, or -1) found bound? */
static bool root_bound(const struct tree_context *t, const char *entry, int have)
{
	return entry || (have >= 0 && t->names.items[have].state == T_BOUND);
}

/*
 * Root Q of the call R (of file F) to name N, made with preemption on:
 * atomic (the call will read protected), bound to its CPU (*BOUND), failed
 * (the reason returned, owned), or followed (pending; added if new).
 */
static char *root_weigh(struct tree_context *t, uint32_t n, const struct tfile *f, const struct tref *r, size_t q,
			struct uses *u, bool *bound, bool *added)
{
	const char *root = r->roots[q];
	const char *entry = api_bound_entry(root, strlen(root));
	int have = tree_name_find(t, root, strlen(root), f->fam);
	unsigned depth = t->names.items[n].depth;
	if (have >= 0 && t->names.items[have].state == T_ATOMIC)
		return NULL; /* analysed again: the call will read protected */
	char *label = root[0] == '.' ? xasprintf("the calls through the field %s", root + 1) : xasprintf("%s()", root);
	char *fail = NULL;
	if (!r->roots_sleep && root_bound(t, entry, have)) {
		if (!*bound && !u->nbound)
			u->bound_how = xasprintf("from %s() at %s:%u; %s: %s", r->caller, f->path, r->line, label,
						 entry ? entry : t->names.items[have].reason);
		*bound = true;
	} else if (root_bound(t, entry, have)) {
		fail = xasprintf("called from %s() at %s:%u with preemption on; %s runs bound to its CPU, but a "
				 "function on the way may sleep, and other tasks may then run on the CPU",
				 r->caller, f->path, r->line, label);
	} else if (have >= 0 && t->names.items[have].state == T_FAILED) {
		fail = xasprintf("called from %s() at %s:%u with preemption on; %s %s preemptible: %s", r->caller,
				 f->path, r->line, label, root[0] == '.' ? "are" : "is", t->names.items[have].reason);
	} else if (have < 0 && depth + 1 > TREE_MAX_DEPTH) {
		fail = xasprintf("called from %s() at %s:%u with preemption on; its callers are more than %d calls "
				 "away from the site", r->caller, f->path, r->line, TREE_MAX_DEPTH);
	} else {
		if (have < 0) {
			tree_name_add(t, root, depth + 1, f->fam);
			*added = true;
		}
		u->pending = true;
	}
	free(label);
	return fail;
}

/*
 * A call with preemption on: each of its caller's roots decides (atomic,
 * bound, followed), the first failing one fails the name.
 */
static char *roots_weigh(struct tree_context *t, uint32_t n, const struct tfile *f, const struct tref *r,
			 struct uses *u, bool *added)
{
	bool bound = false;
	char *fail = NULL;
	for (size_t q = 0; q < r->nroots && !fail; q++)
		fail = root_weigh(t, n, f, r, q, u, &bound, added);
	u->nbound += bound && !fail;
	return fail;
}

/* How a use followed through R->via (a macro, or `.field`) is named: "the body of the macro M" (owned). */
static char *via_label(const struct tfile *f, const struct tref *r)
{
	if (r->via[0] == '.')
		return xasprintf("stored in the field %s (%s:%u)", r->via + 1, f->path, r->line);
	if (r->via_pointer)
		return xasprintf("stored in the pointer %s (%s:%u)", r->via, f->path, r->line);
	return xasprintf("named in the body of the macro %s (%s:%u)", r->via, f->path, r->line);
}

/*
 * A use of name N followed through R->via (file F): the body of a macro,
 * whose own uses decide, or a struct field, whose calls decide (`.field`);
 * followed as a name of its own (TREE_MAX_DEPTH bounds the chain). Atomic:
 * a protected use; preemptible: it fails N (returned, owned).
 */
static char *via_weigh(struct tree_context *t, uint32_t n, const struct tfile *f, const struct tref *r,
		       struct uses *u, bool *added)
{
	int have = tree_name_find(t, r->via, strlen(r->via), f->fam);
	unsigned depth = t->names.items[n].depth;
	char *label = via_label(f, r), *fail = NULL;
	if (have == (int)n || (have < 0 && depth + 1 > TREE_MAX_DEPTH)) {
		fail = xasprintf("%s, %s not followed", label,
				 r->via[0] == '.' || r->via_pointer ? "whose calls are" : "whose users are");
	} else if (have < 0) {
		tree_name_add(t, r->via, depth + 1, f->fam);
		*added = true;
		u->pending = true;
	} else if (t->names.items[have].state == T_ATOMIC) {
		if (u->shown++ < 3) {
			char *s = xasprintf("%s%s: %s", u->ncalls ? "; " : "", label, t->names.items[have].reason);
			reason_add(&u->why, s);
			free(s);
		}
		u->ncalls++;
	} else if (t->names.items[have].state == T_FAILED || t->names.items[have].state == T_BOUND) {
		fail = xasprintf("%s, which is %s with preemption on: %s", label,
				 r->via[0] == '.' || r->via_pointer ? "called" : "used", t->names.items[have].reason);
	} else {
		u->pending = true;
	}
	free(label);
	return fail;
}

/*
 * Is a use in file F of name N one of another routine of that name: an
 * assembly file of F's architecture defines NAME as a global
 * routine of its own (ppc's hash_page in hashtable.S, where ppc64's is C),
 * and no C file of that architecture defines it (its C definition is in
 * another one, which that architecture's build cannot link beside it)?
 * 1 yes, 0 no, -1 not known until a file of the architecture is read.
 */
static int asm_other_routine(const struct tree_context *t, uint32_t n, const struct tfile *f)
{
	bool own = false, unread = false;
	const struct tname *x = &t->names.items[n];
	for (size_t i = 0; i < x->files.len; i++) {
		const struct tfile *g = &t->files[x->files.items[i]];
		if (!asm_same_arch(g->path, f->path))
			continue;
		unread |= g->dirty;
		for (size_t k = 0; k < g->defines.len && !g->dirty; k++)
			if (g->defines.items[k] == n)
				return 0; /* a C definition in the architecture: the mention may be of it */
		for (size_t k = 0; k < g->refs.len && !own && !g->dirty; k++)
			own = g->refs.items[k].name == n && g->refs.items[k].asm_own;
	}
	return unread ? -1 : own;
}

/* Weighs the use R (of file F) of name N into U; a use that fails the name returns why (owned). */
static char *use_weigh(struct tree_context *t, uint32_t n, const struct tfile *f, const struct tref *r,
		       struct uses *u, bool *added)
{
	int other = asm_other_routine(t, n, f);
	if (other) {
		u->unread |= other < 0; /* decided once the architecture's files are read */
		return NULL;        /* else another architecture's routine of the same name */
	}
	if (r->kind == USE_ADDRESS && r->via)
		return via_weigh(t, n, f, r, u, added);
	if (r->kind == USE_ADDRESS)
		return address_failure(f, r);
	if (r->kind == USE_REGISTERED)
		return registration_weigh(f, r, u);
	if (r->protected_call) {
		protected_call_note(f, r, u);
		return NULL;
	}
	if (r->self)
		return xasprintf("it calls itself at %s:%u with preemption on", f->path, r->line);
	const char *entry = api_bound_entry(r->caller, strlen(r->caller));
	if (entry) {
		if (!u->nbound++)
			u->bound_how = xasprintf("from %s() at %s:%u: %s", r->caller, f->path, r->line, entry);
		return NULL;
	}
	if (!r->roots_ok || r->nroots == 0)
		return xasprintf("called from %s() at %s:%u with preemption on (%s)", r->caller, f->path, r->line,
				 r->why);
	return roots_weigh(t, n, f, r, u, added);
}

/* Weighs every use of name N in the files analysed; the first that fails it returns why (owned). */
static char *uses_weigh(struct tree_context *t, uint32_t n, struct uses *u, bool *added)
{
	char *fail = NULL;
	/* the name's entry is read again each time: following a root may move it */
	for (size_t fi = 0; fi < t->names.items[n].files.len && !fail; fi++) {
		const struct tfile *f = &t->files[t->names.items[n].files.items[fi]];
		if (f->dirty) {
			u->unread = true; /* not analysed yet, or its refs are stale */
			continue;
		}
		for (size_t k = 0; k < f->refs.len && !fail; k++) {
			const struct tref *r = &f->refs.items[k];
			if (r->name != n || r->other || r->kind == USE_DECLARATION || r->kind == USE_EXPORT)
				continue;
			fail = use_weigh(t, n, f, r, u, added);
		}
	}
	reason_cut(fail);
	return fail;
}

/*
 * Whether name N sleeps decides whether it is bound: marks its definitions
 * to be read whole (with what they call), in the files not parsed (they may
 * only define it) and the ones that define it but were parsed in slices.
 * True if a file is to be read again.
 */
static bool definitions_reread(struct tree_context *t, uint32_t n)
{
	struct tname *x = &t->names.items[n];
	bool more = false;
	x->sleep_asked = true;
	for (size_t i = 0; i < x->files.len; i++) {
		struct tfile *f = &t->files[x->files.items[i]];
		bool defines = false;
		for (size_t k = 0; k < f->defines.len && !defines; k++)
			defines = f->defines.items[k] == n;
		if (!f->parsed || (defines && f->sliced))
			f->dirty = f->force_parse = more = true, f->from = 0;
	}
	return more;
}

/* Settles name N, every use weighed into U and none failing it. */
static void verdict_settle(struct tree_context *t, uint32_t n, const struct uses *u)
{
	struct tname *x = &t->names.items[n];
	if (u->nbound && x->member) {
		tree_name_settle(x, T_FAILED, CTX_PROCESS,
				 xasprintf("called %s, preemptible but bound to its CPU; the functions stored in the "
					   "field are not followed for that", u->bound_how));
	} else if (u->nbound && name_sleeps(t, n)) {
		tree_name_settle(x, T_FAILED, CTX_PROCESS,
				 xasprintf("called %s, but %s() may sleep, and other tasks may then run on its CPU",
					   u->bound_how, x->name));
	} else if (u->nbound) {
		tree_name_settle(x, T_BOUND, CTX_PROCESS,
				 xasprintf("every call in the tree runs on a task bound to its CPU%s: %s%s",
					   u->ncalls || u->reg ? " or with preemption off" : "", u->bound_how,
					   u->nbound + u->ncalls > 1 ? "; ..." : ""));
	} else if (u->reg) {
		tree_name_settle(x, T_ATOMIC, u->reg->ctx,
				 xasprintf("%s, in %s%s%s", u->reg->why, u->reg_path,
					   u->ncalls ? "; every direct call in the tree is made with preemption off: " : "",
					   u->ncalls ? buf_cstr(&u->why) : ""));
	} else if (u->ncalls) {
		tree_name_settle(x, T_ATOMIC, CTX_CALLERS,
				 xasprintf("every call%s in the tree is made with preemption off: %s%s",
					   x->member ? " through the field" : "", buf_cstr(&u->why),
					   u->ncalls > 3 ? "; ..." : ""));
	} else {
		char *stub = x->member ? NULL : interrupt_stub(t, x);
		if (stub)
			tree_name_settle(x, T_ATOMIC, CTX_HARDIRQ, stub);
		else
			tree_name_settle(x, T_FAILED, CTX_PROCESS,
					 xstrdup(x->member ? "no call through the field in the tree: its callers are unknown"
							   : "no caller and no registration in the tree: its callers are unknown"));
	}
}

/*
 * Decides name N from its uses: 1 settled (atomic, bound or failed), 0 open
 * (waits for callers being followed, or for files to read), with new names
 * added (*ADDED).
 */
static int decide(struct tree_context *t, uint32_t n, bool *added)
{
	struct uses u = {.why = BUF_INIT};
	int settled = 1;
	char *fail = uses_weigh(t, n, &u, added);
	struct tname *x = &t->names.items[n];
	if (fail) {
		tree_name_settle(x, T_FAILED, CTX_PROCESS, fail);
		goto done;
	}
	x->waiting = u.pending;
	if (u.pending || u.unread) {
		settled = 0;
		goto done;
	}
	reason_cut(u.bound_how);
	if (u.nbound && !x->sleep_asked && definitions_reread(t, n)) {
		*added = true; /* not settled, but the next round has work */
		settled = 0;
		goto done;
	}
	verdict_settle(t, n, &u);
	if (x->state == T_ATOMIC) {
		t->stats.atomic++;
		touch_files(t, n);
	}
done:
	buf_release(&u.why);
	free(u.bound_how);
	return settled;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A context over the N FILES of the tree, with the identifiers IDS (if set) the scan hashed (taken over). */
static struct tree_context *context_new(char *const *files, size_t n, struct tree_ids *ids)
{
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
	return t;
}

/* The fixed point reached: what only building it needed goes (the verdicts stay). */
static void context_trim(struct tree_context *t)
{
	t->fields->frozen = true;
	for (size_t i = 0; i < t->nfiles; i++) {
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
}

void tree_context_build(struct tree_context **out, char *const *files, size_t n,
			const tree_want_vec *want, struct tree_ids *ids, int jobs, const struct memo *memo)
{
	double t0 = now();
	struct tree_context *t = context_new(files, n, ids);
	t->memo = memo;
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
	t->memo = NULL; /* the build's alone */
	context_trim(t);
	t->stats.seconds = now() - t0;
	*out = t;
}
