int f(struct dev *d)
{
	preempt_disable();
	d->n++;
	preempt_enable_no_resched();
	return d->n;
}
