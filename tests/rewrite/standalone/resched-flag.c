void ipi_resched(void)
{
	current->need_resched = 1;
}

void kick(struct task_struct *p)
{
	if (p != current)
		p->need_resched = 1;
	else
		current->need_resched = 0;
}
