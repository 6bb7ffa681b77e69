/* io.h: MPI I/O (chapter 14): file objects, their views and file pointers, and the data access
 * calls' one path from a typed memory buffer to the view's bytes in a file. doc/design/io.md. */
#ifndef CR_IO_H
#define CR_IO_H

#include "core/error.h"
#include "core/handle.h"
#include "core/info.h"
#include "core/types.h"

#include <stdbool.h>
#include <stdint.h>

/* The largest file offset (and view position in bytes) Courier addresses: 2^62, which keeps
 * every sum of an offset, a tile's extent and a displacement inside int64_t. */
#define CR_IO_OFFSET_MAX ((MPI_Offset)1 << 62)

/* A data representation made by MPI_Register_datarep (it lives until MPI_Finalize). NULL
 * conversion functions: the file holds native data (only the extents are the user's). */
typedef struct cr_io_rep {
    struct cr_io_rep *next;
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read, *write;       /* from MPI_Register_datarep */
    MPI_Datarep_conversion_function_c *read_c, *write_c; /* from MPI_Register_datarep_c */
    MPI_Datarep_extent_function *extent;
    void *extra;
} cr_io_rep;

/* An open file. Every process of the file's group holds one for the same file; what they
 * share (the shared file pointer) lives in a window of the file's own communicator. */
typedef struct cr_file {
    cr_errobj eo;
    cr_comm *comm;  /* a private duplicate of the communicator it was opened on */
    int fd;
    int amode;
    char *path;
    cr_info *info;  /* the hints as given (MPI_File_get_info returns a copy) */
    /* The view: data lies at disp + k * filetype extent + the filetype's typemap, for k = 0, 1,
     * ...; positions (file pointers, offsets of the _at calls) count etypes of that data. */
    MPI_Offset disp;
    cr_dtype *etype, *ftype;   /* referenced while they are the view */
    char datarep[MPI_MAX_DATAREP_STRING];
    bool external;             /* datarep "external32": big-endian in the file */
    const cr_io_rep *rep;      /* a user's data representation, or NULL */
    bool view_contig;          /* the tiles abut: stream byte P is at disp + ftype->true_lb + P */
    MPI_Offset pos;            /* the individual file pointer, in etypes */
    bool atomic;
    /* The shared file pointer: one MPI_Offset in rank 0's part of a window, moved by atomic
     * fetch-and-add (works across nodes, where the window reaches rank 0 by message). */
    MPI_Win shared_win;
    cr_win *shared;
    /* A split collective in progress (one per file): its result, until the _end call. */
    bool split_on;
    int split_kind;
    int split_rc;
    MPI_Status split_status;
    /* Where an aggregator of collective writes receives a round (coll.c): kept between calls,
     * since a fresh buffer of a round's size costs a page fault a page each call. */
    char *agg_buf;
    size_t agg_cap;
    /* Set (alike everywhere) when the processes span nodes, found at the first collective write
     * (attach_known), or once a process could not read another's memory in one: the rounds
     * then send the pieces by messages without trying. */
    bool no_attach, attach_known;
} cr_file;

/* The object of MPI_FILE_NULL: its handler is the default of files opened later, and the
 * errors of calls about no open file (MPI_File_open, MPI_File_delete) are raised on it. */
extern cr_errobj cr_file_null;

static inline cr_file *cr_file_get(MPI_File h)
{
    return (cr_file *)cr_handle_get((uintptr_t)h, CR_KIND_FILE);
}

/* A run of file bytes. The view's segments for a stream window come at most CR_IO_MAXSEG at a
 * time, in stream order, merged where they abut. */
enum { CR_IO_MAXSEG = 256 };
typedef struct cr_io_seg {
    MPI_Offset off;
    uint64_t len;
} cr_io_seg;
/* The file segments of stream bytes [at, at + len), at most CR_IO_MAXSEG; returns the stream
 * bytes they hold (all of len, or a prefix when the segments ran out). */
uint64_t cr_io_view_segments(const cr_file *f, MPI_Offset at, uint64_t len, cr_io_seg *out, int *nseg);
/* pread or pwrite of all `len` bytes at `off`; *done is short only at the end of the file
 * (reads). Returns 0 or an errno. */
int cr_io_full(int fd, bool write, char *p, uint64_t len, MPI_Offset off, uint64_t *done);
/* The checks of an access's reach: count elements of dt from stream byte `at` stay inside what
 * a file offset holds; *total is their bytes. */
int cr_io_access_reach(const cr_file *f, MPI_Offset at, MPI_Count count, const cr_dtype *dt, uint64_t *total);
/* coll.c: whether collective writes to f go through aggregators (a file-wide property, the
 * same on every process: not atomic, no conversion, more than one process). */
bool cr_io_coll_write_eligible(const cr_file *f);
/* A collective write in two phases: every process of the file calls it (with have = false and
 * nothing to write after a local error). *handled is false when the processes decided to write
 * independently (large pieces, or the hint romio_cb_write=disable): the caller then writes. */
int cr_io_coll_write(cr_file *f, MPI_Offset at, const void *buf, MPI_Count count, cr_dtype *dt, bool have,
                     uint64_t *moved, bool *handled);

/* access.c: moves count elements of dt between buf and the view's data starting at stream byte
 * `at` (etypes * etype size); sets *moved to the bytes moved (short at the end of the file). */
int cr_io_access(cr_file *f, bool write, MPI_Offset at, void *buf, MPI_Count count, cr_dtype *dt, uint64_t *moved);
/* The stream bytes of the view that lie below file byte `end` (the end of file, in the view). */
MPI_Offset cr_io_view_bytes_below(const cr_file *f, MPI_Offset end);
/* The file byte of view stream byte `at`. */
MPI_Offset cr_io_byte_of(const cr_file *f, MPI_Offset at);
/* Whether dt's data lies at nonnegative displacements that never go back, and (unless
 * overlap_ok: files opened only for reading) never overlap: the rule for etypes and filetypes. */
bool cr_io_type_forward(const cr_dtype *dt, bool overlap_ok);
/* Whether the file's data representation stores dt's data in as many bytes as memory does
 * (then views lay it out as native data; Courier takes no other types with a conversion). */
bool cr_io_same_size(const cr_file *f, bool external, const cr_io_rep *rep, cr_dtype *dt);
/* errno to an error code naming `what` (the call's object: the file name). */
int cr_io_errno(int e, const char *doing, const char *path);

#endif
