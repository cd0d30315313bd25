// Plain baseline for bench/bench.sh (bench/plain/run.sh): a hand-written patch, no analysis.
@@
symbol current;
@@
- if (current->need_resched)
-	schedule();
+ cond_resched();

@@
symbol current;
@@
- current->need_resched
+ need_resched()
