#include "rules/finding.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *code, *name, *summary, *help;
	enum severity severity;
	enum fix_kind fixes[RULE_MAX_FIXES];
	unsigned props;
	const char *words[RULE_MAX_WORDS + 1]; /* NULL-terminated */
} rules[RULE_COUNT] = {
#define FIXES(...) {__VA_ARGS__}
#define NO_FIXES {FIX_NONE}
#define WORDS(...) {__VA_ARGS__}
#define NO_WORDS {NULL}
#define RULE(id, code, name, sev, summary, help, check, sites, fixes, props, words) \
	[RULE_##id] = {code, name, summary, help, sev, fixes, props, words},
#include "rules/rules.def"
#undef FIXES
#undef NO_FIXES
#undef WORDS
#undef NO_WORDS
};

const char *rule_code(enum rule_id r) { return rules[r].code; }
const char *rule_name(enum rule_id r) { return rules[r].name; }
const char *rule_summary(enum rule_id r) { return rules[r].summary; }
const char *rule_help(enum rule_id r) { return rules[r].help; }
enum severity rule_severity(enum rule_id r) { return rules[r].severity; }
const enum fix_kind *rule_fixes(enum rule_id r) { return rules[r].fixes; }

bool rule_has(enum rule_id r, enum rule_prop p) { return (rules[r].props & p) != 0; }
const char *const *rule_words(enum rule_id r) { return rules[r].words; }
bool rule_report_only(enum rule_id r) { return rules[r].fixes[0] == FIX_NONE; }

unsigned rule_mask(enum rule_prop p)
{
	unsigned m = 0;
	for (int r = 0; r < RULE_COUNT; r++)
		if (rules[r].props & p)
			m |= 1u << r;
	return m;
}

int rule_parse(const char *s)
{
	for (int r = 0; r < RULE_COUNT; r++)
		if (strcasecmp(s, rules[r].code) == 0 || strcmp(s, rules[r].name) == 0)
			return r;
	return -1;
}

const char *severity_name(enum severity s)
{
	static const char *const n[] = {"error", "warning", "note"};
	return n[s];
}

const char *confidence_name(enum confidence c)
{
	static const char *const n[] = {"high", "medium", "low"};
	return n[c];
}

static const struct {
	const char *name, *cocci;
	bool region;
	struct fix_phrases phrases;
} fixes[FIX_COUNT] = {
#define FIX(id, name, cocci, region, alone, alone_short, clause, use_item, token) \
	[FIX_##id] = {name, cocci, region, {alone, alone_short, clause, use_item, token}},
#include "rules/fixes.def"
};

const char *fix_name(enum fix_kind f) { return fixes[f].name; }
const char *fix_cocci(enum fix_kind f) { return fixes[f].cocci; }
bool fix_opens_region(enum fix_kind f) { return fixes[f].region; }
const struct fix_phrases *fix_phrases(enum fix_kind f) { return &fixes[f].phrases; }

int fix_parse(const char *s)
{
	for (int f = 0; f < FIX_COUNT; f++)
		if (strcmp(s, fixes[f].name) == 0)
			return f;
	return -1;
}

void finding_unfixable(struct finding *f, char *note)
{
	for (size_t i = 0; i < f->edits.len; i++)
		free(f->edits.items[i].text);
	f->edits.len = 0;
	f->edits_ordered = 0;
	f->fix = FIX_NONE;
	free(f->fix_note);
	f->fix_note = note;
}

void finding_release(struct finding *f)
{
	free(f->file);
	free(f->function);
	free(f->message);
	free(f->evidence);
	free(f->fix_note);
	free(f->array);
	for (size_t i = 0; i < f->edits.len; i++)
		free(f->edits.items[i].text);
	vec_release(&f->edits);
}

int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.column != y->pos.column)
		return x->pos.column < y->pos.column ? -1 : 1;
	return (int)x->rule - (int)y->rule;
}
