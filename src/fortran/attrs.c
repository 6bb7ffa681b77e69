/* attrs.c: attribute values Fortran sets with MPI_COMM_SET_ATTR (and the type and window forms),
 * kept as MPI 5.0 section 19.3.7 says: C reading such an attribute gets a pointer to the value,
 * Fortran gets the value, and Fortran reading an attribute C set gets C's pointer as an address.
 *
 * A value Fortran sets lives in a cell (one MPI_Aint on the heap); the C attribute holds the
 * cell's address, and the set of cells tells a Fortran reader whether to return what the cell
 * holds. Invariants: a cell is in the set from cr_f_attr_cell to cr_f_attr_free; the delete
 * trampolines of Fortran keyvals (callbacks.c) free the cells they are given and their copy
 * trampolines make new ones, so cells live exactly as long as their attribute. Under a keyval
 * created in C, C's callbacks see the cell's address as the value and a deleted attribute's
 * cell is not freed (it stays in the set: reachable, not lost). */
#include "fortran.h"

#include <pthread.h>
#include <stdbool.h>

static pthread_mutex_t cells_lock = PTHREAD_MUTEX_INITIALIZER; /* MPI_THREAD_MULTIPLE */
static MPI_Aint **cells;   /* open addressing; NULL empty, TOMBSTONE deleted */
static size_t cells_cap, cells_used;
#define TOMBSTONE ((MPI_Aint *)1)

static size_t slot_of(const void *p, size_t cap)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15u;
    return (size_t)(h >> 7) & (cap - 1);
}

/* Inserts p (the lock held); false when out of memory. */
static bool set_insert(MPI_Aint *p)
{
    if ((cells_used + 1) * 2 > cells_cap) {
        size_t cap = cells_cap ? cells_cap * 2 : 64;
        MPI_Aint **fresh = calloc(cap, sizeof *fresh);
        if (!fresh)
            return false;
        cells_used = 0;
        for (size_t i = 0; i < cells_cap; i++) {
            if (cells[i] && cells[i] != TOMBSTONE) {
                size_t j = slot_of(cells[i], cap);
                while (fresh[j])
                    j = (j + 1) & (cap - 1);
                fresh[j] = cells[i];
                cells_used++;
            }
        }
        free(cells);
        cells = fresh;
        cells_cap = cap;
    }
    size_t j = slot_of(p, cells_cap);
    while (cells[j] && cells[j] != TOMBSTONE)
        j = (j + 1) & (cells_cap - 1);
    if (!cells[j])
        cells_used++;
    cells[j] = p;
    return true;
}

/* The slot holding p, or -1 (the lock held). */
static long set_find(const void *p)
{
    if (!cells_cap || !p)
        return -1;
    for (size_t j = slot_of(p, cells_cap), n = 0; cells[j] && n < cells_cap; j = (j + 1) & (cells_cap - 1), n++)
        if (cells[j] == p)
            return (long)j;
    return -1;
}

void *cr_f_attr_cell(MPI_Aint value)
{
    MPI_Aint *cell = malloc(sizeof *cell);
    if (!cell)
        return NULL;
    *cell = value;
    pthread_mutex_lock(&cells_lock);
    bool ok = set_insert(cell);
    pthread_mutex_unlock(&cells_lock);
    if (!ok) {
        free(cell);
        return NULL;
    }
    return cell;
}

bool cr_f_attr_is_cell(const void *p, MPI_Aint *value)
{
    pthread_mutex_lock(&cells_lock);
    bool found = set_find(p) >= 0;
    if (found && value)
        *value = *(const MPI_Aint *)p;
    pthread_mutex_unlock(&cells_lock);
    return found;
}

void cr_f_attr_free(void *p)
{
    pthread_mutex_lock(&cells_lock);
    long j = set_find(p);
    if (j >= 0)
        cells[j] = TOMBSTONE;
    pthread_mutex_unlock(&cells_lock);
    if (j >= 0)
        free(p);
}
