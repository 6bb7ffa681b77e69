/* segment.c: node-shared memory files and their layout (see segment.h). */
#include "segment.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

void cr_seg_place(cr_seg_layout *l, cr_seg_region region, size_t bytes, size_t align)
{
    size_t off = (l->total + align - 1) & ~(align - 1);
    l->off[region] = off;
    l->bytes[region] = bytes;
    l->total = off + bytes;
}

int cr_seg_create(const char *name, size_t bytes, int *fd, void **base)
{
    *fd = memfd_create(name, MFD_CLOEXEC);
    if (*fd < 0)
        return -1;
    void *p = MAP_FAILED;
    if (ftruncate(*fd, (off_t)bytes) == 0)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
        close(*fd);
        *fd = -1;
        return -1;
    }
    *base = p;
    return 0;
}

int cr_seg_attach(int pid, int fd, size_t bytes, void **base)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    int mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0)
        return -1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
    close(mine);
    if (p == MAP_FAILED)
        return -1;
    *base = p;
    return 0;
}
