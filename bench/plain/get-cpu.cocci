// Plain baseline for bench/bench.sh (bench/plain/run.sh): a hand-written patch, no analysis.
@@
idexpression int cpu;
@@
- cpu = smp_processor_id();
+ cpu = get_cpu();
  ...
+ put_cpu();
  return ...;
