static int pkts[NR_CPUS];

void rx(struct dev *d)
{
	pkts[smp_processor_id()]++;
	__get_cpu_var(rx_count) += d->n;
	while (d->busy) {
		if (current->need_resched)
			schedule();
		if (current->need_resched && d->slow)
			break;
	}
}

int pull(struct dev *d, int i)
{
	return pkts[i];
}

void give_up(void)
{
	current->policy |= SCHED_YIELD;
	schedule();
}

void unlock_fast(struct dev *d)
{
	preempt_enable_no_resched();
#ifdef CONFIG_SMP
	d->done = 1; /* done, and a comment over lines:
#endif at a line start in a comment is no directive */
#else
	d->done = 2;
#endif
}
