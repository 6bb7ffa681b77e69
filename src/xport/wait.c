/* wait.c: the process's sleep (see wait.h): an eventfd doorbell inside an epoll set.
 *
 * No lost wake-up: a peer that rings adds to the eventfd's counter, which stays readable until
 * the sleeper reads it, so a ring that comes between the sleeper's last look at its rings and
 * its epoll_wait makes epoll_wait return at once. */
#include "wait.h"

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int bell = -1, ep = -1;
static struct epoll_event fired[8]; /* what the last sleep reported */
static int nfired;

bool cr_wait_init(void)
{
    if (bell >= 0)
        return true;
    bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (bell < 0 || ep < 0 || cr_wait_add(bell) != 0) {
        cr_wait_finalize();
        return false;
    }
    return true;
}

void cr_wait_finalize(void)
{
    if (bell >= 0)
        close(bell);
    if (ep >= 0)
        close(ep);
    bell = ep = -1;
}

int cr_wait_bell_fd(void)
{
    return bell;
}

int cr_wait_add(int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    return ep >= 0 ? epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) : -1;
}

void cr_wait_sleep(int timeout_ms)
{
    struct epoll_event *ev = fired;
    int n = epoll_wait(ep, ev, 8, timeout_ms);
    nfired = n > 0 ? n : 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].data.fd == bell) {
            uint64_t rings;
            while (read(bell, &rings, sizeof rings) < 0 && errno == EINTR)
                ;
        }
    }
}

void cr_wait_ring(int fd)
{
    uint64_t one = 1;
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

bool cr_wait_fired(int fd)
{
    for (int i = 0; i < nfired; i++)
        if (fired[i].data.fd == fd)
            return true;
    return false;
}
