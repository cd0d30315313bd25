int f(void)
{
	int cpu;

	cpu = smp_processor_id();
	stats[cpu]++;
	return 0;
}
