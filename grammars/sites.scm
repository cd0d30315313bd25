;; Candidate sites of rules P001-P006 inside function bodies.
;;
;; Each pattern captures the node a rule decides on as @site.<kind>;
;; src/rules/rules.c dispatches on <kind>. Captures starting with `_` only
;; feed predicates. The tree-sitter C runtime does not evaluate predicates:
;; src/parse/query.c does (#eq?, #any-of?, #match?) and asks
;; src/rules/rules.c for the host predicates #resched-macro?,
;; #resched-test? and #cpu-macro?, which it asks in turn of the rule whose
;; hooks answer them (P004's and P003's: the file's own #defines).
;;
;; The query runs only over function bodies that may hold a site
;; (body_may_hold_site() in src/rules/rules.c: a word of a rule's
;; site_words hook, a lock, or an atomic context); a new pattern keyed on
;; another word must add it to its rule's site_words.

;; smp_processor_id(): an index of a per-CPU array (P001, P002) or a CPU
;; number whose value is used (P003).
((call_expression function: (identifier) @_f) @site.cpu_read
  (#eq? @_f "smp_processor_id"))

;; A macro of this file whose body reads smp_processor_id(): the read is at
;; each use (P003, report only: a fix cannot go inside an expression macro).
((identifier) @site.cpu_macro
  (#cpu-macro? @site.cpu_macro))

;; 2.6 per-CPU accessors without protection of their own (P002).
((call_expression function: (identifier) @_f) @site.get_cpu_var
  (#eq? @_f "__get_cpu_var"))
((call_expression function: (identifier) @_f) @site.per_cpu
  (#eq? @_f "per_cpu"))

;; preempt_enable_no_resched() and its misspelling (P005).
((call_expression function: (identifier) @_f) @site.noresched
  (#eq? @_f "preempt_enable_no_resched"))
((call_expression function: (identifier) @_f) @site.noresched_misspelt
  (#eq? @_f "preempt_enable_noresched"))

;; preempt_check_resched(): not available to modules on modern kernels (P005, --target modern).
((call_expression function: (identifier) @_f) @site.check_resched
  (#eq? @_f "preempt_check_resched"))

;; The 2.4 reschedule test, current->need_resched (P004).
((field_expression
    argument: (identifier) @_cur
    field: (field_identifier) @_fld) @site.resched_field
  (#eq? @_cur "current")
  (#eq? @_fld "need_resched"))

;; A write of another task's flag: p->need_resched = 1; (P004, fix resched-flag).
((assignment_expression
    left: (field_expression
      argument: (_) @_tsk
      field: (field_identifier) @_fld) @site.resched_field)
  (#not-eq? @_tsk "current")
  (#eq? @_fld "need_resched"))

;; need_resched() or a function-like macro of this file that tests it (P004).
((call_expression function: (identifier) @_f) @site.resched_call
  (#resched-test? @_f))

;; An object-like macro of this file that tests it: if (TTY_NEED_RESCHED) (P004).
((identifier) @site.resched_macro
  (#resched-macro? @site.resched_macro))

;; current->policy |= SCHED_YIELD; (P004, fix yield).
((expression_statement
    (assignment_expression
      left: (field_expression) @_lhs
      right: (_) @_rhs)) @site.yield
  (#eq? @_lhs "current->policy")
  (#match? @_rhs "SCHED_YIELD"))

;; Every call: may it sleep where preemption is off? (P006)
((call_expression) @site.call)
