! bounce.f90: latency and bandwidth of blocking send/receive, in Fortran (use mpi). Ranks 0
! and 1 bounce messages of 1 byte, 2 bytes, ... doubling up to 1 MiB back and forth; rank 0
! prints, per size, the one-way time and the bandwidth. Rank 1 sends back what it received,
! and rank 0 checks that it came back intact. Other ranks, if any, wait.
!   mpiexec -n 2 ./bounce
program bounce
  use mpi
  implicit none

  integer, parameter :: MAX_BYTES = 1024 * 1024
  integer :: rank, nprocs, ierr, n, iters, i
  character, allocatable :: sbuf(:), rbuf(:)
  double precision :: t0, one_way

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs < 2) then
     write (*, '(a,i0,a)') 'bounce needs 2 processes (got ', nprocs, '): mpiexec -n 2 ./bounce'
     call MPI_Finalize(ierr)
     stop 1
  end if

  allocate (sbuf(MAX_BYTES), rbuf(MAX_BYTES))
  sbuf = char(0)
  rbuf = char(0)
  if (rank == 0) then
     write (*, '(a,i0,a,es8.1,a)') 'bounce: ranks 0 and 1 of ', nprocs, &
          ', MPI_Wtime resolution ', MPI_Wtick(), ' s'
     write (*, '(a12,a12,a16,a14)') 'bytes', 'round trips', 'one-way (us)', 'MB/s'
  end if

  n = 1
  do while (n <= MAX_BYTES)
     iters = max(10, 2000 / (1 + n / 4096))
     if (rank == 0) then
        ! A pattern that differs from one size to the next, so stale data would show.
        do i = 1, n
           sbuf(i) = char(mod(i + 7 * n, 251))
        end do
        rbuf(1) = char(255)
        rbuf(n) = char(255)
     end if
     ! A quarter as many untimed round trips (to warm up), then the timed ones.
     call round_trips(max(1, iters / 4))
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
     t0 = MPI_Wtime()
     call round_trips(iters)
     one_way = (MPI_Wtime() - t0) / (2.0d0 * iters)
     if (rank == 0) then
        if (rbuf(1) /= sbuf(1) .or. rbuf(n) /= sbuf(n)) then
           write (*, '(a,i0,a,2(i0,1x),a,2(i0,1x))') 'bounce: FAIL: at ', n, &
                ' bytes the data came back wrong: first and last bytes ', &
                iachar(rbuf(1)), iachar(rbuf(n)), 'expected ', iachar(sbuf(1)), iachar(sbuf(n))
           call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
        write (*, '(i12,i12,f16.2,f14.1)') n, iters, one_way * 1.0d6, dble(n) / one_way / 1.0d6
     end if
     n = 2 * n
  end do

  deallocate (sbuf, rbuf)
  call MPI_Finalize(ierr)

contains

  ! count round trips of n bytes between ranks 0 and 1: rank 1 returns what it received.
  subroutine round_trips(count)
    integer, intent(in) :: count
    integer :: k
    do k = 1, count
       if (rank == 0) then
          call MPI_Send(sbuf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, ierr)
          call MPI_Recv(rbuf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
       else if (rank == 1) then
          call MPI_Recv(rbuf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
          call MPI_Send(rbuf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, ierr)
       end if
    end do
  end subroutine round_trips

end program bounce
