/*
 * Contracts a function's own comment states: "Must be called with
 * interrupts disabled", "Called from the timer interrupt handler",
 * "Called with hp->happy_lock held". 2.6.9's scheduler_tick() says "We call
 * it with interrupts disabled"; kprobes' handlers "Interrupts are disabled
 * on entry as trap3 is an interrupt gate". Such a function runs with
 * preemption off whatever its callers look like to the analysis.
 *
 * Read: the block comment right before the definition, and one right after
 * its opening brace. A sentence counts only when it states the contract
 * outright: a condition, a negation, a "may" or a lock the function drops
 * (`if`, `not`, `unless`, `may`, `drops`, `?`, ...) disqualify it, and a
 * lock must be one the file spins on (spin_lock(&x->name_lock) somewhere),
 * or be called a spinlock, so a semaphore named `*_lock` is never taken.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"
#include "util/util.h"

#include <ctype.h>
#include <regex.h>
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>

/*
 * The three shapes, each in the forms that state a contract (the sentence
 * opens with it, a verb of calling leads into it, or it ends the sentence
 * after a comma, `with` or `and`), and the words that disqualify a sentence.
 */
#define IRQS "(local |all |hard )*(interrupts|irqs|irq|ints)"
#define OFF "( are| is| must be| remain| remains| already| still| have been| stay| should be)* (disabled|off)"
#define CALLED "(called|call|calls|run|runs|executed|executes|invoked|entered|running)( only| always| this)*"
#define LOCK "(the )?([a-z0-9_]+(->|\\.)[a-z0-9_]*lock|[a-z0-9_>.-]*_lock|[a-z0-9_>.-]* ?spinlock|spin lock|spin-lock)"
static const char *const pat_irq_off =
	"^[ (]*" IRQS OFF "([^a-z]|$)"
	"|" CALLED " with " IRQS " (disabled|off)([^a-z]|$)"
	"|(,|with|and) " IRQS OFF "[ )]*$";
static const char *const pat_irq_ctx =
	"called (only )?from (the |an? )?(timer |hard ?)?(interrupt|irq|ipi)( handlers?| context| routines?)?([^a-z]|$)"
	"|" CALLED " in (hard ?)?(interrupt|irq) context";
static const char *const pat_lock =
	LOCK " (must be |is |are )?held([^a-z]|$)"
	"|^ *(called )?under " LOCK "([^a-z0-9_]|$)"
	"|(must|we|caller|callers) (hold|holds|have|are holding) " LOCK "([^a-z0-9_]|$)"
	"|(we are|we're|caller is|callers are|is|are) holding " LOCK "([^a-z0-9_]|$)"
	"|^ *hold " LOCK "([^a-z0-9_]|$)";
static const char *const pat_not =
	"(^|[^a-z])(not|never|without|unless|if|may|might|can|could|after|before|or|when|whenever|while|should|"
	"needs|takes|grabs|acquires|drops|releases|unlocks|except|until|sometimes|usually|normally|mutex|sem|"
	"semaphore|rwsem|means|allow|allows|both|process context|being|case|require|required|devices|would|danger|but|also|some|partly|itself)([^a-z]|$)|n't|enabl|\\?"
	"|(handler|handlers|callback|callbacks) (is |are )?(called|run|runs|executed|invoked)";

static regex_t re_irq_off, re_irq_ctx, re_lock, re_not;
static bool re_ok;
static pthread_once_t re_once = PTHREAD_ONCE_INIT;

static void contract_init(void)
{
	const int fl = REG_EXTENDED | REG_ICASE;
	re_ok = regcomp(&re_irq_off, pat_irq_off, fl) == 0 && regcomp(&re_irq_ctx, pat_irq_ctx, fl) == 0 &&
		regcomp(&re_lock, pat_lock, fl) == 0 && regcomp(&re_not, pat_not, fl) == 0;
}

/*
 * The comment's words as one line: the leading `*`s and the comment's marks
 * dropped, a line break a blank, an empty line a full stop (owned).
 */
static char *comment_words(const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	bool line_start = true, line_empty = true;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\n') {
			buf_puts(&b, line_empty ? ". " : " ");
			line_start = line_empty = true;
			continue;
		}
		if (line_start && (c == ' ' || c == '\t' || c == '*' || c == '/'))
			continue;
		line_start = line_empty = false;
		buf_putc(&b, c == '\t' ? ' ' : c);
	}
	return buf_detach(&b);
}

/* Does the file spin on a lock whose last name component is NAME (`spin_lock(&dev->NAME)`)? */
static bool file_spins_on(const char *text, size_t len, const char *name, size_t n)
{
	static const char *const takers[] = {"spin_lock", "read_lock", "write_lock", "spin_trylock"};
	for (size_t t = 0; t < ARRAY_SIZE(takers); t++) {
		size_t tl = strlen(takers[t]);
		for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), takers[t], tl)); p += tl) {
			const char *open = memchr(p + tl, '(', 16 < len - (size_t)(p + tl - text) ?
							16 : len - (size_t)(p + tl - text));
			if (!open)
				continue;
			const char *close = memchr(open, ')', len - (size_t)(open - text));
			if (close && close - open < 120 && memmem(open, (size_t)(close - open), name, n))
				return true;
		}
	}
	return false;
}

/* Is the lock the sentence names (match M of re_lock in S) a spinning one? *NAME gets it (owned) if so. */
static bool lock_spins(const char *s, const regmatch_t *m, const char *text, size_t len, char **lock)
{
	const char *w = s + m[0].rm_so, *end = s + m[0].rm_eo;
	if (memmem(w, (size_t)(end - w), "spin", 4))
		return true;
	/* the last word ending in "lock": `happy_lock`, `d->lock`, `dev.lock` */
	const char *name = NULL;
	size_t n = 0;
	for (const char *p = w; p < end;) {
		const char *q = p;
		while (q < end && (is_ident_char(*q) || *q == '.' || (*q == '-' && q + 1 < end && q[1] == '>') ||
				   (*q == '>' && q > p && q[-1] == '-')))
			q++;
		if (q - p >= 4 && strncasecmp(q - 4, "lock", 4) == 0)
			name = p, n = (size_t)(q - p);
		p = q > p ? q : p + 1;
	}
	if (!name || !file_spins_on(text, len, name, n))
		return false;
	*lock = xstrndup(name, n);
	return true;
}

/* The first sentence of WORDS that states a contract; its context in *CTX; NULL if none. */
static char *sentence_contract(char *words, const char *text, size_t len, enum fn_context *ctx, bool *irqs_off,
				char **lock)
{
	for (char *s = words; *s;) {
		/* a mark ends a sentence when a blank follows (not the dot of time.c) */
		size_t n = 0;
		while (s[n] && !(strchr(".;:!", s[n]) && (s[n + 1] == ' ' || s[n + 1] == '\0')))
			n++;
		char end = s[n];
		s[n] = '\0';
		regmatch_t m[1];
		if (regexec(&re_not, s, 0, NULL, 0) != 0) {
			if (regexec(&re_irq_ctx, s, 1, m, 0) == 0) {
				*ctx = CTX_HARDIRQ;
				return s;
			}
			*irqs_off = regexec(&re_irq_off, s, 1, m, 0) == 0;
			if (*irqs_off || (regexec(&re_lock, s, 1, m, 0) == 0 && lock_spins(s, m, text, len, lock))) {
				*ctx = CTX_CALLERS;
				return s;
			}
		}
		s[n] = end;
		s += n + (end != '\0');
	}
	return NULL;
}

/* The block comment ending right before OFFSET (blanks between), as [*S, *E); false if none. */
static bool comment_before(const char *text, uint32_t offset, uint32_t *s, uint32_t *e)
{
	uint32_t p = offset;
	while (p > 0 && isspace((unsigned char)text[p - 1]))
		p--;
	if (p < 4 || text[p - 1] != '/' || text[p - 2] != '*')
		return false;
	*e = p;
	for (uint32_t q = p - 2; q > 0; q--)
		if (text[q - 1] == '/' && text[q] == '*') {
			*s = q - 1;
			return true;
		}
	return false;
}

/* The block comment right after the body's `{`, as [*S, *E); false if none. */
static bool comment_first_in_body(const char *text, uint32_t open, uint32_t end, uint32_t *s, uint32_t *e)
{
	uint32_t p = open + 1;
	while (p < end && isspace((unsigned char)text[p]))
		p++;
	if (p + 1 >= end || text[p] != '/' || text[p + 1] != '*')
		return false;
	*s = p;
	const char *close = memmem(text + p + 2, end - p - 2, "*/", 2);
	if (!close)
		return false;
	*e = (uint32_t)(close + 2 - text);
	return true;
}

/* Tries the comment [S, E) of F's file; sets F's context and returns true when it states a contract. */
static bool try_comment(struct file_analysis *fa, struct fn *f, uint32_t s, uint32_t e)
{
	const char *text = fa->src->text;
	char *words = comment_words(text + s, e - s - 2); /* without the closing mark */
	enum fn_context ctx = CTX_CALLERS;
	bool irqs_off = false;
	char *lock = NULL;
	char *sent = sentence_contract(words, text, fa->src->len, &ctx, &irqs_off, &lock);
	if (sent) {
		while (*sent == ' ')
			sent++;
		size_t n = strlen(sent);
		while (n && sent[n - 1] == ' ')
			n--;
		unsigned line = source_pos(fa->src, s).line;
		char *why = xasprintf("its comment (line %u) states the contract \"%.*s%s\"", line,
				      (int)(n > 100 ? 100 : n), sent, n > 100 ? "..." : "");
		context_set_text(f, ctx, why);
		f->entry_irqs_off = irqs_off;
		free(f->entry_lock);
		f->entry_lock = lock;
	}
	free(words);
	return sent != NULL;
}

void contract_find(struct file_analysis *fa)
{
	pthread_once(&re_once, contract_init);
	if (!re_ok)
		return;
	const char *text = fa->src->text;
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		if (f->ctx != CTX_PROCESS || ts_node_is_null(f->body))
			continue;
		uint32_t s, e;
		if (comment_before(text, ts_node_start_byte(f->def), &s, &e) && try_comment(fa, f, s, e))
			continue;
		if (comment_first_in_body(text, ts_node_start_byte(f->body), ts_node_end_byte(f->body), &s, &e))
			try_comment(fa, f, s, e);
	}
}

/* Does a sentence of WORDS have a contract's shape (the hedges and the lock's kind not asked)? */
static bool words_may_state(char *words)
{
	for (char *s = words; *s;) {
		size_t n = 0;
		while (s[n] && !(strchr(".;:!", s[n]) && (s[n + 1] == ' ' || s[n + 1] == '\0')))
			n++;
		char end = s[n];
		s[n] = '\0';
		bool yes = regexec(&re_irq_ctx, s, 0, NULL, 0) == 0 || regexec(&re_irq_off, s, 0, NULL, 0) == 0 ||
			   regexec(&re_lock, s, 0, NULL, 0) == 0;
		s[n] = end;
		if (yes)
			return true;
		s += n + (end != '\0');
	}
	return false;
}

bool contract_text_may_state(const char *text, size_t len)
{
	pthread_once(&re_once, contract_init);
	if (!re_ok)
		return false;
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), "/*", 2));) {
		const char *e = memmem(p + 2, len - (size_t)(p + 2 - text), "*/", 2);
		char *words = comment_words(p, e ? (size_t)(e - p) : len - (size_t)(p - text));
		bool yes = words_may_state(words);
		free(words);
		if (yes || !e)
			return yes;
		p = e + 2;
	}
	return false;
}
