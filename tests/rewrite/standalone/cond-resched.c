void f(struct dev *d)
{
	while (d->n--) {
		if (current->need_resched)
			schedule();
		if (need_resched()) {
			set_current_state(TASK_RUNNING);
			schedule();
		}
	}
}
