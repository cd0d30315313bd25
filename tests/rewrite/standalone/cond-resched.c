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

/* After an else: cond_resched(); on its own line, or in the braces when
 * both arms are braced; on one line only when the site was. The last
 * else-if has an else of its own: not a site. */
void g(struct dev *d)
{
	while (d->n--) {
		if (d->stop)
			break;
		else if (current->need_resched)
			schedule ();
		if (d->slow) {
			d->n++;
		} else if (unlikely(need_resched())) {
			current->state = TASK_RUNNING;
			schedule();
		}
		if (d->fast)
			d->n--;
		else if (unlikely(current->need_resched)) {
			set_current_state(TASK_RUNNING);
			schedule();
		}
		if (d->idle) {
			d->n = 0;
		} else if (need_resched())
			schedule();
		if (d->n) d->n--; else if (need_resched()) schedule();
		if (d->n)
			d->n--;
		else if (need_resched())
			schedule();
		else
			d->n++;
	}
}
