! hello.f: the smallest Fortran MPI program in fixed form, with include 'mpif.h' (as F77 codes are
! written): each rank prints its rank and the size.
      program hello
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      print '(A,I0,A,I0)', 'Fortran77 rank ', rank, ' of ', nprocs
      call MPI_FINALIZE(ierr)
      end
