! coll.f90: collectives and derived datatypes through the Fortran bindings (use mpi).
!
! MPI_Bcast, MPI_Reduce and MPI_Allreduce (MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD on INTEGER, REAL
! and DOUBLE PRECISION, MPI_SUM on COMPLEX, MPI_LAND/MPI_LOR on LOGICAL, MPI_MAXLOC on
! MPI_2INTEGER and MPI_2DOUBLE_PRECISION, MPI_IN_PLACE), MPI_Gather, MPI_Scatter,
! MPI_Allgather, MPI_Alltoall, MPI_Gatherv, MPI_Scan, MPI_Barrier; MPI_Type_vector over a row of
! a 2-D array (strided in Fortran's column-major order) and MPI_Type_create_struct over a
! derived type with displacements from MPI_Get_address. Works at any number of processes.
program coll
  use mpi
  use mtest
  implicit none

  integer, parameter :: K = 5 ! elements per process in most buffers
  integer :: rank, nprocs, ierr

  call mt_init()
  rank = mt_rank
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call test_bcast()
  call test_reduce_integer()
  call test_reduce_real()
  call test_reduce_double()
  call test_reduce_complex()
  call test_reduce_logical()
  call test_maxloc()
  call test_in_place()
  call test_gather_scatter()
  call test_allgather_alltoall()
  call test_gatherv()
  call test_scan()
  call test_vector()
  call test_struct()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check_int('MPI_Barrier ierror', ierr, MPI_SUCCESS)
  call mt_finish()

contains

  ! ---------------------------------------------------------------- reduction operands
  ! The operation of index o: 1 MPI_SUM, 2 MPI_MAX, 3 MPI_MIN, 4 MPI_PROD.
  integer function op_of(o)
    integer, intent(in) :: o
    select case (o)
    case (1)
       op_of = MPI_SUM
    case (2)
       op_of = MPI_MAX
    case (3)
       op_of = MPI_MIN
    case default
       op_of = MPI_PROD
    end select
  end function op_of

  character(len=8) function op_name(o)
    integer, intent(in) :: o
    character(len=8), parameter :: names(4) = (/ 'MPI_SUM ', 'MPI_MAX ', 'MPI_MIN ', 'MPI_PROD' /)
    op_name = names(o)
  end function op_name

  ! Rank r's element i for operation o: small integers (exact as REAL and DOUBLE PRECISION);
  ! 1 or 2 (or -1 on rank 2) for the product so that it stays small.
  integer function val(o, r, i)
    integer, intent(in) :: o, r, i
    if (o == 4) then
       val = 1 + mod(r + i, 2)
       if (r == 2) val = -1
    else
       val = mod(3 * r + i, 7) - 2 + r
    end if
  end function val

  ! The reduction over all processes of val(o, r, i).
  integer function expected_red(o, i, nranks)
    integer, intent(in) :: o, i, nranks
    integer :: r
    expected_red = val(o, 0, i)
    do r = 1, nranks - 1
       select case (o)
       case (1)
          expected_red = expected_red + val(o, r, i)
       case (2)
          expected_red = max(expected_red, val(o, r, i))
       case (3)
          expected_red = min(expected_red, val(o, r, i))
       case default
          expected_red = expected_red * val(o, r, i)
       end select
    end do
  end function expected_red

  ! ---------------------------------------------------------------- bcast
  subroutine test_bcast()
    integer :: ibuf(K), i, root
    double precision :: dbuf(K)
    character(len=16) :: cbuf, ebuf
    logical :: lbuf(3)
    do root = 0, nprocs - 1, max(1, nprocs - 1)
       do i = 1, K
          ibuf(i) = -1
          dbuf(i) = -1.0d0
          if (rank == root) then
             ibuf(i) = 100 * root + i
             dbuf(i) = dble(root) + 1.0d0 / dble(2**i)
          end if
       end do
       cbuf = 'nothing yet'
       lbuf = .false.
       if (rank == root) then
          write (cbuf, '(a,i0)') 'from root ', root
          lbuf = (/ .true., .false., .true. /)
       end if
       call MPI_Bcast(ibuf, K, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Bcast(INTEGER) ierror', ierr, MPI_SUCCESS)
       call MPI_Bcast(dbuf, K, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
       call MPI_Bcast(cbuf, len(cbuf), MPI_CHARACTER, root, MPI_COMM_WORLD, ierr)
       call MPI_Bcast(lbuf, 3, MPI_LOGICAL, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Bcast(LOGICAL) ierror', ierr, MPI_SUCCESS)
       do i = 1, K
          call check_int('MPI_Bcast INTEGER data', ibuf(i), 100 * root + i)
          call check_dbl('MPI_Bcast DOUBLE PRECISION data', dbuf(i), &
               dble(root) + 1.0d0 / dble(2**i))
       end do
       write (ebuf, '(a,i0)') 'from root ', root
       call check_str('MPI_Bcast CHARACTER data', cbuf, ebuf)
       call check_log('MPI_Bcast LOGICAL data(1)', lbuf(1), .true.)
       call check_log('MPI_Bcast LOGICAL data(2)', lbuf(2), .false.)
       call check_log('MPI_Bcast LOGICAL data(3)', lbuf(3), .true.)
       if (nprocs == 1) exit
    end do
  end subroutine test_bcast

  ! ---------------------------------------------------------------- reduce / allreduce
  ! MPI_Reduce to the last rank and MPI_Allreduce for each of the four operations.
  subroutine test_reduce_integer()
    integer :: sbuf(K), rbuf(K), o, i, root
    root = nprocs - 1
    do o = 1, 4
       do i = 1, K
          sbuf(i) = val(o, rank, i)
          rbuf(i) = -999
       end do
       call MPI_Reduce(sbuf, rbuf, K, MPI_INTEGER, op_of(o), root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Reduce(INTEGER, ' // trim(op_name(o)) // ') ierror', ierr, MPI_SUCCESS)
       do i = 1, K
          if (rank == root) then
             call check_int('MPI_Reduce(INTEGER, ' // trim(op_name(o)) // ')', rbuf(i), &
                  expected_red(o, i, nprocs))
          else
             call check_int('MPI_Reduce(INTEGER) wrote to a non-root', rbuf(i), -999)
          end if
       end do
       rbuf = -999
       call MPI_Allreduce(sbuf, rbuf, K, MPI_INTEGER, op_of(o), MPI_COMM_WORLD, ierr)
       call check_int('MPI_Allreduce(INTEGER, ' // trim(op_name(o)) // ') ierror', ierr, &
            MPI_SUCCESS)
       do i = 1, K
          call check_int('MPI_Allreduce(INTEGER, ' // trim(op_name(o)) // ')', rbuf(i), &
               expected_red(o, i, nprocs))
       end do
    end do
  end subroutine test_reduce_integer

  subroutine test_reduce_real()
    real :: sbuf(K), rbuf(K)
    integer :: o, i, root
    root = 0
    do o = 1, 4
       do i = 1, K
          sbuf(i) = real(val(o, rank, i))
          rbuf(i) = -999.0
       end do
       call MPI_Reduce(sbuf, rbuf, K, MPI_REAL, op_of(o), root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Reduce(REAL, ' // trim(op_name(o)) // ') ierror', ierr, MPI_SUCCESS)
       if (rank == root) then
          do i = 1, K
             call check_dbl('MPI_Reduce(REAL, ' // trim(op_name(o)) // ')', dble(rbuf(i)), &
                  dble(expected_red(o, i, nprocs)))
          end do
       end if
       rbuf = -999.0
       call MPI_Allreduce(sbuf, rbuf, K, MPI_REAL, op_of(o), MPI_COMM_WORLD, ierr)
       call check_int('MPI_Allreduce(REAL, ' // trim(op_name(o)) // ') ierror', ierr, MPI_SUCCESS)
       do i = 1, K
          call check_dbl('MPI_Allreduce(REAL, ' // trim(op_name(o)) // ')', dble(rbuf(i)), &
               dble(expected_red(o, i, nprocs)))
       end do
    end do
  end subroutine test_reduce_real

  subroutine test_reduce_double()
    double precision :: sbuf(K), rbuf(K)
    integer :: o, i, root
    root = mod(1, nprocs)
    do o = 1, 4
       do i = 1, K
          sbuf(i) = dble(val(o, rank, i)) * 0.5d0
          rbuf(i) = -999.0d0
       end do
       call MPI_Reduce(sbuf, rbuf, K, MPI_DOUBLE_PRECISION, op_of(o), root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Reduce(DOUBLE PRECISION, ' // trim(op_name(o)) // ') ierror', ierr, &
            MPI_SUCCESS)
       if (rank == root) then
          do i = 1, K
             call check_dbl('MPI_Reduce(DOUBLE PRECISION, ' // trim(op_name(o)) // ')', &
                  rbuf(i), expected_dbl(o, i))
          end do
       end if
       rbuf = -999.0d0
       call MPI_Allreduce(sbuf, rbuf, K, MPI_DOUBLE_PRECISION, op_of(o), MPI_COMM_WORLD, ierr)
       call check_int('MPI_Allreduce(DOUBLE PRECISION, ' // trim(op_name(o)) // ') ierror', &
            ierr, MPI_SUCCESS)
       do i = 1, K
          call check_dbl('MPI_Allreduce(DOUBLE PRECISION, ' // trim(op_name(o)) // ')', &
               rbuf(i), expected_dbl(o, i))
       end do
    end do
  end subroutine test_reduce_double

  ! The reduction of val(o, r, i) * 0.5 (exact in binary).
  double precision function expected_dbl(o, i)
    integer, intent(in) :: o, i
    integer :: r
    expected_dbl = dble(val(o, 0, i)) * 0.5d0
    do r = 1, nprocs - 1
       select case (o)
       case (1)
          expected_dbl = expected_dbl + dble(val(o, r, i)) * 0.5d0
       case (2)
          expected_dbl = max(expected_dbl, dble(val(o, r, i)) * 0.5d0)
       case (3)
          expected_dbl = min(expected_dbl, dble(val(o, r, i)) * 0.5d0)
       case default
          expected_dbl = expected_dbl * (dble(val(o, r, i)) * 0.5d0)
       end select
    end do
  end function expected_dbl

  subroutine test_reduce_complex()
    complex :: sbuf(K), rbuf(K), expected(K)
    integer :: i, r
    do i = 1, K
       sbuf(i) = cmplx(real(rank + i), real(rank - 2 * i))
       expected(i) = (0.0, 0.0)
       do r = 0, nprocs - 1
          expected(i) = expected(i) + cmplx(real(r + i), real(r - 2 * i))
       end do
    end do
    rbuf = (0.0, 0.0)
    call MPI_Reduce(sbuf, rbuf, K, MPI_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Reduce(COMPLEX, MPI_SUM) ierror', ierr, MPI_SUCCESS)
    if (rank == 0) call check_complex('MPI_Reduce(COMPLEX, MPI_SUM)', rbuf, expected)
    rbuf = (0.0, 0.0)
    call MPI_Allreduce(sbuf, rbuf, K, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(COMPLEX, MPI_SUM) ierror', ierr, MPI_SUCCESS)
    call check_complex('MPI_Allreduce(COMPLEX, MPI_SUM)', rbuf, expected)
  end subroutine test_reduce_complex

  ! The real and imaginary parts of got(i) against those of expected(i) (exact small integers).
  subroutine check_complex(what, got, expected)
    character(len=*), intent(in) :: what
    complex, intent(in) :: got(:), expected(:)
    integer :: i
    do i = 1, size(got)
       call check_dbl(what // ' real part', dble(real(got(i))), dble(real(expected(i))))
       call check_dbl(what // ' imaginary part', dble(aimag(got(i))), dble(aimag(expected(i))))
    end do
  end subroutine check_complex

  ! Element i of rank r: true unless (r + i) is a multiple of 3; element K is true everywhere
  ! (so MPI_LAND is true there at any size) and element K-1 false everywhere.
  logical function lval(r, i)
    integer, intent(in) :: r, i
    if (i == K) then
       lval = .true.
    else if (i == K - 1) then
       lval = .false.
    else
       lval = mod(r + i, 3) /= 0
    end if
  end function lval

  subroutine test_reduce_logical()
    logical :: sbuf(K), rbuf(K), eand(K), eor(K)
    integer :: i, r
    do i = 1, K
       sbuf(i) = lval(rank, i)
       eand(i) = all((/ (lval(r, i), r = 0, nprocs - 1) /))
       eor(i) = any((/ (lval(r, i), r = 0, nprocs - 1) /))
    end do
    rbuf = .false.
    call MPI_Allreduce(sbuf, rbuf, K, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(LOGICAL, MPI_LAND) ierror', ierr, MPI_SUCCESS)
    do i = 1, K
       call check_log('MPI_Allreduce(LOGICAL, MPI_LAND)', rbuf(i), eand(i))
    end do
    rbuf = .true.
    call MPI_Allreduce(sbuf, rbuf, K, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(LOGICAL, MPI_LOR) ierror', ierr, MPI_SUCCESS)
    do i = 1, K
       call check_log('MPI_Allreduce(LOGICAL, MPI_LOR)', rbuf(i), eor(i))
    end do
    rbuf = .true.
    call MPI_Reduce(sbuf, rbuf, K, MPI_LOGICAL, MPI_LOR, 0, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Reduce(LOGICAL, MPI_LOR) ierror', ierr, MPI_SUCCESS)
    if (rank == 0) then
       do i = 1, K
          call check_log('MPI_Reduce(LOGICAL, MPI_LOR)', rbuf(i), eor(i))
       end do
    end if
  end subroutine test_reduce_logical

  ! ---------------------------------------------------------------- maxloc
  ! Pairs (value, index): the value (0 or 1) repeats across ranks, and a tie must give the
  ! lowest index.
  integer function mval(r, i)
    integer, intent(in) :: r, i
    mval = mod(r + 3 * i, 4) / 2
  end function mval

  subroutine test_maxloc()
    integer :: ipairs(2, K), ires(2, K), i, r, emax, eloc
    double precision :: dpairs(2, K), dres(2, K)
    do i = 1, K
       ipairs(1, i) = mval(rank, i)
       ipairs(2, i) = rank
       dpairs(1, i) = dble(mval(rank, i)) + 0.25d0
       dpairs(2, i) = dble(rank)
    end do
    ires = -1
    dres = -1.0d0
    call MPI_Allreduce(ipairs, ires, K, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(MPI_2INTEGER, MPI_MAXLOC) ierror', ierr, MPI_SUCCESS)
    call MPI_Allreduce(dpairs, dres, K, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(MPI_2DOUBLE_PRECISION, MPI_MAXLOC) ierror', ierr, MPI_SUCCESS)
    do i = 1, K
       emax = mval(0, i)
       eloc = 0
       do r = 1, nprocs - 1
          if (mval(r, i) > emax) then
             emax = mval(r, i)
             eloc = r
          end if
       end do
       call check_int('MPI_MAXLOC MPI_2INTEGER value', ires(1, i), emax)
       call check_int('MPI_MAXLOC MPI_2INTEGER location', ires(2, i), eloc)
       call check_dbl('MPI_MAXLOC MPI_2DOUBLE_PRECISION value', dres(1, i), dble(emax) + 0.25d0)
       call check_dbl('MPI_MAXLOC MPI_2DOUBLE_PRECISION location', dres(2, i), dble(eloc))
    end do
  end subroutine test_maxloc

  ! ---------------------------------------------------------------- MPI_IN_PLACE
  subroutine test_in_place()
    integer :: ibuf(K), idummy(K), i, root
    double precision :: dbuf(K)
    do i = 1, K
       ibuf(i) = val(1, rank, i)
       dbuf(i) = dble(val(2, rank, i)) * 0.5d0
    end do
    call MPI_Allreduce(MPI_IN_PLACE, ibuf, K, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allreduce(MPI_IN_PLACE) ierror', ierr, MPI_SUCCESS)
    call MPI_Allreduce(MPI_IN_PLACE, dbuf, K, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    do i = 1, K
       call check_int('MPI_Allreduce(MPI_IN_PLACE, MPI_SUM)', ibuf(i), expected_red(1, i, nprocs))
       call check_dbl('MPI_Allreduce(MPI_IN_PLACE, MPI_MAX)', dbuf(i), expected_dbl(2, i))
    end do
    ! MPI_Reduce: the root's contribution is in its receive buffer.
    root = nprocs / 2
    do i = 1, K
       ibuf(i) = val(3, rank, i)
       idummy(i) = -77
    end do
    if (rank == root) then
       call MPI_Reduce(MPI_IN_PLACE, ibuf, K, MPI_INTEGER, MPI_MIN, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Reduce(MPI_IN_PLACE) ierror', ierr, MPI_SUCCESS)
       do i = 1, K
          call check_int('MPI_Reduce(MPI_IN_PLACE, MPI_MIN)', ibuf(i), expected_red(3, i, nprocs))
       end do
    else
       call MPI_Reduce(ibuf, idummy, K, MPI_INTEGER, MPI_MIN, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Reduce (non-root of MPI_IN_PLACE) ierror', ierr, MPI_SUCCESS)
       do i = 1, K
          call check_int('MPI_Reduce changed a non-root send buffer', ibuf(i), val(3, rank, i))
       end do
    end if
  end subroutine test_in_place

  ! ---------------------------------------------------------------- gather / scatter
  subroutine test_gather_scatter()
    integer, parameter :: C = 3
    integer :: sbuf(C), rbuf(C), i, j, root
    integer, allocatable :: all(:)
    allocate (all(C * nprocs))
    do root = 0, nprocs - 1, max(1, nprocs - 1)
       do i = 1, C
          sbuf(i) = 10 * rank + i
       end do
       all = -1
       call MPI_Gather(sbuf, C, MPI_INTEGER, all, C, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Gather ierror', ierr, MPI_SUCCESS)
       if (rank == root) then
          do j = 0, nprocs - 1
             do i = 1, C
                call check_int('MPI_Gather data', all(j * C + i), 10 * j + i)
             end do
          end do
       end if
       ! Scatter back what the root holds, offset by the root.
       if (rank == root) then
          do j = 0, nprocs - 1
             do i = 1, C
                all(j * C + i) = 1000 * root + 10 * j + i
             end do
          end do
       end if
       rbuf = -1
       call MPI_Scatter(all, C, MPI_INTEGER, rbuf, C, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
       call check_int('MPI_Scatter ierror', ierr, MPI_SUCCESS)
       do i = 1, C
          call check_int('MPI_Scatter data', rbuf(i), 1000 * root + 10 * rank + i)
       end do
       if (nprocs == 1) exit
    end do
    deallocate (all)
  end subroutine test_gather_scatter

  subroutine test_allgather_alltoall()
    double precision :: dsend(2)
    double precision, allocatable :: dall(:)
    integer, allocatable :: isend(:), irecv(:)
    integer :: j
    allocate (dall(2 * nprocs), isend(2 * nprocs), irecv(2 * nprocs))
    dsend(1) = dble(rank) + 0.5d0
    dsend(2) = -dble(rank)
    dall = -1.0d0
    call MPI_Allgather(dsend, 2, MPI_DOUBLE_PRECISION, dall, 2, MPI_DOUBLE_PRECISION, &
         MPI_COMM_WORLD, ierr)
    call check_int('MPI_Allgather ierror', ierr, MPI_SUCCESS)
    do j = 0, nprocs - 1
       call check_dbl('MPI_Allgather data', dall(2 * j + 1), dble(j) + 0.5d0)
       call check_dbl('MPI_Allgather data', dall(2 * j + 2), -dble(j))
    end do
    ! Alltoall: two integers to each process, saying from whom to whom.
    do j = 0, nprocs - 1
       isend(2 * j + 1) = 100 * rank + j
       isend(2 * j + 2) = -(100 * rank + j)
    end do
    irecv = -1
    call MPI_Alltoall(isend, 2, MPI_INTEGER, irecv, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Alltoall ierror', ierr, MPI_SUCCESS)
    do j = 0, nprocs - 1
       call check_int('MPI_Alltoall data', irecv(2 * j + 1), 100 * j + rank)
       call check_int('MPI_Alltoall data', irecv(2 * j + 2), -(100 * j + rank))
    end do
    deallocate (dall, isend, irecv)
  end subroutine test_allgather_alltoall

  ! Rank r sends r+1 integers; the root places them with a one-element gap between blocks.
  subroutine test_gatherv()
    integer :: sbuf(64), i, j, root, total
    integer, allocatable :: rbuf(:), counts(:), displs(:)
    logical, allocatable :: filled(:)
    allocate (counts(nprocs), displs(nprocs))
    total = 0
    do j = 0, nprocs - 1
       counts(j + 1) = j + 1
       displs(j + 1) = total
       total = total + j + 2
    end do
    allocate (rbuf(total), filled(total))
    root = nprocs - 1
    do i = 1, rank + 1
       sbuf(i) = 1000 * rank + i
    end do
    rbuf = -3
    call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, root, &
         MPI_COMM_WORLD, ierr)
    call check_int('MPI_Gatherv ierror', ierr, MPI_SUCCESS)
    if (rank == root) then
       filled = .false.
       do j = 0, nprocs - 1
          do i = 1, j + 1
             call check_int('MPI_Gatherv data', rbuf(displs(j + 1) + i), 1000 * j + i)
             filled(displs(j + 1) + i) = .true.
          end do
       end do
       do i = 1, total
          if (.not. filled(i)) call check_int('MPI_Gatherv wrote into a gap', rbuf(i), -3)
       end do
    end if
    deallocate (rbuf, filled, counts, displs)
  end subroutine test_gatherv

  subroutine test_scan()
    integer :: ibuf(2), ires(2)
    double precision :: dbuf, dres, emax
    integer :: r
    ibuf(1) = rank + 1
    ibuf(2) = 1
    ires = -1
    call MPI_Scan(ibuf, ires, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Scan ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Scan(MPI_SUM) data(1)', ires(1), (rank + 1) * (rank + 2) / 2)
    call check_int('MPI_Scan(MPI_SUM) data(2)', ires(2), rank + 1)
    ! MPI_MAX over ranks 0..rank of mod(5 r, 3): 0, 2, 1, 0, 2, ...
    dbuf = dble(mod(rank * 5, 3))
    dres = -1.0d0
    call MPI_Scan(dbuf, dres, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    emax = 0.0d0
    do r = 0, rank
       emax = max(emax, dble(mod(r * 5, 3)))
    end do
    call check_dbl('MPI_Scan(MPI_MAX)', dres, emax)
  end subroutine test_scan

  ! ---------------------------------------------------------------- derived types
  ! A row of a(M, NC) is NC elements M apart in memory: MPI_Type_vector(NC, 1, M, ...).
  subroutine test_vector()
    integer, parameter :: M = 4, NC = 6
    double precision :: a(M, NC)
    integer :: rowtype, i, j, root, tsize, status(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent
    call MPI_Type_vector(NC, 1, M, MPI_DOUBLE_PRECISION, rowtype, ierr)
    call check_int('MPI_Type_vector ierror', ierr, MPI_SUCCESS)
    call MPI_Type_commit(rowtype, ierr)
    call check_int('MPI_Type_commit ierror', ierr, MPI_SUCCESS)
    call MPI_Type_size(rowtype, tsize, ierr)
    call check_int('MPI_Type_size(row type)', tsize, NC * 8)
    call MPI_Type_get_extent(rowtype, lb, extent, ierr)
    call check_int('MPI_Type_get_extent(row type) lb', int(lb), 0)
    call check_int('MPI_Type_get_extent(row type) extent', int(extent), ((NC - 1) * M + 1) * 8)

    ! The root broadcasts its row 3 into row 3 of everyone's array.
    root = nprocs - 1
    do j = 1, NC
       do i = 1, M
          a(i, j) = -dble(i + 10 * j)
          if (rank == root) a(i, j) = dble(i + 10 * j) + dble(root) * 1000.0d0
       end do
    end do
    call MPI_Bcast(a(3, 1), 1, rowtype, root, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Bcast(row type) ierror', ierr, MPI_SUCCESS)
    do j = 1, NC
       do i = 1, M
          if (i == 3 .or. rank == root) then
             call check_dbl('MPI_Bcast(row type) data', a(i, j), &
                  dble(i + 10 * j) + dble(root) * 1000.0d0)
          else
             call check_dbl('MPI_Bcast(row type) changed another row', a(i, j), -dble(i + 10 * j))
          end if
       end do
    end do

    ! Around the ring: send row 1, receive the left neighbour's row 1 into row 4.
    do j = 1, NC
       do i = 1, M
          a(i, j) = dble(rank * 100 + i * 10 + j)
       end do
    end do
    call MPI_Sendrecv(a(1, 1), 1, rowtype, mod(rank + 1, nprocs), 5, &
         a(4, 1), 1, rowtype, mod(rank - 1 + nprocs, nprocs), 5, MPI_COMM_WORLD, status, ierr)
    call check_int('MPI_Sendrecv(row type) ierror', ierr, MPI_SUCCESS)
    do j = 1, NC
       do i = 1, M
          if (i == 4) then
             call check_dbl('MPI_Sendrecv(row type) data', a(i, j), &
                  dble(mod(rank - 1 + nprocs, nprocs) * 100 + 1 * 10 + j))
          else
             call check_dbl('MPI_Sendrecv(row type) changed another row', a(i, j), &
                  dble(rank * 100 + i * 10 + j))
          end if
       end do
    end do
    call MPI_Type_free(rowtype, ierr)
    call check_int('MPI_Type_free ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Type_free did not reset the handle', rowtype, MPI_DATATYPE_NULL)
  end subroutine test_vector

  ! A derived type with an INTEGER, three DOUBLE PRECISION and four characters, described by
  ! MPI_Type_create_struct with displacements from MPI_Get_address, resized to the Fortran
  ! array stride so that two of them go in one message.
  subroutine test_struct()
    type particle
       integer :: id
       double precision :: x(3)
       character(len=4) :: name
    end type particle
    type(particle) :: p(2)
    integer :: blocklens(3), types(3), stype, ptype, i, j, root, tsize
    integer(kind=MPI_ADDRESS_KIND) :: base, addr(3), disps(3), lb, extent, a2
    character(len=4) :: ename

    call MPI_Get_address(p(1), base, ierr)
    call check_int('MPI_Get_address ierror', ierr, MPI_SUCCESS)
    call MPI_Get_address(p(1)%id, addr(1), ierr)
    call MPI_Get_address(p(1)%x, addr(2), ierr)
    call MPI_Get_address(p(1)%name, addr(3), ierr)
    call MPI_Get_address(p(2), a2, ierr)
    do i = 1, 3
       disps(i) = addr(i) - base
    end do
    blocklens = (/ 1, 3, 4 /)
    types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER /)
    call MPI_Type_create_struct(3, blocklens, disps, types, stype, ierr)
    call check_int('MPI_Type_create_struct ierror', ierr, MPI_SUCCESS)
    call MPI_Type_size(stype, tsize, ierr)
    call check_int('MPI_Type_size(struct)', tsize, 4 + 24 + 4)
    call MPI_Type_create_resized(stype, 0_MPI_ADDRESS_KIND, a2 - base, ptype, ierr)
    call check_int('MPI_Type_create_resized ierror', ierr, MPI_SUCCESS)
    call MPI_Type_commit(ptype, ierr)
    call MPI_Type_get_extent(ptype, lb, extent, ierr)
    call check_int('MPI_Type_get_extent(resized) extent', int(extent), int(a2 - base))

    root = mod(2, nprocs)
    do i = 1, 2
       if (rank == root) then
          p(i)%id = 500 + i
          do j = 1, 3
             p(i)%x(j) = dble(i) + dble(j) * 0.125d0
          end do
          write (p(i)%name, '(a,i1,a)') 'p', i, 'r'
       else
          p(i)%id = -1
          p(i)%x = -1.0d0
          p(i)%name = '????'
       end if
    end do
    call MPI_Bcast(p, 2, ptype, root, MPI_COMM_WORLD, ierr)
    call check_int('MPI_Bcast(struct type) ierror', ierr, MPI_SUCCESS)
    do i = 1, 2
       call check_int('MPI_Bcast(struct type) id', p(i)%id, 500 + i)
       do j = 1, 3
          call check_dbl('MPI_Bcast(struct type) x', p(i)%x(j), dble(i) + dble(j) * 0.125d0)
       end do
       write (ename, '(a,i1,a)') 'p', i, 'r'
       call check_str('MPI_Bcast(struct type) name', p(i)%name, ename)
    end do
    call MPI_Type_free(ptype, ierr)
    call MPI_Type_free(stype, ierr)
    call check_int('MPI_Type_free(struct) ierror', ierr, MPI_SUCCESS)
    call check_int('MPI_Type_free(struct) did not reset the handle', stype, MPI_DATATYPE_NULL)
  end subroutine test_struct

end program coll
