/* The PMI socket a launcher passes (PMI_FD) is the library's own: after MPI_Init it is marked
 * close-on-exec, so a program the rank runs (system(), a shell) does not inherit it. A child
 * started with system() lists its open descriptors: the socket's number is not among them. */
#include "mpitest.h"

#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *s = getenv("PMI_FD");
    if (s && *s) {
        int fd = atoi(s);
        int flags = fcntl(fd, F_GETFD);
        CHECK(flags >= 0 && (flags & FD_CLOEXEC), "PMI_FD=%d: flags %d", fd, flags);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "test ! -e /proc/self/fd/%d", fd);
        int rc = system(cmd);
        CHECK(rc == 0, "a child started by system() inherited the PMI socket (fd %d)", fd);
    }
    return mt_finish();
}
