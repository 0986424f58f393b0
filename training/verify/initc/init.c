// gosqlenv-verify-init: PID 1 of a verification's sandbox.
//
// bubblewrap builds the sandbox (namespaces, a minimal root, a private
// /tmp) and runs this program as the PID namespace's init, still root.
// The verifier (sandbox.go) then sends it one command at a time over the
// SOCK_SEQPACKET socket on fd 3: a gs_request with the command's argv,
// environment and limits, and its stdin, stdout and stderr as SCM_RIGHTS.
// For each command it forks; the child drops to the command's uid/gid (no
// groups, no capabilities, no new privileges), applies the rlimits and
// execs. When the command exits, or its timeout passes, every other process
// of the sandbox is killed and reaped, /tmp is emptied, and the raw wait
// status goes back in a gs_response. Because the command is not PID 1,
// signals behave as on any system: abort() aborts, alarm() fires, raise()
// kills.
//
// Built once per machine with the system C compiler (sandbox.go); it has no
// dependencies beyond libc.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GS_MAGIC 0x67737631u // "gsv1"
#define GS_MAX_MSG (256 * 1024)

// gs_request is followed by cwd, argc argument and envc environment strings,
// each NUL-terminated. Must match request in sandbox.go.
struct gs_request {
	uint32_t magic;
	uint32_t uid, gid; // (uint32_t)-1: keep the init's (a user namespace's)
	uint32_t timeout_ms;
	uint32_t argc, envc;
	uint64_t cpu_s, as, fsize, nofile, nproc; // 0: not limited
};

// gs_response: must match response in sandbox.go.
struct gs_response {
	int32_t status;    // raw wait status of the command
	int32_t timed_out; // 1 when the timeout killed it
	int32_t err;       // errno when it could not be started, else 0
	int32_t pad;
};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
	(void)st;
	(void)flag;
	if (ftw->level > 0) {
		remove(path);
	}
	return 0;
}

static void set_limit(int resource, uint64_t v) {
	if (v == 0) {
		return;
	}
	struct rlimit rl = {v, v};
	setrlimit(resource, &rl);
}

static void close_from(int lowfd) {
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0) {
		return;
	}
	for (int fd = lowfd; fd < 1024; fd++) {
		close(fd);
	}
}

// child sets the command's process up and execs it; on failure it writes
// errno to errfd.
static void child(const struct gs_request *rq, int fds[3], char *cwd, char **argv, char **envp, int errfd) {
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++) {
		signal(s, SIG_DFL);
	}
	setsid();
	for (int i = 0; i < 3; i++) {
		if (dup2(fds[i], 100 + i) < 0) {
			goto fail;
		}
	}
	for (int i = 0; i < 3; i++) {
		if (dup2(100 + i, i) < 0) {
			goto fail;
		}
	}
	if (errfd != 3) {
		if (dup2(errfd, 3) < 0) {
			goto fail;
		}
		errfd = 3;
	}
	fcntl(errfd, F_SETFD, FD_CLOEXEC);
	close_from(4);
	set_limit(RLIMIT_CPU, rq->cpu_s);
	set_limit(RLIMIT_AS, rq->as);
	set_limit(RLIMIT_FSIZE, rq->fsize);
	set_limit(RLIMIT_NOFILE, rq->nofile);
	set_limit(RLIMIT_NPROC, rq->nproc);
	struct rlimit nocore = {0, 0};
	setrlimit(RLIMIT_CORE, &nocore);
	if (rq->uid != (uint32_t)-1 &&
	    (setgroups(0, NULL) < 0 || setresgid(rq->gid, rq->gid, rq->gid) < 0 || setresuid(rq->uid, rq->uid, rq->uid) < 0)) {
		goto fail;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || chdir(cwd) < 0) {
		goto fail;
	}
	execve(argv[0], argv, envp);
fail:;
	int e = errno;
	if (write(errfd, &e, sizeof e) < 0) {
		// nothing more to report
	}
	_exit(127);
}

// run runs one command and fills rs.
static void run(const struct gs_request *rq, int fds[3], char *cwd, char **argv, char **envp, struct gs_response *rs) {
	memset(rs, 0, sizeof *rs);
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		rs->err = errno;
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		rs->err = errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return;
	}
	if (pid == 0) {
		close(errpipe[0]);
		child(rq, fds, cwd, argv, envp, errpipe[1]);
	}
	close(errpipe[1]);
	int e = 0;
	if (read(errpipe[0], &e, sizeof e) == sizeof e) {
		rs->err = e;
	}
	close(errpipe[0]);

	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += rq->timeout_ms / 1000;
	deadline.tv_nsec += (long)(rq->timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int done = 0;
	while (!done) {
		// Reap whatever has ended: the command, or orphans it left.
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);
			if (w <= 0) {
				break;
			}
			if (w == pid) {
				rs->status = st;
				done = 1;
			}
		}
		if (done) {
			break;
		}
		struct timespec now, left;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = deadline.tv_sec - now.tv_sec;
		left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0) {
			rs->timed_out = 1;
			kill(-1, SIGKILL);
			int st;
			if (waitpid(pid, &st, 0) == pid) {
				rs->status = st;
			}
			break;
		}
		sigtimedwait(&chld, NULL, &left);
	}
	// Nothing of the command outlives it: kill and reap every process of
	// the sandbox but this one, and empty /tmp for the next command.
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
	}
	nftw("/tmp", remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int main(void) {
	close_from(4);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	char *buf = malloc(GS_MAX_MSG + 1);
	if (!buf) {
		return 1;
	}
	for (;;) {
		int fds[3] = {-1, -1, -1};
		char control[CMSG_SPACE(3 * sizeof(int))];
		struct iovec iov = {buf, GS_MAX_MSG};
		struct msghdr msg = {0};
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control;
		msg.msg_controllen = sizeof control;
		ssize_t n = recvmsg(3, &msg, MSG_CMSG_CLOEXEC);
		if (n <= 0) {
			return 0; // the verifier closed the socket: the sandbox ends
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(3 * sizeof(int))) {
				memcpy(fds, CMSG_DATA(c), sizeof fds);
			}
		}
		struct gs_response rs = {0};
		struct gs_request rq;
		if ((size_t)n < sizeof rq || fds[0] < 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			rs.err = EINVAL;
		} else {
			memcpy(&rq, buf, sizeof rq);
			buf[n] = 0;
			// Split the strings: cwd, argv, envp.
			size_t want = 1 + (size_t)rq.argc + rq.envc;
			char **strs = rq.magic == GS_MAGIC && rq.argc > 0 && want < 4096 ? calloc(want + 2, sizeof *strs) : NULL;
			size_t k = 0;
			if (strs) {
				for (char *p = buf + sizeof rq; p < buf + n && k < want; p += strlen(p) + 1) {
					strs[k++] = p;
				}
			}
			if (!strs || k != want) {
				rs.err = EINVAL;
			} else {
				char **argv = strs + 1;
				char **envp = calloc(rq.envc + 1, sizeof *envp);
				memcpy(envp, strs + 1 + rq.argc, rq.envc * sizeof *envp);
				argv[rq.argc] = NULL; // overwrites envp[0]'s slot, copied above
				run(&rq, fds, strs[0], argv, envp, &rs);
				free(envp);
			}
			free(strs);
		}
		for (int i = 0; i < 3; i++) {
			if (fds[i] >= 0) {
				close(fds[i]);
			}
		}
		if (send(3, &rs, sizeof rs, 0) != sizeof rs) {
			return 1;
		}
	}
}
