// gosqlenv-verify-init: PID 1 of a verification's sandbox.
//
// bubblewrap builds the sandbox (namespaces, a minimal root, a private
// /tmp) and runs this program as the PID namespace's init, still root.
// The verifier (sandbox.go) then sends it one command at a time over the
// SOCK_SEQPACKET socket on fd 3: a gs_request with the command's argv,
// environment and limits, and its stdin, stdout and stderr as SCM_RIGHTS,
// optionally followed by the program itself, opened read-only, which the
// command then execs by descriptor (execveat): a jail need not see the
// program's file, and one jail serves many programs.
// For each command it forks; the child drops to the command's uid/gid (no
// groups, no capabilities, no new privileges), applies the rlimits, installs
// a seccomp filter (seccomp_filter below) and execs. When the command exits,
// or its timeout passes, every other process of the sandbox is killed and
// reaped, /tmp gets a fresh tmpfs (and /dev/shm with it), and the raw wait
// status goes back in a gs_response. Init itself is not dumpable: a command
// running with init's uid (in a user namespace) still cannot ptrace it, take
// its descriptors or read its /proc files.
//
// "init [options] --exec ARGV..." is the fallback's launcher (no
// bubblewrap): see launcher and launch. Because the command is not PID 1,
// signals behave as on any system: abort() aborts, alarm() fires, raise()
// kills.
//
// Built once per machine with the system C compiler (sandbox.go); it has no
// dependencies beyond libc.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// System calls newer than some C libraries' headers: their numbers are
// the same on every architecture since 5.1 (the unified table).
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif

// GS_FIRST_UNKNOWN_NR: system calls from this number on (newer than this
// filter, or not system calls at all: syscall(-1), x32's) fail with ENOSYS,
// as on a kernel without them.
#define GS_FIRST_UNKNOWN_NR 468

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
	uint64_t mem_total; // bytes all the jail's processes and /tmp may hold together (no cgroup); 0: not limited
};

// gs_response: must match response in sandbox.go.
struct gs_response {
	int32_t status;    // raw wait status of the command
	int32_t timed_out; // 1 when the timeout killed it
	int32_t err;       // errno when it could not be started, else 0
	int32_t tainted;   // 1 when init's own state changed (init_state): do not reuse the jail
	int32_t mem_exceeded; // 1 when the jail went over mem_total and init killed the command
	int32_t pad;
};

// tmp_size is the size of the jail's /tmp, from "--tmp-size N".
static unsigned long long tmp_size = 64ULL << 20;

// fresh_tmp gives the jail a new, empty /tmp (a size-capped tmpfs, mode
// 1777) and shows the same tmpfs at /dev/shm: what a command left there is
// gone with the old mount whatever its shape (no walk that a deep tree or a
// mode could stop), and the memory it held is freed. Every process of the
// jail but init has been killed before. It returns -1 if a mount failed.
static int fresh_tmp(void) {
	umount2("/dev/shm", MNT_DETACH);
	if (umount2("/tmp", MNT_DETACH) < 0 && errno != EINVAL) {
		return -1;
	}
	char opts[64];
	snprintf(opts, sizeof opts, "size=%llu,mode=1777", tmp_size);
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		return -1;
	}
	if (access("/dev/shm", F_OK) == 0 && mount("/tmp", "/dev/shm", NULL, MS_BIND, NULL) < 0) {
		return -1;
	}
	return 0;
}

// pid_counter is a writable descriptor of the jail's PID counter
// (/proc/sys/kernel/ns_last_pid of the jail's PID namespace), or -1, and
// pid_base its value when the jail opened. bubblewrap shows /proc/sys
// read-only, so init opens the file on a /proc of its own, mounted on a
// directory of its /tmp and detached at once. Before each command the
// counter goes back to pid_base: a command's pid, and its children's, do
// not tell how many processes earlier commands made (issue 55 #6). Where
// it cannot be had, init reports the jail tainted (not reused) after a
// command whose processes moved the counter past the command's own pid.
static int pid_counter = -1;
static long pid_base = -1;
static pid_t last_command = -1; // the pid of the last command run

static long read_pid_counter(int fd) {
	char b[32] = {0};
	if (pread(fd, b, sizeof b - 1, 0) <= 0) {
		return -1;
	}
	return strtol(b, NULL, 10);
}

static void reset_pid_counter(void);

static void open_pid_counter(void) {
	int fd = open("/proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
	if (fd < 0 && mkdir("/tmp/.gosqlenv-proc", 0700) == 0) {
		if (mount("proc", "/tmp/.gosqlenv-proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
			fd = open("/tmp/.gosqlenv-proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
			umount2("/tmp/.gosqlenv-proc", MNT_DETACH);
		}
		rmdir("/tmp/.gosqlenv-proc");
	}
	if (fd >= 0 && (pid_base = read_pid_counter(fd)) < 0) {
		close(fd);
		fd = -1;
	}
	pid_counter = fd;
	reset_pid_counter(); // not writable after all: closed, and the check after each command takes over
}

// reset_pid_counter puts the counter back to pid_base; every process of
// the jail but init is gone.
static void reset_pid_counter(void) {
	char b[32];
	int n = snprintf(b, sizeof b, "%ld", pid_base);
	if (pid_counter >= 0 && pwrite(pid_counter, b, (size_t)n, 0) != n) {
		close(pid_counter); // the check after each command takes over
		pid_counter = -1;
	}
}

// pid_counter_moved says, where init cannot reset the counter, whether the
// command whose pid was pid made other processes: the counter (read from
// the jail's /proc) is past its pid.
static int pid_counter_moved(pid_t pid) {
	if (pid_counter >= 0) {
		return 0;
	}
	int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return 1;
	}
	long last = read_pid_counter(fd);
	close(fd);
	return last != (long)pid;
}

// The system calls a command may not make: tracing or reading other
// processes (ptrace, process_vm_*, pidfd_getfd, kcmp), the kernel keyrings (a
// channel between verifications: the user keyring outlives them), System V
// and POSIX message-queue IPC (objects outlive the process that made them:
// memory left behind, and a channel to the next command), new
// namespaces and mounts (kernel attack surface, and a way around the jail),
// and kernel interfaces no test program needs (bpf, perf events,
// userfaultfd, io_uring, modules, kexec, handles, ...). Each fails with
// EPERM, as a sandboxed system would answer.
static const int denied_syscalls[] = {
#ifdef __NR_ptrace
    __NR_ptrace,
#endif
#ifdef __NR_process_vm_readv
    __NR_process_vm_readv,
#endif
#ifdef __NR_process_vm_writev
    __NR_process_vm_writev,
#endif
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
#ifdef __NR_pidfd_open
    __NR_pidfd_open,
#endif
#ifdef __NR_kcmp
    __NR_kcmp,
#endif
#ifdef __NR_add_key
    __NR_add_key,
#endif
#ifdef __NR_keyctl
    __NR_keyctl,
#endif
#ifdef __NR_request_key
    __NR_request_key,
#endif
#ifdef __NR_shmget
    __NR_shmget,
#endif
#ifdef __NR_shmat
    __NR_shmat,
#endif
#ifdef __NR_shmctl
    __NR_shmctl,
#endif
#ifdef __NR_shmdt
    __NR_shmdt,
#endif
#ifdef __NR_msgget
    __NR_msgget,
#endif
#ifdef __NR_msgsnd
    __NR_msgsnd,
#endif
#ifdef __NR_msgrcv
    __NR_msgrcv,
#endif
#ifdef __NR_msgctl
    __NR_msgctl,
#endif
#ifdef __NR_semget
    __NR_semget,
#endif
#ifdef __NR_semop
    __NR_semop,
#endif
#ifdef __NR_semctl
    __NR_semctl,
#endif
#ifdef __NR_semtimedop
    __NR_semtimedop,
#endif
#ifdef __NR_mq_open
    __NR_mq_open,
#endif
#ifdef __NR_mq_unlink
    __NR_mq_unlink,
#endif
#ifdef __NR_mq_timedsend
    __NR_mq_timedsend,
#endif
#ifdef __NR_mq_timedreceive
    __NR_mq_timedreceive,
#endif
#ifdef __NR_mq_notify
    __NR_mq_notify,
#endif
#ifdef __NR_mq_getsetattr
    __NR_mq_getsetattr,
#endif
#ifdef __NR_unshare
    __NR_unshare,
#endif
#ifdef __NR_setns
    __NR_setns,
#endif
#ifdef __NR_mount
    __NR_mount,
#endif
#ifdef __NR_umount2
    __NR_umount2,
#endif
#ifdef __NR_pivot_root
    __NR_pivot_root,
#endif
#ifdef __NR_chroot
    __NR_chroot,
#endif
#ifdef __NR_open_tree
    __NR_open_tree,
#endif
#ifdef __NR_move_mount
    __NR_move_mount,
#endif
#ifdef __NR_fsopen
    __NR_fsopen,
#endif
#ifdef __NR_fsconfig
    __NR_fsconfig,
#endif
#ifdef __NR_fsmount
    __NR_fsmount,
#endif
#ifdef __NR_fspick
    __NR_fspick,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
#ifdef __NR_bpf
    __NR_bpf,
#endif
#ifdef __NR_perf_event_open
    __NR_perf_event_open,
#endif
#ifdef __NR_userfaultfd
    __NR_userfaultfd,
#endif
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup,
#endif
#ifdef __NR_io_uring_enter
    __NR_io_uring_enter,
#endif
#ifdef __NR_io_uring_register
    __NR_io_uring_register,
#endif
#ifdef __NR_init_module
    __NR_init_module,
#endif
#ifdef __NR_finit_module
    __NR_finit_module,
#endif
#ifdef __NR_delete_module
    __NR_delete_module,
#endif
#ifdef __NR_kexec_load
    __NR_kexec_load,
#endif
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
#ifdef __NR_name_to_handle_at
    __NR_name_to_handle_at,
#endif
#ifdef __NR_open_by_handle_at
    __NR_open_by_handle_at,
#endif
#ifdef __NR_fanotify_init
    __NR_fanotify_init,
#endif
#ifdef __NR_swapon
    __NR_swapon,
#endif
#ifdef __NR_swapoff
    __NR_swapoff,
#endif
#ifdef __NR_reboot
    __NR_reboot,
#endif
#ifdef __NR_acct
    __NR_acct,
#endif
#ifdef __NR_quotactl
    __NR_quotactl,
#endif
#ifdef __NR_syslog
    __NR_syslog,
#endif
#ifdef __NR_iopl
    __NR_iopl,
#endif
#ifdef __NR_ioperm
    __NR_ioperm,
#endif
#ifdef __NR_vhangup
    __NR_vhangup,
#endif
    // Issue 55: calls that reach other processes or the kernel's state
    // (pidfd_send_signal on init, vmsplice, modify_ldt, sysfs) or a
    // channel between commands (flock on shared read-only files).
    __NR_memfd_secret, __NR_landlock_create_ruleset, __NR_landlock_add_rule, __NR_landlock_restrict_self,
    __NR_open_tree_attr, __NR_pidfd_open, __NR_pidfd_send_signal,
#ifdef __NR_personality
    __NR_personality,
#endif
#ifdef __NR_sysfs
    __NR_sysfs,
#endif
#ifdef __NR_modify_ldt
    __NR_modify_ldt,
#endif
#ifdef __NR_vmsplice
    __NR_vmsplice,
#endif
#ifdef __NR_flock
    __NR_flock,
#endif
};

#if defined(__x86_64__)
#define GS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define GS_AUDIT_ARCH AUDIT_ARCH_RISCV64
#else
#error "seccomp filter: unknown architecture"
#endif


// The namespace flags clone may not be given.
#define GS_NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x00000080 /* CLONE_NEWTIME */)

// seccomp_filter installs the filter described above denied_syscalls;
// clone with a namespace flag fails with EPERM and clone3 (whose flags a
// filter cannot read) with ENOSYS, so that libc falls back to clone. A
// system call of another architecture (x32, i386 on x86_64) kills the
// process. no_new_privs must be set.
// deny_arg_nonzero (and deny_arg_in) append to f the instructions that
// fail the system call nr with err when its argument arg (low 32 bits) is
// not zero (is one of vals); the accumulator holds nr before and after.
static int deny_arg_nonzero(struct sock_filter *f, int k, unsigned nr, int arg, int err) {
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[arg]));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	return k;
}

static int deny_arg_in(struct sock_filter *f, int k, unsigned nr, int arg, const unsigned *vals, int nvals, int err) {
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, (unsigned char)(nvals + 3));
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[arg]));
	for (int i = 0; i < nvals; i++) {
		// Equal: jump to the return below; else try the next value.
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i], (unsigned char)(nvals - i), 0);
	}
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	return k;
}

static int seccomp_filter(void) {
	enum { n_denied = sizeof denied_syscalls / sizeof denied_syscalls[0] };
	struct sock_filter f[96 + 2 * n_denied];
	int k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GS_AUDIT_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	// Unknown numbers (x32's among them on x86_64) fail as on a kernel
	// without them, rather than killing the program.
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, GS_FIRST_UNKNOWN_NR, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	for (int i = 0; i < n_denied; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied_syscalls[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	// Only the calling process's own limits and priority: prlimit64 and
	// setpriority on another process (init's, in a user namespace where
	// commands share its uid) would change what later commands run under.
	k = deny_arg_nonzero(f, k, __NR_prlimit64, 0, EPERM);
	k = deny_arg_nonzero(f, k, __NR_setpriority, 1, EPERM);
	k = deny_arg_nonzero(f, k, __NR_ioprio_set, 1, EPERM);
	k = deny_arg_nonzero(f, k, __NR_sched_setaffinity, 0, EPERM);
	k = deny_arg_nonzero(f, k, __NR_sched_setscheduler, 0, EPERM);
	k = deny_arg_nonzero(f, k, __NR_sched_setparam, 0, EPERM);
#ifdef __NR_sched_setattr
	k = deny_arg_nonzero(f, k, __NR_sched_setattr, 0, EPERM);
#endif
	// No record locks (fcntl) either: like flock, they are seen by every
	// process that opens the same file, a channel through shared files.
	static const unsigned lock_cmds[] = {F_GETLK, F_SETLK, F_SETLKW, 36 /* F_OFD_GETLK */, 37 /* F_OFD_SETLK */, 38 /* F_OFD_SETLKW */};
	k = deny_arg_in(f, k, __NR_fcntl, 1, lock_cmds, 6, EPERM);
	// No sockets at all (socketpair stays): not to the hypervisor (vsock)
	// or the kernel (netlink), and in the fallback not to the host's unix
	// sockets, abstract ones or its network. EACCES, as a security
	// module's refusal.
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES);
#ifdef __NR_clone3
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])); // flags' low 32 bits (little endian)
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, GS_NS_FLAGS, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {(unsigned short)k, f};
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

// drop_capabilities leaves the process none: effective, permitted,
// inheritable and ambient (a process in a user namespace keeps bwrap's
// --cap-add ones across a change to its own uid).
static int drop_capabilities(void) {
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	return (int)syscall(SYS_capset, &h, d);
}

// confine is the last step before exec, for commands and the launcher.
// Landlock (the fallback's, see landlock_confine) comes before the seccomp
// filter, which refuses Landlock's calls.
static int landlock_confine(void);
static int ll_on;
static int confine(void) {
	if (drop_capabilities() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		return -1;
	}
	if (ll_on && landlock_confine() < 0) {
		return -1;
	}
	return seccomp_filter();
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

// Landlock (kernel 5.13+): the fallback's file system isolation without
// mounts. The structures and constants are the kernel's UAPI
// (linux/landlock.h), spelled out for C libraries whose headers predate it.
struct gs_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct gs_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));
#define GS_LL_RULE_PATH_BENEATH 1
#define GS_LL_FS_EXECUTE (1ULL << 0)
#define GS_LL_FS_WRITE_FILE (1ULL << 1)
#define GS_LL_FS_READ_FILE (1ULL << 2)
#define GS_LL_FS_READ_DIR (1ULL << 3)
#define GS_LL_FS_TRUNCATE (1ULL << 14)
#define GS_LL_FS_IOCTL_DEV (1ULL << 15)
#define GS_LL_NET_ALL 3ULL          // bind and connect TCP (ABI 4)
#define GS_LL_SCOPE_ALL 3ULL        // abstract unix sockets, signals (ABI 6)

// landlock_paths are the paths a fallback command may reach, from the
// launcher's --read and --write arguments: read (and execute) beneath each
// read path, everything beneath each write path. Nothing else of the host's
// file system can be opened: not /tmp, /dev/shm or other world-writable
// directories (channels between commands), not /proc (the host's processes
// and command lines), not world-readable trees (the project checkout).
static char *ll_read[32], *ll_write[8];
static int ll_nread, ll_nwrite;

// ll_all_fs is every file system right the running kernel's ABI knows.
static uint64_t ll_all_fs(long abi) {
	uint64_t all = (1ULL << 13) - 1; // ABI 1: execute … make_sym
	if (abi >= 2) {
		all |= 1ULL << 13; // refer
	}
	if (abi >= 3) {
		all |= GS_LL_FS_TRUNCATE;
	}
	if (abi >= 5) {
		all |= GS_LL_FS_IOCTL_DEV;
	}
	return all;
}

static int ll_add(int ruleset, const char *path, uint64_t access) {
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? 0 : -1; // a system directory this host does not have
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) { // a file takes only the rights of files
		access &= GS_LL_FS_EXECUTE | GS_LL_FS_WRITE_FILE | GS_LL_FS_READ_FILE | GS_LL_FS_TRUNCATE | GS_LL_FS_IOCTL_DEV;
	}
	struct gs_path_beneath_attr pb = {access, fd};
	int r = (int)syscall(__NR_landlock_add_rule, ruleset, GS_LL_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	return r;
}

// landlock_confine restricts the calling process (no_new_privs set) to
// landlock_paths, the standard devices, no TCP (ABI 4) and, from ABI 6, no
// abstract unix socket or signal outside its own domain.
static int landlock_confine(void) {
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
	if (abi < 1) {
		return -1;
	}
	uint64_t all = ll_all_fs(abi);
	struct gs_ruleset_attr ra = {all, abi >= 4 ? GS_LL_NET_ALL : 0, abi >= 6 ? GS_LL_SCOPE_ALL : 0};
	int rs = (int)syscall(__NR_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0) {
		return -1;
	}
	uint64_t rd = (GS_LL_FS_EXECUTE | GS_LL_FS_READ_FILE | GS_LL_FS_READ_DIR) & all;
	uint64_t dev = (GS_LL_FS_READ_FILE | GS_LL_FS_WRITE_FILE | GS_LL_FS_TRUNCATE | GS_LL_FS_IOCTL_DEV) & all;
	static const char *devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
	int bad = 0;
	for (int i = 0; i < ll_nread; i++) {
		bad |= ll_add(rs, ll_read[i], rd) < 0;
	}
	for (int i = 0; i < ll_nwrite; i++) {
		bad |= ll_add(rs, ll_write[i], all) < 0;
	}
	for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
		bad |= ll_add(rs, devices[i], dev) < 0;
	}
	if (bad || syscall(__NR_landlock_restrict_self, rs, 0) < 0) {
		close(rs);
		return -1;
	}
	close(rs);
	return 0;
}

// child sets the command's process up and execs it; on failure it writes
// errno to errfd.
static void child(const struct gs_request *rq, int fds[4], char *cwd, char **argv, char **envp, int errfd) {
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
	int exe = -1;
	if (fds[3] >= 0) { // the program, by descriptor: fd 4, closed by exec
		if (dup2(fds[3], 4) < 0) {
			goto fail;
		}
		exe = 4;
		fcntl(exe, F_SETFD, FD_CLOEXEC);
	}
	close_from(exe >= 0 ? 5 : 4);
	// No capability can come back: the bounding set emptied and uid 0 (a
	// user namespace's, where commands keep init's uid) made ordinary, while
	// init's CAP_SETPCAP is still held.
	for (int c = 0; c < 64; c++) {
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	}
	prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0);
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
	if (chdir(cwd) < 0 || confine() < 0) {
		goto fail;
	}
	if (exe >= 0) {
		syscall(SYS_execveat, exe, "", argv, envp, AT_EMPTY_PATH);
	} else {
		execve(argv[0], argv, envp);
	}
fail:;
	int e = errno;
	if (write(errfd, &e, sizeof e) < 0) {
		// nothing more to report
	}
	_exit(127);
}

// run runs one command and fills rs.
// read_small reads the start of a small file (a /proc file) into buf, NUL-terminated.
static void read_small(const char *path, char *buf, size_t size) {
	memset(buf, 0, size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, size - 1) < 0) {
			buf[0] = 0;
		}
		close(fd);
	}
}

// jail_memory is what the jail holds: the resident memory of every process
// but init (/proc/PID/statm) and the bytes used in /tmp.
static uint64_t jail_memory(void) {
	static long page;
	if (!page) {
		page = sysconf(_SC_PAGESIZE);
	}
	uint64_t total = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 1) {
			continue;
		}
		char path[64], buf[128];
		snprintf(path, sizeof path, "/proc/%ld/statm", pid);
		read_small(path, buf, sizeof buf);
		unsigned long size, resident;
		if (sscanf(buf, "%lu %lu", &size, &resident) == 2) {
			total += (uint64_t)resident * (uint64_t)page;
		}
	}
	if (d) {
		closedir(d);
	}
	struct statvfs fs;
	if (statvfs("/tmp", &fs) == 0) {
		total += (uint64_t)(fs.f_blocks - fs.f_bfree) * fs.f_frsize;
	}
	return total;
}

// GS_MEM_POLL_NS: how often init sums the jail's memory when it bounds it
// (mem_total): a program can fault in a few tens of MB between two looks.
#define GS_MEM_POLL_NS 10000000L

static void run(const struct gs_request *rq, int fds[4], char *cwd, char **argv, char **envp, struct gs_response *rs) {
	memset(rs, 0, sizeof *rs);
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		rs->err = errno;
		return;
	}
	reset_pid_counter();
	pid_t pid = fork();
	last_command = pid;
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
		if (left.tv_sec < 0 || (rq->mem_total && jail_memory() > rq->mem_total)) {
			if (left.tv_sec < 0) {
				rs->timed_out = 1;
			} else {
				rs->mem_exceeded = 1;
			}
			kill(-1, SIGKILL);
			int st;
			if (waitpid(pid, &st, 0) == pid) {
				rs->status = st;
			}
			break;
		}
		if (rq->mem_total && (left.tv_sec > 0 || left.tv_nsec > GS_MEM_POLL_NS)) {
			left.tv_sec = 0;
			left.tv_nsec = GS_MEM_POLL_NS;
		}
		sigtimedwait(&chld, NULL, &left);
	}
	// Nothing of the command outlives it: kill and reap every process of
	// the sandbox but this one, and give the next command a fresh /tmp.
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
	}
	if (fresh_tmp() < 0) {
		perror("gosqlenv-verify-init: fresh /tmp");
		_exit(1); // fail closed: the jail ends, and the verifier says so
	}
}

// launch is the rest of the fallback's launcher (no bubblewrap, see
// launcher): it runs as the command's uid and, where namespaces work, as PID 1 of the
// command's PID namespace. It forks the command, with no descriptor above 2
// and the confinement of confine(), and stays its parent and its
// descendants' subreaper: when the command ends, every process of the uid
// (which no other command holds) is killed and reaped here, whatever
// session it made, and the command's raw wait status is written to fd 3
// (the verifier's pipe). Because the command is not PID 1, signals behave
// as on any system. The launcher is not dumpable, so the command cannot
// take that descriptor.
static int launch(char **argv) {
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	close_from(4);
	pid_t pid = fork();
	if (pid < 0) {
		perror("gosqlenv-verify-init: fork");
		return 126;
	}
	if (pid == 0) {
		close(3);
		if (confine() < 0) {
			perror("gosqlenv-verify-init: confine");
			_exit(126);
		}
		execv(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	// Kill what is left until nothing is: kill(-1) reaches every process
	// of this uid but this one; orphans are reparented here and reaped.
	for (;;) {
		kill(-1, SIGKILL);
		pid_t w = waitpid(-1, NULL, 0);
		if (w < 0 && errno == ECHILD) {
			break;
		}
	}
	int32_t raw = st;
	if (write(3, &raw, sizeof raw) != sizeof raw) {
		// the verifier falls back to the exit status below
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// launcher is "init [--uid N] [--cgroup PROCS] [--landlock] [--read PATH]...
// [--write PATH]... [--probe] --exec ARGV...", the fallback's launcher (with
// --probe it stops after joining the cgroup), started as
// root in the command's namespaces. Before it becomes the command's uid N
// (no groups) it joins the command's memory cgroup (PROCS is its
// cgroup.procs: every process of the command is born in it, cgroup v1 or
// v2) and empties its bounding set, which the command inherits; with
// --landlock the command is confined to the --read and --write paths
// (landlock_confine). Then launch.
static int launcher(int argc, char **argv) {
	long uid = -1;
	int probe = 0;
	int i = 1;
	for (; i + 1 < argc && strcmp(argv[i], "--exec") != 0; i++) {
		if (strcmp(argv[i], "--landlock") == 0) {
			ll_on = 1;
			continue;
		}
		if (strcmp(argv[i], "--probe") == 0) { // only check the options (the verifier's cgroup v2 probe)
			probe = 1;
			continue;
		}
		const char *flag = argv[i], *val = argv[++i];
		if (strcmp(flag, "--uid") == 0) {
			uid = strtol(val, NULL, 10);
		} else if (strcmp(flag, "--cgroup") == 0) {
			int fd = open(val, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1) {
				perror("gosqlenv-verify-init: join the memory cgroup");
				return 126;
			}
			close(fd);
		} else if (strcmp(flag, "--read") == 0 && ll_nread < (int)(sizeof ll_read / sizeof ll_read[0])) {
			ll_read[ll_nread++] = (char *)val;
		} else if (strcmp(flag, "--write") == 0 && ll_nwrite < (int)(sizeof ll_write / sizeof ll_write[0])) {
			ll_write[ll_nwrite++] = (char *)val;
		} else {
			fprintf(stderr, "gosqlenv-verify-init: launcher: bad argument %s\n", flag);
			return 126;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "gosqlenv-verify-init: launcher: no command after --exec\n");
		return 126;
	}
	if (probe) {
		return 0;
	}
	if (uid < 0 && geteuid() == 0 && getpid() != 1) {
		// launch kills every process of its uid (kill(-1)) after the
		// command: as root outside a PID namespace, that is the machine.
		fprintf(stderr, "gosqlenv-verify-init: launcher: refusing to run a command as root outside a PID namespace (no --uid)\n");
		return 126;
	}
	if (uid >= 0) {
		for (int c = 0; c < 64; c++) {
			prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
		}
		if (setgroups(0, NULL) < 0 || setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) < 0 || setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0) {
			perror("gosqlenv-verify-init: launcher: become the command's uid");
			return 126;
		}
	}
	return launch(argv + i + 1);
}

// init_state is what a command might change of init itself from inside
// the jail (in a user namespace commands share init's uid, and /proc/1 is
// theirs to write): its resource limits, CPU affinity, priority, OOM score
// adjustment and core-dump filter, which later commands would inherit or
// read. The verifier does not reuse a jail whose init changed.
struct init_state {
	struct rlimit lim[RLIM_NLIMITS];
	cpu_set_t cpus;
	int prio;
	char oom[32], coredump[32];
};


static void read_state(struct init_state *st) {
	memset(st, 0, sizeof *st);
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		getrlimit(r, &st->lim[r]);
	}
	sched_getaffinity(0, sizeof st->cpus, &st->cpus);
	errno = 0;
	st->prio = getpriority(PRIO_PROCESS, 0);
	read_small("/proc/self/oom_score_adj", st->oom, sizeof st->oom);
	read_small("/proc/self/coredump_filter", st->coredump, sizeof st->coredump);
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--exec") == 0) { // the jail's init takes no --exec
			return launcher(argc, argv);
		}
	}
	if (argc > 2 && strcmp(argv[1], "--tmp-size") == 0) {
		tmp_size = strtoull(argv[2], NULL, 10);
	}
	close_from(4);
	// Not dumpable: no command may ptrace init, take its descriptors
	// (pidfd_getfd) or read its /proc files, even with init's own uid.
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (fresh_tmp() < 0) {
		perror("gosqlenv-verify-init: fresh /tmp");
		return 1;
	}
	open_pid_counter();
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	char *buf = malloc(GS_MAX_MSG + 1);
	if (!buf) {
		return 1;
	}
	struct init_state initial, now;
	read_state(&initial);
	int tainted = 0;
	for (;;) {
		int fds[4] = {-1, -1, -1, -1}; // stdin, stdout, stderr, and the program (optional)
		char control[CMSG_SPACE(4 * sizeof(int))];
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
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				memcpy(fds, CMSG_DATA(c), (k < 4 ? k : 4) * sizeof(int));
				for (size_t i = 4; i < k; i++) { // more than asked for: not used
					int extra;
					memcpy(&extra, CMSG_DATA(c) + i * sizeof(int), sizeof extra);
					close(extra);
				}
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
		for (int i = 0; i < 4; i++) {
			if (fds[i] >= 0) {
				close(fds[i]);
			}
		}
		read_state(&now);
		tainted = tainted || memcmp(&initial, &now, sizeof now) != 0 || (last_command > 0 && pid_counter_moved(last_command));
		last_command = -1;
		rs.tainted = tainted;
		if (send(3, &rs, sizeof rs, 0) != sizeof rs) {
			return 1;
		}
	}
}
