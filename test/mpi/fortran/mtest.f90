! mtest.f90: module mtest, the start, checks, error count and end that the Fortran tests share.
module mtest
  use mpi
  implicit none
  ! Only the names below are exported, not those of module mpi: a fixed-form program may `use
  ! mtest` and still take the MPI names from `include 'mpif.h'`.
  private
  public :: mt_errs, mt_rank, mt_init, mt_fail, mt_finish
  public :: check_int, check_addr, check_dbl, check_log, check_str

  integer :: mt_errs = 0  ! the checks that failed on this process
  integer :: mt_rank = -1 ! its rank in MPI_COMM_WORLD (-1 before mt_init)

contains

  ! MPI_Init, then mt_rank; checks MPI_Init's ierror.
  subroutine mt_init()
    integer :: ierr, ierr2
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, mt_rank, ierr2)
    call check_int('MPI_Init ierror', ierr, MPI_SUCCESS)
  end subroutine mt_init

  ! Counts a failed check and says which: "FAIL rank R: what".
  subroutine mt_fail(what)
    character(len=*), intent(in) :: what
    mt_errs = mt_errs + 1
    write (*, '(a,i0,2a)') 'FAIL rank ', mt_rank, ': ', what
  end subroutine mt_fail

  ! Each check_<type> fails with "FAIL rank R: what: got G expected E" when got /= expected.
  subroutine check_int(what, got, expected)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, expected
    call check_addr(what, int(got, MPI_ADDRESS_KIND), int(expected, MPI_ADDRESS_KIND))
  end subroutine check_int

  ! INTEGER(KIND=MPI_ADDRESS_KIND) values (attributes, addresses, extents).
  subroutine check_addr(what, got, expected)
    character(len=*), intent(in) :: what
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: got, expected
    character(len=100) :: detail
    if (got /= expected) then
       write (detail, '(a,i0,a,i0)') ': got ', got, ' expected ', expected
       call mt_fail(what // trim(detail))
    end if
  end subroutine check_addr

  ! Exact comparison: the tests compare values that are exact in binary.
  subroutine check_dbl(what, got, expected)
    character(len=*), intent(in) :: what
    double precision, intent(in) :: got, expected
    character(len=100) :: detail
    if (got /= expected) then
       write (detail, '(a,g0,a,g0)') ': got ', got, ' expected ', expected
       call mt_fail(what // trim(detail))
    end if
  end subroutine check_dbl

  subroutine check_log(what, got, expected)
    character(len=*), intent(in) :: what
    logical, intent(in) :: got, expected
    character(len=100) :: detail
    if (got .neqv. expected) then
       write (detail, '(a,l1,a,l1)') ': got ', got, ' expected ', expected
       call mt_fail(what // trim(detail))
    end if
  end subroutine check_log

  ! Strings compare as Fortran compares them (trailing blanks do not count) and are printed in
  ! quotes without their trailing blanks.
  subroutine check_str(what, got, expected)
    character(len=*), intent(in) :: what, got, expected
    if (got /= expected) then
       call mt_fail(what // ': got "' // trim(got) // '" expected "' // trim(expected) // '"')
    end if
  end subroutine check_str

  ! The end of a test: rank 0 prints " No Errors" or " Found N errors" (the count over all
  ! processes), then MPI_Finalize (checked with MPI_Finalized); a process with errors stops
  ! with status 1.
  subroutine mt_finish()
    integer :: toterrs, ierr
    logical :: flag
    call MPI_Allreduce(mt_errs, toterrs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (mt_rank == 0) then
       if (toterrs == 0) then
          write (*, '(a)') ' No Errors'
       else
          write (*, '(a,i0,a)') ' Found ', toterrs, ' errors'
       end if
    end if
    call MPI_Finalize(ierr)
    flag = .false.
    call MPI_Finalized(flag, ierr)
    call check_log('MPI_Finalized after MPI_Finalize', flag, .true.)
    if (mt_errs /= 0) stop 1
  end subroutine mt_finish

end module mtest
