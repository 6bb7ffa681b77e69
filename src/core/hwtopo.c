/* hwtopo.c: the machine's topology from Linux's sysfs (see hwtopo.h). Read when asked (a split
 * by hardware type), never at start-up. */
#include "hwtopo.h"

#include "cr_impl.h"
#include "info.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *const cr_hw_level_names[CR_HW_LEVELS] = {"hwthread", "core",     "L1cache", "L2cache",
                                                      "L3cache",  "numanode", "package"};

const char *const cr_hw_level_uris[CR_HW_LEVELS] = {"hwloc://PU",      "hwloc://Core",     "hwloc://L1Cache",
                                                     "hwloc://L2Cache", "hwloc://L3Cache",  "hwloc://NUMANode",
                                                     "hwloc://Package"};

int cr_hw_level_of(const char *name)
{
    for (int i = 0; name && i < CR_HW_LEVELS; i++)
        if (!strcasecmp(name, cr_hw_level_names[i]) || !strcasecmp(name, cr_hw_level_uris[i]))
            return i;
    return -1;
}

/* The first number of a sysfs CPU list ("0-3,8"), or -1. */
static int first_of_list(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The ids of the objects that hold CPU `cpu`, level by level. */
static void cpu_place(int cpu, int ids[CR_HW_LEVELS])
{
    char path[256];
    ids[CR_HW_HWTHREAD] = cpu;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    ids[CR_HW_CORE] = first_of_list(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", cpu);
    ids[CR_HW_PACKAGE] = first_of_list(path);
    ids[CR_HW_L1] = ids[CR_HW_L2] = ids[CR_HW_L3] = -1;
    for (int i = 0; i < 16; i++) { /* the data or unified cache of each level */
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, i);
        int level = first_of_list(path);
        if (level < 0)
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, i);
        FILE *f = fopen(path, "r");
        char type[32] = "";
        if (f) {
            if (!fgets(type, sizeof type, f))
                type[0] = 0;
            fclose(f);
        }
        if (level >= 1 && level <= 3 && strncmp(type, "Instruction", 11) != 0) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
            ids[CR_HW_L1 + level - 1] = first_of_list(path);
        }
    }
    ids[CR_HW_NUMA] = 0; /* a machine that names no NUMA node is one */
    for (int n = 0; n < 256; n++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/node%d", cpu, n);
        if (access(path, F_OK) == 0) {
            ids[CR_HW_NUMA] = n;
            break;
        }
    }
}

unsigned long long cr_hw_llc_bytes(void)
{
    int cpu = sched_getcpu();
    unsigned long long best = 0;
    char path[256];
    for (int i = 0; i < 16; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu < 0 ? 0 : cpu, i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        unsigned long long v = 0;
        char unit = 0;
        int got = fscanf(f, "%llu%c", &v, &unit);
        fclose(f);
        if (got >= 1) {
            v <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
            best = v > best ? v : best; /* instruction caches are never the largest */
        }
    }
    return best;
}

void cr_hw_place(int ids[CR_HW_LEVELS])
{
    cpu_set_t set;
    for (int l = 0; l < CR_HW_LEVELS; l++)
        ids[l] = -1;
    if (sched_getaffinity(0, sizeof set, &set))
        return;
    bool first = true;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        int here[CR_HW_LEVELS];
        cpu_place(cpu, here);
        for (int l = 0; l < CR_HW_LEVELS; l++)
            ids[l] = first ? here[l] : ids[l] == here[l] ? ids[l] : -1;
        first = false;
    }
}

/* MPI_Get_hw_resource_info: for each hardware level, the key is its hwloc URI and the value says
 * whether this process is restricted to one object of that level now (the calling thread's CPU
 * affinity lies within one), "true" or "false", as the standard defines the values. A level
 * sysfs does not describe for the CPU this runs on (no L3 cache, say) has no key: "false" would
 * claim several. The keys are the names MPI_Comm_split_type takes, so a program can split by a
 * level it finds "true". (MPICH 5.0 and Open MPI 5.0 return an empty info object.) */
int cr_mpi_get_hw_resource_info(MPI_Info *hw_info)
{
    int ids[CR_HW_LEVELS], known[CR_HW_LEVELS], cpu = sched_getcpu(), err;
    cr_info *info;
    cr_hw_place(ids);
    cpu_place(cpu < 0 ? 0 : cpu, known);
    if ((err = cr_info_new(hw_info, &info)))
        return err;
    for (int l = 0; l < CR_HW_LEVELS; l++)
        if (known[l] >= 0 && (err = cr_info_put(info, cr_hw_level_uris[l], ids[l] >= 0 ? "true" : "false"))) {
            cr_mpi_info_free(hw_info);
            return err;
        }
    return MPI_SUCCESS;
}
