#define SET_OWNER(t) do { owners[smp_processor_id()].task = (t); } while (0)
#define OWNER() owners[smp_processor_id()].task

void give(struct task_struct *t)
{
	struct task_struct *was;

	was = OWNER();
	SET_OWNER(t);
	if (was)
		SET_OWNER(was);
}
