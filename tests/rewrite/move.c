void m(struct dev *d)
{
	int cpu = smp_processor_id();
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	d->owner = cpu;
	spin_unlock_irqrestore(&d->lock, flags);
}
