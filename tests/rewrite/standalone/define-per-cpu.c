static int counts[NR_CPUS];

void f(int i)
{
	counts[smp_processor_id()]++;
	counts[i] = 0;
}
