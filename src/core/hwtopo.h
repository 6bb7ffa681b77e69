/* hwtopo.h: where this process runs in the machine: the hardware objects (core, caches, NUMA
 * node, package) that hold every CPU it may run on, for MPI_Comm_split_type's hardware types. */
#ifndef CR_HWTOPO_H
#define CR_HWTOPO_H

/* Hardware levels, finest first. */
enum { CR_HW_HWTHREAD, CR_HW_CORE, CR_HW_L1, CR_HW_L2, CR_HW_L3, CR_HW_NUMA, CR_HW_PACKAGE, CR_HW_LEVELS };

/* The names MPI_Comm_split_type's "mpi_hw_resource_type" info value takes for each level: the
 * bare words MPICH and Open MPI take, and the URIs of hwloc's types ("hwloc://NUMANode"), the
 * form the standard recommends and the keys of MPI_Get_hw_resource_info. */
extern const char *const cr_hw_level_names[CR_HW_LEVELS];
extern const char *const cr_hw_level_uris[CR_HW_LEVELS];

/* The level a name or URI means (compared without regard to case), or -1. */
int cr_hw_level_of(const char *name);

/* For each level, an id of the object of that level that holds every CPU this process may run
 * on (unique within the node: the object's first CPU, or its NUMA node number), or -1 when the
 * process's CPUs span several objects of that level or the machine does not say. */
void cr_hw_place(int ids[CR_HW_LEVELS]);

/* Bytes of the largest data or unified cache of the CPU this process runs on, as sysfs gives
 * it, or 0 when it does not say. (Not the C library's sysconf: on the test VM it reports 320 MiB
 * for a 32 MiB L3.) */
unsigned long long cr_hw_llc_bytes(void);

#endif
