/* Runs a program on a kernel without membarrier(2), as far as it can tell:
 * a seccomp filter makes the call fail with ENOSYS (Linux < 4.14, or a
 * container's filter), so tracer's recording threads fence by themselves
 * (test_pool_pressure.py checks that path too).
 * usage: no_membarrier PROGRAM [ARG...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: no_membarrier PROGRAM [ARG...]\n");
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof *filter, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("no_membarrier: seccomp");
        return 2;
    }
    if (syscall(__NR_membarrier, 0, 0, 0) != -1 || errno != ENOSYS) {
        fprintf(stderr, "no_membarrier: the filter did not take\n");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror("no_membarrier: exec");
    return 127;
}
