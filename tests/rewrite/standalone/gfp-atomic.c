int f(struct dev *d, int n)
{
	char *buf;

	spin_lock_irqsave(&d->lock, d->flags);
	buf = kmalloc(n, GFP_KERNEL);
	if (!buf) {
		spin_unlock_irqrestore(&d->lock, d->flags);
		return -ENOMEM;
	}
	d->buf = buf;
	spin_unlock_irqrestore(&d->lock, d->flags);
	buf = kmalloc(n, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	kfree(buf);
	return 0;
}
