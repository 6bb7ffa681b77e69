! hello.f90: the smallest Fortran MPI program with `use mpi`: each rank prints its rank and the
! size, after a reduction that checks the ranks add up.
program hello
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs - 1) / 2) then
    print *, 'FAIL: the ranks add up to', total
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  print '(A,I0,A,I0)', 'Fortran90 rank ', rank, ' of ', nprocs
  call MPI_Finalize(ierr)
end program hello
