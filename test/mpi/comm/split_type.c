/* split_type.c: MPI_Comm_split_type by node (MPI_COMM_TYPE_SHARED) and by hardware object
 * (HW_GUIDED with each resource type Courier names, and HW_UNGUIDED): each result is a subset
 * of the one for the next coarser object, unknown types give MPI_COMM_NULL everywhere.
 * RESOURCE_GUIDED follows the same resource names, and the hwloc URIs name the same levels.
 * MPI_Get_hw_resource_info gives each URI with "true" exactly when a split by it gives this
 * process a communicator, at the moment of the call: bound to one CPU, every level it names is
 * "true" for the hardware thread. On an intercommunicator each group splits by node and the
 * result is an intercommunicator between the two groups' parts. */
#define _GNU_SOURCE
#include "mpitest.h"

#include <sched.h>
#include <string.h>

static const char *levels[] = {"hwthread", "core", "L1cache", "L2cache", "L3cache", "numanode", "package"};
/* The same levels as hwloc URIs: the keys of MPI_Get_hw_resource_info. */
static const char *uris[] = {"hwloc://PU",      "hwloc://Core",     "hwloc://L1Cache", "hwloc://L2Cache",
                             "hwloc://L3Cache", "hwloc://NUMANode", "hwloc://Package"};
enum { NLEVELS = 7 };

/* Whether every process of a is in b. */
static int subset(MPI_Comm a, MPI_Comm b)
{
    MPI_Group ga, gb, diff;
    MPI_Comm_group(a, &ga);
    MPI_Comm_group(b, &gb);
    MPI_Group_difference(ga, gb, &diff);
    int n;
    MPI_Group_size(diff, &n);
    MPI_Group_free(&ga);
    MPI_Group_free(&gb);
    MPI_Group_free(&diff);
    return n == 0;
}

static MPI_Comm guided(MPI_Comm comm, const char *type)
{
    MPI_Info info;
    MPI_Comm out;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", type);
    CHECK_CLASS(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, 0, info, &out), MPI_SUCCESS);
    MPI_Info_free(&info);
    return out;
}

static void check_on(MPI_Comm comm)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node, shm, prev = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), MPI_SUCCESS);
    CHECK(node != MPI_COMM_NULL, "no node communicator");
    shm = guided(comm, "mpi_shared_memory");
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(node, shm, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "mpi_shared_memory differs from MPI_COMM_TYPE_SHARED (%d)", cmp);
    /* Finest to coarsest: every result holds the previous one and lies within the node. */
    for (int l = 0; l < NLEVELS; l++) {
        MPI_Comm c = guided(comm, levels[l]);
        if (c != MPI_COMM_NULL) {
            CHECK(subset(c, node), "%s reaches beyond the node", levels[l]);
            if (prev != MPI_COMM_NULL)
                CHECK(subset(prev, c), "the %s of a process is not within its %s", levels[l - 1], levels[l]);
            int r;
            MPI_Comm_rank(c, &r);
            int sum = 0;
            MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c); /* usable */
        }
        if (prev != MPI_COMM_NULL)
            MPI_Comm_free(&prev);
        prev = c;
    }
    if (prev != MPI_COMM_NULL)
        MPI_Comm_free(&prev);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Comm res;
    CHECK_CLASS(MPI_Comm_split_type(comm, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &res), MPI_SUCCESS);
    MPI_Info_free(&info);
    CHECK(res != MPI_COMM_NULL, "RESOURCE_GUIDED with mpi_shared_memory gave MPI_COMM_NULL");
    if (res != MPI_COMM_NULL) {
        MPI_Comm_compare(node, res, &cmp);
        CHECK(cmp == MPI_CONGRUENT, "RESOURCE_GUIDED mpi_shared_memory differs from MPI_COMM_TYPE_SHARED (%d)", cmp);
        MPI_Comm_free(&res);
    }
    MPI_Comm none = guided(comm, "no-such-resource");
    CHECK(none == MPI_COMM_NULL, "an unknown resource type gave a communicator");
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &none);
    CHECK(none == MPI_COMM_NULL, "HW_GUIDED without the info key gave a communicator");
    MPI_Comm un;
    CHECK_CLASS(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &un), MPI_SUCCESS);
    if (un != MPI_COMM_NULL) {
        int n;
        MPI_Comm_size(un, &n);
        CHECK(n < size, "HW_UNGUIDED gave all %d processes, not a strict subset", n);
        CHECK(subset(un, comm), "HW_UNGUIDED reaches beyond comm");
        MPI_Comm_free(&un);
    }
    MPI_Comm_split_type(comm, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none);
    CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    MPI_Comm_free(&node);
    MPI_Comm_free(&shm);
}

/* The info's value for a level: 1 "true", 0 "false", -1 absent or something else. */
static int hw_value(MPI_Info info, const char *key)
{
    char v[MPI_MAX_INFO_VAL];
    int len = sizeof v, flag = 0;
    MPI_Info_get_string(info, key, &len, v, &flag);
    return !flag ? -1 : !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
}

/* MPI_Get_hw_resource_info against the splits, now and bound to one CPU. */
static void check_hw_info(void)
{
    MPI_Info info;
    CHECK_CLASS(MPI_Get_hw_resource_info(&info), MPI_SUCCESS);
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys >= 2 && nkeys <= NLEVELS, "MPI_Get_hw_resource_info gave %d keys, expected 2 to %d", nkeys, NLEVELS);
    /* the hardware thread and the core are in every Linux's sysfs; other levels may be missing */
    CHECK(hw_value(info, uris[0]) >= 0 && hw_value(info, uris[1]) >= 0, "MPI_Get_hw_resource_info: no %s or %s",
          uris[0], uris[1]);
    for (int l = 0; l < NLEVELS; l++) {
        int v = hw_value(info, uris[l]);
        char any[MPI_MAX_INFO_VAL];
        int len = sizeof any, flag = 0;
        MPI_Info_get_string(info, uris[l], &len, any, &flag);
        CHECK(!flag || v >= 0, "MPI_Get_hw_resource_info: %s is \"%s\", not true or false", uris[l], any);
        if (!flag)
            continue;
        /* a split by the URI is the split by the word, and exists here exactly when "true" */
        MPI_Comm by_uri = guided(MPI_COMM_SELF, uris[l]), by_word = guided(MPI_COMM_SELF, levels[l]);
        CHECK((by_uri != MPI_COMM_NULL) == (v == 1), "%s is %d but a split by it gave %s", uris[l], v,
              by_uri == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        CHECK((by_uri != MPI_COMM_NULL) == (by_word != MPI_COMM_NULL), "splits by %s and by %s differ", uris[l],
              levels[l]);
        if (by_uri != MPI_COMM_NULL)
            MPI_Comm_free(&by_uri);
        if (by_word != MPI_COMM_NULL)
            MPI_Comm_free(&by_word);
    }
    MPI_Info_free(&info);

    /* Bound to the CPU it runs on, the process is restricted to one hardware thread. */
    cpu_set_t was, one;
    int cpu = sched_getcpu();
    if (cpu >= 0 && sched_getaffinity(0, sizeof was, &was) == 0) {
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) == 0) {
            CHECK_CLASS(MPI_Get_hw_resource_info(&info), MPI_SUCCESS);
            CHECK(hw_value(info, "hwloc://PU") == 1, "bound to CPU %d, hwloc://PU is not \"true\"", cpu);
            for (int l = 0; l < NLEVELS; l++) /* every object holding that CPU holds all this may use */
                CHECK(hw_value(info, uris[l]) != 0, "bound to CPU %d, %s is \"false\"", cpu, uris[l]);
            MPI_Info_free(&info);
            sched_setaffinity(0, sizeof was, &was);
            /* and with its old affinity again, the answer is the first one's (the moment of the call) */
            int count = CPU_COUNT(&was);
            CHECK_CLASS(MPI_Get_hw_resource_info(&info), MPI_SUCCESS);
            CHECK(count == 1 || hw_value(info, "hwloc://PU") == 0, "free to run on %d CPUs, hwloc://PU is not "
                  "\"false\"", count);
            MPI_Info_free(&info);
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check_on(MPI_COMM_WORLD);
    check_hw_info();
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
    check_on(half);
    MPI_Comm_free(&half);
    MPI_Comm newcomm;
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &newcomm), MPI_ERR_ARG);

    /* an intercommunicator between the halves: split by node, still an intercommunicator */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2) {
        int low = mt_rank < size / 2;
        MPI_Comm side, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, mt_rank, &side);
        MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &newcomm), MPI_SUCCESS);
        int flag = 0, lsize = 0, rsize = 0;
        if (newcomm != MPI_COMM_NULL) {
            MPI_Comm_test_inter(newcomm, &flag);
            MPI_Comm_size(newcomm, &lsize);
            MPI_Comm_remote_size(newcomm, &rsize);
            int mine = mt_rank, theirs = -1; /* usable: the two leaders swap their world ranks */
            int r;
            MPI_Comm_rank(newcomm, &r);
            if (r == 0)
                MPI_Sendrecv(&mine, 1, MPI_INT, 0, 3, &theirs, 1, MPI_INT, 0, 3, newcomm, MPI_STATUS_IGNORE);
            if (r == 0)
                CHECK(theirs == (low ? size / 2 : 0), "the other group's leader is world rank %d", theirs);
            MPI_Comm_free(&newcomm);
        }
        CHECK(flag && lsize == (low ? size / 2 : size - size / 2) && rsize == (low ? size - size / 2 : size / 2),
              "split_type of an intercommunicator: inter %d, sizes %d and %d", flag, lsize, rsize);
        CHECK_CLASS(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &newcomm), MPI_SUCCESS);
        CHECK(newcomm == MPI_COMM_NULL, "MPI_UNDEFINED on an intercommunicator gave a communicator");
        CHECK_CLASS(MPI_Comm_split_type(inter, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &newcomm), MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&side);
    }
    return mt_finish();
}
