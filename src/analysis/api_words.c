/*
 * The words a site of P006 or P007 needs, by class (api_text_words()):
 * every name of kernel_api.c's tables (api_table_words()), the user's
 * sleepers, and the shapes context.c recognises by their text. The
 * prefilter of those rules asks it of a file's raw bytes, once per file:
 * one pass over its identifiers, each looked up in a table built once.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"
#include "analysis/kernel_api.h"
#include "parse/ctext.h"
#include "parse/source.h"

#include <pthread.h>
#include <string.h>

/*
 * What context.c makes atomic by a function's text rather than by a row of
 * kernel_api.c: irq_enter() and hardirq_enter() calls (irq_entry_contexts()),
 * DEFINE_TIMER (macro_contexts()), the task switch __switch_to.
 */
static const char *const context_words[] = {"irq_enter", "hardirq_enter", "DEFINE_TIMER", "__switch_to"};

/*
 * The same, where context.c tests a substring: a struct pt_regs parameter
 * (irq_signature(): the 2.4 handler signature and every interrupt entry
 * point), a timer_list declaration (in_timer_list_decl()), DECLARE_TASKLET*
 * (macro_contexts()), a lock implementation's spinlock_t or rwlock_t
 * parameter (lock_impl()).
 */
static const char *const context_substrings[] = {"pt_regs", "timer_list", "DECLARE_TASKLET", "spinlock_t",
						 "rwlock_t"};

#define WORDS_CAP 1024 /* a power of two, several times the words */

static struct word_slot {
	const char *word;
	size_t len;
	unsigned cls;
} table[WORDS_CAP];
static size_t min_len = (size_t)-1, max_len;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static size_t word_hash(const char *s, size_t n)
{
	size_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void table_add(const char *word, unsigned cls, void *ctx)
{
	(void)ctx;
	size_t n = strlen(word);
	for (size_t i = word_hash(word, n) & (WORDS_CAP - 1);; i = (i + 1) & (WORDS_CAP - 1)) {
		if (!table[i].word) {
			table[i] = (struct word_slot){word, n, cls};
			break;
		}
		if (table[i].len == n && memcmp(table[i].word, word, n) == 0) {
			table[i].cls |= cls; /* request_irq: a sleep and a registration */
			break;
		}
	}
	min_len = n < min_len ? n : min_len;
	max_len = n > max_len ? n : max_len;
}

static void table_build(void)
{
	api_table_words(table_add, NULL);
	msr_writer_words(table_add, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(context_words); i++)
		table_add(context_words[i], API_WORD_CONTEXT, NULL);
}

static unsigned word_class(const char *s, size_t n)
{
	if (n < min_len || n > max_len)
		return 0;
	for (size_t i = word_hash(s, n) & (WORDS_CAP - 1); table[i].word; i = (i + 1) & (WORDS_CAP - 1))
		if (table[i].len == n && memcmp(table[i].word, s, n) == 0)
			return table[i].cls;
	return 0;
}

unsigned api_text_words(const char *text, size_t len, unsigned want)
{
	pthread_once(&table_once, table_build);
	unsigned found = 0;
	if (want & API_WORD_CONTEXT)
		for (size_t i = 0; i < ARRAY_SIZE(context_substrings) && !(found & API_WORD_CONTEXT); i++)
			if (memmem(text, len, context_substrings[i], strlen(context_substrings[i])))
				found |= API_WORD_CONTEXT;
	size_t nuser;
	const char *const *user = api_user_sleepers(&nuser);
	for (size_t i = 0; (want & API_WORD_SLEEP) && i < nuser && !(found & API_WORD_SLEEP); i++)
		if (text_has_word(text, len, user[i]))
			found |= API_WORD_SLEEP;
	/* the identifiers of code: a name in a comment or a string literal calls nothing */
	for (size_t p = 0; p < len && (found & want) != want;) {
		if (!is_ident_char(text[p])) {
			char c = text[p];
			p = (c == '/' || c == '"' || c == '\'') && ctext_at(text, len, p) != CTEXT_CODE
			  ? ctext_skip(text, len, p) : p + 1;
			continue;
		}
		size_t e = p + 1;
		while (e < len && is_ident_char(text[e]))
			e++;
		found |= word_class(text + p, e - p);
		if ((want & API_WORD_LOCK) && header_lock_word(text + p, e - p))
			found |= API_WORD_LOCK;
		p = e;
	}
	return found & want;
}
