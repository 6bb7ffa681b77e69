! f08_profile.f90: the profiling interface of mpi_f08: this program defines its own MPI_Send_f08ts
! and MPI_Allreduce_f08 (the specific procedures behind the generic names MPI_Send and
! MPI_Allreduce: _f08ts where the buffers are assumed-rank, _f08 where they are assumed-size),
! which count calls and forward to PMPI_Send and PMPI_Allreduce; the program's calls through the
! generic names must reach them, and the messages must still arrive.
subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use mpi_f08, only : MPI_Datatype, MPI_Comm, PMPI_Send
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  integer :: sends, reduces
  common /profiled/ sends, reduces
  sends = sends + 1
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send_f08ts

subroutine MPI_Allreduce_f08(sendbuf, recvbuf, count, datatype, op, comm, ierror)
  use mpi_f08, only : MPI_Datatype, MPI_Comm, MPI_Op, PMPI_Allreduce
  implicit none
  !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
  type(*), dimension(*), intent(in) :: sendbuf
  type(*), dimension(*) :: recvbuf
  integer, intent(in) :: count
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Op), intent(in) :: op
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  integer :: sends, reduces
  common /profiled/ sends, reduces
  reduces = reduces + 1
  call PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror)
end subroutine MPI_Allreduce_f08

program f08_profile
  use mpi_f08
  use mtest
  implicit none
  integer :: sends, reduces
  common /profiled/ sends, reduces
  integer :: rank, nprocs, got, total, ierr
  sends = 0
  reduces = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  mt_rank = rank
  call MPI_Send(rank + 100, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF)
  call MPI_Recv(got, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE)
  call check_int('message through the profiled MPI_Send', got, rank + 100)
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, ierr)
  call MPI_Recv(got, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, MPI_STATUS_IGNORE)
  call check_int('ierror through the profiled MPI_Send', ierr, MPI_SUCCESS)
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check_int('MPI_Allreduce through the profiled one', total, nprocs)
  call check_int('calls that reached the program''s MPI_Send_f08ts', sends, 2)
  call check_int('calls that reached the program''s MPI_Allreduce_f08', reduces, 1)
  call mt_finish()
end program f08_profile
