// Plain baseline for bench/bench.sh (bench/plain/run.sh): a hand-written patch, no analysis.
@@
@@
  preempt_enable_no_resched();
+ preempt_check_resched();
