void f(struct dev *d)
{
	int cpu;

	cpu = smp_processor_id();
	spin_lock(&d->lock);
	d->owner = cpu;
	spin_unlock(&d->lock);
}
