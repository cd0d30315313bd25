int f(struct dev *d)
{
	if (current->need_resched && d->slow)
		return 1;
	return 0;
}
