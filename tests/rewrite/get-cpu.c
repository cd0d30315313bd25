static int hits[NR_CPUS];

int count_hit(struct dev *d)
{
	int cpu;

	cpu = smp_processor_id();
	if (!d)
		return -1;
	hits[cpu]++; /* count it */
	d->last = cpu;	/* remember */
	return 0;
}
