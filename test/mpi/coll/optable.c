/* The table of doc/reductions.md, cell by cell: every predefined operation (MPI_REPLACE and
 * MPI_NO_OP included) on every predefined datatype, in MPI_Allreduce (with and without
 * MPI_IN_PLACE) and MPI_Reduce_local. Where Courier accepts the pair (the standard's cells and
 * MPICH's and Open MPI's extensions, opdata.h) the result is checked element by element;
 * everywhere else, with MPI_ERRORS_RETURN, the call returns MPI_ERR_OP at every process, its
 * message names the call, the operation and the datatype, and the receive buffer is left alone.
 *
 *   optable --markdown   rank 0 prints the table as this run found it (S: standard,
 *                        E: extension, blank: MPI_ERR_OP), one row per datatype. */
#include "opdata.h"

static int rank, size;

/* The operations in the order of the table, then the accumulate-only ones. */
#define NALLOPS (NOPS + 2)
static MPI_Op all_op(int k)
{
    return k < NOPS ? op_handle(k) : k == NOPS ? MPI_REPLACE : MPI_NO_OP;
}
static const char *all_op_name(int k)
{
    return k < NOPS ? op_name[k] : k == NOPS ? "MPI_REPLACE" : "MPI_NO_OP";
}

/* MPI_Allreduce of `count` elements, checked at every process. */
static void allreduce_ok(int t, int o, MPI_Count count, int in_place)
{
    const tentry *te = &types[t];
    size_t ext = ct_extent(te->ct), bytes = (size_t)count * ext;
    char *sbuf = malloc(bytes + 1), *rbuf = malloc(bytes + GUARD);
    fill_input(te->ct, o, rank, size, count, in_place ? rbuf : sbuf);
    guard_set(rbuf, bytes);
    char what[160];
    snprintf(what, sizeof what, "MPI_Allreduce %s %s count %lld%s", op_name[o], te->name, (long long)count,
             in_place ? " MPI_IN_PLACE" : "");
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : sbuf, rbuf, (int)count, te->h, op_handle(o), MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "%s returned %d", what, rc);
    if (rc == MPI_SUCCESS)
        check_result(te->ct, o, size, count, rbuf, what);
    guard_check(rbuf, bytes, what);
    free(sbuf);
    free(rbuf);
}


/* A refused call: MPI_ERR_OP, a message naming the call, the operation and the datatype, and
 * the receive buffer as it was. */
static void check_refused(int rc, const char *call, const char *oname, const char *dname, const unsigned char *buf,
                          const unsigned char *before, size_t len)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "%s %s %s returned class %d, expected MPI_ERR_OP", call, oname, dname, cls);
    if (cls == MPI_ERR_OP) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        MPI_Error_string(rc, s, &n);
        CHECK(strstr(s, call) && strstr(s, oname) && strstr(s, dname),
              "the message of %s %s %s does not name all three: \"%s\"", call, oname, dname, s);
    }
    CHECK(memcmp(buf, before, len) == 0, "%s %s %s failed but changed the receive buffer", call, oname, dname);
}

static void refused(int t, int k)
{
    const tentry *te = &types[t];
    unsigned char sbuf[256], rbuf[256], before[256];
    memset(sbuf, 0x11, sizeof sbuf);
    memset(rbuf, 0x22, sizeof rbuf);
    memcpy(before, rbuf, sizeof rbuf);
    int rc = MPI_Allreduce(sbuf, rbuf, 3, te->h, all_op(k), MPI_COMM_WORLD);
    check_refused(rc, "MPI_Allreduce", all_op_name(k), te->name, rbuf, before, sizeof rbuf);
    rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, 3, te->h, all_op(k), MPI_COMM_WORLD);
    check_refused(rc, "MPI_Allreduce", all_op_name(k), te->name, rbuf, before, sizeof rbuf);
    rc = MPI_Reduce_local(sbuf, rbuf, 3, te->h, all_op(k));
    check_refused(rc, "MPI_Reduce_local", all_op_name(k), te->name, rbuf, before, sizeof rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* MPI_Reduce_local has no communicator: its errors go to MPI_COMM_SELF's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int markdown = argc > 1 && !strcmp(argv[1], "--markdown");

    /* The list is every predefined datatype of the ABI, each once. */
    CHECK(NTYPES == 70, "the table has %d datatypes; the standard ABI predefines 70 (and two aliases)", NTYPES);
    for (int t = 0; t < NTYPES; t++)
        for (int u = t + 1; u < NTYPES; u++)
            CHECK(types[t].h != types[u].h, "%s and %s are the same handle", types[t].name, types[u].name);

    int standard = 0, extension = 0, rejected = 0;
    if (markdown && rank == 0) {
        printf("| datatype |");
        for (int o = 0; o < NOPS; o++)
            printf(" %s |", op_name[o] + 4);
        printf("\n|---|");
        for (int o = 0; o < NOPS; o++)
            printf(":-:|");
        printf("\n");
    }
    for (int t = 0; t < NTYPES; t++) {
        if (markdown && rank == 0)
            printf("| `%s` |", types[t].name);
        for (int k = 0; k < NALLOPS; k++) {
            int ok = k < NOPS && op_accepted(k, types[t].group);
            int before = mt_errors;
            CHECK(k >= NOPS || !op_standard(k, types[t].group) || ok, "%s on %s is standard but not accepted",
                  all_op_name(k), types[t].name);
            if (ok) {
                allreduce_ok(t, k, 1, 0);
                allreduce_ok(t, k, 7, 1);
                reduce_local_ok(t, k, 5);
                if (op_standard(k, types[t].group))
                    standard++;
                else
                    extension++;
            } else {
                refused(t, k);
                rejected++;
            }
            if (markdown && rank == 0 && k < NOPS)
                printf(" %s |", mt_errors != before ? "?" : !ok ? "" : op_standard(k, types[t].group) ? "S" : "E");
        }
        if (markdown && rank == 0)
            printf("\n");
    }
    CHECK(standard > 300 && extension > 70 && rejected > 500, "only %d standard, %d extension and %d refused cells",
          standard, extension, rejected);
    if (rank == 0 && !markdown)
        printf("%d standard cells, %d extensions, %d refused (with MPI_REPLACE and MPI_NO_OP)\n", standard,
               extension, rejected);
    return mt_finish();
}
