// Plain baseline for bench/bench.sh (bench/plain/run.sh): a hand-written patch, no analysis.
@r@
type T;
identifier x;
declarer name DEFINE_PER_CPU;
@@
- static T x[NR_CPUS];
+ static DEFINE_PER_CPU(T, x);

@@
identifier r.x;
@@
- x[smp_processor_id()]
+ __get_cpu_var(x)

@@
identifier r.x;
expression E;
@@
- x[E]
+ per_cpu(x, E)
