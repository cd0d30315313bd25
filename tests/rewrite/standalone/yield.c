void f(void)
{
	current->policy |= SCHED_YIELD;
	schedule();
}
