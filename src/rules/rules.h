/*
 * Rules: find the candidate sites of P001-P008 in an analysed file, decide
 * each one with the data-flow state, and plan the fix as edits.
 */
#ifndef PREEMPTIFY_RULES_H
#define PREEMPTIFY_RULES_H

#include "analysis/flow.h"
#include "rules/scan_result.h"

/*
 * Appends the findings for FA (one file) to OUT. Returns 0, or -1 with the
 * error slot set when the site query (grammars/sites.scm) cannot be used.
 */
int rules_run(const struct file_analysis *fa, const struct scan_options *opts,
	       struct scan_result *out);

/* The site kind of the checkers that take a whole function (rules/rules.def). */
#define RULE_SITE_FUNCTION "@function"

/*
 * The rule whose checker decides sites captured as @site.KIND in
 * grammars/sites.scm (or RULE_SITE_FUNCTION), or -1 if none does.
 */
int rules_site_rule(const char *kind);

/*
 * The words one of which a function body must contain for the site query
 * to run over it, when neither a lock, an atomic context nor a macro can
 * make a site there (N of them): the site_words of every rule's hooks, in
 * row order; every string a pattern of sites.scm tests contains one.
 * Static.
 */
const char *const *rules_site_words(size_t *n);

/*
 * The prefilter's words: the union of every rule's words column
 * (rules/rules.def), each once, in row order (N of them). A file holding
 * none of them, nor a tree macro or array it names, and that no rule's
 * own prefilter wants (rules_prefilter()), has no site of a
 * PROP_PREFILTERED rule. Static.
 */
const char *const *rules_prefilter_words(size_t *n);

/*
 * The prefilter: true if TEXT (a file's LEN raw bytes) holds a word of
 * rules_prefilter_words() (a substring) or a rule's own prefilter
 * (rule_hooks.wants) accepts it. False: no rule marked PROP_PREFILTERED
 * can have a site there.
 */
bool rules_prefilter(const char *text, size_t len);

#endif
