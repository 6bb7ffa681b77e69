/* refuse_attach.h: makes the kernel refuse this process's cross-memory attach from now on, as a
 * ptrace policy or a container's seccomp filter would: a filter that fails process_vm_readv,
 * process_vm_writev or both ("read", "write", "both") with EPERM. For tests of the fallbacks. */
#ifndef MT_REFUSE_ATTACH_H
#define MT_REFUSE_ATTACH_H

#include "mpitest.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void mt_refuse_attach(const char *which)
{
    bool rd = !strcmp(which, "read") || !strcmp(which, "both");
    bool wr = !strcmp(which, "write") || !strcmp(which, "both");
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, rd ? SYS_process_vm_readv : 0xfffffff, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, wr ? SYS_process_vm_writev : 0xfffffff, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    struct sock_fprog fp = {(unsigned short)(sizeof prog / sizeof prog[0]), prog};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl(NO_NEW_PRIVS): %s", strerror(errno));
    CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0, "seccomp: %s", strerror(errno));
    /* The filter is in force: a copy from this process to itself is refused. */
    char a = 1, b = 0;
    struct iovec l = {&b, 1}, r = {&a, 1};
    if (rd)
        CHECK(process_vm_readv(getpid(), &l, 1, &r, 1, 0) == -1 && errno == EPERM, "process_vm_readv was not refused");
    if (wr)
        CHECK(process_vm_writev(getpid(), &l, 1, &r, 1, 0) == -1 && errno == EPERM, "process_vm_writev was not refused");
}

#endif
