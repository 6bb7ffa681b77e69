! hello_f08.f90: the smallest program with `use mpi_f08`: handle types, no ierror arguments.
program hello_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs
  type(MPI_Comm) :: comm
  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs)
  print '(A,I0,A,I0)', 'Fortran2008 rank ', rank, ' of ', nprocs
  call MPI_Comm_free(comm)
  call MPI_Finalize()
end program hello_f08
