/* Spawn: fork+exec with a cloexec error pipe, poll-based capture, timeout. */
#include "util/spawn.h"
#include "util/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static bool is_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* NAME (with a '/') as an absolute path: the child runs in another directory. */
static char *absolute(const char *name)
{
	if (name[0] == '/')
		return xstrdup(name);
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return xstrdup(name);
	return xasprintf("%s/%s", cwd, name[0] == '.' && name[1] == '/' ? name + 2 : name);
}

int spawn_find_program(const char *name, char **out)
{
	*out = NULL;
	if (!name || !*name)
		return error_set("empty program name");
	if (strchr(name, '/')) {
		if (!is_executable(name))
			return error_set("%s: not an executable file", name);
		*out = absolute(name);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	const char *p = path;
	for (;;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		/* a relative entry (".", "bin", or empty, meaning ".") would run what
		 * lies where the user stands: never taken */
		char *cand = n && p[0] == '/' ? xasprintf("%.*s/%s", (int)n, p, name) : NULL;
		if (cand && is_executable(cand)) {
			*out = cand;
			return 0;
		}
		free(cand);
		if (!colon)
			break;
		p = colon + 1;
	}
	return error_set("%s: not found in PATH (its absolute directories)", name);
}

/*
 * The child's environment: ours, with PATH's relative entries dropped, so
 * a program that looks up another one (spatch runs python3) never takes it
 * from the current directory. Built before fork (the child may not
 * allocate); free with free_env().
 */
static char **child_env(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + 1, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "PATH=", 5) != 0) {
			env[i] = xstrdup(environ[i]);
			continue;
		}
		struct buf b = BUF_INIT;
		buf_puts(&b, "PATH=");
		for (const char *p = environ[i] + 5; *p;) {
			const char *colon = strchr(p, ':');
			size_t len = colon ? (size_t)(colon - p) : strlen(p);
			if (len && p[0] == '/')
				buf_printf(&b, "%s%.*s", b.len > 5 ? ":" : "", (int)len, p);
			p += len + (colon != NULL);
		}
		env[i] = buf_detach(&b);
	}
	return env;
}

static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: only async-signal-safe calls until exec. */
static void child_exec(const char *prog, char *const *argv, char *const *env, const char *cwd,
		       int out_fd, int err_fd)
{
	int e;
	setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		close(devnull);
	}
	dup2(out_fd, 1);
	dup2(out_fd, 2);
	close(out_fd);
	if (cwd && chdir(cwd) != 0)
		goto fail;
	execve(prog, argv, env);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/*
 * Forks PROG with ARGV, its stdout and stderr on the write end of OUTP; ERRP
 * is the close-on-exec pipe the child reports an exec failure through.
 * The parent's write ends are closed. 0 with *PID, or -1 with the error slot set.
 */
static int spawn_start(const char *prog, char *const *argv, char *const *env, const char *cwd,
		       int outp[2], int errp[2], pid_t *pid)
{
	if (pipe(outp) != 0 || pipe(errp) != 0)
		return error_set("pipe: %s", strerror(errno));
	fcntl(outp[0], F_SETFD, FD_CLOEXEC);
	fcntl(errp[0], F_SETFD, FD_CLOEXEC);
	fcntl(errp[1], F_SETFD, FD_CLOEXEC);

	*pid = fork();
	if (*pid < 0)
		return error_set("fork: %s", strerror(errno));
	if (*pid == 0)
		child_exec(prog, argv, env, cwd, outp[1], errp[1]);
	setpgid(*pid, *pid); /* also in the parent: no race with the kill below */
	close(outp[1]);
	outp[1] = -1;
	close(errp[1]);
	errp[1] = -1;
	return 0;
}

/* Exec failure: the child wrote errno before the cloexec pipe closed. 0, or the errno. */
static int exec_errno(int fd)
{
	int child_errno = 0;
	ssize_t n;
	do
		n = read(fd, &child_errno, sizeof child_errno);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof child_errno ? child_errno : 0;
}

/*
 * Appends N bytes of a child's output to OUTPUT, which keeps at most its
 * first SPAWN_OUTPUT_HEAD and last SPAWN_OUTPUT_TAIL bytes (what tells
 * how a run went is at either end): a child printing without end cannot
 * use up our memory.
 */
#define SPAWN_OUTPUT_HEAD (64u << 10)
#define SPAWN_OUTPUT_TAIL (1u << 20)
static void keep_output(struct buf *output, const char *chunk, size_t n)
{
	static const char cut[] = "\n[... output cut ...]\n";
	buf_add(output, chunk, n);
	size_t max = SPAWN_OUTPUT_HEAD + sizeof cut - 1 + SPAWN_OUTPUT_TAIL;
	if (output->len <= max + SPAWN_OUTPUT_TAIL)
		return; /* trimmed once a whole tail has piled up past the bound: linear */
	memcpy(output->ptr + SPAWN_OUTPUT_HEAD, cut, sizeof cut - 1);
	memmove(output->ptr + SPAWN_OUTPUT_HEAD + sizeof cut - 1,
		output->ptr + output->len - SPAWN_OUTPUT_TAIL, SPAWN_OUTPUT_TAIL);
	output->len = max;
	output->ptr[output->len] = '\0';
}

/*
 * Reads FD into OUTPUT until end of file, killing PID's process group when
 * TIMEOUT_SEC (> 0) runs out (sets out->timed_out) or poll fails (sets the
 * error slot).
 */
static void collect_output(int fd, pid_t pid, int timeout_sec, struct buf *output,
			   struct spawn_result *out)
{
	double deadline = timeout_sec > 0 ? now_sec() + timeout_sec : 0;
	for (;;) {
		int wait_ms = -1;
		if (timeout_sec > 0) {
			double left = deadline - now_sec();
			if (left <= 0) {
				kill(-pid, SIGKILL);
				out->timed_out = true;
				break;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		struct pollfd pfd = {fd, POLLIN, 0};
		int r = poll(&pfd, 1, wait_ms);
		if (r < 0) {
			if (errno == EINTR && interrupted()) {
				kill(-pid, SIGKILL);
				break;
			}
			if (errno == EINTR)
				continue;
			kill(-pid, SIGKILL);
			error_set("poll: %s", strerror(errno));
			break;
		}
		if (r == 0)
			continue;
		char chunk[8192];
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep_output(output, chunk, (size_t)n);
	}
}

/* Reaps PID and records how it ended. */
static void wait_status(pid_t pid, struct spawn_result *out)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status)) {
		out->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		out->exit_code = -1;
		out->signal = WTERMSIG(status);
	}
}

int spawn_run(char *const *argv, const char *cwd, int timeout_sec,
	      struct spawn_result *out)
{
	int ret = -1;
	char *prog = NULL;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1};
	struct buf output = BUF_INIT;
	pid_t pid = -1;
	char **env = NULL;

	*out = (struct spawn_result)SPAWN_RESULT_INIT;
	env = child_env();
	if (spawn_find_program(argv[0], &prog) < 0 || spawn_start(prog, argv, env, cwd, outp, errp, &pid) < 0)
		goto done;
	int child_errno = exec_errno(errp[0]);
	if (child_errno) {
		waitpid(pid, NULL, 0);
		pid = -1;
		error_set("%s: cannot execute: %s", prog, strerror(child_errno));
		goto done;
	}
	int slot = interrupt_track(pid);
	collect_output(outp[0], pid, timeout_sec, &output, out);
	wait_status(pid, out);
	interrupt_untrack(slot);
	pid = -1;
	/* A timed-out child may have left grandchildren in its group. */
	ret = 0;
done:
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	out->output_len = output.len;
	out->output = buf_detach(&output);
	free(prog);
	free_env(env);
	return ret;
}

char *spawn_describe(const struct spawn_result *r)
{
	if (r->timed_out)
		return xstrdup("timed out");
	if (r->signal)
		return xasprintf("killed by signal %d", r->signal);
	return xasprintf("exit %d", r->exit_code);
}

void spawn_result_release(struct spawn_result *r)
{
	if (!r)
		return;
	free(r->output);
	r->output = NULL;
	r->output_len = 0;
}
