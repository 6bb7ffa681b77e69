/* copy.h: copying memory in bulk when the copy is larger than the caches: stores that bypass
 * them (non-temporal), which neither read the destination lines first nor evict what the
 * program keeps in cache. */
#ifndef CR_CORE_COPY_H
#define CR_CORE_COPY_H

#include <stddef.h>

/* Copies n bytes between buffers that do not overlap: memcpy below the size where streaming
 * stores win (a quarter of the last-level cache: source and destination then no longer fit in
 * it together with the program's own data), streaming stores above. */
void cr_copy_big(void *dst, const void *src, size_t n);
/* The size from which cr_copy_big streams: a quarter of the last-level cache, at least 1 MiB. */
size_t cr_copy_stream_min(void);

#endif
