#define BUMP(x) x[smp_processor_id()]++

void a(struct dev *d)
{
	int cpu = smp_processor_id();
#ifdef CONFIG_FOO
	if (d->foo)
#else
	if (d->bar)
#endif
		d->last = cpu;
	d->n = cpu;
}

void b(struct dev *d)
{
	d->cpu = smp_processor_id();
}
