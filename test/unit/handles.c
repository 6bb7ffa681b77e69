/* Handles: predefined handles map to their objects, user handles live outside 1..4095, freed
 * and garbage handles do not resolve, slots are reused. */
#include "comm/comm.h"
#include "core/info.h"
#include "unit.h"

int main(void)
{
    EXPECT(cr_comm_get(MPI_COMM_WORLD) == &cr_comm_world, "MPI_COMM_WORLD");
    EXPECT(cr_comm_get(MPI_COMM_NULL) == NULL, "MPI_COMM_NULL has no object");
    EXPECT(cr_comm_get((MPI_Comm)MPI_INT) == NULL, "a datatype is not a communicator");
    cr_info *a = cr_obj_alloc(CR_KIND_INFO), *b = cr_obj_alloc(CR_KIND_INFO);
    EXPECT(a && b && a != b, "allocation");
    EXPECT(a->obj.handle > 4095 && b->obj.handle > 4095, "user handles %u %u", a->obj.handle, b->obj.handle);
    MPI_Info ha = (MPI_Info)(uintptr_t)a->obj.handle;
    EXPECT(cr_info_get(ha) == a, "lookup");
    EXPECT(cr_comm_get((MPI_Comm)(uintptr_t)a->obj.handle) == NULL, "an info handle is not a communicator");
    cr_obj_free(a);
    EXPECT(cr_info_get(ha) == NULL, "a freed handle does not resolve");
    EXPECT(cr_info_get((MPI_Info)(uintptr_t)0x7fffffffu) == NULL && cr_info_get((MPI_Info)(uintptr_t)-1) == NULL,
           "garbage does not resolve");
    cr_info *c = cr_obj_alloc(CR_KIND_INFO);
    EXPECT(c == a, "the freed slot is reused");
    for (int i = 0; i < 1000; i++) /* grow past one chunk */
        EXPECT(cr_obj_alloc(CR_KIND_INFO) != NULL, "allocation %d", i);
    EXPECT(cr_info_get((MPI_Info)(uintptr_t)b->obj.handle) == b, "objects do not move when the pool grows");
    return UNIT_DONE();
}
