/* MPI_T categories and events:
 *   - categories by layer: every control and performance variable in exactly one category, the
 *     lists matching the counts MPI_T_category_get_info gives, names unique and found again by
 *     MPI_T_category_get_index, COURIER_EAGER_MAX in "pt2pt", COURIER_WAIT in "xport",
 *     COURIER_PMI in "pmi", the collective counters in "coll" and the transport's in "xport"; no
 *     subcategories, no events,
 *     MPI_T_category_changed stable;
 *   - names cut to the buffer given, with the whole length reported;
 *   - events: none defined, so their number is 0, no name finds one, no index or handle is
 *     valid (MPI_T_ERR_INVALID_NAME, _INVALID_INDEX, _INVALID_HANDLE); no sources either;
 *   - errors: indices out of range, unknown names, calls after MPI_T_finalize. */
#include "mpitest.h"

#include <string.h>

static int cat_of_cvar(const char *name, int ncat)
{
    int index, found = -1;
    CHECK(MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS, "no control variable %s", name);
    for (int c = 0; c < ncat; c++) {
        int nc, list[256];
        MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, NULL, NULL);
        MPI_T_category_get_cvars(c, 256, list);
        for (int i = 0; i < nc && i < 256; i++)
            if (list[i] == index)
                found = c;
    }
    return found;
}

static void category_named(int c, const char *want)
{
    char name[64] = "";
    int len = sizeof name;
    if (c >= 0)
        MPI_T_category_get_info(c, name, &len, NULL, NULL, NULL, NULL, NULL);
    CHECK(c >= 0 && !strcmp(name, want), "category %d is '%s', want '%s'", c, name, want);
}

int main(int argc, char **argv)
{
    int provided;
    CHECK(MPI_T_category_get_num(&provided) == MPI_T_ERR_NOT_INITIALIZED, "category_get_num before MPI_T_init");
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    mt_init(&argc, &argv);
    int ncat = -1, ncvar, npvar;
    CHECK(MPI_T_category_get_num(&ncat) == MPI_SUCCESS && ncat >= 4, "%d categories", ncat);
    MPI_T_cvar_get_num(&ncvar);
    MPI_T_pvar_get_num(&npvar);
    int *cvar_seen = calloc((size_t)ncvar + 1, sizeof(int)), *pvar_seen = calloc((size_t)npvar + 1, sizeof(int));
    char names[64][32];
    for (int c = 0; c < ncat && c < 64; c++) {
        int len = sizeof names[c], dlen = 0, nc = -1, np = -1, nk = -1, ne = -1, back = -1;
        CHECK(MPI_T_category_get_info(c, names[c], &len, NULL, &dlen, &nc, &np, &nk) == MPI_SUCCESS, "info %d", c);
        CHECK(len == (int)strlen(names[c]) + 1 && dlen > 1, "category %d: name length %d, description %d", c, len,
              dlen);
        CHECK(nc + np > 0 && nk == 0, "category %s: %d cvars, %d pvars, %d subcategories", names[c], nc, np, nk);
        for (int d = 0; d < c; d++)
            CHECK(strcmp(names[c], names[d]), "two categories named %s", names[c]);
        CHECK(MPI_T_category_get_index(names[c], &back) == MPI_SUCCESS && back == c, "get_index(%s) = %d", names[c],
              back);
        CHECK(MPI_T_category_get_num_events(c, &ne) == MPI_SUCCESS && ne == 0, "%s: %d events", names[c], ne);
        int list[512];
        CHECK(MPI_T_category_get_cvars(c, 512, list) == MPI_SUCCESS, "get_cvars %d", c);
        for (int i = 0; i < nc; i++) {
            CHECK(list[i] >= 0 && list[i] < ncvar, "%s: cvar index %d", names[c], list[i]);
            if (list[i] >= 0 && list[i] < ncvar)
                cvar_seen[list[i]]++;
            CHECK(i == 0 || list[i] > list[i - 1], "%s: cvars not ascending", names[c]);
        }
        CHECK(MPI_T_category_get_pvars(c, 512, list) == MPI_SUCCESS, "get_pvars %d", c);
        for (int i = 0; i < np; i++) {
            CHECK(list[i] >= 0 && list[i] < npvar, "%s: pvar index %d", names[c], list[i]);
            if (list[i] >= 0 && list[i] < npvar)
                pvar_seen[list[i]]++;
        }
        /* a shorter list takes the first ones */
        if (nc > 1) {
            int two[3] = {-7, -7, -7}, all[512];
            MPI_T_category_get_cvars(c, 512, all);
            MPI_T_category_get_cvars(c, 2, two);
            CHECK(two[0] == all[0] && two[1] == all[1] && two[2] == -7, "%s: get_cvars(len 2)", names[c]);
        }
        CHECK(MPI_T_category_get_categories(c, 0, NULL) == MPI_SUCCESS, "get_categories %d", c);
        CHECK(MPI_T_category_get_events(c, 0, NULL) == MPI_SUCCESS, "get_events %d", c);
    }
    for (int i = 0; i < ncvar; i++)
        CHECK(cvar_seen[i] == 1, "control variable %d is in %d categories", i, cvar_seen[i]);
    for (int i = 0; i < npvar; i++)
        CHECK(pvar_seen[i] == 1, "performance variable %d is in %d categories", i, pvar_seen[i]);
    category_named(cat_of_cvar("COURIER_EAGER_MAX", ncat), "pt2pt");
    category_named(cat_of_cvar("COURIER_WAIT", ncat), "xport");
    category_named(cat_of_cvar("COURIER_PMI", ncat), "pmi");
    int coll = -1, npc = 0;
    CHECK(MPI_T_category_get_index("coll", &coll) == MPI_SUCCESS, "no category coll");
    MPI_T_category_get_info(coll, NULL, NULL, NULL, NULL, NULL, &npc, NULL);
    /* every collective counter (named coll.*) is in coll, and only those */
    int ncoll_named = 0, pcoll[256];
    for (int i = 0; i < npvar; i++) {
        char name[160];
        int name_len = sizeof name, verbosity, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont, &atomic);
        if (strncmp(name, "coll.", 5) == 0)
            ncoll_named++;
    }
    MPI_T_category_get_pvars(coll, 256, pcoll);
    for (int i = 0; i < npc && i < 256; i++) {
        char name[160];
        int name_len = sizeof name, verbosity, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(pcoll[i], name, &name_len, &verbosity, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont,
                            &atomic);
        CHECK(strncmp(name, "coll.", 5) == 0, "performance variable %s is in coll", name);
    }
    CHECK(npc > 0 && npc == ncoll_named, "coll has %d of the %d collective performance variables", npc, ncoll_named);
    int rewinds = -1, in_xport = 0, xport = -1, npx = 0, px[256];
    CHECK(MPI_T_pvar_get_index("xport.shm.rewinds", MPI_T_PVAR_CLASS_COUNTER, &rewinds) == MPI_SUCCESS,
          "no performance variable xport.shm.rewinds");
    CHECK(MPI_T_category_get_index("xport", &xport) == MPI_SUCCESS, "no category xport");
    MPI_T_category_get_info(xport, NULL, NULL, NULL, NULL, NULL, &npx, NULL);
    MPI_T_category_get_pvars(xport, 256, px);
    for (int i = 0; i < npx && i < 256; i++)
        in_xport += px[i] == rewinds;
    CHECK(in_xport == 1, "xport.shm.rewinds is %d times in xport", in_xport);
    /* a name cut to its buffer */
    char small[3] = "xx";
    int len = 3;
    MPI_T_category_get_info(coll, small, &len, NULL, NULL, NULL, NULL, NULL);
    CHECK(!strcmp(small, "co") && len == 5, "cut name '%s', length %d", small, len);
    int u1 = -1, u2 = -2;
    CHECK(MPI_T_category_changed(&u1) == MPI_SUCCESS && MPI_T_category_changed(&u2) == MPI_SUCCESS && u1 == u2,
          "category_changed %d then %d", u1, u2);
    /* errors */
    int x;
    CHECK(MPI_T_category_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX, "-1");
    CHECK(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "index %d", ncat);
    CHECK(MPI_T_category_get_cvars(ncat, 1, &x) == MPI_T_ERR_INVALID_INDEX, "get_cvars out of range");
    CHECK(MPI_T_category_get_index("no such category", &x) == MPI_T_ERR_INVALID_NAME, "unknown name");
    /* events: none */
    int ne = -1, ns = -1;
    CHECK(MPI_T_event_get_num(&ne) == MPI_SUCCESS && ne == 0, "%d events", ne);
    CHECK(MPI_T_event_get_index("anything", &x) == MPI_T_ERR_INVALID_NAME, "event_get_index");
    CHECK(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX, "event_get_info(0)");
    MPI_T_event_registration reg;
    CHECK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg) == MPI_T_ERR_INVALID_INDEX, "event_handle_alloc");
    CHECK(MPI_T_source_get_num(&ns) == MPI_SUCCESS && ns == 0, "%d sources", ns);
    MPI_Count ts;
    CHECK(MPI_T_source_get_timestamp(0, &ts) == MPI_T_ERR_INVALID_INDEX, "source_get_timestamp");
    CHECK(MPI_T_event_handle_free(NULL, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "event_handle_free");
    CHECK(MPI_T_event_read(NULL, 0, &x) == MPI_T_ERR_INVALID_HANDLE, "event_read");
    MPI_T_finalize();
    CHECK(MPI_T_category_get_index("coll", &x) == MPI_T_ERR_NOT_INITIALIZED, "after MPI_T_finalize");
    CHECK(MPI_T_event_get_num(&x) == MPI_T_ERR_NOT_INITIALIZED, "event_get_num after MPI_T_finalize");
    free(cvar_seen), free(pvar_seen);
    return mt_finish();
}
