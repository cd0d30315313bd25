void f(int n)
{
	__get_cpu_var(rx)++;
	__get_cpu_var(bytes) += n;
}
