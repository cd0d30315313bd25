/*
 * Spawn: the one way preemptify runs another program. An argv array (never
 * a shell), the program found in PATH before fork, exec failure reported
 * through a close-on-exec pipe, stdout and stderr collected together with
 * poll(), a timeout that kills the child's whole process group.
 */
#ifndef PREEMPTIFY_SPAWN_H
#define PREEMPTIFY_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

struct spawn_result {
	int exit_code;  /* exit status, or -1 when killed by a signal */
	int signal;     /* terminating signal, 0 if it exited */
	bool timed_out; /* killed by us after the timeout */
	char *output;   /* stdout and stderr interleaved, NUL-terminated, owned */
	size_t output_len;
};
#define SPAWN_RESULT_INIT {0, 0, false, NULL, 0}

/*
 * Looks NAME up the way execvp would, but only in PATH's absolute
 * directories (".", an empty entry or "bin" would run what lies where the
 * user stands), and stores the malloc'ed absolute path in *OUT; a name with
 * a '/' is taken as the user gave it, made absolute. Returns 0, or -1 with
 * the error slot set ("NAME: not found in PATH ...").
 */
int spawn_find_program(const char *name, char **out);

/*
 * Runs ARGV (argv[0] looked up as spawn_find_program() does) in directory
 * CWD (NULL: ours) with stdin from /dev/null, waiting at most TIMEOUT_SEC
 * seconds (<= 0: no limit). The child's PATH has no relative entry. Its
 * output is kept up to its first 64 KiB and last 1 MiB. Returns 0 when the program ran (whatever its exit status: see
 * OUT), or -1 with the error slot set when it could not be started (not
 * found, exec failed). OUT is filled in either case and must be freed.
 */
int spawn_run(char *const *argv, const char *cwd, int timeout_sec,
	      struct spawn_result *out);

/* A one-line description: "exit 255", "killed by signal 11", "timed out". */
char *spawn_describe(const struct spawn_result *r);

void spawn_result_release(struct spawn_result *r);

#endif
